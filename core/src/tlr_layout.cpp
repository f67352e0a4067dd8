#include <kcla/error.hpp>
#include <kcla/tlr_layout.hpp>

#include <algorithm>
#include <limits>
#include <string>

namespace kcla {

namespace {

int round_up(int value, int multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

}  // namespace

TlrLayout::TlrLayout(std::int64_t num_rows, std::int64_t num_cols, int tile_size,
                     std::vector<int> ranks, int rank_multiple, int leading_dim_multiple)
    : num_rows_(num_rows),
      num_cols_(num_cols),
      tile_size_(tile_size),
      rank_multiple_(rank_multiple),
      ranks_(std::move(ranks)) {
  auto fail = [](const std::string& msg) { throw InvalidArgument("TlrLayout: " + msg); };
  if (num_rows < 0 || num_cols < 0) fail("negative dimension");
  if (tile_size < 1) fail("tile size must be positive");
  if (rank_multiple < 1) fail("rank multiple must be positive");
  if (leading_dim_multiple < 1) fail("leading dimension multiple must be positive");
  const std::int64_t tr = (num_rows + tile_size - 1) / tile_size;
  const std::int64_t tc = (num_cols + tile_size - 1) / tile_size;
  if (tr * tc > std::numeric_limits<int>::max() / 2) fail("too many tiles");
  tile_rows_ = static_cast<int>(tr);
  tile_cols_ = static_cast<int>(tc);
  if (ranks_.size() != static_cast<std::size_t>(tr * tc))
    fail("expected " + std::to_string(tr * tc) + " ranks (" + std::to_string(tr) + " x " +
         std::to_string(tc) + " tiles), got " + std::to_string(ranks_.size()));
  leading_dim_ = round_up(tile_size, leading_dim_multiple);

  stored_ranks_.resize(ranks_.size());
  for (int i = 0; i < tile_rows_; ++i)
    for (int j = 0; j < tile_cols_; ++j) {
      const int r = rank(i, j);
      if (r < 0 || r > std::min(tile_height(i), tile_width(j)))
        fail("tile (" + std::to_string(i) + ", " + std::to_string(j) + ") has rank " +
             std::to_string(r) + ", outside [0, " +
             std::to_string(std::min(tile_height(i), tile_width(j))) + "]");
      stored_ranks_[index(i, j)] = round_up(r, rank_multiple_);
    }

  outer_prefix_.assign(static_cast<std::size_t>(tile_rows_) * (tile_cols_ + 1), 0);
  outer_start_.assign(static_cast<std::size_t>(tile_rows_) + 1, 0);
  for (int i = 0; i < tile_rows_; ++i) {
    std::int64_t width = 0;
    for (int j = 0; j < tile_cols_; ++j) {
      width += stored_rank(i, j);
      if (width > std::numeric_limits<int>::max()) fail("a tile row's total rank exceeds 2^31-1");
      outer_prefix_[i * (tile_cols_ + 1) + j + 1] = static_cast<int>(width);
    }
    outer_start_[i + 1] = outer_start_[i] + width;
  }
  inner_prefix_.assign(static_cast<std::size_t>(tile_cols_) * (tile_rows_ + 1), 0);
  inner_start_.assign(static_cast<std::size_t>(tile_cols_) + 1, 0);
  for (int j = 0; j < tile_cols_; ++j) {
    std::int64_t width = 0;
    for (int i = 0; i < tile_rows_; ++i) {
      width += stored_rank(i, j);
      if (width > std::numeric_limits<int>::max())
        fail("a tile column's total rank exceeds 2^31-1");
      inner_prefix_[j * (tile_rows_ + 1) + i + 1] = static_cast<int>(width);
    }
    inner_start_[j + 1] = inner_start_[j] + width;
  }
}

int TlrLayout::tile_height(int i) const {
  return static_cast<int>(
      std::min<std::int64_t>(tile_size_, num_rows_ - static_cast<std::int64_t>(i) * tile_size_));
}

int TlrLayout::tile_width(int j) const {
  return static_cast<int>(
      std::min<std::int64_t>(tile_size_, num_cols_ - static_cast<std::int64_t>(j) * tile_size_));
}

bool TlrLayout::same_structure(const TlrLayout& other) const {
  return num_rows_ == other.num_rows_ && num_cols_ == other.num_cols_ &&
         tile_size_ == other.tile_size_ && rank_multiple_ == other.rank_multiple_ &&
         leading_dim_ == other.leading_dim_ && ranks_ == other.ranks_;
}

}  // namespace kcla
