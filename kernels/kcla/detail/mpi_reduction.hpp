// The MPI reduction that combines ranks' partial results in a semiring: the semiring's sum
// as an MPI_Op on its value type.
#pragma once

#include <kcla/semiring.hpp>

#include <mpi.h>

namespace kcla::detail {

template <class T>
MPI_Datatype mpi_datatype();
template <>
inline MPI_Datatype mpi_datatype<float>() {
  return MPI_FLOAT;
}
template <>
inline MPI_Datatype mpi_datatype<double>() {
  return MPI_DOUBLE;
}
template <>
inline MPI_Datatype mpi_datatype<bool>() {
  static_assert(sizeof(bool) == 1, "MPI_C_BOOL reduces one-byte booleans");
  return MPI_C_BOOL;
}

template <class Semiring>
struct MpiReduction;
template <class T>
struct MpiReduction<PlusTimes<T>> {
  static MPI_Op op() { return MPI_SUM; }
};
template <>
struct MpiReduction<Boolean> {
  static MPI_Op op() { return MPI_LOR; }
};
template <class T>
struct MpiReduction<MinPlus<T>> {
  static MPI_Op op() { return MPI_MIN; }
};

}  // namespace kcla::detail
