// The CSR baseline product (KokkosSparse on host spaces, cuSPARSE on CUDA) on every enabled
// back end against the plain-loop reference on random matrices.
#include <kcla/csr_spmv.hpp>

#include <gtest/gtest.h>

#include "backends.hpp"
#include "test_support.hpp"

namespace {

template <class Scalar, class exec>
void check_random_spmv(std::int64_t rows, std::int64_t cols, double density, double tolerance) {
  using memory = typename exec::memory_space;
  auto gen = kcla::test::rng(static_cast<std::uint64_t>(rows * 31 + cols));
  const auto a = kcla::test::random_csr(gen, rows, cols, density);
  const auto x = kcla::test::random_vector(gen, cols);
  std::vector<double> expected(rows);
  kcla::reference_spmv(a, x.data(), expected.data());

  const auto a_dev = kcla::to_device_csr<Scalar, memory>(a);
  Kokkos::View<Scalar*, memory> x_dev("x", cols), y_dev("y", rows);
  auto x_host = Kokkos::create_mirror_view(x_dev);
  for (std::int64_t j = 0; j < cols; ++j) x_host(j) = static_cast<Scalar>(x[j]);
  Kokkos::deep_copy(x_dev, x_host);
  Kokkos::deep_copy(y_dev, Scalar(-123));  // poison

  kcla::csr_spmv(exec(), a_dev, x_dev, y_dev);
  exec().fence();
  auto y_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y_dev);
  EXPECT_LE(kcla::test::relative_error(y_host.data(), expected.data(), rows), tolerance)
      << rows << " x " << cols << " density " << density;
}

template <class ExecutionSpace>
class CsrSpmv : public kcla::test::OnEveryBackend<ExecutionSpace> {};
TYPED_TEST_SUITE(CsrSpmv, kcla::test::Backends, kcla::test::BackendName);

TYPED_TEST(CsrSpmv, DoubleMatchesReference) {
  check_random_spmv<double, TypeParam>(1000, 700, 0.05, 1e-12);
  check_random_spmv<double, TypeParam>(3, 50000, 0.01, 1e-12);
  check_random_spmv<double, TypeParam>(5000, 1, 0.5, 1e-12);
}

TYPED_TEST(CsrSpmv, FloatMatchesReference) {
  check_random_spmv<float, TypeParam>(2000, 3000, 0.01, 1e-5);
}

TYPED_TEST(CsrSpmv, RejectsWrongVectorLength) {
  using exec = TypeParam;
  using memory = typename exec::memory_space;
  auto gen = kcla::test::rng();
  const auto a_dev = kcla::to_device_csr<double, memory>(kcla::test::random_csr(gen, 4, 5, 0.5));
  Kokkos::View<double*, memory> x("x", 4), y("y", 4);
  EXPECT_THROW(kcla::csr_spmv(exec(), a_dev, x, y), kcla::InvalidArgument);
}

// One CsrSpmv serves many products: new x values and other Views each time, a copy of
// the object included (they share the vendor state), each product right.
TYPED_TEST(CsrSpmv, ReusedForManyVectors) {
  using exec = TypeParam;
  using memory = typename exec::memory_space;
  auto gen = kcla::test::rng();
  const auto a = kcla::test::random_csr(gen, 700, 900, 0.03);
  const auto a_dev = kcla::to_device_csr<float, memory>(a);
  const kcla::CsrSpmv<float, memory> product(a_dev);
  const auto copy = product;
  for (int round = 0; round < 4; ++round) {
    const auto x = kcla::test::random_vector(gen, a.num_cols);
    std::vector<double> expected(a.num_rows);
    kcla::reference_spmv(a, x.data(), expected.data());
    Kokkos::View<float*, memory> x_dev("x", a.num_cols), y_dev("y", a.num_rows);
    auto xh = Kokkos::create_mirror_view(x_dev);
    for (std::int64_t j = 0; j < a.num_cols; ++j) xh(j) = static_cast<float>(x[j]);
    Kokkos::deep_copy(x_dev, xh);
    Kokkos::deep_copy(y_dev, -123.0f);  // poison
    (round % 2 ? copy : product)(exec(), x_dev, y_dev);
    exec().fence();
    auto yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y_dev);
    EXPECT_LE(kcla::test::relative_error(yh.data(), expected.data(), a.num_rows), 1e-5)
        << "round " << round;
  }
  Kokkos::View<float*, memory> short_x("x", 3), y("y", a.num_rows);
  EXPECT_THROW(product(exec(), short_x, y), kcla::InvalidArgument);
}

}  // namespace
