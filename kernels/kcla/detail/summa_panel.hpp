// The SUMMA machinery of the distributed TLR product: operand shapes, the panel of one
// step (its layout from the global structure, packing on the root, the single-process
// operand over its buffer) and the two-slot panel buffers.
#pragma once

#include <kcla/block_cyclic.hpp>
#include <kcla/detail/large_range.hpp>
#include <kcla/detail/mpi_transfer.hpp>
#include <kcla/detail/staging_space.hpp>
#include <kcla/distributed_dense_matrix.hpp>
#include <kcla/distributed_tlr_matrix.hpp>
#include <kcla/process_grid.hpp>
#include <kcla/tlr_block_cyclic.hpp>
#include <kcla/tlr_matrix.hpp>
#include <kcla/tlr_plan.hpp>
#include <kcla/tlr_scalar.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace kcla::detail {

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

/// What a SUMMA plan needs of a distributed operand: its grid, shape and block size, and
/// for a TLR operand its structure (the ranks of all tiles; null for dense).
struct DistributedShape {
  ProcessGrid grid;
  std::shared_ptr<const TlrLayout> structure;
  std::int64_t rows = 0, cols = 0;
  int block = 1;
  BlockCyclic row_map() const { return {rows, block, grid.rows()}; }
  BlockCyclic col_map() const { return {cols, block, grid.cols()}; }
  /// Bytes of the factors (TLR) or values (dense) of the whole matrix.
  std::int64_t global_bytes(std::size_t element) const {
    const std::int64_t n =
        structure ? structure->outer_size() + structure->inner_size() : rows * cols;
    return n * static_cast<std::int64_t>(element);
  }
  /// Same grid shape, dimensions, block and (TLR) ranks.
  bool same_as(const DistributedShape& o) const {
    return grid.same_as(o.grid) && rows == o.rows && cols == o.cols && block == o.block &&
           (structure == nullptr) == (o.structure == nullptr) &&
           (!structure || structure->same_structure(*o.structure));
  }
};

template <class Scalar, class MemorySpace>
DistributedShape shape_of(const DistributedTlrMatrix<Scalar, MemorySpace>& x) {
  return {x.grid(), x.structure_ptr(), x.num_rows(), x.num_cols(), x.tile_size()};
}
template <class Scalar, class MemorySpace>
DistributedShape shape_of(const DistributedDenseMatrix<Scalar, MemorySpace>& x) {
  return {x.grid(), nullptr, x.num_rows(), x.num_cols(), x.block_size()};
}

/// The shape of X^T (a TLR structure with the tile ranks transposed).
inline DistributedShape transposed_shape(const DistributedShape& x) {
  DistributedShape t{x.grid, nullptr, x.cols, x.rows, x.block};
  if (x.structure) {
    const TlrLayout& g = *x.structure;
    std::vector<int> ranks(g.ranks().size());
    for (int i = 0; i < g.tile_rows(); ++i)
      for (int j = 0; j < g.tile_cols(); ++j)
        ranks[static_cast<std::size_t>(j) * g.tile_rows() + i] = g.rank(i, j);
    t.structure =
        std::make_shared<const TlrLayout>(g.num_cols(), g.num_rows(), g.tile_size(),
                                          std::move(ranks), g.rank_multiple(), g.leading_dim());
  }
  return t;
}

/// The panel of one SUMMA step, as the single-process product takes it: for A, this grid
/// row's tiles of tile column k (local rows x width k); for B, this grid column's tiles of
/// tile row k (width k x local columns). Sizes come from the global structure, so every
/// rank of a broadcast agrees on them; the root packs from its local matrix.
template <class Operand>
struct Panel;

/// Copies the segments of a packed panel in one launch, one team per segment (pieces of at
/// most 2^14 elements): segment s fills panel elements start(s) .. start(s + 1) from
/// element source(s) on of the outer (family 0) or inner (family 1) factor array.
template <class Scalar, class ExecutionSpace, class MemorySpace>
struct GatherSegments {
  using member = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  Kokkos::View<const std::int64_t*, MemorySpace> start, source;
  Kokkos::View<const int*, MemorySpace> family;
  const Scalar* outer;
  const Scalar* inner;
  Scalar* panel;
  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const int s = team.league_rank();
    const Scalar* from = (family(s) == 0 ? outer : inner) + source(s);
    Scalar* to = panel + start(s);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, start(s + 1) - start(s)),
                         [&](const std::int64_t e) { to[e] = from[e]; });
  }
};

template <class Scalar, class MemorySpace>
struct Panel<DistributedTlrMatrix<Scalar, MemorySpace>> {
  using operand = DistributedTlrMatrix<Scalar, MemorySpace>;
  using factor_view = typename TlrMatrix<Scalar, MemorySpace>::factor_view;
  std::shared_ptr<const TlrLayout> layout;
  // On the root of the step's broadcast: where the panel's pieces lie in its local arrays.
  Kokkos::View<const std::int64_t*, MemorySpace> start, source;
  Kokkos::View<const int*, MemorySpace> family;
  int segments = 0;

  // A side: tile column k over this grid row's tile rows.
  static Panel column(const DistributedShape& x, int k, int /*ld_multiple*/ = 1) {
    const BlockCyclic rmap = x.row_map();
    const TlrLayout& s = *x.structure;
    const int p = x.grid.row(), lr = rmap.local_blocks(p);
    std::vector<int> ranks(static_cast<std::size_t>(lr));
    for (int i = 0; i < lr; ++i) ranks[i] = s.rank(rmap.global_block(p, i), k);
    Panel panel;
    panel.layout =
        std::make_shared<const TlrLayout>(rmap.local_extent(p), s.tile_width(k), x.block,
                                          std::move(ranks), s.rank_multiple(), s.leading_dim());
    if (x.grid.col() == k % x.grid.cols()) {
      // U of each local tile (i, kk), then the local inner panel kk.
      const auto l = local_tlr_layout(s, p, x.grid.rows(), x.grid.col(), x.grid.cols());
      const int kk = k / x.grid.cols();
      const std::int64_t ld = l->leading_dim();
      std::vector<Segment> pieces;
      for (int i = 0; i < l->tile_rows(); ++i)
        pieces.push_back({l->outer_offset(i, kk), ld * l->stored_rank(i, kk), 0});
      pieces.push_back({l->inner_offset(0, kk), ld * l->inner_width(kk), 1});
      panel.set_segments(pieces);
    }
    return panel;
  }
  // B side: tile row k over this grid column's tile columns.
  static Panel row(const DistributedShape& x, int k, int /*ld_multiple*/ = 1) {
    const BlockCyclic cmap = x.col_map();
    const TlrLayout& s = *x.structure;
    const int q = x.grid.col(), lc = cmap.local_blocks(q);
    std::vector<int> ranks(static_cast<std::size_t>(lc));
    for (int j = 0; j < lc; ++j) ranks[j] = s.rank(k, cmap.global_block(q, j));
    Panel panel;
    panel.layout =
        std::make_shared<const TlrLayout>(s.tile_height(k), cmap.local_extent(q), x.block,
                                          std::move(ranks), s.rank_multiple(), s.leading_dim());
    if (x.grid.row() == k % x.grid.rows()) {
      // The local outer panel kk, then V of each local tile (kk, j).
      const auto l = local_tlr_layout(s, x.grid.row(), x.grid.rows(), q, x.grid.cols());
      const int kk = k / x.grid.rows();
      const std::int64_t ld = l->leading_dim();
      std::vector<Segment> pieces;
      pieces.push_back({l->outer_offset(kk, 0), ld * l->outer_width(kk), 0});
      for (int j = 0; j < l->tile_cols(); ++j)
        pieces.push_back({l->inner_offset(kk, j), ld * l->stored_rank(kk, j), 1});
      panel.set_segments(pieces);
    }
    return panel;
  }
  std::int64_t size() const { return layout->outer_size() + layout->inner_size(); }

  /// On the root: the panel of its local matrix, in one launch.
  template <class Exec>
  void pack_column(const Exec& exec, const operand& x, int, const factor_view& buf) const {
    gather(exec, x, buf);
  }
  template <class Exec>
  void pack_row(const Exec& exec, const operand& x, int, const factor_view& buf) const {
    gather(exec, x, buf);
  }
  TlrMatrix<Scalar, MemorySpace> view(const factor_view& buf) const {
    const std::int64_t no = layout->outer_size(), ni = layout->inner_size();
    return TlrMatrix<Scalar, MemorySpace>(layout, factor_view(buf.data(), no),
                                          factor_view(buf.data() + no, ni));
  }

 private:
  struct Segment {
    std::int64_t source, length;
    int family;
  };

  void set_segments(const std::vector<Segment>& pieces) {
    // Pieces are cut into chunks so that many teams share a long one: one team alone
    // copies a few GB/s on a GPU.
    constexpr std::int64_t chunk = std::int64_t{1} << 14;
    std::vector<std::int64_t> starts{0}, sources;
    std::vector<int> families;
    for (const auto& piece : pieces)
      for (std::int64_t done = 0; done < piece.length; done += chunk) {
        sources.push_back(piece.source + done);
        families.push_back(piece.family);
        starts.push_back(starts.back() + std::min(chunk, piece.length - done));
      }
    segments = static_cast<int>(sources.size());
    start = to_space<std::int64_t, MemorySpace>(starts, "kcla::summa::segment_start");
    source = to_space<std::int64_t, MemorySpace>(sources, "kcla::summa::segment_source");
    family = to_space<int, MemorySpace>(families, "kcla::summa::segment_family");
  }

  template <class Exec>
  void gather(const Exec& exec, const operand& x, const factor_view& buf) const {
    if (segments == 0) return;
    Kokkos::parallel_for("kcla::summa::pack_panel",
                         Kokkos::TeamPolicy<Exec>(exec, segments, Kokkos::AUTO),
                         GatherSegments<Scalar, Exec, MemorySpace>{
                             start, source, family, x.local().outer_factors().data(),
                             x.local().inner_factors().data(), buf.data()});
  }
};

template <class Scalar, class MemorySpace>
struct Panel<DistributedDenseMatrix<Scalar, MemorySpace>> {
  using operand = DistributedDenseMatrix<Scalar, MemorySpace>;
  using factor_view = Kokkos::View<Scalar*, MemorySpace>;
  using dense_view = Kokkos::View<Scalar**, Kokkos::LayoutStride, MemorySpace>;
  std::int64_t rows = 0, cols = 0, ld = 1;  // column-major in its buffer, leading dimension ld

  static Panel make(std::int64_t rows, std::int64_t cols, int ld_multiple) {
    const std::int64_t ld =
        std::max<std::int64_t>(1, (rows + ld_multiple - 1) / ld_multiple * ld_multiple);
    return {rows, cols, ld};
  }
  static Panel column(const DistributedShape& x, int k, int ld_multiple = 1) {
    return make(x.row_map().local_extent(x.grid.row()), x.col_map().block_extent(k), ld_multiple);
  }
  static Panel row(const DistributedShape& x, int k, int ld_multiple = 1) {
    return make(x.row_map().block_extent(k), x.col_map().local_extent(x.grid.col()), ld_multiple);
  }
  std::int64_t size() const { return rows > 0 ? ld * cols : 0; }

  template <class Exec>
  void pack_column(const Exec& exec, const operand& x, int kk, const factor_view& buf) const {
    const std::int64_t c0 = std::int64_t{kk} * x.block_size();
    pack(exec, x.local(), {0, rows}, {c0, c0 + cols}, buf);
  }
  template <class Exec>
  void pack_row(const Exec& exec, const operand& x, int kk, const factor_view& buf) const {
    const std::int64_t r0 = std::int64_t{kk} * x.block_size();
    pack(exec, x.local(), {r0, r0 + rows}, {0, cols}, buf);
  }
  dense_view view(const factor_view& buf) const {
    return dense_view(buf.data(), Kokkos::LayoutStride(static_cast<std::size_t>(rows), 1,
                                                       static_cast<std::size_t>(cols),
                                                       static_cast<std::size_t>(ld)));
  }

 private:
  template <class Exec>
  void pack(const Exec& exec, const typename operand::local_view& local,
            std::pair<std::int64_t, std::int64_t> r, std::pair<std::int64_t, std::int64_t> c,
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

/// The steps' local plans run one after another on one execution space instance: once
/// step 0 has made its backend runtime (cuBLAS handles, streams, workspace), every step
/// shares it instead of making one each (the runtime re-resolves its pointer arrays per
/// plan).
inline void share_runtime(std::vector<TlrGemmPlan>& plans) {
  if (plans.empty() || !plans[0].data().runtime) return;
  const auto runtime = plans[0].data().runtime;
  for (const auto& p : plans)
    if (!p.data().runtime) p.data().runtime = runtime;
}

/// Panel buffers of one step: device buffers, and host copies when staged.
template <class Scalar, class MemorySpace>
struct PanelSlot {
  using staging_view = Kokkos::View<Scalar*, typename StagingSpace<MemorySpace>::type>;
  Kokkos::View<Scalar*, MemorySpace> a, b;
  staging_view a_host, b_host;
  std::vector<MPI_Request> requests;
};

}  // namespace kcla::detail
