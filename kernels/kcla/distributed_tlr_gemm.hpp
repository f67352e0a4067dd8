// C <- alpha op(A) op(B) + beta C over a ProcessGrid, SUMMA-style: for each tile index k of
// the inner dimension, the owners broadcast A's tile column k (their tile rows of it) along
// grid rows and B's tile row k along grid columns, and every rank adds the product of the
// two panels to its blocks of C with the single-process three-stage TLR product. The
// broadcast of step k + 1 is in flight while step k computes (two panel buffers).
// op = T first lays the operand out transposed on the grid (one exchange; detail/
// distributed_transpose.hpp). A and B may each be TLR or dense; at least one is TLR.
//
//   auto plan = kcla::analyze(kcla::Op::N, A, kcla::Op::T, B, C);   // collective, once
//   auto report = kcla::gemm(exec, plan, A, B, 1.0, 0.0, C);       // collective, many times
//   kcla::gemm(exec, kcla::Op::N, A, kcla::Op::T, B, 1.0, 0.0, C);  // one-off
//
// Panels travel from device memory when MPI takes device buffers (mpi_transport.hpp),
// else through host memory; report.transport says which.
#pragma once

#include <kcla/config.hpp>

#if KCLA_HAVE_MPI
#include <kcla/detail/distributed_transpose.hpp>
#include <kcla/detail/mpi_transfer.hpp>
#include <kcla/detail/summa_panel.hpp>
#include <kcla/distributed_dense_matrix.hpp>
#include <kcla/distributed_tlr_matrix.hpp>
#include <kcla/mpi_transport.hpp>
#include <kcla/tlr_gemm.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace kcla {

/// What a distributed product moved (bytes of this rank) and how.
struct DistributedGemmReport {
  int steps = 0;                              ///< SUMMA steps: tiles along the inner dimension
  std::int64_t panel_bytes_received = 0;      ///< broadcast payload received from other ranks
  std::int64_t panel_bytes_sent = 0;          ///< broadcast payload this rank was root of
  std::int64_t transpose_bytes_received = 0;  ///< op = T: the exchange that lays out X^T
  /// The SUMMA model's bytes received by an average rank: (Q-1)/Q |op(A)|/P + (P-1)/P
  /// |op(B)|/Q, with |X| the bytes of X's factors (TLR) or values (dense).
  double model_bytes = 0;
  MpiTransport transport = MpiTransport::host_staged;
};

/// A planned distributed product: every step's panel layouts, single-process plans and
/// operands over the plan's two panel buffers, made once for operands of this structure
/// (grid, shapes, tile ranks). One product at a time per plan (the buffers are its own);
/// copies share them.
template <class AOperand, class BOperand>
class DistributedTlrGemmPlan {
 public:
  using a_traits = detail::DistributedOperandTraits<AOperand>;
  using b_traits = detail::DistributedOperandTraits<BOperand>;
  using scalar = typename a_traits::value_type;
  using memory_space = typename a_traits::memory_space;
  using a_panel = detail::Panel<AOperand>;
  using b_panel = detail::Panel<BOperand>;
  using a_view =
      decltype(std::declval<a_panel>().view(std::declval<Kokkos::View<scalar*, memory_space>>()));
  using b_view =
      decltype(std::declval<b_panel>().view(std::declval<Kokkos::View<scalar*, memory_space>>()));

  /// What gemm() reads (internal).
  struct State {
    Op op_a = Op::N, op_b = Op::N;
    detail::DistributedShape a_in, b_in, a, b;  // as given; after op
    std::int64_t c_rows = 0, c_cols = 0;
    int steps = 0;
    double model_bytes = 0;
    bool staged = false;  // panels through host buffers
    std::vector<a_panel> a_panels;
    std::vector<b_panel> b_panels;
    std::vector<a_view> a_views;  // step k's operands over slot k % 2
    std::vector<b_view> b_views;
    std::vector<TlrGemmPlan> plans;  // empty when this rank holds no block of C
    detail::PanelSlot<scalar, memory_space> slots[2];
  };

  DistributedTlrGemmPlan() = default;
  explicit DistributedTlrGemmPlan(std::shared_ptr<State> state) : state_(std::move(state)) {}
  bool valid() const { return state_ != nullptr; }
  int steps() const { return state_->steps; }
  /// The SUMMA model's bytes received by an average rank (DistributedGemmReport).
  double model_bytes() const { return state_->model_bytes; }
  State& state() const { return *state_; }

 private:
  std::shared_ptr<State> state_;
};

/// Collective over C's grid: plans C <- alpha op(A) op(B) + beta C (see gemm). A, B:
/// DistributedTlrMatrix or DistributedDenseMatrix (at least one TLR), on C's grid, with
/// C's tile / block size.
template <class AOperand, class BOperand, class Scalar, class MemorySpace>
DistributedTlrGemmPlan<AOperand, BOperand> analyze(
    Op op_a, const AOperand& a, Op op_b, const BOperand& b,
    const DistributedDenseMatrix<Scalar, MemorySpace>& c, const TlrGemmOptions& options = {}) {
  using a_traits = detail::DistributedOperandTraits<AOperand>;
  using b_traits = detail::DistributedOperandTraits<BOperand>;
  static_assert(a_traits::valid && b_traits::valid,
                "distributed gemm: A and B must be DistributedTlrMatrix or "
                "DistributedDenseMatrix");
  static_assert(a_traits::is_tlr || b_traits::is_tlr,
                "distributed gemm: at least one of A and B must be TLR");
  static_assert(std::is_same<typename a_traits::value_type, Scalar>::value &&
                    std::is_same<typename b_traits::value_type, Scalar>::value,
                "distributed gemm: A, B and C must have the same scalar type");
  static_assert(std::is_same<typename a_traits::memory_space, MemorySpace>::value &&
                    std::is_same<typename b_traits::memory_space, MemorySpace>::value,
                "distributed gemm: A, B and C must live in the same memory space");
  using plan_type = DistributedTlrGemmPlan<AOperand, BOperand>;
  auto s = std::make_shared<typename plan_type::State>();
  const ProcessGrid& grid = c.grid();
  s->op_a = op_a;
  s->op_b = op_b;
  s->a_in = detail::shape_of(a);
  s->b_in = detail::shape_of(b);
  for (const auto* x : {&s->a_in, &s->b_in})
    if (!x->grid.same_as(grid))
      throw InvalidArgument(std::string("distributed gemm: ") + (x == &s->a_in ? "A" : "B") +
                            " lives on a different process grid from C");
  const int block = c.block_size();
  if (s->a_in.block != block || s->b_in.block != block)
    throw InvalidArgument("distributed gemm: A, B and C must share one tile / block size (C: " +
                          std::to_string(block) + ")");
  s->a = op_a == Op::T ? detail::transposed_shape(s->a_in) : s->a_in;
  s->b = op_b == Op::T ? detail::transposed_shape(s->b_in) : s->b_in;
  if (s->a.rows != c.num_rows() || s->b.cols != c.num_cols() || s->a.cols != s->b.rows)
    throw InvalidArgument("distributed gemm: op(A) is " + std::to_string(s->a.rows) + " x " +
                          std::to_string(s->a.cols) + ", op(B) " + std::to_string(s->b.rows) +
                          " x " + std::to_string(s->b.cols) + ", C " +
                          std::to_string(c.num_rows()) + " x " + std::to_string(c.num_cols()));
  const int P = grid.rows(), Q = grid.cols();
  s->c_rows = static_cast<std::int64_t>(c.local().extent(0));
  s->c_cols = static_cast<std::int64_t>(c.local().extent(1));
  s->steps = BlockCyclic(s->a.cols, block, 1).blocks();
  s->model_bytes = static_cast<double>(s->a.global_bytes(sizeof(Scalar))) * (Q - 1) / Q / P +
                   static_cast<double>(s->b.global_bytes(sizeof(Scalar))) * (P - 1) / P / Q;
  std::int64_t a_max = 0, b_max = 0;
  // Dense panels of 16-bit or tf32 products get leading dimensions the grouped GEMM accepts.
  int ld_multiple = 1;
  if (TlrScalarTraits<Scalar>::kind == ScalarKind::f16 ||
      TlrScalarTraits<Scalar>::kind == ScalarKind::bf16)
    ld_multiple = 8;
  else if (options.math == TlrMath::tf32)
    ld_multiple = 4;
  for (int k = 0; k < s->steps; ++k) {
    s->a_panels.push_back(detail::Panel<AOperand>::column(s->a, k, ld_multiple));
    s->b_panels.push_back(detail::Panel<BOperand>::row(s->b, k, ld_multiple));
    a_max = std::max(a_max, s->a_panels.back().size());
    b_max = std::max(b_max, s->b_panels.back().size());
  }
  const bool staged = !Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible &&
                      !mpi_takes_device_buffers();
  s->staged = staged;
  for (auto& slot : s->slots) {
    slot.a = Kokkos::View<Scalar*, MemorySpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::distributed_gemm::a_panel"), a_max);
    slot.b = Kokkos::View<Scalar*, MemorySpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::distributed_gemm::b_panel"), b_max);
    using staging_view = typename detail::PanelSlot<Scalar, MemorySpace>::staging_view;
    // Staging only where a broadcast has receivers.
    if (staged && Q > 1)
      slot.a_host = staging_view(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::distributed_gemm::a_host"), a_max);
    if (staged && P > 1)
      slot.b_host = staging_view(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::distributed_gemm::b_host"), b_max);
  }
  const bool computes = s->c_rows > 0 && s->c_cols > 0;
  // Ranks without blocks of C plan nothing: agree on errors before any broadcast.
  detail::on_every_rank(grid.comm(), [&] {
    for (int k = 0; k < s->steps; ++k) {
      s->a_views.push_back(s->a_panels[k].view(s->slots[k % 2].a));
      s->b_views.push_back(s->b_panels[k].view(s->slots[k % 2].b));
      if (computes)
        s->plans.push_back(kcla::analyze(Op::N, s->a_views[k], Op::N, s->b_views[k], options));
    }
  });
  return plan_type(std::move(s));
}

/// Collective over C's grid: C <- alpha op(A) op(B) + beta C with a plan from analyze() for
/// operands of this structure (C is not read when beta == 0). Returns when C is complete.
template <class ExecutionSpace, class AOperand, class BOperand, class Scalar, class MemorySpace>
DistributedGemmReport gemm(const ExecutionSpace& exec,
                           const DistributedTlrGemmPlan<AOperand, BOperand>& plan,
                           const AOperand& a_in, const BOperand& b_in, double alpha, double beta,
                           const DistributedDenseMatrix<Scalar, MemorySpace>& c) {
  static_assert(
      std::is_same<Scalar, typename DistributedTlrGemmPlan<AOperand, BOperand>::scalar>::value &&
          std::is_same<MemorySpace,
                       typename DistributedTlrGemmPlan<AOperand, BOperand>::memory_space>::value,
      "distributed gemm: C must have the operands' scalar type and memory space");
  if (!plan.valid()) throw InvalidArgument("distributed gemm: empty plan (use analyze())");
  auto& s = plan.state();
  if (!detail::shape_of(a_in).same_as(s.a_in) || !detail::shape_of(b_in).same_as(s.b_in) ||
      c.num_rows() != s.a.rows || c.num_cols() != s.b.cols || !c.grid().same_as(s.a_in.grid))
    throw InvalidArgument(
        "distributed gemm: the operands differ from the plan's (grid, shape, tile ranks)");
  const ProcessGrid& grid = c.grid();
  DistributedGemmReport report;
  report.steps = s.steps;
  report.model_bytes = s.model_bytes;
  // op(X) = X^T: lay X^T out on the grid (one exchange of the values).
  std::int64_t moved = 0;
  const AOperand a = s.op_a == Op::T ? detail::transposed(a_in, moved) : a_in;
  report.transpose_bytes_received += moved;
  moved = 0;
  const BOperand b = s.op_b == Op::T ? detail::transposed(b_in, moved) : b_in;
  report.transpose_bytes_received += moved;

  const int P = grid.rows(), Q = grid.cols(), p = grid.row(), q = grid.col();
  constexpr bool host_memory =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;
  const bool staged = s.staged;
  report.transport =
      staged || host_memory ? MpiTransport::host_staged : MpiTransport::device_buffers;
  const auto& local_c = c.local();
  if (s.steps == 0) {
    if (s.c_rows * s.c_cols > 0)
      detail::parallel_for_large(
          "kcla::distributed_gemm::scale", exec, s.c_rows * s.c_cols,
          detail::ScaleLocal<std::decay_t<decltype(local_c)>>{local_c, beta, s.c_rows});
    exec.fence();
    return report;
  }
  const std::int64_t bytes = static_cast<std::int64_t>(sizeof(Scalar));
  using range = std::pair<std::int64_t, std::int64_t>;
  // A broadcast with receivers makes MPI (the host) read or write a panel buffer: the device
  // must be done with it first. On one rank everything stays in stream order.
  const bool a_sends = Q > 1, b_sends = P > 1, host_waits = a_sends || b_sends;
  // Packs (roots) and posts the two broadcasts of step k into its slot.
  auto begin = [&](int k) {
    auto& slot = s.slots[k % 2];
    const auto& pa = s.a_panels[k];
    const auto& pb = s.b_panels[k];
    const int a_root = k % Q, b_root = k % P;
    if (q == a_root) pa.pack_column(exec, a, k / Q, slot.a);
    if (p == b_root) pb.pack_row(exec, b, k / P, slot.b);
    if (!host_waits) return;
    exec.fence();
    if (staged && a_sends && q == a_root && pa.size() > 0)
      Kokkos::deep_copy(Kokkos::subview(slot.a_host, range(0, pa.size())),
                        Kokkos::subview(slot.a, range(0, pa.size())));
    if (staged && b_sends && p == b_root && pb.size() > 0)
      Kokkos::deep_copy(Kokkos::subview(slot.b_host, range(0, pb.size())),
                        Kokkos::subview(slot.b, range(0, pb.size())));
    if (a_sends) {
      void* data =
          staged ? static_cast<void*>(slot.a_host.data()) : static_cast<void*>(slot.a.data());
      detail::ibcast_bytes(data, pa.size() * bytes, a_root, grid.row_comm(), slot.requests);
      if (q == a_root)
        report.panel_bytes_sent += pa.size() * bytes * (Q - 1);
      else
        report.panel_bytes_received += pa.size() * bytes;
    }
    if (b_sends) {
      void* data =
          staged ? static_cast<void*>(slot.b_host.data()) : static_cast<void*>(slot.b.data());
      detail::ibcast_bytes(data, pb.size() * bytes, b_root, grid.col_comm(), slot.requests);
      if (p == b_root)
        report.panel_bytes_sent += pb.size() * bytes * (P - 1);
      else
        report.panel_bytes_received += pb.size() * bytes;
    }
  };
  // Waits for step k's panels and adds their product to C.
  auto finish = [&](int k) {
    auto& slot = s.slots[k % 2];
    detail::wait_all(slot.requests);
    const auto& pa = s.a_panels[k];
    const auto& pb = s.b_panels[k];
    if (staged && a_sends && q != k % Q && pa.size() > 0)
      Kokkos::deep_copy(Kokkos::subview(slot.a, range(0, pa.size())),
                        Kokkos::subview(slot.a_host, range(0, pa.size())));
    if (staged && b_sends && p != k % P && pb.size() > 0)
      Kokkos::deep_copy(Kokkos::subview(slot.b, range(0, pb.size())),
                        Kokkos::subview(slot.b_host, range(0, pb.size())));
    if (s.plans.empty()) return;
    kcla::gemm(exec, s.plans[k], s.a_views[k], s.b_views[k], alpha, k == 0 ? beta : 1.0, local_c);
    if (k == 0) detail::share_runtime(s.plans);
  };
  begin(0);
  for (int k = 0; k < s.steps; ++k) {
    // Slot (k + 1) % 2 held step k - 1's panels: its product must be done before MPI
    // overwrites them (on one rank the stream orders repacking after that product).
    if (k + 1 < s.steps) {
      if (host_waits) exec.fence();
      begin(k + 1);
    }
    finish(k);
  }
  exec.fence();
  return report;
}

/// One-off product: analyze, then gemm (repeated products should keep the plan).
template <class ExecutionSpace, class AOperand, class BOperand, class Scalar, class MemorySpace>
DistributedGemmReport gemm(const ExecutionSpace& exec, Op op_a, const AOperand& a, Op op_b,
                           const BOperand& b, double alpha, double beta,
                           const DistributedDenseMatrix<Scalar, MemorySpace>& c,
                           const TlrGemmOptions& options = {}) {
  return gemm(exec, analyze(op_a, a, op_b, b, c, options), a, b, alpha, beta, c);
}

}  // namespace kcla
#endif
