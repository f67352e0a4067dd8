// Plain serial evaluations of y = A x in any semiring: the obviously-correct references
// every fast kernel is tested against. Host only; not for speed.
#pragma once

#include <kcla/csr_matrix.hpp>
#include <kcla/grammar.hpp>
#include <kcla/schedule.hpp>

#include <functional>
#include <vector>

namespace kcla::reference {

/// Over the CSR matrix: y_i = combine_j leaf(A_ij, x_j).
template <class Semiring, class X, class Y>
void csr_multiply(const CsrMatrix<double>& a, const X& x, Y& y) {
  using T = typename Semiring::value_type;
  for (std::int64_t r = 0; r < a.num_rows; ++r) {
    T sum = Semiring::zero();
    for (auto k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k)
      sum = Semiring::combine(sum, Semiring::leaf(Semiring::coefficient(a.values[k]),
                                                  static_cast<T>(x[a.column_indices[k]])));
    y[r] = sum;
  }
}

/// z = A^T y over the CSR matrix: z_j = combine_i leaf(A_ij, y_i).
template <class Semiring, class Y, class Z>
void csr_multiply_transpose(const CsrMatrix<double>& a, const Y& y, Z& z) {
  using T = typename Semiring::value_type;
  std::vector<T> sum(static_cast<std::size_t>(a.num_cols), Semiring::zero());
  for (std::int64_t r = 0; r < a.num_rows; ++r)
    for (auto k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k)
      sum[a.column_indices[k]] = Semiring::combine(
          sum[a.column_indices[k]],
          Semiring::leaf(Semiring::coefficient(a.values[k]), static_cast<T>(y[r])));
  for (std::int64_t j = 0; j < a.num_cols; ++j) z[j] = sum[j];
}

/// z = A^T y over the raw grammar: occurrences pushed from the rows down the rules in
/// reverse rule order (a rule's parents are later rules), then applied at the terminals.
template <class Semiring, class Y, class Z>
void grammar_multiply_transpose(const Grammar& g, const Y& y, Z& z) {
  using T = typename Semiring::value_type;
  const auto terminals = g.num_terminals();
  std::vector<T> weight(static_cast<std::size_t>(g.num_symbols()), Semiring::zero());
  for (std::int64_t r = 0; r < g.num_rows; ++r)
    for (auto k = g.row_offsets[r]; k < g.row_offsets[r + 1]; ++k)
      weight[g.sequence[k]] = Semiring::combine(weight[g.sequence[k]], static_cast<T>(y[r]));
  for (std::int64_t i = g.num_rules() - 1; i >= 0; --i) {
    const T w = weight[terminals + i];
    weight[g.rule_left[i]] = Semiring::combine(weight[g.rule_left[i]], w);
    weight[g.rule_right[i]] = Semiring::combine(weight[g.rule_right[i]], w);
  }
  std::vector<T> sum(static_cast<std::size_t>(g.num_cols), Semiring::zero());
  for (std::int64_t t = 0; t < terminals; ++t)
    sum[g.terminal_columns[t]] = Semiring::combine(
        sum[g.terminal_columns[t]],
        Semiring::leaf(Semiring::coefficient(g.values[g.terminal_values[t]]), weight[t]));
  for (std::int64_t j = 0; j < g.num_cols; ++j) z[j] = sum[j];
}

/// Over the raw grammar in rule order (the CPU algorithm of mm-repair).
template <class Semiring, class X, class Y>
void grammar_multiply(const Grammar& g, const X& x, Y& y) {
  using T = typename Semiring::value_type;
  const auto terminals = g.num_terminals();
  std::vector<T> rule_value(static_cast<std::size_t>(g.num_rules()));
  auto value = [&](symbol_t s) -> T {
    if (s < terminals)
      return Semiring::leaf(Semiring::coefficient(g.values[g.terminal_values[s]]),
                            static_cast<T>(x[g.terminal_columns[s]]));
    return rule_value[s - terminals];
  };
  for (std::int64_t i = 0; i < g.num_rules(); ++i)
    rule_value[i] = Semiring::combine(value(g.rule_left[i]), value(g.rule_right[i]));
  for (std::int64_t r = 0; r < g.num_rows; ++r) {
    T sum = Semiring::zero();
    for (auto k = g.row_offsets[r]; k < g.row_offsets[r + 1]; ++k)
      sum = Semiring::combine(sum, value(g.sequence[k]));
    y[r] = sum;
  }
}

namespace detail {
template <class Semiring, class X>
typename Semiring::value_type leaf(const TerminalTable& t, std::int32_t code, const X& x) {
  using T = typename Semiring::value_type;
  const auto id = decode_terminal(code);
  return Semiring::leaf(Semiring::coefficient(t.coefficients[id]),
                        static_cast<T>(x[t.columns[id]]));
}
}  // namespace detail

/// Over the full-array schedule, phase by phase; a rule of the running phase is walked
/// down to the slots and leaves below the phase (recursively here, not with the kernels'
/// stack), so this checks the phase layout independently of the sweep kernels.
template <class Semiring, class X, class Y>
void full_array_multiply(const FullArraySchedule& s, const X& x, Y& y) {
  using T = typename Semiring::value_type;
  std::vector<T> slot(static_cast<std::size_t>(s.computed_slots()));
  std::int64_t first = 0;  // the running phase's first slot
  std::function<T(std::int32_t)> value = [&](std::int32_t c) -> T {
    if (c == kNoChild) return Semiring::zero();
    if (c < 0) return detail::leaf<Semiring>(s.terminals, c, x);
    if (c < first) return slot.at(static_cast<std::size_t>(c));
    return Semiring::combine(value(s.left.at(c)), value(s.right.at(c)));
  };
  for (std::int32_t k = 1; k <= s.depth; ++k) {
    first = s.level_offsets[k - 1];
    for (auto n = first; n < s.level_offsets[k]; ++n)
      slot[n] = Semiring::combine(value(s.left[n]), value(s.right[n]));
  }
  first = s.computed_slots();
  for (std::int64_t r = 0; r < s.num_rows; ++r) {
    T sum = Semiring::zero();
    for (auto k = s.row_offsets[r]; k < s.row_offsets[r + 1]; ++k)
      sum = Semiring::combine(sum, value(s.row_symbols[k]));
    y[r] = sum;
  }
}

/// Over the layered schedule with two frontier buffers and emit lists, exactly as the
/// streaming sweep runs it (emits combined in list order).
template <class Semiring, class X, class Y>
void layered_multiply(const LayeredSchedule& s, const X& x, Y& y) {
  using T = typename Semiring::value_type;
  for (std::int64_t r = 0; r < s.num_rows; ++r) y[r] = Semiring::zero();
  for (auto e = s.emit_offsets[0]; e < s.emit_offsets[1]; ++e)
    y[s.emit_rows[e]] = Semiring::combine(
        y[s.emit_rows[e]],
        detail::leaf<Semiring>(s.terminals, encode_terminal(s.emit_positions[e]), x));
  std::vector<T> previous, current;
  for (std::int32_t k = 1; k <= s.depth; ++k) {
    const auto begin = s.level_offsets[k - 1], end = s.level_offsets[k];
    current.assign(static_cast<std::size_t>(end - begin), Semiring::zero());
    auto value = [&](std::int32_t c) -> T {
      if (c == kNoChild) return Semiring::zero();
      return c >= 0 ? previous.at(c) : detail::leaf<Semiring>(s.terminals, c, x);
    };
    for (auto n = begin; n < end; ++n)
      current[n - begin] = Semiring::combine(value(s.left[n]), value(s.right[n]));
    for (auto e = s.emit_offsets[k]; e < s.emit_offsets[k + 1]; ++e)
      y[s.emit_rows[e]] = Semiring::combine(y[s.emit_rows[e]], current.at(s.emit_positions[e]));
    previous.swap(current);
  }
}

}  // namespace kcla::reference
