// The Kokkos execution spaces this build enables, as a GoogleTest type list: a test typed
// over them runs on every back end and checks each against the same host reference
// (the serial references of kcla/grammar_reference.hpp, CSR, dense), as Ginkgo tests its
// device executors against its reference executor.
#pragma once

#include <kcla/config.hpp>

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <string>

namespace kcla::test {

/// Every enabled execution space, the default one first (Cuda in a CUDA build).
using Backends = ::testing::Types<Kokkos::DefaultExecutionSpace
#if defined(KOKKOS_ENABLE_OPENMP) && defined(KOKKOS_ENABLE_CUDA)
                                  ,
                                  Kokkos::OpenMP
#endif
#if defined(KOKKOS_ENABLE_SERIAL) && (defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_OPENMP))
                                  ,
                                  Kokkos::Serial
#endif
                                  >;

/// Test names carry the back end: GrammarMultiply/Serial.PaperExample.
struct BackendName {
  template <class ExecutionSpace>
  static std::string GetName(int) {
    return ExecutionSpace::name();
  }
};

/// The fixture of a test typed over Backends (TypeParam: the execution space).
template <class ExecutionSpace>
class OnEveryBackend : public ::testing::Test {};

}  // namespace kcla::test
