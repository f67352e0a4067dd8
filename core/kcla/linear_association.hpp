// Marginal linear association of every variant with one or more quantitative phenotypes,
// covariates projected out: per variant and phenotype, the least-squares fit of
//
//   y = intercept + C gamma + beta g + error
//
// over the samples with the phenotype, every covariate and the variant's call present
// (PLINK 2's --glm linear: per-variant exclusion of missing calls). What it needs from the
// genotypes is G^T [1 C Y] and the sums of squared genotypes over the included samples:
// left products on the grammar (kcla/genotype_association.hpp). Everything else is small
// and dense, on the host.
#pragma once

#include <kcla/grammar.hpp>
#include <kcla/missing_calls.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kcla {

struct LinearAssociationData {
  std::int64_t samples = 0;
  std::int64_t phenotypes = 0;
  std::int64_t covariates = 0;  ///< not counting the intercept, which is always fitted
  /// samples x phenotypes, row-major; NaN where a sample has no value.
  std::vector<double> phenotype_values;
  /// samples x covariates, row-major; a sample with any NaN covariate is left out.
  std::vector<double> covariate_values;
  /// Throws InvalidArgument naming the first inconsistency (sizes, infinities).
  void validate() const;
};

struct LinearAssociationOptions {
  /// A variant whose variance inflation factor (1 / (1 - R^2) of the genotype on the
  /// covariates) exceeds this gets no statistics (PLINK 2's --vif, default 50).
  double max_vif = 50.0;
};

enum class AssociationStatus : std::uint8_t {
  ok,
  constant_genotype,     ///< one genotype value over the included samples
  collinear,             ///< variance inflation above max_vif, or singular covariates
  too_few_observations,  ///< no residual degree of freedom left
  skipped                ///< the phenotype was not analysed
};
/// PLINK 2's ERRCODE words where it has one ("." for ok).
const char* to_string(AssociationStatus s);

struct LinearAssociationResult {
  std::int64_t variants = 0, phenotypes = 0;
  /// variants x phenotypes, row-major; NaN where status is not ok.
  std::vector<double> beta, standard_error, t_statistic, p_value;
  std::vector<std::int64_t> observations;
  std::vector<AssociationStatus> status;
  void resize(std::int64_t variants, std::int64_t phenotypes);
};

/// Phenotypes that share their included samples (phenotype and every covariate present):
/// one left product serves them all.
struct AssociationGroup {
  std::vector<std::int64_t> phenotypes;
  std::vector<char> included;  ///< per sample
  std::int64_t size = 0;       ///< included samples
  /// Columns of the operand matrix: the intercept (1 on included samples), the covariates,
  /// the group's phenotypes.
  std::int64_t width(const LinearAssociationData& d) const {
    return 1 + d.covariates + static_cast<std::int64_t>(phenotypes.size());
  }
  /// samples x width, row-major: the columns above on included samples (covariates and
  /// phenotypes centered over them, which the intercept absorbs and which keeps the sums
  /// free of cancellation), 0 elsewhere.
  std::vector<double> operands(const LinearAssociationData& d) const;
};

std::vector<AssociationGroup> association_groups(const LinearAssociationData& d);

/// Fills the statistics of the group's phenotypes from
///   gt_operands: variants x width, G^T operands (G with missing calls as 0),
///   square_sums: per variant, sum of G^2 over the included samples.
/// Missing calls among the included samples are taken out per variant (rank-one
/// downdates of the small normal equations).
void linear_association_statistics(const LinearAssociationData& d, const MissingCalls& missing,
                                   const AssociationGroup& group,
                                   const std::vector<double>& gt_operands,
                                   const std::vector<double>& square_sums,
                                   const LinearAssociationOptions& options,
                                   LinearAssociationResult& result);

}  // namespace kcla
