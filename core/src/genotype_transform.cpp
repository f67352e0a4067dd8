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

namespace {

void check_shapes(std::int64_t rows, std::int64_t cols, const MissingCalls& missing,
                  const std::vector<char>& include_row) {
  if (missing.num_rows != rows || missing.num_cols != cols)
    throw InvalidArgument("genotype_statistics: missing calls are " +
                          std::to_string(missing.num_rows) + " x " +
                          std::to_string(missing.num_cols) + ", the matrix " +
                          std::to_string(rows) + " x " + std::to_string(cols));
  if (static_cast<std::int64_t>(include_row.size()) != rows)
    throw InvalidArgument("genotype_statistics: " + std::to_string(include_row.size()) +
                          " row flags for " + std::to_string(rows) + " rows");
}

/// sums[col_begin + j] += the sum over the included rows (row_begin + r) of the grammar's
/// entry (r, j), squared when `squared`. Every rule's occurrence count is pushed down from
/// the rows (reverse rule order: a rule's parents are later rules), then weighted at the
/// terminals.
void add_column_sums(const Grammar& g, std::int64_t row_begin, std::int64_t col_begin,
                     const std::vector<char>& include_row, bool squared,
                     std::vector<double>& sums) {
  const auto terminals = g.num_terminals();
  std::vector<double> weight(static_cast<std::size_t>(g.num_symbols()), 0.0);
  for (std::int64_t r = 0; r < g.num_rows; ++r)
    if (include_row[static_cast<std::size_t>(row_begin + r)])
      for (auto k = g.row_offsets[r]; k < g.row_offsets[r + 1]; ++k) weight[g.sequence[k]] += 1.0;
  for (std::int64_t i = g.num_rules() - 1; i >= 0; --i) {
    weight[g.rule_left[i]] += weight[terminals + i];
    weight[g.rule_right[i]] += weight[terminals + i];
  }
  for (std::int64_t t = 0; t < terminals; ++t) {
    const double v = g.values[g.terminal_values[t]];
    sums[static_cast<std::size_t>(col_begin + g.terminal_columns[t])] +=
        (squared ? v * v : v) * weight[t];
  }
}

/// Present calls per column over the included rows.
std::vector<std::int64_t> observed_calls(const MissingCalls& missing,
                                         const std::vector<char>& include_row) {
  std::int64_t included = 0;
  std::vector<std::int64_t> absent(static_cast<std::size_t>(missing.num_cols), 0);
  for (std::int64_t r = 0; r < missing.num_rows; ++r) {
    if (!include_row[static_cast<std::size_t>(r)]) continue;
    ++included;
    for (auto k = missing.row_offsets[r]; k < missing.row_offsets[r + 1]; ++k)
      ++absent[missing.columns[k]];
  }
  std::vector<std::int64_t> observed(absent.size());
  for (std::size_t j = 0; j < absent.size(); ++j) observed[j] = included - absent[j];
  return observed;
}

void check_flags(std::int64_t rows, const std::vector<char>& include_row, const char* what) {
  if (static_cast<std::int64_t>(include_row.size()) != rows)
    throw InvalidArgument(std::string(what) + ": " + std::to_string(include_row.size()) +
                          " row flags for " + std::to_string(rows) + " rows");
}

}  // namespace

GenotypeStatistics genotype_statistics(const Grammar& g, const MissingCalls& missing) {
  return genotype_statistics(g, missing,
                             std::vector<char>(static_cast<std::size_t>(g.num_rows), 1));
}

GenotypeStatistics genotype_statistics(const Grammar& g, const MissingCalls& missing,
                                       const std::vector<char>& include_row) {
  check_shapes(g.num_rows, g.num_cols, missing, include_row);
  GenotypeStatistics s;
  s.allele_sum.assign(static_cast<std::size_t>(g.num_cols), 0.0);
  add_column_sums(g, 0, 0, include_row, false, s.allele_sum);
  s.observed = observed_calls(missing, include_row);
  return s;
}

GenotypeStatistics genotype_statistics(const BlockGrammar& g, const MissingCalls& missing) {
  return genotype_statistics(g, missing,
                             std::vector<char>(static_cast<std::size_t>(g.num_rows()), 1));
}

GenotypeStatistics genotype_statistics(const BlockGrammar& g, const MissingCalls& missing,
                                       const std::vector<char>& include_row) {
  g.require_complete("genotype_statistics");
  check_shapes(g.num_rows(), g.num_cols(), missing, include_row);
  GenotypeStatistics s;
  s.allele_sum.assign(static_cast<std::size_t>(g.num_cols()), 0.0);
  for (std::size_t i = 0; i < g.grammars.size(); ++i)
    add_column_sums(g.grammars[i], g.extent_of(i).row_begin, g.extent_of(i).col_begin, include_row,
                    false, s.allele_sum);
  s.observed = observed_calls(missing, include_row);
  return s;
}

std::vector<double> column_square_sums(const Grammar& g, const std::vector<char>& include_row) {
  check_flags(g.num_rows, include_row, "column_square_sums");
  std::vector<double> sums(static_cast<std::size_t>(g.num_cols), 0.0);
  add_column_sums(g, 0, 0, include_row, true, sums);
  return sums;
}

std::vector<double> column_square_sums(const BlockGrammar& g,
                                       const std::vector<char>& include_row) {
  g.require_complete("column_square_sums");
  check_flags(g.num_rows(), include_row, "column_square_sums");
  std::vector<double> sums(static_cast<std::size_t>(g.num_cols()), 0.0);
  for (std::size_t i = 0; i < g.grammars.size(); ++i)
    add_column_sums(g.grammars[i], g.extent_of(i).row_begin, g.extent_of(i).col_begin, include_row,
                    true, sums);
  return sums;
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
