// The tiles of one grid rank of a TLR matrix laid out 2D block-cyclically (tile (i, j) on
// grid rank (i mod P, j mod Q)): their layout as one local TLR matrix, in global order.
// Shared by the distributed matrix (kernels) and the files it is written to (io).
#pragma once

#include <kcla/block_cyclic.hpp>
#include <kcla/tlr_layout.hpp>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace kcla {

/// The layout of grid rank (p, q)'s tiles of `global` on a P x Q grid: the same tile size,
/// rank multiple and leading dimension. Only the global last tile row (column) can be
/// short, and it is always its owner's last, so the local tiles form a TLR layout. Local
/// tile (i, j) is global tile (p + i P, q + j Q); in both factor arrays the local tiles
/// come in the same order as in the global arrays.
inline std::shared_ptr<const TlrLayout> local_tlr_layout(const TlrLayout& global, int p, int P,
                                                         int q, int Q) {
  const BlockCyclic rmap(global.num_rows(), global.tile_size(), P);
  const BlockCyclic cmap(global.num_cols(), global.tile_size(), Q);
  const int lr = rmap.local_blocks(p), lc = cmap.local_blocks(q);
  std::vector<int> ranks(static_cast<std::size_t>(lr) * static_cast<std::size_t>(lc));
  for (int i = 0; i < lr; ++i)
    for (int j = 0; j < lc; ++j)
      ranks[static_cast<std::size_t>(i) * static_cast<std::size_t>(lc) +
            static_cast<std::size_t>(j)] =
          global.rank(rmap.global_block(p, i), cmap.global_block(q, j));
  return std::make_shared<const TlrLayout>(rmap.local_extent(p), cmap.local_extent(q),
                                           global.tile_size(), std::move(ranks),
                                           global.rank_multiple(), global.leading_dim());
}

/// Where grid rank (p, q)'s tiles lie in the global factor arrays of `global`: (offset,
/// count) element ranges, increasing, touching ranges merged; the outer ranges in the order
/// of the rank's local outer array, the inner ones in that of its inner array (so a local
/// array is its ranges, read or written one after the other).
struct TlrLocalRanges {
  std::vector<std::pair<std::int64_t, std::int64_t>> outer, inner;
};

inline TlrLocalRanges tlr_local_ranges(const TlrLayout& global, int p, int P, int q, int Q) {
  const auto local = local_tlr_layout(global, p, P, q, Q);
  const std::int64_t ld = global.leading_dim();
  auto add = [](std::vector<std::pair<std::int64_t, std::int64_t>>& ranges, std::int64_t offset,
                std::int64_t count) {
    if (count == 0) return;
    if (!ranges.empty() && ranges.back().first + ranges.back().second == offset)
      ranges.back().second += count;
    else
      ranges.emplace_back(offset, count);
  };
  TlrLocalRanges r;
  for (int i = 0; i < local->tile_rows(); ++i)
    for (int j = 0; j < local->tile_cols(); ++j)
      add(r.outer, global.outer_offset(p + i * P, q + j * Q), ld * local->stored_rank(i, j));
  for (int j = 0; j < local->tile_cols(); ++j)
    for (int i = 0; i < local->tile_rows(); ++i)
      add(r.inner, global.inner_offset(p + i * P, q + j * Q), ld * local->stored_rank(i, j));
  return r;
}

}  // namespace kcla
