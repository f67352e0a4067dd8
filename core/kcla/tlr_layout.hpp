// The structure of a tile-low-rank matrix, without its values: tile grid, rank per tile,
// and where every factor lives in the two packed factor arrays. Host-side; shared by the
// matrices, the compressor and the product planner.
#pragma once

#include <cstdint>
#include <vector>

namespace kcla {

/// A TLR matrix is a grid of tiles of size tile_size (the last tile row / column may be
/// short); tile (i, j) is A_ij = U_ij V_ij^T with U_ij (height_i x r_ij) and
/// V_ij (width_j x r_ij).
///
/// Storage (column-major, leading dimension `leading_dim()` >= tile_size for every panel):
/// - outer factors U are packed by tile row: panel i = [U_i0 U_i1 ... ] is one matrix of
///   `outer_width(i)` columns; tile (i, j) starts at column `outer_prefix(i, j)` of it;
/// - inner factors V are packed by tile column: panel j = [V_0j V_1j ... ]; tile (i, j)
///   starts at column `inner_prefix(j, i)` of it.
/// Each tile occupies exactly its stored rank's columns: the logical rank rounded up to
/// `rank_multiple()`; padding columns (and rows past a short tile's height) are zero.
/// Panels follow each other: panel p of a family starts at column `*_panel_start(p)` of
/// that family's array, i.e. at element leading_dim() * *_panel_start(p).
/// A^T needs no layout of its own: (A^T)_ij = V_ji U_ji^T, so the inner factors, packed by
/// tile column of A, are the outer factors of A^T packed by its tile row, and vice versa.
class TlrLayout {
 public:
  TlrLayout() = default;
  /// `ranks` holds the logical rank of every tile, row-major (tile (i, j) at
  /// i * tile_cols + j); each must lie in [0, min(height_i, width_j)]. Throws
  /// InvalidArgument otherwise.
  TlrLayout(std::int64_t num_rows, std::int64_t num_cols, int tile_size, std::vector<int> ranks,
            int rank_multiple = 1, int leading_dim_multiple = 1);

  std::int64_t num_rows() const { return num_rows_; }
  std::int64_t num_cols() const { return num_cols_; }
  int tile_size() const { return tile_size_; }
  int tile_rows() const { return tile_rows_; }
  int tile_cols() const { return tile_cols_; }
  int tile_height(int i) const;
  int tile_width(int j) const;
  int rank_multiple() const { return rank_multiple_; }
  int leading_dim() const { return leading_dim_; }

  int rank(int i, int j) const { return ranks_[index(i, j)]; }
  int stored_rank(int i, int j) const { return stored_ranks_[index(i, j)]; }
  const std::vector<int>& ranks() const { return ranks_; }
  const std::vector<int>& stored_ranks() const { return stored_ranks_; }

  // Outer factors (U), packed by tile row.
  std::int64_t outer_panel_start(int i) const { return outer_start_[i]; }
  int outer_prefix(int i, int j) const { return outer_prefix_[i * (tile_cols_ + 1) + j]; }
  int outer_width(int i) const { return outer_prefix(i, tile_cols_); }
  std::int64_t outer_columns() const { return outer_start_.back(); }
  /// Element offset of U_ij in the outer factor array.
  std::int64_t outer_offset(int i, int j) const {
    return static_cast<std::int64_t>(leading_dim_) * (outer_start_[i] + outer_prefix(i, j));
  }
  std::int64_t outer_size() const {
    return static_cast<std::int64_t>(leading_dim_) * outer_columns();
  }

  // Inner factors (V), packed by tile column.
  std::int64_t inner_panel_start(int j) const { return inner_start_[j]; }
  int inner_prefix(int j, int i) const { return inner_prefix_[j * (tile_rows_ + 1) + i]; }
  int inner_width(int j) const { return inner_prefix(j, tile_rows_); }
  std::int64_t inner_columns() const { return inner_start_.back(); }
  /// Element offset of V_ij in the inner factor array.
  std::int64_t inner_offset(int i, int j) const {
    return static_cast<std::int64_t>(leading_dim_) * (inner_start_[j] + inner_prefix(j, i));
  }
  std::int64_t inner_size() const {
    return static_cast<std::int64_t>(leading_dim_) * inner_columns();
  }

  /// The raw arrays (for device copies): prefixes are (panels) x (tiles per panel + 1),
  /// row-major; starts have panels + 1 entries.
  const std::vector<int>& outer_prefix_array() const { return outer_prefix_; }
  const std::vector<int>& inner_prefix_array() const { return inner_prefix_; }
  const std::vector<std::int64_t>& outer_start_array() const { return outer_start_; }
  const std::vector<std::int64_t>& inner_start_array() const { return inner_start_; }

  /// Same shape, tiling, ranks, rank multiple and leading dimension: factor arrays of one
  /// can be read with the other, and a product plan made for one serves the other.
  bool same_structure(const TlrLayout& other) const;

 private:
  std::size_t index(int i, int j) const {
    return static_cast<std::size_t>(i) * static_cast<std::size_t>(tile_cols_) +
           static_cast<std::size_t>(j);
  }

  std::int64_t num_rows_ = 0, num_cols_ = 0;
  int tile_size_ = 1, tile_rows_ = 0, tile_cols_ = 0;
  int rank_multiple_ = 1, leading_dim_ = 1;
  std::vector<int> ranks_, stored_ranks_;
  std::vector<int> outer_prefix_, inner_prefix_;
  std::vector<std::int64_t> outer_start_{0}, inner_start_{0};
};

}  // namespace kcla
