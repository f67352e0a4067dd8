// Per-variant affine maps of a genotype matrix G (samples x variants, allele counts, a
// missing call stored as 0 and listed in MissingCalls): the standardized matrix
//
//   X_ij = scale_j * G_ij + shift_j    where the call is present,
//   X_ij = missing_value_j             where it is missing,
//
// which kcla::GenotypeOperator multiplies by without forming it. plink2_transform builds
// the maps PLINK 2's --score uses (center, variance-standardize, mean imputation of
// missing calls or none, scores of either allele).
#pragma once

#include <kcla/block_grammar.hpp>
#include <kcla/grammar.hpp>
#include <kcla/missing_calls.hpp>

#include <cstdint>
#include <vector>

namespace kcla {

struct GenotypeTransform {
  std::vector<double> scale, shift, missing_value;  // one per variant
  std::int64_t size() const { return static_cast<std::int64_t>(scale.size()); }
  /// The identity map with missing calls read as 0 (the plain matrix).
  static GenotypeTransform identity(std::int64_t variants);
};

/// Per-variant counts over the present calls: the sum of allele counts and the number of
/// present calls (samples minus missing).
struct GenotypeStatistics {
  std::vector<double> allele_sum;
  std::vector<std::int64_t> observed;
  std::int64_t size() const { return static_cast<std::int64_t>(allele_sum.size()); }
  /// Frequency of the counted allele: allele_sum / (2 observed); 0 when nothing is observed.
  double frequency(std::int64_t j) const {
    return observed[j] > 0 ? allele_sum[j] / (2.0 * static_cast<double>(observed[j])) : 0.0;
  }
};

/// Column sums of the grammar's matrix (one top-down pass on the host, exact in double)
/// and the present calls per column.
GenotypeStatistics genotype_statistics(const Grammar& g, const MissingCalls& missing);
/// The same over the rows whose `include_row` entry is nonzero (e.g. PLINK's founders);
/// InvalidArgument when it does not have one entry per row.
GenotypeStatistics genotype_statistics(const Grammar& g, const MissingCalls& missing,
                                       const std::vector<char>& include_row);
/// The same over a complete block grammar (every block held; blocks that overlap add, the
/// plus-times reading): per block one top-down pass, its sums placed at its columns.
/// InvalidArgument on a partial block grammar (a rank's share) or mismatched shapes.
GenotypeStatistics genotype_statistics(const BlockGrammar& g, const MissingCalls& missing);
GenotypeStatistics genotype_statistics(const BlockGrammar& g, const MissingCalls& missing,
                                       const std::vector<char>& include_row);

/// Per column, the sum of the squared entries over the rows whose `include_row` entry is
/// nonzero (a missing call is stored as 0 and adds nothing): what a linear association scan
/// needs beside G^T y. One top-down pass per grammar on the host, exact in double.
std::vector<double> column_square_sums(const Grammar& g, const std::vector<char>& include_row);
std::vector<double> column_square_sums(const BlockGrammar& g, const std::vector<char>& include_row);

enum class GenotypeCentering {
  none,                 ///< dosages as they are
  center,               ///< dosage - 2 f
  variance_standardize  ///< (dosage - 2 f) / sqrt(2 f (1 - f))
};
enum class MissingCallPolicy {
  /// A missing dosage is replaced by its mean 2 f_D and then centered and scaled like any
  /// other (so it is 0 when centered): the textbook mean imputation.
  mean_imputation,
  /// What plink2 --score does by default (measured with PLINK v2.00a3.5): the imputed
  /// dosage 2 f_D is scaled but not centered, also under center / variance-standardize.
  plink2_imputation,
  /// A missing call adds nothing (PLINK 2's no-mean-imputation).
  no_imputation
};

struct Plink2TransformOptions {
  GenotypeCentering centering = GenotypeCentering::none;
  MissingCallPolicy missing = MissingCallPolicy::plink2_imputation;
  /// Per variant: true when the score counts the other allele (dosage 2 - G); empty = none.
  std::vector<bool> other_allele;
};

struct Plink2Transform {
  GenotypeTransform transform;
  /// Variants that variance standardization cannot scale (frequency 0 or 1, or no call):
  /// their maps are all zero, so they add nothing.
  std::vector<std::int64_t> zero_variance;
};

/// PLINK 2's score dosages as a transform: with f the counted allele's frequency over the
/// present calls and D = G (or 2 - G for other_allele), the value is D - c 2 f_D, times
/// s = 1 / sqrt(2 f (1 - f)) for variance standardization; a missing call is
/// s (1 - c) 2 f_D (mean_imputation), s 2 f_D (plink2_imputation) or 0. Throws
/// InvalidArgument when sizes disagree.
Plink2Transform plink2_transform(const GenotypeStatistics& stats,
                                 const Plink2TransformOptions& options);

}  // namespace kcla
