// The papers' 8 x 7 running example: the matrix (2.1), its grammar (2.3) entered by hand,
// and the worked product of Figure 4.2.
#pragma once

#include <kcla/csr_matrix.hpp>
#include <kcla/grammar.hpp>

#include <map>
#include <utility>
#include <vector>

namespace kcla::test {

inline CsrMatrix<double> paper_matrix() {
  const double m[8][7] = {{2.3, 0, 1.2, 1.2, 1.2, 2.3, 1.2},   {1.2, 4.5, 3.4, 1.2, 1.2, 2.3, 4.5},
                          {1.2, 4.5, 3.4, 1.2, 1.2, 2.3, 4.5}, {2.3, 0, 1.2, 1.2, 1.2, 2.3, 1.2},
                          {1.2, 4.5, 3.4, 1.2, 1.2, 2.3, 4.5}, {0, 4.5, 3.4, 2.3, 2.3, 0, 4.5},
                          {0, 4.5, 3.4, 2.3, 2.3, 0, 4.5},     {2.3, 0, 1.2, 1.2, 1.2, 2.3, 1.2}};
  CsrMatrix<double> a;
  a.num_rows = 8;
  a.num_cols = 7;
  for (int r = 0; r < 8; ++r) {
    for (int c = 0; c < 7; ++c)
      if (m[r][c] != 0) {
        a.column_indices.push_back(c);
        a.values.push_back(m[r][c]);
      }
    a.row_offsets.push_back(a.nnz());
  }
  return a;
}

inline std::vector<double> paper_x() {
  return {2, 1, 1, 2, 1, 1, 1};
}
inline std::vector<double> paper_y() {
  return {12.9, 20.7, 20.7, 12.9, 20.7, 19.3, 19.3, 12.9};
}

/// Grammar (2.3) with C of (2.4). Terminal <l, j> (1-based value l, column j).
inline Grammar paper_grammar() {
  Grammar g;
  g.num_rows = 8;
  g.num_cols = 7;
  g.values = {1.2, 2.3, 3.4, 4.5};
  const std::vector<std::pair<int, int>> terminals = {{1, 4}, {1, 5}, {2, 6}, {4, 2},
                                                      {3, 3}, {1, 1}, {1, 3}, {2, 1},
                                                      {4, 7}, {1, 7}, {2, 4}, {2, 5}};
  std::map<std::pair<int, int>, symbol_t> id;
  for (const auto& t : terminals) {
    id[t] = static_cast<symbol_t>(g.terminal_values.size());
    g.terminal_values.push_back(t.first - 1);
    g.terminal_columns.push_back(t.second - 1);
  }
  const symbol_t T = static_cast<symbol_t>(terminals.size());
  auto N = [&](int i) { return T + i - 1; };  // N1 is rule 0
  auto t = [&](int l, int j) { return id.at({l, j}); };
  const std::vector<std::pair<symbol_t, symbol_t>> rules = {
      {t(1, 4), t(1, 5)},  // N1
      {N(1), t(2, 6)},     // N2
      {t(4, 2), t(3, 3)},  // N3
      {t(1, 1), N(3)},     // N4
      {t(1, 3), N(2)},     // N5
      {t(2, 1), N(5)},     // N6
      {N(2), t(4, 7)},     // N7
      {N(4), N(7)},        // N8
      {N(6), t(1, 7)},     // N9
      {t(2, 4), t(2, 5)},  // N10
      {N(3), N(10)},       // N11
      {N(11), t(4, 7)},    // N12
  };
  for (const auto& r : rules) {
    g.rule_left.push_back(r.first);
    g.rule_right.push_back(r.second);
  }
  g.sequence = {N(9), N(8), N(8), N(9), N(8), N(12), N(12), N(9)};
  g.row_offsets = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  return g;
}

inline bool same_matrix(const CsrMatrix<double>& a, const CsrMatrix<double>& b) {
  return a.num_rows == b.num_rows && a.num_cols == b.num_cols && a.row_offsets == b.row_offsets &&
         a.column_indices == b.column_indices && a.values == b.values;
}

}  // namespace kcla::test
