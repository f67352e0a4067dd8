// The whole toolchain on the default execution space: a parallel_for and a
// parallel_reduce checked against plain loops on random data.
#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <cmath>

#include "test_support.hpp"

namespace {

using exec = Kokkos::DefaultExecutionSpace;

// Device lambdas cannot live in a TEST body (a private member function under nvcc).
void check_for_and_reduce() {
  auto gen = kcla::test::rng();
  const int n = 1 << 20;
  const auto a_host = kcla::test::random_vector(gen, n);
  const auto b_host = kcla::test::random_vector(gen, n);

  Kokkos::View<double*> a("a", n), b("b", n), c("c", n);
  Kokkos::deep_copy(
      a, Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
             a_host.data(), n));
  Kokkos::deep_copy(
      b, Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
             b_host.data(), n));
  Kokkos::deep_copy(c, -7.0);  // poison: every element must be written

  Kokkos::parallel_for(
      "axpy", Kokkos::RangePolicy<exec>(0, n), KOKKOS_LAMBDA(int i) { c(i) = 2.5 * a(i) + b(i); });
  double dot = 0;
  Kokkos::parallel_reduce(
      "dot", Kokkos::RangePolicy<exec>(0, n),
      KOKKOS_LAMBDA(int i, double& sum) { sum += c(i) * a(i); }, dot);

  auto c_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
  double expected_dot = 0;
  for (int i = 0; i < n; ++i) {
    const double expected = 2.5 * a_host[i] + b_host[i];
    // Device compilers contract a*b+c into an FMA: allow one rounding of the product.
    ASSERT_NEAR(c_host(i), expected, 1e-15 * (std::abs(2.5 * a_host[i]) + std::abs(b_host[i])))
        << "element " << i;
    expected_dot += expected * a_host[i];
  }
  EXPECT_NEAR(dot, expected_dot, 1e-9 * std::abs(expected_dot) + 1e-9);
}

void check_atomic_histogram() {
  auto gen = kcla::test::rng();
  const int n = 100000, bins = 97;
  std::vector<int> keys(n);
  std::uniform_int_distribution<int> d(0, bins - 1);
  for (auto& k : keys) k = d(gen);
  Kokkos::View<int*> keys_dev("keys", n), hist("hist", bins);
  Kokkos::deep_copy(
      keys_dev,
      Kokkos::View<const int*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
          keys.data(), n));
  Kokkos::parallel_for(
      "histogram", Kokkos::RangePolicy<exec>(0, n),
      KOKKOS_LAMBDA(int i) { Kokkos::atomic_add(&hist(keys_dev(i)), 1); });
  auto hist_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), hist);
  std::vector<int> expected(bins, 0);
  for (int k : keys) ++expected[k];
  for (int b = 0; b < bins; ++b) EXPECT_EQ(hist_host(b), expected[b]) << "bin " << b;
}

}  // namespace

TEST(KokkosToolchain, ParallelForAndReduceMatchPlainLoops) {
  check_for_and_reduce();
}
TEST(KokkosToolchain, AtomicHistogramMatchesPlainLoop) {
  check_atomic_histogram();
}
