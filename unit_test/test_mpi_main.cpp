// GoogleTest main for the MPI tests: MPI, then Kokkos, for the whole program; every rank
// runs every test, and a failure on any rank fails the run (mpirun's exit status).
#include <gtest/gtest.h>
#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <cstdlib>

#include "test_support.hpp"

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  setenv("OMP_PROC_BIND", "false", 0);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Only rank 0 reports passing tests; every rank reports failures.
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int result = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    result = RUN_ALL_TESTS();
  }
  // A failure on any rank is every rank's failure.
  int worst = 0;
  MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && worst != 0) std::fprintf(stderr, "kcla MPI tests: a rank failed\n");
  MPI_Finalize();
  return worst;
}
