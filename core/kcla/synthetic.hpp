// Synthetic matrices with the structure kcla targets, for demos, tests and benchmarks.
#pragma once

#include <kcla/csr_matrix.hpp>

#include <cstdint>

namespace kcla {

struct SyntheticPanelOptions {
  int founders = 16;              ///< distinct founder haplotypes
  double switch_rate = 2e-4;      ///< per SNP, chance a haplotype switches founder
  double allele_frequency = 0.3;  ///< chance a founder carries the counted allele
  std::uint64_t seed = 1;
};

/// A genotype-like panel (individuals x SNPs, values 0/1/2): every individual carries two
/// haplotypes, each a mosaic of founder haplotypes (the shared segments real panels have).
/// Deterministic for a given seed.
CsrMatrix<double> synthetic_genotype_panel(std::int64_t individuals, std::int64_t snps,
                                           const SyntheticPanelOptions& options = {});

}  // namespace kcla
