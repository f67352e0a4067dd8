// C <- alpha op(A) op(B) + beta C over a ProcessGrid, SUMMA-style: for each tile index k of
// the inner dimension, the owners broadcast A's tile column k (their tile rows of it) along
// grid rows and B's tile row k along grid columns, and every rank adds the product of the
// two panels to its blocks of C with the single-process three-stage TLR product. The
// broadcast of step k + 1 is in flight while step k computes (two panel buffers).
// op = T first lays the operand out transposed on the grid (one exchange; detail/
// distributed_transpose.hpp). A and B may each be TLR or dense; at least one is TLR.
//
//   kcla::ProcessGrid grid(MPI_COMM_WORLD);
//   auto report = kcla::gemm(exec, kcla::Op::N, A, kcla::Op::T, B, 1.0, 0.0, C);  // collective
//
// Panels travel from device memory when MPI takes device buffers (mpi_transport.hpp),
// else through host memory; report.transport says which.
#pragma once

#include <kcla/config.hpp>

#if KCLA_HAVE_MPI
#include <kcla/detail/distributed_transpose.hpp>
#include <kcla/detail/mpi_transfer.hpp>
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

namespace detail {

template <class T>
struct DistributedOperandTraits {
  static constexpr bool valid = false;
};
template <class Scalar, class MemorySpace>
struct DistributedOperandTraits<DistributedTlrMatrix<Scalar, MemorySpace>> {
  static constexpr bool valid = true, is_tlr = true;
  using value_type = Scalar;
  using memory_space = MemorySpace;
};
template <class Scalar, class MemorySpace>
struct DistributedOperandTraits<DistributedDenseMatrix<Scalar, MemorySpace>> {
  static constexpr bool valid = true, is_tlr = false;
  using value_type = Scalar;
  using memory_space = MemorySpace;
};

template <class Scalar, class MemorySpace>
int distributed_block(const DistributedTlrMatrix<Scalar, MemorySpace>& x) {
  return x.tile_size();
}
template <class Scalar, class MemorySpace>
int distributed_block(const DistributedDenseMatrix<Scalar, MemorySpace>& x) {
  return x.block_size();
}

template <class Scalar, class MemorySpace>
std::int64_t global_bytes(const DistributedTlrMatrix<Scalar, MemorySpace>& x) {
  return static_cast<std::int64_t>(x.global_bytes());
}
template <class Scalar, class MemorySpace>
std::int64_t global_bytes(const DistributedDenseMatrix<Scalar, MemorySpace>& x) {
  return x.num_rows() * x.num_cols() * static_cast<std::int64_t>(sizeof(Scalar));
}

/// The panel of one SUMMA step, as the single-process product takes it: for A, this grid
/// row's tiles of tile column k (local rows x width k); for B, this grid column's tiles of
/// tile row k (width k x local columns). Sizes come from the global structure, so every
/// rank of a broadcast agrees on them; the root packs from its local matrix.
template <class Operand>
struct Panel;

template <class Scalar, class MemorySpace>
struct Panel<DistributedTlrMatrix<Scalar, MemorySpace>> {
  using operand = DistributedTlrMatrix<Scalar, MemorySpace>;
  using factor_view = typename TlrMatrix<Scalar, MemorySpace>::factor_view;
  std::shared_ptr<const TlrLayout> layout;

  // A side: tile column k over this grid row's tile rows.
  static Panel column(const operand& x, int k) {
    const BlockCyclic rmap = x.row_map();
    const int p = x.grid().row(), lr = rmap.local_blocks(p);
    std::vector<int> ranks(static_cast<std::size_t>(lr));
    for (int i = 0; i < lr; ++i) ranks[i] = x.structure().rank(rmap.global_block(p, i), k);
    return {std::make_shared<const TlrLayout>(
        rmap.local_extent(p), x.structure().tile_width(k), x.tile_size(), std::move(ranks),
        x.structure().rank_multiple(), x.structure().leading_dim())};
  }
  // B side: tile row k over this grid column's tile columns.
  static Panel row(const operand& x, int k) {
    const BlockCyclic cmap = x.col_map();
    const int q = x.grid().col(), lc = cmap.local_blocks(q);
    std::vector<int> ranks(static_cast<std::size_t>(lc));
    for (int j = 0; j < lc; ++j) ranks[j] = x.structure().rank(k, cmap.global_block(q, j));
    return {std::make_shared<const TlrLayout>(
        x.structure().tile_height(k), cmap.local_extent(q), x.tile_size(), std::move(ranks),
        x.structure().rank_multiple(), x.structure().leading_dim())};
  }
  std::int64_t size() const { return layout->outer_size() + layout->inner_size(); }

  /// Root of a column panel: U of each local tile (i, kk), then the local inner panel kk.
  template <class Exec>
  void pack_column(const Exec& exec, const operand& x, int kk, const factor_view& buf) const {
    const TlrMatrix<Scalar, MemorySpace>& a = x.local();
    const TlrLayout& l = a.layout();
    const std::int64_t ld = l.leading_dim();
    for (int i = 0; i < l.tile_rows(); ++i)
      copy(exec, buf, layout->outer_offset(i, 0), a.outer_factors(), l.outer_offset(i, kk),
           ld * l.stored_rank(i, kk));
    copy(exec, buf, layout->outer_size(), a.inner_factors(), l.inner_offset(0, kk),
         ld * l.inner_width(kk));
  }
  /// Root of a row panel: the local outer panel kk, then V of each local tile (kk, j).
  template <class Exec>
  void pack_row(const Exec& exec, const operand& x, int kk, const factor_view& buf) const {
    const TlrMatrix<Scalar, MemorySpace>& a = x.local();
    const TlrLayout& l = a.layout();
    const std::int64_t ld = l.leading_dim();
    copy(exec, buf, 0, a.outer_factors(), l.outer_offset(kk, 0), ld * l.outer_width(kk));
    for (int j = 0; j < l.tile_cols(); ++j)
      copy(exec, buf, layout->outer_size() + layout->inner_offset(0, j), a.inner_factors(),
           l.inner_offset(kk, j), ld * l.stored_rank(kk, j));
  }
  TlrMatrix<Scalar, MemorySpace> view(const factor_view& buf) const {
    const std::int64_t no = layout->outer_size(), ni = layout->inner_size();
    return TlrMatrix<Scalar, MemorySpace>(layout, factor_view(buf.data(), no),
                                          factor_view(buf.data() + no, ni));
  }

 private:
  template <class Exec>
  static void copy(const Exec& exec, const factor_view& dst, std::int64_t at,
                   const factor_view& src, std::int64_t from, std::int64_t n) {
    if (n == 0) return;
    using range = std::pair<std::int64_t, std::int64_t>;
    Kokkos::deep_copy(exec, Kokkos::subview(dst, range(at, at + n)),
                      Kokkos::subview(src, range(from, from + n)));
  }
};

template <class Scalar, class MemorySpace>
struct Panel<DistributedDenseMatrix<Scalar, MemorySpace>> {
  using operand = DistributedDenseMatrix<Scalar, MemorySpace>;
  using factor_view = Kokkos::View<Scalar*, MemorySpace>;
  using dense_view = Kokkos::View<Scalar**, Kokkos::LayoutLeft, MemorySpace>;
  std::int64_t rows = 0, cols = 0;

  static Panel column(const operand& x, int k) {
    return {x.row_map().local_extent(x.grid().row()), x.col_map().block_extent(k)};
  }
  static Panel row(const operand& x, int k) {
    return {x.row_map().block_extent(k), x.col_map().local_extent(x.grid().col())};
  }
  std::int64_t size() const { return rows * cols; }

  template <class Exec>
  void pack_column(const Exec& exec, const operand& x, int kk, const factor_view& buf) const {
    pack(exec, x.local(), std::pair<std::int64_t, std::int64_t>(0, rows),
         std::pair<std::int64_t, std::int64_t>(std::int64_t{kk} * x.block_size(),
                                               std::int64_t{kk} * x.block_size() + cols),
         buf);
  }
  template <class Exec>
  void pack_row(const Exec& exec, const operand& x, int kk, const factor_view& buf) const {
    pack(exec, x.local(),
         std::pair<std::int64_t, std::int64_t>(std::int64_t{kk} * x.block_size(),
                                               std::int64_t{kk} * x.block_size() + rows),
         std::pair<std::int64_t, std::int64_t>(0, cols), buf);
  }
  dense_view view(const factor_view& buf) const { return dense_view(buf.data(), rows, cols); }

 private:
  template <class Exec, class Range>
  void pack(const Exec& exec, const dense_view& local, Range r, Range c,
            const factor_view& buf) const {
    if (rows == 0 || cols == 0) return;
    Kokkos::deep_copy(exec, view(buf), Kokkos::subview(local, r, c));
  }
};

/// C <- beta C on this rank's blocks (beta == 0: zeros, C not read), in double for every
/// storage precision.
template <class View>
struct ScaleLocal {
  View c;
  double beta;
  std::int64_t rows;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e) const {
    using traits = TlrScalarTraits<typename View::non_const_value_type>;
    const std::int64_t j = e / rows, i = e - j * rows;
    c(i, j) = traits::narrow(beta == 0 ? 0.0 : beta * static_cast<double>(traits::widen(c(i, j))));
  }
};

/// Panel buffers of one step: device buffers, and host copies when staged.
template <class Scalar, class MemorySpace>
struct PanelSlot {
  Kokkos::View<Scalar*, MemorySpace> a, b;
  Kokkos::View<Scalar*, Kokkos::HostSpace> a_host, b_host;
  std::vector<MPI_Request> requests;
};

template <class X>
void check_grid(const X& x, const ProcessGrid& grid, const char* what) {
  if (!x.grid().same_as(grid))
    throw InvalidArgument(std::string("distributed gemm: ") + what +
                          " lives on a different process grid from C");
}

}  // namespace detail

/// Collective over C's grid: C <- alpha op(A) op(B) + beta C (C is not read when beta ==
/// 0). A, B: DistributedTlrMatrix or DistributedDenseMatrix (at least one TLR), on the
/// same grid and with the same tile / block size as C. Returns when C is complete.
template <class ExecutionSpace, class AOperand, class BOperand, class Scalar, class MemorySpace>
DistributedGemmReport gemm(const ExecutionSpace& exec, Op op_a, const AOperand& a_in, Op op_b,
                           const BOperand& b_in, double alpha, double beta,
                           const DistributedDenseMatrix<Scalar, MemorySpace>& c,
                           const TlrGemmOptions& options = {}) {
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
  const ProcessGrid& grid = c.grid();
  detail::check_grid(a_in, grid, "A");
  detail::check_grid(b_in, grid, "B");
  const int block = c.block_size();
  if (detail::distributed_block(a_in) != block || detail::distributed_block(b_in) != block)
    throw InvalidArgument("distributed gemm: A, B and C must share one tile / block size (C: " +
                          std::to_string(block) + ")");

  DistributedGemmReport report;
  // op(X) = X^T: lay X^T out on the grid once.
  std::int64_t moved = 0;
  const AOperand a = op_a == Op::T ? detail::transposed(a_in, moved) : a_in;
  report.transpose_bytes_received += moved;
  const BOperand b = op_b == Op::T ? detail::transposed(b_in, moved) : b_in;
  if (op_b == Op::T) report.transpose_bytes_received += moved;
  if (a.num_rows() != c.num_rows() || b.num_cols() != c.num_cols() || a.num_cols() != b.num_rows())
    throw InvalidArgument("distributed gemm: op(A) is " + std::to_string(a.num_rows()) + " x " +
                          std::to_string(a.num_cols()) + ", op(B) " + std::to_string(b.num_rows()) +
                          " x " + std::to_string(b.num_cols()) + ", C " +
                          std::to_string(c.num_rows()) + " x " + std::to_string(c.num_cols()));

  const int P = grid.rows(), Q = grid.cols(), p = grid.row(), q = grid.col();
  const BlockCyclic kmap(a.num_cols(), block, 1);
  const int steps = kmap.blocks();
  report.steps = steps;
  report.model_bytes = static_cast<double>(detail::global_bytes(a)) * (Q - 1) / Q / P +
                       static_cast<double>(detail::global_bytes(b)) * (P - 1) / P / Q;
  constexpr bool host_memory =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;
  const bool staged = !host_memory && !mpi_takes_device_buffers();
  report.transport =
      staged || host_memory ? MpiTransport::host_staged : MpiTransport::device_buffers;

  const auto& local_c = c.local();
  const std::int64_t c_rows = static_cast<std::int64_t>(local_c.extent(0));
  const std::int64_t c_cols = static_cast<std::int64_t>(local_c.extent(1));
  if (steps == 0) {
    if (c_rows * c_cols > 0)
      detail::parallel_for_large(
          "kcla::distributed_gemm::scale", exec, c_rows * c_cols,
          detail::ScaleLocal<std::decay_t<decltype(local_c)>>{local_c, beta, c_rows});
    exec.fence();
    return report;
  }

  using a_panel = detail::Panel<AOperand>;
  using b_panel = detail::Panel<BOperand>;
  std::int64_t a_max = 0, b_max = 0;
  for (int k = 0; k < steps; ++k) {
    a_max = std::max(a_max, a_panel::column(a, k).size());
    b_max = std::max(b_max, b_panel::row(b, k).size());
  }
  detail::PanelSlot<Scalar, MemorySpace> slots[2];
  for (auto& s : slots) {
    s.a = Kokkos::View<Scalar*, MemorySpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::distributed_gemm::a_panel"), a_max);
    s.b = Kokkos::View<Scalar*, MemorySpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::distributed_gemm::b_panel"), b_max);
    if (staged) {
      s.a_host = Kokkos::View<Scalar*, Kokkos::HostSpace>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::distributed_gemm::a_host"), a_max);
      s.b_host = Kokkos::View<Scalar*, Kokkos::HostSpace>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::distributed_gemm::b_host"), b_max);
    }
  }
  const std::int64_t bytes = static_cast<std::int64_t>(sizeof(Scalar));
  using range = std::pair<std::int64_t, std::int64_t>;

  // Packs (roots) and posts the two broadcasts of step k into its slot.
  auto begin = [&](int k) {
    auto& s = slots[k % 2];
    const a_panel pa = a_panel::column(a, k);
    const b_panel pb = b_panel::row(b, k);
    const int a_root = k % Q, b_root = k % P;
    if (q == a_root) pa.pack_column(exec, a, k / Q, s.a);
    if (p == b_root) pb.pack_row(exec, b, k / P, s.b);
    exec.fence();
    if (staged) {
      if (q == a_root && pa.size() > 0)
        Kokkos::deep_copy(Kokkos::subview(s.a_host, range(0, pa.size())),
                          Kokkos::subview(s.a, range(0, pa.size())));
      if (p == b_root && pb.size() > 0)
        Kokkos::deep_copy(Kokkos::subview(s.b_host, range(0, pb.size())),
                          Kokkos::subview(s.b, range(0, pb.size())));
    }
    void* a_data = staged ? static_cast<void*>(s.a_host.data()) : static_cast<void*>(s.a.data());
    void* b_data = staged ? static_cast<void*>(s.b_host.data()) : static_cast<void*>(s.b.data());
    detail::ibcast_bytes(a_data, pa.size() * bytes, a_root, grid.row_comm(), s.requests);
    detail::ibcast_bytes(b_data, pb.size() * bytes, b_root, grid.col_comm(), s.requests);
    (q == a_root ? report.panel_bytes_sent : report.panel_bytes_received) +=
        pa.size() * bytes * (q == a_root ? Q - 1 : 1);
    (p == b_root ? report.panel_bytes_sent : report.panel_bytes_received) +=
        pb.size() * bytes * (p == b_root ? P - 1 : 1);
  };
  // Waits for step k's panels and adds their product to C.
  auto finish = [&](int k) {
    auto& s = slots[k % 2];
    detail::wait_all(s.requests);
    const a_panel pa = a_panel::column(a, k);
    const b_panel pb = b_panel::row(b, k);
    if (staged) {
      if (q != k % Q && pa.size() > 0)
        Kokkos::deep_copy(Kokkos::subview(s.a, range(0, pa.size())),
                          Kokkos::subview(s.a_host, range(0, pa.size())));
      if (p != k % P && pb.size() > 0)
        Kokkos::deep_copy(Kokkos::subview(s.b, range(0, pb.size())),
                          Kokkos::subview(s.b_host, range(0, pb.size())));
    }
    if (c_rows == 0 || c_cols == 0) return;
    kcla::gemm(exec, Op::N, pa.view(s.a), Op::N, pb.view(s.b), alpha, k == 0 ? beta : 1.0, local_c,
               options);
  };

  begin(0);
  for (int k = 0; k < steps; ++k) {
    // Slot (k + 1) % 2 held step k - 1's panels: its product must be done before repacking.
    if (k + 1 < steps) {
      exec.fence();
      begin(k + 1);
    }
    finish(k);
  }
  exec.fence();
  return report;
}

}  // namespace kcla
#endif
