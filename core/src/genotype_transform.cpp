#include <kcla/genotype_transform.hpp>

#include <cmath>
#include <string>

namespace kcla {

GenotypeTransform GenotypeTransform::identity(std::int64_t variants) {
  GenotypeTransform t;
  t.scale.assign(static_cast<std::size_t>(variants), 1.0);
  t.shift.assign(static_cast<std::size_t>(variants), 0.0);
  t.missing_value.assign(static_cast<std::size_t>(variants), 0.0);
  return t;
}

GenotypeStatistics genotype_statistics(const Grammar& g, const MissingCalls& missing) {
  return genotype_statistics(g, missing,
                             std::vector<char>(static_cast<std::size_t>(g.num_rows), 1));
}

GenotypeStatistics genotype_statistics(const Grammar& g, const MissingCalls& missing,
                                       const std::vector<char>& include_row) {
  if (missing.num_rows != g.num_rows || missing.num_cols != g.num_cols)
    throw InvalidArgument("genotype_statistics: missing calls are " +
                          std::to_string(missing.num_rows) + " x " +
                          std::to_string(missing.num_cols) + ", the matrix " +
                          std::to_string(g.num_rows) + " x " + std::to_string(g.num_cols));
  if (static_cast<std::int64_t>(include_row.size()) != g.num_rows)
    throw InvalidArgument("genotype_statistics: " + std::to_string(include_row.size()) +
                          " row flags for " + std::to_string(g.num_rows) + " rows");
  GenotypeStatistics s;
  // Column sums: every rule's occurrence count pushed down from the rows (reverse rule
  // order: a rule's parents are later rules), then weighted at the terminals.
  const auto terminals = g.num_terminals();
  std::vector<double> weight(static_cast<std::size_t>(g.num_symbols()), 0.0);
  for (std::int64_t r = 0; r < g.num_rows; ++r)
    if (include_row[static_cast<std::size_t>(r)])
      for (auto k = g.row_offsets[r]; k < g.row_offsets[r + 1]; ++k) weight[g.sequence[k]] += 1.0;
  for (std::int64_t i = g.num_rules() - 1; i >= 0; --i) {
    weight[g.rule_left[i]] += weight[terminals + i];
    weight[g.rule_right[i]] += weight[terminals + i];
  }
  s.allele_sum.assign(static_cast<std::size_t>(g.num_cols), 0.0);
  for (std::int64_t t = 0; t < terminals; ++t)
    s.allele_sum[g.terminal_columns[t]] += g.values[g.terminal_values[t]] * weight[t];
  std::int64_t included = 0;
  std::vector<std::int64_t> absent(static_cast<std::size_t>(g.num_cols), 0);
  for (std::int64_t r = 0; r < g.num_rows; ++r) {
    if (!include_row[static_cast<std::size_t>(r)]) continue;
    ++included;
    for (auto k = missing.row_offsets[r]; k < missing.row_offsets[r + 1]; ++k)
      ++absent[missing.columns[k]];
  }
  s.observed.resize(static_cast<std::size_t>(g.num_cols));
  for (std::int64_t j = 0; j < g.num_cols; ++j) s.observed[j] = included - absent[j];
  return s;
}

Plink2Transform plink2_transform(const GenotypeStatistics& stats,
                                 const Plink2TransformOptions& options) {
  const std::int64_t n = stats.size();
  if (static_cast<std::int64_t>(stats.observed.size()) != n ||
      (!options.other_allele.empty() &&
       static_cast<std::int64_t>(options.other_allele.size()) != n))
    throw InvalidArgument("plink2_transform: statistics and allele choices differ in length");
  Plink2Transform out;
  auto& t = out.transform;
  t.scale.resize(static_cast<std::size_t>(n));
  t.shift.resize(static_cast<std::size_t>(n));
  t.missing_value.resize(static_cast<std::size_t>(n));
  const double c = options.centering == GenotypeCentering::none ? 0.0 : 1.0;
  for (std::int64_t j = 0; j < n; ++j) {
    const bool other = !options.other_allele.empty() && options.other_allele[j];
    const double f = stats.frequency(j);
    // D = sign G + offset; its mean over the present calls is 2 f_D.
    const double sign = other ? -1.0 : 1.0, offset = other ? 2.0 : 0.0;
    const double mean_d = sign * 2.0 * f + offset;
    double s = 1.0;
    if (options.centering == GenotypeCentering::variance_standardize) {
      const double variance = 2.0 * f * (1.0 - f);
      if (!(variance > 0) || stats.observed[j] == 0) {
        out.zero_variance.push_back(j);
        t.scale[j] = t.shift[j] = t.missing_value[j] = 0.0;
        continue;
      }
      s = 1.0 / std::sqrt(variance);
    }
    t.scale[j] = s * sign;
    t.shift[j] = s * (offset - c * mean_d);
    t.missing_value[j] = options.missing == MissingCallPolicy::mean_imputation
                             ? s * (1.0 - c) * mean_d
                         : options.missing == MissingCallPolicy::plink2_imputation ? s * mean_d
                                                                                   : 0.0;
  }
  return out;
}

}  // namespace kcla
