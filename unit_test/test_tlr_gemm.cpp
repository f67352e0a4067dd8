// The TLR product against a dense reference built from the decompressed operands (fresh
// random data each run): every precision, all four op combinations, one or two TLR
// operands, ragged tiles, rank-0 and full-rank tiles, both association orders, workspace
// splits, pipelining, plan reuse, the serial reference backend, and argument checks.
#include <kcla/tlr_gemm.hpp>

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "backends.hpp"
#include "tlr_test_support.hpp"

namespace {

using kcla::Op;
using kcla::test::exec_space;
using kcla::test::HostMatrix;
using kcla::test::memory_space;

enum class Kind { tlr_tlr, tlr_dense, dense_tlr };

const char* name(Kind k) {
  return k == Kind::tlr_tlr ? "TLR x TLR" : k == Kind::tlr_dense ? "TLR x dense" : "dense x TLR";
}

template <class Scalar, class Memory = memory_space>
using dense_view = Kokkos::View<Scalar**, Kokkos::LayoutStride, Memory>;

/// One operand of a product on back end Exec: TLR (random ranks, some 0, one full) or dense.
template <class Scalar, class Exec = exec_space>
struct Operand {
  using memory = typename Exec::memory_space;
  kcla::TlrMatrix<Scalar, memory> tlr;
  dense_view<Scalar, memory> dense;
  HostMatrix host;

  static Operand make(std::mt19937_64& gen, bool as_tlr, std::int64_t rows, std::int64_t cols,
                      int b) {
    Operand x;
    if (as_tlr) {
      x.tlr = kcla::random_tlr<Scalar, memory>(Exec(), rows, cols, b,
                                               kcla::test::random_ranks(gen, rows, cols, b), gen());
      x.host = kcla::test::decompress(x.tlr);
    } else {
      x.dense = kcla::test::padded_view<Scalar, memory>(rows, cols);
      kcla::fill_random(Exec(), x.dense, gen());
      Exec().fence();
      x.host = kcla::test::to_host(x.dense);
    }
    return x;
  }
};

/// Calls f(a_operand, b_operand) with the right static types for `kind`.
template <class Scalar, class Exec, class F>
void dispatch(Kind kind, const Operand<Scalar, Exec>& a, const Operand<Scalar, Exec>& b, F&& f) {
  if (kind == Kind::tlr_tlr)
    f(a.tlr, b.tlr);
  else if (kind == Kind::tlr_dense)
    f(a.tlr, b.dense);
  else
    f(a.dense, b.tlr);
}

struct Case {
  std::int64_t m, n, k;
  int b;
};

/// Runs C <- alpha op(A) op(B) + beta C on back end Exec on fresh random data and returns
/// the relative Frobenius error against the dense reference.
template <class Scalar, class Exec = exec_space>
double product_error(std::mt19937_64& gen, Kind kind, Op op_a, Op op_b, const Case& c,
                     const kcla::TlrGemmOptions& options, int* rectangles = nullptr) {
  const bool a_tlr = kind != Kind::dense_tlr, b_tlr = kind != Kind::tlr_dense;
  using memory = typename Exec::memory_space;
  auto a = Operand<Scalar, Exec>::make(gen, a_tlr, op_a == Op::N ? c.m : c.k,
                                       op_a == Op::N ? c.k : c.m, c.b);
  auto b = Operand<Scalar, Exec>::make(gen, b_tlr, op_b == Op::N ? c.k : c.n,
                                       op_b == Op::N ? c.n : c.k, c.b);
  auto cv = kcla::test::padded_view<Scalar, memory>(c.m, c.n);
  kcla::fill_random(Exec(), cv, gen());
  Exec().fence();
  const HostMatrix c0 = kcla::test::to_host(cv);
  const double alpha = 0.75, beta = -0.5;
  const HostMatrix expected =
      kcla::test::reference_gemm(op_a, a.host, op_b, b.host, alpha, beta, c0);
  dispatch(kind, a, b, [&](const auto& x, const auto& y) {
    const auto plan = kcla::analyze(op_a, x, op_b, y, options);
    if (rectangles) *rectangles = plan.num_rectangles();
    kcla::gemm(Exec(), plan, x, y, alpha, beta, cv);
  });
  Exec().fence();
  return kcla::test::relative_error(kcla::test::to_host(cv), expected);
}

template <class Scalar, class Exec>
void check_all_products(kcla::TlrMath math = kcla::TlrMath::standard) {
  auto gen = kcla::test::rng(static_cast<std::uint64_t>(math) * 7 + sizeof(Scalar));
  const double tol = kcla::test::product_tolerance<Scalar>(math);
  kcla::TlrGemmOptions options;
  options.math = math;
  const Case c{70, 45, 53, 16};  // ragged last tiles in every dimension
  for (Kind kind : {Kind::tlr_tlr, Kind::tlr_dense, Kind::dense_tlr})
    for (Op op_a : {Op::N, Op::T})
      for (Op op_b : {Op::N, Op::T}) {
        const double err = product_error<Scalar, Exec>(gen, kind, op_a, op_b, c, options);
        EXPECT_LE(err, tol) << name(kind) << " op(A)=" << (op_a == Op::N ? "N" : "T")
                            << " op(B)=" << (op_b == Op::N ? "N" : "T");
      }
}

// Every precision, op combination and operand kind on every enabled back end.
template <class ExecutionSpace>
class TlrGemmOnEveryBackend : public kcla::test::OnEveryBackend<ExecutionSpace> {};
TYPED_TEST_SUITE(TlrGemmOnEveryBackend, kcla::test::Backends, kcla::test::BackendName);

TYPED_TEST(TlrGemmOnEveryBackend, AllOpsAndOperandKindsFp64) {
  check_all_products<double, TypeParam>();
}
TYPED_TEST(TlrGemmOnEveryBackend, AllOpsAndOperandKindsFp32) {
  check_all_products<float, TypeParam>();
}
TYPED_TEST(TlrGemmOnEveryBackend, AllOpsAndOperandKindsTf32) {
  check_all_products<float, TypeParam>(kcla::TlrMath::tf32);
}
TYPED_TEST(TlrGemmOnEveryBackend, AllOpsAndOperandKindsFp16) {
  check_all_products<Kokkos::Experimental::half_t, TypeParam>();
}
TYPED_TEST(TlrGemmOnEveryBackend, AllOpsAndOperandKindsBf16) {
  check_all_products<kcla::bhalf_t, TypeParam>();
}

TEST(TlrGemm, OddTileSizeAndTinyShapes) {
  auto gen = kcla::test::rng();
  for (const Case& c :
       {Case{23, 19, 31, 7}, Case{1, 1, 1, 4}, Case{5, 9, 3, 8}, Case{16, 16, 16, 16}})
    for (Kind kind : {Kind::tlr_tlr, Kind::tlr_dense, Kind::dense_tlr})
      for (Op op_a : {Op::N, Op::T})
        for (Op op_b : {Op::N, Op::T})
          EXPECT_LE(product_error<double>(gen, kind, op_a, op_b, c, {}), 1e-12)
              << name(kind) << " " << c.m << "x" << c.n << "x" << c.k << " b " << c.b;
}

TEST(TlrGemm, BothAssociationOrdersAgree) {
  auto gen = kcla::test::rng();
  const Case c{60, 52, 44, 8};
  for (auto order :
       {kcla::TlrAssociation::right, kcla::TlrAssociation::left, kcla::TlrAssociation::automatic})
    for (Op op_a : {Op::N, Op::T})
      for (Op op_b : {Op::N, Op::T}) {
        kcla::TlrGemmOptions o;
        o.association = order;
        EXPECT_LE(product_error<double>(gen, Kind::tlr_tlr, op_a, op_b, c, o), 1e-12)
            << "order " << static_cast<int>(order);
      }
}

/// The same operands multiplied under several plans give the same C.
template <class Scalar>
void check_workspace_splits(double tol) {
  auto gen = kcla::test::rng(sizeof(Scalar));
  const Case c{80, 72, 56, 8};
  for (Kind kind : {Kind::tlr_tlr, Kind::tlr_dense, Kind::dense_tlr}) {
    auto a = Operand<Scalar>::make(gen, kind != Kind::dense_tlr, c.m, c.k, c.b);
    auto b = Operand<Scalar>::make(gen, kind != Kind::tlr_dense, c.n, c.k, c.b);  // op(B) = B^T
    auto c_init = kcla::test::padded_view<Scalar, memory_space>(c.m, c.n);
    kcla::fill_random(exec_space(), c_init, gen());
    HostMatrix first;
    int variant = 0;
    for (int runs : {1, 3, 7, 1000})
      for (bool pipelined : {false, true}) {
        dispatch(kind, a, b, [&](const auto& x, const auto& y) {
          kcla::TlrGemmOptions o;
          o.tuning.pipelined = pipelined;
          o.workspace_bytes = kcla::workspace_bytes(Op::N, x, Op::T, y, runs, o);
          const auto plan = kcla::analyze(Op::N, x, Op::T, y, o);
          EXPECT_LE(plan.workspace_bytes(), o.workspace_bytes);
          EXPECT_LE(plan.num_rectangles(), runs);
          if (runs == 7) {
            EXPECT_GT(plan.num_rectangles(), 1) << plan.describe();
          }
          if (pipelined && plan.num_rectangles() > 1) {
            EXPECT_EQ(plan.num_arenas(), 2);
          }
          auto cv = kcla::test::padded_view<Scalar, memory_space>(c.m, c.n);
          Kokkos::deep_copy(cv, c_init);
          kcla::gemm(exec_space(), plan, x, y, 1.0, 0.5, cv);
          exec_space().fence();
          const HostMatrix got = kcla::test::to_host(cv);
          if (variant++ == 0)
            first = got;
          else
            EXPECT_LE(kcla::test::relative_error(got, first), tol)
                << name(kind) << " runs " << runs << " pipelined " << pipelined;
        });
      }
  }
}

TEST(TlrGemm, WorkspaceLimitedEqualsUnlimited) {
  check_workspace_splits<double>(1e-13);
  check_workspace_splits<kcla::bhalf_t>(1e-2);
}

TEST(TlrGemm, PlanReusedOnNewFactorValues) {
  auto gen = kcla::test::rng();
  const std::int64_t m = 50, n = 40, k = 36;
  const int b = 8;
  const auto ra = kcla::test::random_ranks(gen, m, k, b),
             rb = kcla::test::random_ranks(gen, n, k, b);
  auto a = kcla::random_tlr<float, memory_space>(exec_space(), m, k, b, ra, gen());
  auto bm = kcla::random_tlr<float, memory_space>(exec_space(), n, k, b, rb, gen());
  const auto plan = kcla::analyze(Op::N, a, Op::T, bm);
  Kokkos::View<float**, Kokkos::LayoutLeft, memory_space> c("c", m, n);
  const HostMatrix zero{m, n, std::vector<double>(static_cast<std::size_t>(m * n), 0.0)};
  for (int round = 0; round < 3; ++round) {
    if (round == 1) {  // new values in the same matrices
      kcla::fill_random_factors(exec_space(), a, gen());
      kcla::fill_random_factors(exec_space(), bm, gen());
    }
    if (round == 2) {  // new matrices (new addresses) with the same structure
      a = kcla::random_tlr<float, memory_space>(exec_space(), m, k, b, ra, gen());
      bm = kcla::random_tlr<float, memory_space>(exec_space(), n, k, b, rb, gen());
    }
    kcla::gemm(exec_space(), plan, a, bm, 1.0, 0.0, c);
    exec_space().fence();
    const HostMatrix expected = kcla::test::reference_gemm(
        Op::N, kcla::test::decompress(a), Op::T, kcla::test::decompress(bm), 1.0, 0.0, zero);
    EXPECT_LE(kcla::test::relative_error(kcla::test::to_host(c), expected), 1e-5)
        << "round " << round;
  }
}

/// The fast backend (cuBLAS on CUDA, BLAS on the host) against the serial reference loops
/// on the host, on identical operands (the generator is backend-independent).
template <class Scalar>
void check_against_reference_backend(double tol) {
  auto gen = kcla::test::rng(sizeof(Scalar));
  using host = Kokkos::HostSpace;
  const std::int64_t m = 41, n = 35, k = 48;
  const int b = 8;
  const auto ra = kcla::test::random_ranks(gen, k, m, b),
             rb = kcla::test::random_ranks(gen, k, n, b);
  const auto sa = gen(), sb = gen(), sc = gen();
  auto a = kcla::random_tlr<Scalar, memory_space>(exec_space(), k, m, b, ra, sa);
  auto bm = kcla::random_tlr<Scalar, memory_space>(exec_space(), k, n, b, rb, sb);
  auto ah = kcla::random_tlr<Scalar, host>(kcla::test::host_exec(), k, m, b, ra, sa);
  auto bh = kcla::random_tlr<Scalar, host>(kcla::test::host_exec(), k, n, b, rb, sb);
  Kokkos::View<Scalar**, Kokkos::LayoutLeft, memory_space> c("c", m, n);
  Kokkos::View<Scalar**, Kokkos::LayoutLeft, host> ch("ch", m, n);
  kcla::fill_random(exec_space(), c, sc);
  kcla::fill_random(kcla::test::host_exec(), ch, sc);
  for (auto order : {kcla::TlrAssociation::right, kcla::TlrAssociation::left}) {
    kcla::TlrGemmOptions o;
    o.association = order;
    o.workspace_bytes = kcla::workspace_bytes(Op::T, a, Op::N, bm, 4, o);
    kcla::gemm(exec_space(), Op::T, a, Op::N, bm, 1.25, 0.5, c, o);
    o.backend = kcla::TlrBackend::reference;
    kcla::gemm(kcla::test::host_exec(), Op::T, ah, Op::N, bh, 1.25, 0.5, ch, o);
    exec_space().fence();
    EXPECT_LE(kcla::test::relative_error(kcla::test::to_host(c), kcla::test::to_host(ch)), tol)
        << "order " << static_cast<int>(order);
  }
}

TEST(TlrGemm, MatchesSerialReferenceBackend) {
  check_against_reference_backend<double>(1e-13);
  check_against_reference_backend<float>(1e-5);
  check_against_reference_backend<Kokkos::Experimental::half_t>(1e-2);
  check_against_reference_backend<kcla::bhalf_t>(3e-2);
}

/// Every launch form of the cuBLAS backend (grouped, strided or pointer batched, one GEMM
/// per task) gives the product: random ranks (many groups) and uniform ranks (one group per
/// stage, equally spaced addresses), pipelined over several rectangles. Host backends
/// accept the options and ignore them.
template <class Scalar>
void check_launch_forms(double tol) {
  auto gen = kcla::test::rng(sizeof(Scalar) + 101);
  const std::int64_t m = 64, n = 48, k = 56;
  const int b = 8;
  for (bool uniform : {false, true}) {
    const auto ra = uniform ? std::vector<int>(8 * 7, 3) : kcla::test::random_ranks(gen, m, k, b);
    const auto rb = uniform ? std::vector<int>(7 * 6, 5) : kcla::test::random_ranks(gen, k, n, b);
    auto a = kcla::random_tlr<Scalar, memory_space>(exec_space(), m, k, b, ra, gen());
    auto bm = kcla::random_tlr<Scalar, memory_space>(exec_space(), k, n, b, rb, gen());
    auto c0 = kcla::test::padded_view<Scalar, memory_space>(m, n);
    kcla::fill_random(exec_space(), c0, gen());
    exec_space().fence();
    const HostMatrix expected =
        kcla::test::reference_gemm(Op::N, kcla::test::decompress(a), Op::N,
                                   kcla::test::decompress(bm), 0.5, 2.0, kcla::test::to_host(c0));
    for (auto order : {kcla::TlrAssociation::right, kcla::TlrAssociation::left})
      for (auto coupling : {kcla::TlrLaunch::automatic, kcla::TlrLaunch::grouped,
                            kcla::TlrLaunch::batched, kcla::TlrLaunch::per_task})
        for (auto final_launch : {kcla::TlrLaunch::automatic, kcla::TlrLaunch::grouped,
                                  kcla::TlrLaunch::batched, kcla::TlrLaunch::per_task}) {
          kcla::TlrGemmOptions o;
          o.association = order;
          o.tuning.coupling_launch = coupling;
          o.tuning.final_launch = final_launch;
          o.tuning.rectangles = 3;
          const auto plan = kcla::analyze(Op::N, a, Op::N, bm, o);
          EXPECT_GT(plan.num_rectangles(), 1);
          auto c = kcla::test::padded_view<Scalar, memory_space>(m, n);
          Kokkos::deep_copy(c, c0);
          kcla::gemm(exec_space(), plan, a, bm, 0.5, 2.0, c);
          exec_space().fence();
          EXPECT_LE(kcla::test::relative_error(kcla::test::to_host(c), expected), tol)
              << (uniform ? "uniform" : "random") << " ranks, order " << static_cast<int>(order)
              << ", coupling " << static_cast<int>(coupling) << ", final "
              << static_cast<int>(final_launch);
        }
  }
}

TEST(TlrGemm, EveryLaunchFormGivesTheProduct) {
  check_launch_forms<double>(1e-12);
  check_launch_forms<float>(1e-5);
  check_launch_forms<Kokkos::Experimental::half_t>(1e-2);
}

TEST(TlrGemm, AutomaticRectangles) {
  const int q = 8, b = 16, r = 4;
  auto a = kcla::random_tlr<double, memory_space>(exec_space(), q * b, q * b, b,
                                                  std::vector<int>(q * q, r), 1);
  auto bm = kcla::random_tlr<double, memory_space>(exec_space(), q * b, q * b, b,
                                                   std::vector<int>(q * q, r), 2);
  // Small products run as one rectangle by default.
  EXPECT_EQ(kcla::analyze(Op::N, a, Op::N, bm).num_rectangles(), 1);
  // A target number of rectangles without a budget: at most that many, two arenas when
  // pipelined, and less workspace than one rectangle.
  kcla::TlrGemmOptions o;
  o.tuning.rectangles = 4;
  const auto split = kcla::analyze(Op::N, a, Op::N, bm, o);
  EXPECT_GT(split.num_rectangles(), 1);
  EXPECT_LE(split.num_rectangles(), 4);
  EXPECT_EQ(split.num_arenas(), 2);
  EXPECT_LT(split.workspace_bytes(), kcla::analyze(Op::N, a, Op::N, bm).workspace_bytes());
  // An explicit budget wins over the target.
  o.workspace_bytes = kcla::workspace_bytes(Op::N, a, Op::N, bm, 1, o);
  EXPECT_EQ(kcla::analyze(Op::N, a, Op::N, bm, o).num_rectangles(), 1);
  kcla::TlrGemmOptions bad;
  bad.tuning.rectangles = -1;
  EXPECT_THROW(kcla::analyze(Op::N, a, Op::N, bm, bad), kcla::InvalidArgument);
}

TEST(TlrGemm, AllRanksZeroScalesC) {
  const std::int64_t m = 20, n = 12, k = 9;
  auto a = kcla::random_tlr<double, memory_space>(exec_space(), m, k, 8, std::vector<int>(6, 0), 1);
  auto b = kcla::random_tlr<double, memory_space>(exec_space(), k, n, 8, std::vector<int>(4, 0), 2);
  Kokkos::View<double**, Kokkos::LayoutLeft, memory_space> c("c", m, n);
  Kokkos::deep_copy(c, 2.0);
  kcla::gemm(exec_space(), Op::N, a, Op::N, b, 1.0, -1.5, c);
  exec_space().fence();
  for (double v : kcla::test::to_host(c).v) EXPECT_EQ(v, -3.0);
}

TEST(TlrGemm, BetaZeroDoesNotReadC) {
  auto gen = kcla::test::rng();
  const Case cs{30, 26, 22, 8};
  auto a = Operand<double>::make(gen, true, cs.m, cs.k, cs.b);
  auto b = Operand<double>::make(gen, true, cs.k, cs.n, cs.b);
  Kokkos::View<double**, Kokkos::LayoutLeft, memory_space> c("c", cs.m, cs.n);
  Kokkos::deep_copy(c, std::numeric_limits<double>::quiet_NaN());
  kcla::gemm(exec_space(), Op::N, a.tlr, Op::N, b.tlr, 1.0, 0.0, c);
  exec_space().fence();
  const HostMatrix zero{cs.m, cs.n,
                        std::vector<double>(static_cast<std::size_t>(cs.m * cs.n), 0.0)};
  const HostMatrix expected =
      kcla::test::reference_gemm(Op::N, a.host, Op::N, b.host, 1.0, 0.0, zero);
  EXPECT_LE(kcla::test::relative_error(kcla::test::to_host(c), expected), 1e-12);
}

TEST(TlrGemm, PlanCountsFlopsAndChoosesOrderFromRanks) {
  // Uniform rank r, q x q tiles of size b: right-associative stage 3 is
  // sum_i 2 b (q b) (q r); stage 1 is q GEMMs (q r) x (q r) x b; stage 2 q^3 (r x b x r).
  const int q = 4, b = 16, r = 4;
  auto a = kcla::random_tlr<double, memory_space>(exec_space(), q * b, q * b, b,
                                                  std::vector<int>(q * q, r), 1);
  auto bm = kcla::random_tlr<double, memory_space>(exec_space(), q * b, q * b, b,
                                                   std::vector<int>(q * q, r), 2);
  const auto plan = kcla::analyze(Op::N, a, Op::N, bm);
  EXPECT_EQ(plan.num_rectangles(), 1);
  EXPECT_DOUBLE_EQ(plan.stage_flops(1), q * 2.0 * (q * r) * (q * r) * b);
  EXPECT_DOUBLE_EQ(plan.stage_flops(2), 2.0 * q * q * q * r * b * r);
  EXPECT_DOUBLE_EQ(plan.stage_flops(3), q * 2.0 * b * (q * b) * (q * r));
  EXPECT_EQ(plan.num_right_rectangles(), 1);
  // Large ranks in A, small in B: the right order's final GEMMs reduce over rho_i = 12 q,
  // the left order's over gamma_j = q, and stage 2 costs the same: left wins.
  auto a_big = kcla::random_tlr<double, memory_space>(exec_space(), q * b, q * b, b,
                                                      std::vector<int>(q * q, 12), 3);
  auto b_small = kcla::random_tlr<double, memory_space>(exec_space(), q * b, q * b, b,
                                                        std::vector<int>(q * q, 1), 4);
  const auto plan_left = kcla::analyze(Op::N, a_big, Op::N, b_small);
  EXPECT_EQ(plan_left.num_right_rectangles(), 0) << plan_left.describe();
}

TEST(TlrGemm, RejectsBadArguments) {
  auto a =
      kcla::random_tlr<double, memory_space>(exec_space(), 20, 12, 4, std::vector<int>(15, 1), 1);
  auto b =
      kcla::random_tlr<double, memory_space>(exec_space(), 12, 8, 4, std::vector<int>(6, 1), 2);
  auto b_other_tile =
      kcla::random_tlr<double, memory_space>(exec_space(), 12, 8, 3, std::vector<int>(12, 1), 2);
  auto b_other_ranks =
      kcla::random_tlr<double, memory_space>(exec_space(), 12, 8, 4, std::vector<int>(6, 2), 2);
  Kokkos::View<double**, Kokkos::LayoutLeft, memory_space> c("c", 20, 8), c_bad("c", 20, 9);
  using kcla::InvalidArgument;
  EXPECT_THROW(kcla::gemm(exec_space(), Op::T, a, Op::N, b, 1.0, 0.0, c), InvalidArgument);
  EXPECT_THROW(kcla::gemm(exec_space(), Op::N, a, Op::N, b_other_tile, 1.0, 0.0, c),
               InvalidArgument);
  EXPECT_THROW(kcla::gemm(exec_space(), Op::N, a, Op::N, b, 1.0, 0.0, c_bad), InvalidArgument);
  const auto plan = kcla::analyze(Op::N, a, Op::N, b);
  EXPECT_THROW(kcla::gemm(exec_space(), plan, a, b_other_ranks, 1.0, 0.0, c), InvalidArgument);
  EXPECT_THROW(kcla::gemm(exec_space(), kcla::TlrGemmPlan(), a, b, 1.0, 0.0, c), InvalidArgument);
  kcla::TlrGemmOptions tiny;
  tiny.workspace_bytes = 1;
  EXPECT_THROW(kcla::analyze(Op::N, a, Op::N, b, tiny), InvalidArgument);
  kcla::TlrGemmOptions tf32;
  tf32.math = kcla::TlrMath::tf32;
  EXPECT_THROW(kcla::analyze(Op::N, a, Op::N, b, tf32), InvalidArgument);  // tf32 needs float
  Kokkos::View<double**, Kokkos::LayoutLeft, memory_space> dense_a("a", 20, 12);
  kcla::TlrGemmOptions left;
  left.association = kcla::TlrAssociation::left;
  EXPECT_THROW(kcla::analyze(Op::N, dense_a, Op::N, b, left), InvalidArgument);
  // A row-major C.
  Kokkos::View<double**, Kokkos::LayoutStride, memory_space> c_rows(
      "c_rows", Kokkos::LayoutStride(20, 8, 8, 1));
  EXPECT_THROW(kcla::gemm(exec_space(), plan, a, b, 1.0, 0.0, c_rows), InvalidArgument);
  // bf16 dense operands need 16-byte aligned columns.
  auto a16 = kcla::random_tlr<kcla::bhalf_t, memory_space>(exec_space(), 16, 13, 8,
                                                           std::vector<int>(4, 1), 1);
  Kokkos::View<kcla::bhalf_t**, Kokkos::LayoutLeft, memory_space> b16("b16", 13, 5),
      c16("c16", 16, 5);
  EXPECT_THROW(kcla::gemm(exec_space(), Op::N, a16, Op::N, b16, 1.0, 0.0, c16), InvalidArgument);
  // 16-bit products need tile sizes that are multiples of 8.
  auto a16_odd = kcla::random_tlr<kcla::bhalf_t, memory_space>(exec_space(), 12, 12, 6,
                                                               std::vector<int>(4, 1), 1);
  EXPECT_THROW(kcla::analyze(Op::N, a16_odd, Op::N, a16_odd), InvalidArgument);
}

}  // namespace
