// Links kcla through find_package(kcla) and runs a CSR product through it.
#include <kcla/csr_spmv.hpp>
#include <kcla/version.hpp>

#include <cstdio>
#include <iostream>

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  kcla::print_configuration(std::cout);

  // 3 x 3 matrix [[2,0,1],[0,3,0],[4,0,5]] times x = [1,2,3].
  kcla::CsrMatrix<double> a;
  a.num_rows = a.num_cols = 3;
  a.row_offsets = {0, 2, 3, 5};
  a.column_indices = {0, 2, 1, 0, 2};
  a.values = {2, 1, 3, 4, 5};
  using memory = Kokkos::DefaultExecutionSpace::memory_space;
  auto a_dev = kcla::to_device_csr<double, memory>(a);
  Kokkos::View<double*> x("x", 3), y("y", 3);
  auto x_host = Kokkos::create_mirror_view(x);
  x_host(0) = 1, x_host(1) = 2, x_host(2) = 3;
  Kokkos::deep_copy(x, x_host);
  kcla::csr_spmv(Kokkos::DefaultExecutionSpace(), a_dev, x, y);
  auto y_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  std::printf("y = %g %g %g\n", y_host(0), y_host(1), y_host(2));
  const bool ok = y_host(0) == 5 && y_host(1) == 6 && y_host(2) == 19;
  std::printf("%s\n", ok ? "consumer: OK" : "consumer: WRONG RESULT");
  return ok ? 0 : 1;
}
