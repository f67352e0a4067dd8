#include <kcla/grammar.hpp>

#include <limits>

namespace kcla {

void Grammar::validate(const std::string& what) const {
  auto fail = [&](const std::string& msg) { throw InvalidArgument(what + ": " + msg); };
  if (num_rows < 0 || num_cols < 0) fail("negative dimension");
  if (num_cols > std::numeric_limits<std::int32_t>::max()) fail("more than 2^31-1 columns");
  if (terminal_values.size() != terminal_columns.size())
    fail("terminal_values and terminal_columns differ in length");
  if (rule_left.size() != rule_right.size()) fail("rule_left and rule_right differ in length");
  if (num_symbols() > std::numeric_limits<symbol_t>::max())
    fail("more than 2^31-1 symbols (compress in row blocks)");
  const auto num_values = static_cast<std::int64_t>(values.size());
  for (std::int64_t t = 0; t < num_terminals(); ++t) {
    if (terminal_values[t] < 0 || terminal_values[t] >= num_values)
      fail("terminal " + std::to_string(t) + " has value index " +
           std::to_string(terminal_values[t]) + " outside [0, " + std::to_string(num_values) + ")");
    if (terminal_columns[t] < 0 || terminal_columns[t] >= num_cols)
      fail("terminal " + std::to_string(t) + " has column " + std::to_string(terminal_columns[t]) +
           " outside [0, " + std::to_string(num_cols) + ")");
  }
  const auto terminals = num_terminals();
  for (std::int64_t i = 0; i < num_rules(); ++i) {
    const std::int64_t self = terminals + i;
    for (symbol_t child : {rule_left[i], rule_right[i]})
      if (child < 0 || child >= self)
        fail("rule " + std::to_string(i) + " references symbol " + std::to_string(child) +
             ", which is not a terminal or an earlier rule");
  }
  if (row_offsets.size() != static_cast<std::size_t>(num_rows) + 1)
    fail("row_offsets has " + std::to_string(row_offsets.size()) + " entries, expected " +
         std::to_string(num_rows + 1));
  if (row_offsets.front() != 0) fail("row_offsets[0] != 0");
  for (std::int64_t r = 0; r < num_rows; ++r)
    if (row_offsets[r + 1] < row_offsets[r])
      fail("row_offsets decrease at row " + std::to_string(r));
  if (row_offsets.back() != static_cast<std::int64_t>(sequence.size()))
    fail("row_offsets[rows] != length of the sequence");
  for (std::size_t k = 0; k < sequence.size(); ++k)
    if (sequence[k] < 0 || sequence[k] >= num_symbols())
      fail("sequence position " + std::to_string(k) + " holds symbol " +
           std::to_string(sequence[k]) + " outside [0, " + std::to_string(num_symbols()) + ")");
}

std::vector<std::int64_t> Grammar::expansion_lengths() const {
  const auto terminals = num_terminals();
  std::vector<std::int64_t> length(static_cast<std::size_t>(num_rules()));
  auto len = [&](symbol_t s) -> std::int64_t { return s < terminals ? 1 : length[s - terminals]; };
  for (std::int64_t i = 0; i < num_rules(); ++i) length[i] = len(rule_left[i]) + len(rule_right[i]);
  return length;
}

CsrMatrix<double> Grammar::decompress() const {
  validate();
  const auto terminals = num_terminals();
  const auto lengths = expansion_lengths();
  CsrMatrix<double> a;
  a.num_rows = num_rows;
  a.num_cols = num_cols;
  a.row_offsets.assign(static_cast<std::size_t>(num_rows) + 1, 0);
  std::int64_t nnz = 0;
  for (std::int64_t r = 0; r < num_rows; ++r) {
    for (auto k = row_offsets[r]; k < row_offsets[r + 1]; ++k)
      nnz += sequence[k] < terminals ? 1 : lengths[sequence[k] - terminals];
    a.row_offsets[r + 1] = nnz;
  }
  a.column_indices.resize(static_cast<std::size_t>(nnz));
  a.values.resize(static_cast<std::size_t>(nnz));
  std::vector<symbol_t> stack;
  std::int64_t out = 0;
  for (std::int64_t k = 0; k < static_cast<std::int64_t>(sequence.size()); ++k) {
    stack.push_back(sequence[k]);
    while (!stack.empty()) {
      const symbol_t s = stack.back();
      stack.pop_back();
      if (s < terminals) {
        a.column_indices[out] = terminal_columns[s];
        a.values[out] = values[terminal_values[s]];
        ++out;
      } else {
        stack.push_back(rule_right[s - terminals]);  // right expands after left
        stack.push_back(rule_left[s - terminals]);
      }
    }
  }
  return a;
}

}  // namespace kcla
