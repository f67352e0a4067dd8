// CSR matrix in Kokkos Views: the baseline format (cuSPARSE / KokkosSparse) that every
// compressed product is measured against.
#pragma once

#include <kcla/csr_matrix.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace kcla {

/// CSR in one memory space with 32-bit offsets and indices (what cuSPARSE and
/// KokkosSparse's vendor paths accept).
template <class Scalar, class MemorySpace>
struct CsrDeviceMatrix {
  using value_type = Scalar;
  using memory_space = MemorySpace;
  Kokkos::View<int*, MemorySpace> row_offsets;
  Kokkos::View<int*, MemorySpace> column_indices;
  Kokkos::View<Scalar*, MemorySpace> values;
  int num_rows = 0;
  int num_cols = 0;

  std::int64_t nnz() const { return static_cast<std::int64_t>(column_indices.extent(0)); }
  /// Bytes the three arrays occupy.
  std::size_t bytes() const {
    return row_offsets.span() * sizeof(int) + column_indices.span() * sizeof(int) +
           values.span() * sizeof(Scalar);
  }
};

/// Copies a host CSR matrix into MemorySpace, converting values to Scalar.
template <class Scalar, class MemorySpace, class SourceScalar>
CsrDeviceMatrix<Scalar, MemorySpace> to_device_csr(const CsrMatrix<SourceScalar>& a) {
  if (a.num_rows > INT32_MAX || a.nnz() > INT32_MAX)
    throw InvalidArgument("to_device_csr: more than 2^31-1 rows or nonzeros");
  CsrDeviceMatrix<Scalar, MemorySpace> d;
  d.num_rows = static_cast<int>(a.num_rows);
  d.num_cols = static_cast<int>(a.num_cols);
  d.row_offsets = Kokkos::View<int*, MemorySpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::csr::row_offsets"), a.num_rows + 1);
  d.column_indices = Kokkos::View<int*, MemorySpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::csr::column_indices"), a.nnz());
  d.values = Kokkos::View<Scalar*, MemorySpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::csr::values"), a.nnz());
  auto h_offsets = Kokkos::create_mirror_view(d.row_offsets);
  auto h_columns = Kokkos::create_mirror_view(d.column_indices);
  auto h_values = Kokkos::create_mirror_view(d.values);
  for (std::int64_t r = 0; r <= a.num_rows; ++r) h_offsets(r) = static_cast<int>(a.row_offsets[r]);
  for (std::int64_t k = 0; k < a.nnz(); ++k) {
    h_columns(k) = a.column_indices[k];
    h_values(k) = static_cast<Scalar>(a.values[k]);
  }
  Kokkos::deep_copy(d.row_offsets, h_offsets);
  Kokkos::deep_copy(d.column_indices, h_columns);
  Kokkos::deep_copy(d.values, h_values);
  return d;
}

}  // namespace kcla
