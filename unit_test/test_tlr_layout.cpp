// TLR storage: layout arithmetic (prefixes, rounding, offsets), random operands (padding
// is zero), decompression and the matrix-vector product against dense references.
#include <kcla/detail/large_range.hpp>
#include <kcla/tlr_layout.hpp>
#include <kcla/tlr_matvec.hpp>

#include <gtest/gtest.h>

#include "tlr_test_support.hpp"

namespace {

using kcla::test::exec_space;
using kcla::test::HostMatrix;
using kcla::test::memory_space;

TEST(TlrLayout, PrefixesOffsetsAndRounding) {
  // 3 x 2 tiles of size 4 over a 10 x 7 matrix: heights 4 4 2, widths 4 3.
  const kcla::TlrLayout l(10, 7, 4, {1, 0, 3, 2, 2, 1}, /*rank_multiple=*/2,
                          /*leading_dim_multiple=*/8);
  EXPECT_EQ(l.tile_rows(), 3);
  EXPECT_EQ(l.tile_cols(), 2);
  EXPECT_EQ(l.tile_height(2), 2);
  EXPECT_EQ(l.tile_width(1), 3);
  EXPECT_EQ(l.leading_dim(), 8);
  EXPECT_EQ(l.stored_rank(0, 0), 2);
  EXPECT_EQ(l.stored_rank(0, 1), 0);
  EXPECT_EQ(l.stored_rank(1, 0), 4);
  EXPECT_EQ(l.rank(1, 0), 3);
  // Outer panels (tile rows): widths 2, 6, 4.
  EXPECT_EQ(l.outer_prefix(1, 1), 4);
  EXPECT_EQ(l.outer_width(1), 6);
  EXPECT_EQ(l.outer_panel_start(2), 8);
  EXPECT_EQ(l.outer_columns(), 12);
  EXPECT_EQ(l.outer_offset(1, 1), 8 * (2 + 4));
  // Inner panels (tile columns): column 0 holds tiles (0,0) (1,0) (2,0): 2 + 4 + 2.
  EXPECT_EQ(l.inner_prefix(0, 2), 6);
  EXPECT_EQ(l.inner_width(0), 8);
  EXPECT_EQ(l.inner_width(1), 0 + 2 + 2);
  EXPECT_EQ(l.inner_offset(2, 1), 8 * (8 + 2));
  EXPECT_EQ(l.inner_size(), 8 * 12);
  EXPECT_TRUE(l.same_structure(kcla::TlrLayout(10, 7, 4, {1, 0, 3, 2, 2, 1}, 2, 8)));
  EXPECT_FALSE(l.same_structure(kcla::TlrLayout(10, 7, 4, {1, 0, 3, 2, 2, 0}, 2, 8)));
}

TEST(TlrLayout, RejectsBadRanks) {
  EXPECT_THROW(kcla::TlrLayout(10, 7, 4, {1, 0, 3}), kcla::InvalidArgument);
  EXPECT_THROW(kcla::TlrLayout(10, 7, 4, {5, 0, 0, 0, 0, 0}), kcla::InvalidArgument);
  EXPECT_THROW(kcla::TlrLayout(10, 7, 4, {0, 0, 0, 0, 3, 0}), kcla::InvalidArgument);  // 2 x 4
  EXPECT_THROW(kcla::TlrLayout(10, 7, 4, {-1, 0, 0, 0, 0, 0}), kcla::InvalidArgument);
  EXPECT_THROW(kcla::TlrLayout(10, 7, 0, {}), kcla::InvalidArgument);
}

template <class Scalar>
void check_random_padding() {
  auto gen = kcla::test::rng(sizeof(Scalar));
  const std::int64_t m = 37, n = 29;
  const int b = 16;
  auto a = kcla::random_tlr<Scalar, memory_space>(exec_space(), m, n, b,
                                                  kcla::test::random_ranks(gen, m, n, b), gen());
  const auto& l = a.layout();
  auto u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.outer_factors());
  auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.inner_factors());
  using traits = kcla::TlrScalarTraits<Scalar>;
  for (int i = 0; i < l.tile_rows(); ++i)
    for (int j = 0; j < l.tile_cols(); ++j) {
      for (int c = 0; c < l.stored_rank(i, j); ++c)
        for (int r = 0; r < l.leading_dim(); ++r) {
          const double x = traits::widen(u(l.outer_offset(i, j) + c * l.leading_dim() + r));
          const double y = traits::widen(v(l.inner_offset(i, j) + c * l.leading_dim() + r));
          const bool logical_col = c < l.rank(i, j);
          if (!logical_col || r >= l.tile_height(i)) {
            EXPECT_EQ(x, 0.0) << "U padding at tile " << i << "," << j;
          }
          if (!logical_col || r >= l.tile_width(j)) {
            EXPECT_EQ(y, 0.0) << "V padding at tile " << i << "," << j;
          }
        }
    }
  EXPECT_EQ(l.rank_multiple(), traits::rank_multiple);
}

TEST(TlrRandom, PaddingIsZero) {
  check_random_padding<double>();
  check_random_padding<float>();
  check_random_padding<kcla::bhalf_t>();
  check_random_padding<Kokkos::Experimental::half_t>();
}

TEST(TlrLaunch, LongRangesRunInChunksThatCoverEverything) {
  // Kokkos 3.4 on CUDA hangs on 2^32+ iterations; kcla splits long ranges. Check the
  // split with a tiny chunk: every element written once, none outside.
  Kokkos::View<double*, memory_space> v("v", 1000);
  Kokkos::deep_copy(v, -1.0);
  kcla::detail::fill_large(Kokkos::View<double*, memory_space>(v.data() + 1, 997), 2.0, 7);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  EXPECT_EQ(h(0), -1.0);
  EXPECT_EQ(h(999), -1.0);
  EXPECT_EQ(h(998), -1.0);
  for (int i = 1; i < 998; ++i) ASSERT_EQ(h(i), 2.0) << i;
}

TEST(TlrRandom, SameValuesOnHostAndDevice) {
  auto gen = kcla::test::rng();
  const auto ranks = kcla::test::random_ranks(gen, 40, 33, 8);
  const auto seed = gen();
  auto d = kcla::random_tlr<float, memory_space>(exec_space(), 40, 33, 8, ranks, seed);
  auto h =
      kcla::random_tlr<float, Kokkos::HostSpace>(kcla::test::host_exec(), 40, 33, 8, ranks, seed);
  const HostMatrix dd = kcla::test::decompress(d), hh = kcla::test::decompress(h);
  EXPECT_EQ(kcla::test::relative_error(dd, hh), 0.0);
}

template <class Scalar>
void check_to_dense(double tolerance) {
  auto gen = kcla::test::rng(sizeof(Scalar));
  const std::int64_t m = 45, n = 38;
  const int b = 16;
  auto a = kcla::random_tlr<Scalar, memory_space>(exec_space(), m, n, b,
                                                  kcla::test::random_ranks(gen, m, n, b), gen());
  auto d = kcla::to_dense(exec_space(), a);
  exec_space().fence();
  EXPECT_LE(kcla::test::relative_error(kcla::test::to_host(d), kcla::test::decompress(a)),
            tolerance);
}

TEST(TlrToDense, MatchesFactorProducts) {
  check_to_dense<double>(1e-15);
  check_to_dense<float>(1e-6);
  check_to_dense<kcla::bhalf_t>(1e-2);
  check_to_dense<Kokkos::Experimental::half_t>(2e-3);
}

template <class Scalar>
void check_matvec(double tolerance) {
  auto gen = kcla::test::rng(sizeof(Scalar));
  const std::int64_t m = 53, n = 41;
  const int b = 16;
  auto a = kcla::random_tlr<Scalar, memory_space>(exec_space(), m, n, b,
                                                  kcla::test::random_ranks(gen, m, n, b), gen());
  const HostMatrix ad = kcla::test::decompress(a);
  for (kcla::Op op : {kcla::Op::N, kcla::Op::T}) {
    const std::int64_t in = op == kcla::Op::N ? n : m, out = op == kcla::Op::N ? m : n;
    Kokkos::View<Scalar**, Kokkos::LayoutLeft, memory_space> x2("x", in, 1), y2("y", out, 1);
    kcla::fill_random(exec_space(), x2, gen());
    kcla::fill_random(exec_space(), y2, gen());
    auto x = Kokkos::subview(x2, Kokkos::ALL(), 0);
    auto y = Kokkos::subview(y2, Kokkos::ALL(), 0);
    const HostMatrix xh = kcla::test::to_host(x2), y0 = kcla::test::to_host(y2);
    const double alpha = 1.5, beta = -0.25;
    const HostMatrix expected =
        kcla::test::reference_gemm(op, ad, kcla::Op::N, xh, alpha, beta, y0);
    kcla::matvec(exec_space(), op, alpha, a, x, beta, y);
    exec_space().fence();
    EXPECT_LE(kcla::test::relative_error(kcla::test::to_host(y2), expected), tolerance)
        << (op == kcla::Op::N ? "N" : "T");
  }
}

TEST(TlrMatvec, MatchesDense) {
  check_matvec<double>(1e-13);
  check_matvec<float>(1e-5);
  check_matvec<kcla::bhalf_t>(2e-2);
}

TEST(TlrMatvec, RejectsWrongLengths) {
  auto a =
      kcla::random_tlr<double, memory_space>(exec_space(), 20, 10, 8, std::vector<int>(6, 2), 1);
  Kokkos::View<double*, memory_space> x("x", 20), y("y", 20);
  EXPECT_THROW(kcla::matvec(exec_space(), kcla::Op::N, 1.0, a, x, 0.0, y), kcla::InvalidArgument);
}

}  // namespace
