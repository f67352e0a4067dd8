// The obviously-correct product of chosen rows of a block grammar on the host: each
// sampled row expanded symbol by symbol from its grammar, block by block, in the
// semiring. Checks products of panels whose CSR does not fit in memory (kcla multiply
// --verify on a block file), in time proportional to the sampled rows' entries; and the
// whole left product z = A^T y the same way (kcla multiply --transpose --verify).
#pragma once

#include <kcla/block_grammar.hpp>
#include <kcla/semiring.hpp>

#include <cstdint>
#include <type_traits>
#include <vector>

namespace kcla::reference {

/// f(column, value) for each entry of row `local` of grammar g, left to right, expanded
/// symbol by symbol (`stack`: scratch reused across calls).
template <class F>
void for_each_row_entry(const Grammar& g, std::int64_t local, std::vector<symbol_t>& stack, F&& f) {
  const auto terminals = g.num_terminals();
  for (auto p = g.row_offsets[local]; p < g.row_offsets[local + 1]; ++p) {
    stack.assign(1, g.sequence[p]);
    while (!stack.empty()) {
      const symbol_t s = stack.back();
      stack.pop_back();
      if (s >= terminals) {
        stack.push_back(g.rule_right[s - terminals]);
        stack.push_back(g.rule_left[s - terminals]);
        continue;
      }
      f(g.terminal_columns[s], g.values[g.terminal_values[s]]);
    }
  }
}

/// y[i * B + b] = (row rows[i] of the held blocks) . x[:, b] in Semiring; x is num_cols x B
/// (vector innermost). Rows must be ascending. Booleans come back as char (std::vector<bool>
/// packs bits).
template <class Semiring, class X>
auto block_rows_multiply(const BlockGrammar& g, const std::vector<std::int64_t>& rows, const X& x,
                         std::int64_t B) {
  using T = typename Semiring::value_type;
  using H = std::conditional_t<std::is_same<T, bool>::value, char, T>;
  std::vector<H> y(rows.size() * static_cast<std::size_t>(B), static_cast<H>(Semiring::zero()));
  std::vector<symbol_t> stack;
  for (std::size_t i = 0; i < g.grammars.size(); ++i) {
    const auto& e = g.extent_of(i);
    const auto& grammar = g.grammars[i];
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const auto r = rows[k];
      if (r < e.row_begin || r >= e.row_end) continue;
      for_each_row_entry(grammar, r - e.row_begin, stack, [&](std::int64_t c, double value) {
        const auto column = e.col_begin + c;
        const T coefficient = Semiring::coefficient(value);
        for (std::int64_t b = 0; b < B; ++b) {
          auto& out = y[k * B + b];
          out = static_cast<H>(Semiring::combine(
              static_cast<T>(out), Semiring::leaf(coefficient, static_cast<T>(x[column * B + b]))));
        }
      });
    }
  }
  return y;
}

/// z[j * B + b] = (column j of the held blocks) . y[:, b] in Semiring, every column: each
/// row of each block expanded symbol by symbol (time proportional to the held entries
/// times B). y is num_rows x B, vector innermost; booleans come back as char.
template <class Semiring, class Y>
auto block_transpose_multiply(const BlockGrammar& g, const Y& y, std::int64_t B) {
  using T = typename Semiring::value_type;
  using H = std::conditional_t<std::is_same<T, bool>::value, char, T>;
  std::vector<H> z(static_cast<std::size_t>(g.num_cols() * B), static_cast<H>(Semiring::zero()));
  std::vector<symbol_t> stack;
  for (std::size_t i = 0; i < g.grammars.size(); ++i) {
    const auto& e = g.extent_of(i);
    const auto& grammar = g.grammars[i];
    for (std::int64_t local = 0; local < grammar.num_rows; ++local) {
      const auto r = e.row_begin + local;
      for_each_row_entry(grammar, local, stack, [&](std::int64_t c, double value) {
        const auto column = e.col_begin + c;
        const T coefficient = Semiring::coefficient(value);
        for (std::int64_t b = 0; b < B; ++b) {
          auto& out = z[column * B + b];
          out = static_cast<H>(Semiring::combine(
              static_cast<T>(out), Semiring::leaf(coefficient, static_cast<T>(y[r * B + b]))));
        }
      });
    }
  }
  return z;
}

}  // namespace kcla::reference
