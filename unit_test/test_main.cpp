// GoogleTest main for kcla: Kokkos lives for the whole test program.
#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <cstdlib>

#include "test_support.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Kokkos' OpenMP back end warns on stdout when OMP_PROC_BIND is unset, which would
  // pollute the test list CTest reads; unbound threads are right for tests anyway.
  setenv("OMP_PROC_BIND", "false", 0);
  Kokkos::ScopeGuard kokkos(argc, argv);
  std::printf("kcla tests: execution space %s, random seed %llu (set KCLA_TEST_SEED to repeat)\n",
              Kokkos::DefaultExecutionSpace::name(),
              static_cast<unsigned long long>(kcla::test::base_seed()));
  return RUN_ALL_TESTS();
}
