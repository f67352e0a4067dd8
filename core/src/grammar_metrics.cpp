#include <kcla/grammar_metrics.hpp>
#include <kcla/schedule.hpp>

#include <algorithm>
#include <cstdio>
#include <ostream>

namespace kcla {

GrammarMetrics compute_metrics(const Grammar& g) {
  g.validate();
  return detail::compute_metrics(g, compute_levels(g));
}

GrammarMetrics detail::compute_metrics(const Grammar& g, const GrammarLevels& levels) {
  GrammarMetrics m;
  m.rows = g.num_rows;
  m.cols = g.num_cols;
  m.num_values = static_cast<std::int64_t>(g.values.size());
  m.num_terminals = g.num_terminals();
  m.rules = g.num_rules();
  m.sequence = static_cast<std::int64_t>(g.sequence.size());
  const auto lengths = g.expansion_lengths();
  for (auto s : g.sequence) m.nnz += g.is_terminal(s) ? 1 : lengths[g.rule_index(s)];
  m.depth = levels.depth;
  for (auto w : levels.rules_per_level) m.max_level_rules = std::max(m.max_level_rules, w);
  const auto layered = layered_width(g, levels);
  m.max_width = layered.max_width;
  m.pass_throughs = layered.pass_throughs;
  return m;
}

std::int64_t GrammarMetrics::csr_bytes(int value_bytes) const {
  return (rows + 1) * 4 + nnz * (4 + value_bytes);
}

std::int64_t GrammarMetrics::full_array_bytes(std::int64_t vectors, int value_bytes) const {
  return rules * 8 + (depth + 1) * 8 + sequence * 4 + (rows + 1) * 8 +
         num_terminals * (4 + value_bytes) + rules * vectors * value_bytes;
}

std::int64_t GrammarMetrics::layered_bytes(std::int64_t vectors, int value_bytes) const {
  return (rules + pass_throughs) * 8 + (depth + 1) * 8 + (depth + 2) * 8 + sequence * 8 +
         num_terminals * (4 + value_bytes) + 2 * max_width * vectors * value_bytes;
}

double GrammarMetrics::compression_ratio() const {
  const auto stored = 2 * rules + sequence;
  return stored > 0 ? static_cast<double>(nnz) / static_cast<double>(stored) : 0.0;
}

void print_metrics(std::ostream& out, const GrammarMetrics& m, int value_bytes) {
  char line[256];
  auto mb = [](std::int64_t b) { return static_cast<double>(b) / 1e6; };
  std::snprintf(line, sizeof line, "shape            %lld x %lld, nnz %lld\n",
                static_cast<long long>(m.rows), static_cast<long long>(m.cols),
                static_cast<long long>(m.nnz));
  out << line;
  std::snprintf(line, sizeof line,
                "grammar          |V| %lld, terminals %lld, |R| %lld, |C| %lld, "
                "nnz/(2|R|+|C|) %.2f\n",
                static_cast<long long>(m.num_values), static_cast<long long>(m.num_terminals),
                static_cast<long long>(m.rules), static_cast<long long>(m.sequence),
                m.compression_ratio());
  out << line;
  std::snprintf(line, sizeof line,
                "levels           L %d, widest level %lld, w* %lld (layered), +pt %lld\n", m.depth,
                static_cast<long long>(m.max_level_rules), static_cast<long long>(m.max_width),
                static_cast<long long>(m.pass_throughs));
  out << line;
  for (std::int64_t b : {std::int64_t{1}, std::int64_t{64}}) {
    std::snprintf(
        line, sizeof line,
        "bytes (B=%-3lld)    CSR %.2f MB | full array %.2f MB (%.2fx) | layered %.2f MB "
        "(%.2fx)\n",
        static_cast<long long>(b), mb(m.csr_bytes(value_bytes)),
        mb(m.full_array_bytes(b, value_bytes)),
        static_cast<double>(m.csr_bytes(value_bytes)) /
            static_cast<double>(std::max<std::int64_t>(1, m.full_array_bytes(b, value_bytes))),
        mb(m.layered_bytes(b, value_bytes)),
        static_cast<double>(m.csr_bytes(value_bytes)) /
            static_cast<double>(std::max<std::int64_t>(1, m.layered_bytes(b, value_bytes))));
    out << line;
  }
}

}  // namespace kcla
