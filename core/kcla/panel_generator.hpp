// A streaming generator of genotype panels of any size (rows = samples, columns =
// variants, values 0/1/2 = copies of the derived allele), for scale tests of compression
// and products. docs/panel-generator.md describes the model and its measured speed.
//
// Model (a haplotype mosaic in the spirit of Li & Stephens, 2003):
//  * Founders. K founder haplotypes carry the variants. Along the genome they share a
//    local genealogy: a random coalescent (Kingman) tree over the K founders, redrawn
//    after a geometric number of variants (mean `tree_span`; founder-level recombination).
//    A variant falls on a branch of the current tree with chance proportional to the
//    branch's length (infinite sites), so the founders that carry it are the leaves below
//    that branch. This gives the neutral spectrum (k carriers with chance ~ 1/k) and, since
//    nearby variants share a tree, linkage disequilibrium within a tree span.
//  * Samples. Each sample haplotype copies one founder and switches to another founder
//    after exponentially distributed run lengths (geometric, mean 1 / `switch_rate`
//    variants). The switches erode the founders' LD with distance, and the long shared
//    segments are the repetition grammar compression exploits.
//  * Recent mutations. A `rare_fraction` of the variants are younger than the founders:
//    each arose on one founder's background and is carried by a fraction q of the sample
//    haplotypes copying that founder there, q drawn from density ~ q^-exponent on
//    [K / H, 1/2] (H sample haplotypes). Their frequencies (q / K) continue the spectrum
//    below the founders' 1 / K, down to singletons (a few percent of them, drawn with
//    about one expected carrier, end up carried by no sample: monomorphic columns).
//    By default the fraction is the one that makes the whole spectrum follow the density
//    f^-exponent from 1/H to 1 - 1/(2K), founder variants with c carriers standing for
//    frequencies [(c - 1/2) / K, (c + 1/2) / K].
//  * Spectrum shape. `sfs_exponent` a weights branches by (carriers / K)^(1 - a), so
//    founder variants with k carriers have chance ~ k^-a; a = 1 is neutral.
//
// Streaming: memory is O(samples x ploidy + founders) plus one block (its CSR, and its
// haplotypes' and founders' alleles as bits) whatever the panel's size; each haplotype's
// founder and next switch, and the current founder tree, carry from block to block.
// Every random draw is a hash of (seed, what, which) (counter-based), so the panel depends
// only on the options (including the seed), never on block widths or thread counts.
#pragma once

#include <kcla/column_block_source.hpp>
#include <kcla/csr_matrix.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace kcla {

struct MosaicPanelOptions {
  std::int64_t samples = 1000;    ///< rows: individuals
  std::int64_t variants = 10000;  ///< columns (at most 2^31 - 1)
  int ploidy = 2;                 ///< haplotypes per sample: 1 (values 0/1) or 2 (0/1/2)
  int founders = 64;              ///< K founder haplotypes, 2..65536
  double switch_rate = 1e-3;      ///< per variant, chance a sample haplotype switches founder
  double tree_span = 200;         ///< mean variants under one founder genealogy (>= 1)
  /// Share of variants that are recent mutations on copied segments, in [0, 1];
  /// negative: the share that continues the spectrum below 1/K (see above).
  double rare_fraction = -1;
  double sfs_exponent = 1;  ///< frequency density ~ f^-exponent, in [0, 3]; 1 = neutral
  std::uint64_t seed = 1;
  int threads = 0;  ///< threads per block; 0 = all cores (the panel does not depend on it)
};

/// The panel of `options`, delivered in column blocks (kcla::ColumnBlockSource).
class MosaicPanelSource : public ColumnBlockSource {
 public:
  /// Throws InvalidArgument naming the first option out of range.
  explicit MosaicPanelSource(const MosaicPanelOptions& options);
  ~MosaicPanelSource() override;
  MosaicPanelSource(const MosaicPanelSource&) = delete;
  MosaicPanelSource& operator=(const MosaicPanelSource&) = delete;

  std::int64_t num_rows() const override;
  std::int64_t num_cols() const override;
  std::string name() const override;
  bool next_block(std::int64_t max_cols, CsrMatrix<double>& block) override;
  /// Advances every haplotype's runs and the founder trees past `count` columns without
  /// making them: O(haplotypes + switches + trees), for a rank starting at its share.
  void skip_columns(std::int64_t count) override;

  /// Starts again at column 0 (the same panel).
  void rewind();
  /// Columns delivered so far.
  std::int64_t position() const;
  const MosaicPanelOptions& options() const;
  /// The share of recent-mutation variants in use (options().rare_fraction resolved).
  double rare_fraction() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The whole panel in one matrix (tests and small panels; memory is the matrix).
CsrMatrix<double> generate_mosaic_panel(const MosaicPanelOptions& options);

}  // namespace kcla
