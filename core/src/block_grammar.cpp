#include <kcla/block_grammar.hpp>

#include <algorithm>
#include <map>

namespace kcla {

void BlockLayout::validate(const std::string& what) const {
  auto fail = [&](const std::string& msg) { throw InvalidArgument(what + ": " + msg); };
  if (num_rows < 0 || num_cols < 0) fail("negative dimension");
  if (num_cols > INT32_MAX) fail("more than 2^31-1 columns");
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const auto& e = blocks[b];
    if (e.row_begin < 0 || e.row_begin > e.row_end || e.row_end > num_rows || e.col_begin < 0 ||
        e.col_begin > e.col_end || e.col_end > num_cols)
      fail("block " + std::to_string(b) + " (rows [" + std::to_string(e.row_begin) + ", " +
           std::to_string(e.row_end) + "), columns [" + std::to_string(e.col_begin) + ", " +
           std::to_string(e.col_end) + ")) is not inside the " + std::to_string(num_rows) + " x " +
           std::to_string(num_cols) + " matrix");
  }
}

BlockLayout BlockLayout::column_blocks(std::int64_t num_rows, std::int64_t num_cols,
                                       std::int64_t block_cols) {
  if (block_cols <= 0) throw InvalidArgument("column_blocks: block width must be positive");
  BlockLayout layout;
  layout.num_rows = num_rows;
  layout.num_cols = num_cols;
  for (std::int64_t c = 0; c < num_cols; c += block_cols)
    layout.blocks.push_back({0, num_rows, c, std::min(num_cols, c + block_cols)});
  layout.validate("column_blocks");
  return layout;
}

void BlockGrammar::require_complete(const std::string& what) const {
  if (!complete())
    throw InvalidArgument(what + ": the block grammar holds " + std::to_string(block_ids.size()) +
                          " of its " + std::to_string(layout.num_blocks()) +
                          " blocks (a rank's share); this needs every block");
}

void BlockGrammar::validate(const std::string& what) const {
  layout.validate(what);
  auto fail = [&](const std::string& msg) { throw InvalidArgument(what + ": " + msg); };
  if (block_ids.size() != grammars.size())
    fail(std::to_string(block_ids.size()) + " block ids but " + std::to_string(grammars.size()) +
         " grammars");
  for (std::size_t i = 0; i < block_ids.size(); ++i) {
    const auto id = block_ids[i];
    if (id < 0 || id >= layout.num_blocks())
      fail("block id " + std::to_string(id) + " outside [0, " +
           std::to_string(layout.num_blocks()) + ")");
    if (i > 0 && id <= block_ids[i - 1]) fail("block ids are not strictly ascending");
    const auto& e = layout.blocks[id];
    const auto& g = grammars[i];
    if (g.num_rows != e.rows() || g.num_cols != e.cols())
      fail("block " + std::to_string(id) + " holds a " + std::to_string(g.num_rows) + " x " +
           std::to_string(g.num_cols) + " grammar, its extent is " + std::to_string(e.rows()) +
           " x " + std::to_string(e.cols()));
    g.validate(what + " block " + std::to_string(id));
  }
}

CsrMatrix<double> BlockGrammar::decompress() const {
  validate();
  // Row by row, summing entries that several blocks store at the same place.
  std::vector<std::map<std::int32_t, double>> rows(static_cast<std::size_t>(num_rows()));
  for (std::size_t i = 0; i < grammars.size(); ++i) {
    const auto& e = extent_of(i);
    const auto block = grammars[i].decompress();
    for (std::int64_t r = 0; r < block.num_rows; ++r)
      for (auto k = block.row_offsets[r]; k < block.row_offsets[r + 1]; ++k)
        rows[e.row_begin + r][static_cast<std::int32_t>(e.col_begin + block.column_indices[k])] +=
            block.values[k];
  }
  CsrMatrix<double> a;
  a.num_rows = num_rows();
  a.num_cols = num_cols();
  a.row_offsets.reserve(rows.size() + 1);
  for (const auto& row : rows) {
    for (const auto& [c, v] : row) {
      a.column_indices.push_back(c);
      a.values.push_back(v);
    }
    a.row_offsets.push_back(a.nnz());
  }
  return a;
}

BlockGrammar BlockGrammar::single(Grammar g) {
  BlockGrammar b;
  b.layout.num_rows = g.num_rows;
  b.layout.num_cols = g.num_cols;
  b.layout.blocks.push_back({0, g.num_rows, 0, g.num_cols});
  b.block_ids.push_back(0);
  b.grammars.push_back(std::move(g));
  return b;
}

std::vector<std::int64_t> rank_blocks(const BlockLayout& layout, int rank, int ranks) {
  if (ranks < 1 || rank < 0 || rank >= ranks)
    throw InvalidArgument("rank_blocks: rank " + std::to_string(rank) + " of " +
                          std::to_string(ranks));
  double total = 0;
  for (const auto& e : layout.blocks) total += static_cast<double>(e.rows()) * e.cols();
  std::vector<std::int64_t> mine;
  double before = 0;
  for (std::int64_t b = 0; b < layout.num_blocks(); ++b) {
    const auto& e = layout.blocks[b];
    const double area = static_cast<double>(e.rows()) * e.cols();
    // The rank whose share holds the block's midpoint; equal shares when areas are zero.
    const double middle = total > 0 ? (before + area / 2) / total
                                    : (b + 0.5) / static_cast<double>(layout.num_blocks());
    const int owner = std::min(ranks - 1, static_cast<int>(middle * ranks));
    if (owner == rank) mine.push_back(b);
    before += area;
  }
  return mine;
}

CsrMatrix<double> column_slice(const CsrMatrix<double>& a, std::int64_t col_begin,
                               std::int64_t col_end) {
  if (col_begin < 0 || col_begin > col_end || col_end > a.num_cols)
    throw InvalidArgument("column_slice: columns [" + std::to_string(col_begin) + ", " +
                          std::to_string(col_end) + ") are not inside " +
                          std::to_string(a.num_cols) + " columns");
  CsrMatrix<double> s;
  s.num_rows = a.num_rows;
  s.num_cols = col_end - col_begin;
  s.row_offsets.reserve(static_cast<std::size_t>(a.num_rows) + 1);
  for (std::int64_t r = 0; r < a.num_rows; ++r) {
    const auto* first = a.column_indices.data() + a.row_offsets[r];
    const auto* last = a.column_indices.data() + a.row_offsets[r + 1];
    // Rows hold ascending columns, so the slice is one contiguous run.
    const auto* lo = std::lower_bound(first, last, static_cast<std::int32_t>(col_begin));
    const auto* hi = std::lower_bound(lo, last, static_cast<std::int64_t>(col_end),
                                      [](std::int32_t c, std::int64_t v) { return c < v; });
    for (const auto* p = lo; p != hi; ++p) {
      s.column_indices.push_back(static_cast<std::int32_t>(*p - col_begin));
      s.values.push_back(a.values[p - a.column_indices.data()]);
    }
    s.row_offsets.push_back(s.nnz());
  }
  return s;
}

}  // namespace kcla
