// op(X) = X^T for distributed operands: X^T laid out block-cyclically on the same grid, by
// one point-to-point exchange (tile (i, j) of X goes to the owner of tile (j, i) of X^T).
// A TLR tile needs no arithmetic: (U V^T)^T = V U^T swaps the factor roles. Packing runs on
// the host (one copy each way); the exchange moves each tile once.
#pragma once

#include <kcla/detail/mpi_transfer.hpp>
#include <kcla/distributed_dense_matrix.hpp>
#include <kcla/distributed_tlr_matrix.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <memory>
#include <vector>

namespace kcla::detail {

template <class Scalar, class MemorySpace>
DistributedTlrMatrix<Scalar, MemorySpace> transposed(
    const DistributedTlrMatrix<Scalar, MemorySpace>& a, std::int64_t& bytes_received) {
  const ProcessGrid& grid = a.grid();
  const int P = grid.rows(), Q = grid.cols(), p = grid.row(), q = grid.col();
  const TlrLayout& g = a.structure();
  const int tr = g.tile_rows(), tc = g.tile_cols();
  std::vector<int> ranks_t(static_cast<std::size_t>(tr) * static_cast<std::size_t>(tc));
  for (int i = 0; i < tr; ++i)
    for (int j = 0; j < tc; ++j) ranks_t[static_cast<std::size_t>(j) * tr + i] = g.rank(i, j);
  auto structure_t =
      std::make_shared<const TlrLayout>(g.num_cols(), g.num_rows(), g.tile_size(),
                                        std::move(ranks_t), g.rank_multiple(), g.leading_dim());
  const std::int64_t ld = g.leading_dim();

  // Send: my tiles in global row-major order, U then V of each.
  const TlrLayout& l = a.local().layout();
  auto u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.local().outer_factors());
  auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.local().inner_factors());
  std::vector<std::vector<Scalar>> send(static_cast<std::size_t>(grid.size())),
      recv(static_cast<std::size_t>(grid.size()));
  for (int i = 0; i < l.tile_rows(); ++i)
    for (int j = 0; j < l.tile_cols(); ++j) {
      const int gi = p + i * P, gj = q + j * Q;
      auto& out = send[static_cast<std::size_t>(grid.rank_of(gj % P, gi % Q))];
      const std::int64_t n = ld * l.stored_rank(i, j);
      for (std::int64_t e = 0; e < n; ++e) out.push_back(u(l.outer_offset(i, j) + e));
      for (std::int64_t e = 0; e < n; ++e) out.push_back(v(l.inner_offset(i, j) + e));
    }
  // Receive: tiles (gi, gj) of A with (gj mod P, gi mod Q) == (p, q), same order per source.
  for (int gi = 0; gi < tr; ++gi)
    for (int gj = 0; gj < tc; ++gj)
      if (gj % P == p && gi % Q == q)
        recv[static_cast<std::size_t>(grid.rank_of(gi % P, gj % Q))].resize(
            recv[static_cast<std::size_t>(grid.rank_of(gi % P, gj % Q))].size() +
            static_cast<std::size_t>(2 * ld * g.stored_rank(gi, gj)));
  exchange(grid.comm(), send, recv);

  auto local_t = local_tlr_layout(*structure_t, p, P, q, Q);
  TlrMatrix<Scalar, Kokkos::HostSpace> h(local_t);
  std::vector<std::size_t> cursor(static_cast<std::size_t>(grid.size()), 0);
  bytes_received = 0;
  for (int gi = 0; gi < tr; ++gi)
    for (int gj = 0; gj < tc; ++gj) {
      if (gj % P != p || gi % Q != q) continue;
      const int src = grid.rank_of(gi % P, gj % Q);
      const std::int64_t n = ld * g.stored_rank(gi, gj);
      const int ti = gj / P, tj = gi / Q;  // tile (gj, gi) of A^T, locally
      const Scalar* in = recv[static_cast<std::size_t>(src)].data() + cursor[src];
      for (std::int64_t e = 0; e < n; ++e) {
        h.inner_factors()(local_t->inner_offset(ti, tj) + e) = in[e];      // U of A
        h.outer_factors()(local_t->outer_offset(ti, tj) + e) = in[n + e];  // V of A
      }
      cursor[src] += static_cast<std::size_t>(2 * n);
      if (src != grid.rank()) bytes_received += 2 * n * static_cast<std::int64_t>(sizeof(Scalar));
    }
  TlrMatrix<Scalar, MemorySpace> local(local_t);
  Kokkos::deep_copy(local.outer_factors(), h.outer_factors());
  Kokkos::deep_copy(local.inner_factors(), h.inner_factors());
  return DistributedTlrMatrix<Scalar, MemorySpace>(grid, structure_t, local);
}

template <class Scalar, class MemorySpace>
DistributedDenseMatrix<Scalar, MemorySpace> transposed(
    const DistributedDenseMatrix<Scalar, MemorySpace>& a, std::int64_t& bytes_received) {
  const ProcessGrid& grid = a.grid();
  const int P = grid.rows(), Q = grid.cols(), p = grid.row(), q = grid.col();
  const BlockCyclic& rmap = a.row_map();
  const BlockCyclic& cmap = a.col_map();
  const int b = a.block_size();
  DistributedDenseMatrix<Scalar, MemorySpace> t(grid, a.num_cols(), a.num_rows(), b);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.local());
  std::vector<std::vector<Scalar>> send(static_cast<std::size_t>(grid.size())),
      recv(static_cast<std::size_t>(grid.size()));
  // Send: my blocks in global row-major order, each transposed (column-major w x h).
  for (int i = 0; i < rmap.local_blocks(p); ++i)
    for (int j = 0; j < cmap.local_blocks(q); ++j) {
      const int gi = rmap.global_block(p, i), gj = cmap.global_block(q, j);
      const int hgt = rmap.block_extent(gi), wid = cmap.block_extent(gj);
      auto& out = send[static_cast<std::size_t>(grid.rank_of(gj % P, gi % Q))];
      for (int r = 0; r < hgt; ++r)
        for (int c = 0; c < wid; ++c)
          out.push_back(
              h(static_cast<std::size_t>(i) * b + r, static_cast<std::size_t>(j) * b + c));
    }
  for (int gi = 0; gi < rmap.blocks(); ++gi)
    for (int gj = 0; gj < cmap.blocks(); ++gj)
      if (gj % P == p && gi % Q == q) {
        auto& in = recv[static_cast<std::size_t>(grid.rank_of(gi % P, gj % Q))];
        in.resize(in.size() + static_cast<std::size_t>(rmap.block_extent(gi)) *
                                  static_cast<std::size_t>(cmap.block_extent(gj)));
      }
  exchange(grid.comm(), send, recv);
  auto ht = Kokkos::create_mirror_view(t.local());
  std::vector<std::size_t> cursor(static_cast<std::size_t>(grid.size()), 0);
  bytes_received = 0;
  for (int gi = 0; gi < rmap.blocks(); ++gi)
    for (int gj = 0; gj < cmap.blocks(); ++gj) {
      if (gj % P != p || gi % Q != q) continue;
      const int src = grid.rank_of(gi % P, gj % Q);
      const int hgt = rmap.block_extent(gi), wid = cmap.block_extent(gj);
      const Scalar* in = recv[static_cast<std::size_t>(src)].data() + cursor[src];
      const std::size_t r0 = static_cast<std::size_t>(gj / P) * b;  // block (gj, gi) of A^T
      const std::size_t c0 = static_cast<std::size_t>(gi / Q) * b;
      for (int c = 0; c < hgt; ++c)
        for (int r = 0; r < wid; ++r)
          ht(r0 + r, c0 + c) = in[r + static_cast<std::size_t>(c) * wid];
      cursor[src] += static_cast<std::size_t>(hgt) * wid;
      if (src != grid.rank())
        bytes_received +=
            static_cast<std::int64_t>(hgt) * wid * static_cast<std::int64_t>(sizeof(Scalar));
    }
  Kokkos::deep_copy(t.local(), ht);
  return t;
}

}  // namespace kcla::detail
