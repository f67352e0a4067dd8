#include <kcla/csrv.hpp>
#include "hash_map.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>

namespace kcla {

namespace {

// Bit pattern of a double as a hash key (+0 and -0 stay distinct values, like NaN
// payloads: the encoding is exact, never numerically "close").
std::uint64_t value_key(double v) {
  std::uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

}  // namespace

CsrvEncoding encode_csrv(const CsrMatrix<double>& a) {
  a.validate("encode_csrv input");
  if (a.nnz() >= std::numeric_limits<symbol_t>::max())
    throw InvalidArgument(
        "encode_csrv: 2^31-1 or more nonzeros in one block; compress in row blocks");
  CsrvEncoding e;
  e.num_rows = a.num_rows;
  e.num_cols = a.num_cols;
  e.row_offsets = a.row_offsets;

  // Distinct values, first-seen order.
  detail::HashMap64 value_ids;
  std::vector<std::int32_t> value_of_entry(a.values.size());
  for (std::size_t k = 0; k < a.values.size(); ++k) {
    auto [id, inserted] =
        value_ids.insert(value_key(a.values[k]), static_cast<std::int64_t>(e.values.size()));
    if (inserted) e.values.push_back(a.values[k]);
    value_of_entry[k] = static_cast<std::int32_t>(id);
  }

  // Distinct (value, column) pairs keyed in 64 bits: never value * cols + col in 32.
  detail::HashMap64 terminal_ids;
  std::vector<std::int32_t> first_seen_value, first_seen_column;
  e.terminals.resize(a.values.size());
  const auto cols = static_cast<std::uint64_t>(a.num_cols);
  for (std::size_t k = 0; k < a.values.size(); ++k) {
    const std::uint64_t key = static_cast<std::uint64_t>(value_of_entry[k]) * cols +
                              static_cast<std::uint64_t>(a.column_indices[k]);
    auto [id, inserted] =
        terminal_ids.insert(key, static_cast<std::int64_t>(first_seen_value.size()));
    if (inserted) {
      first_seen_value.push_back(value_of_entry[k]);
      first_seen_column.push_back(a.column_indices[k]);
    }
    e.terminals[k] = static_cast<symbol_t>(id);
  }
  value_of_entry = {};

  // Renumber terminals by (column, value index).
  const auto num_terminals = first_seen_value.size();
  std::vector<std::int32_t> order(num_terminals);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::int32_t l, std::int32_t r) {
    return first_seen_column[l] != first_seen_column[r]
               ? first_seen_column[l] < first_seen_column[r]
               : first_seen_value[l] < first_seen_value[r];
  });
  std::vector<symbol_t> new_id(num_terminals);
  e.terminal_values.resize(num_terminals);
  e.terminal_columns.resize(num_terminals);
  for (std::size_t t = 0; t < num_terminals; ++t) {
    new_id[order[t]] = static_cast<symbol_t>(t);
    e.terminal_values[t] = first_seen_value[order[t]];
    e.terminal_columns[t] = first_seen_column[order[t]];
  }
  for (auto& t : e.terminals) t = new_id[t];
  return e;
}

Grammar trivial_grammar(CsrvEncoding encoding) {
  Grammar g;
  g.num_rows = encoding.num_rows;
  g.num_cols = encoding.num_cols;
  g.values = std::move(encoding.values);
  g.terminal_values = std::move(encoding.terminal_values);
  g.terminal_columns = std::move(encoding.terminal_columns);
  g.row_offsets = std::move(encoding.row_offsets);
  g.sequence = std::move(encoding.terminals);
  return g;
}

}  // namespace kcla
