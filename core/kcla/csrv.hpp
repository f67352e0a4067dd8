// CSRV encoding of a sparse matrix: distinct values V, a dense dictionary of the
// (value, column) terminals that occur, and each row as a string of terminal ids.
#pragma once

#include <kcla/csr_matrix.hpp>
#include <kcla/grammar.hpp>

#include <cstdint>
#include <vector>

namespace kcla {

struct CsrvEncoding {
  std::int64_t num_rows = 0;
  std::int64_t num_cols = 0;
  /// Distinct stored values in first-seen (row-major) order.
  std::vector<double> values;
  /// Terminal t = values[terminal_values[t]] in column terminal_columns[t]. Ids are sorted
  /// by (column, value index), so sweeps that read x[column] walk x in order.
  std::vector<std::int32_t> terminal_values;
  std::vector<std::int32_t> terminal_columns;
  /// Row r is terminals[row_offsets[r] .. row_offsets[r+1]): one terminal per stored
  /// entry, in the CSR's order. The row boundary is the delimiter RePair never crosses.
  std::vector<std::int64_t> row_offsets{0};
  std::vector<symbol_t> terminals;

  std::int64_t num_terminals() const { return static_cast<std::int64_t>(terminal_values.size()); }
};

/// Encodes a validated CSR matrix. Every stored entry (explicit zeros too) becomes a
/// terminal. Memory: the output plus one hash table over the distinct terminals.
CsrvEncoding encode_csrv(const CsrMatrix<double>& a);

/// The grammar with no rules (C = the CSRV string itself): the uncompressed baseline.
Grammar trivial_grammar(CsrvEncoding encoding);

}  // namespace kcla
