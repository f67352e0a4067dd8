// PLINK 1 binary genotype filesets (.bed + .bim + .fam), read into a sparse genotype
// matrix: rows are individuals, columns are SNPs, values count alleles (0, 1, 2).
#pragma once

#include <kcla/column_block_source.hpp>
#include <kcla/csr_matrix.hpp>
#include <kcla/missing_calls.hpp>
#include <kcla/packed_genotypes.hpp>  // CountedAllele, PackedGenotypes

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kcla {

struct PlinkReadOptions {
  CountedAllele counted_allele = CountedAllele::a1;
};

struct PlinkGenotypes {
  /// individuals x SNPs; a missing call is stored as 0 (absent) and counted below.
  CsrMatrix<double> matrix;
  std::vector<std::string> family_ids;      ///< .fam column 1, one per row
  std::vector<std::string> individual_ids;  ///< .fam column 2, one per row
  std::vector<std::string> snp_ids;         ///< .bim column 2, one per column
  std::int64_t num_missing = 0;             ///< missing calls (code 01) in the .bed
  MissingCalls missing;                     ///< where they are (individuals x SNPs)
};

/// The .bim's alleles: A1 (column 5) and A2 (column 6) of each SNP, in .bim order, and its
/// base-pair coordinate (column 4; PLINK ignores variants whose coordinate is negative).
struct PlinkAlleles {
  std::vector<std::string> allele1, allele2;
  std::vector<std::int64_t> positions;
  std::vector<std::string> chromosomes;  ///< column 1 as written
  /// PLINK's human autosomes: a chromosome code 1..22 (with or without a "chr" prefix).
  bool is_autosome(std::int64_t variant) const;
};
/// Reads BASE.bim (BASE = plink_base_name(path)); FormatError naming the file when a
/// non-blank line has fewer than six fields.
PlinkAlleles read_plink_alleles(const std::string& path);

/// The fileset's base name: `path` without a ".bed", ".bim" or ".fam" suffix.
std::string plink_base_name(const std::string& path);

/// True when `path` names a PLINK 1 fileset: a .bed/.bim/.fam path, or a base name that
/// is not itself a file but has a .bed beside it.
bool is_plink_fileset_name(const std::string& path);

/// A fileset's sample and variant tables as text (the .fam's and .bim's bytes), with the
/// names their errors cite. A genotype grammar file (<kcla/hdf5_genotype_grammar.hpp>)
/// carries them, so the commands that need IDs and alleles run without the fileset.
struct PlinkTables {
  std::string fam_name, fam_text;
  std::string bim_name, bim_text;
};
/// Reads BASE.fam and BASE.bim whole (FormatError naming a file that cannot be read).
PlinkTables read_plink_tables(const std::string& path);

/// The .fam's columns: IDs (1, 2), parents (3, 4), sex (5) and phenotype (6), as written.
struct PlinkSamples {
  std::vector<std::string> family_ids, individual_ids;
  std::vector<std::string> fathers, mothers, sexes, phenotypes;
  std::size_t size() const { return individual_ids.size(); }
  /// PLINK's founders: both parent IDs are "0".
  bool is_founder(std::size_t sample) const {
    return fathers[sample] == "0" && mothers[sample] == "0";
  }
};
/// Parses the tables' .fam (six fields per non-blank line) and .bim (as read_plink_alleles,
/// with the variant IDs); FormatError naming the table and line.
PlinkSamples parse_plink_samples(const PlinkTables& tables);
struct PlinkVariants {
  std::vector<std::string> ids;  ///< column 2
  PlinkAlleles alleles;          ///< columns 1, 4, 5, 6
  std::size_t size() const { return ids.size(); }
};
PlinkVariants parse_plink_variants(const PlinkTables& tables);

/// Reads BASE.bed, BASE.bim and BASE.fam, where BASE = plink_base_name(path) (so either
/// the base name or the .bed's path works). Rows come from the .fam's lines, columns from
/// the .bim's (blank lines are skipped). The .bed must be SNP-major (magic 6c 1b 01) and
/// exactly 3 + SNPs * ceil(individuals / 4) bytes long. Streams the .bed twice (count,
/// then fill), so memory is the result plus one row counter per individual.
/// Throws FormatError naming the file on any inconsistency.
PlinkGenotypes read_plink(const std::string& path, const PlinkReadOptions& options = {});

/// Reads the same fileset without unpacking it: the .bed's 2-bit codes as they are
/// (samples = the .fam's lines, variants = the .bim's), each variant padded to
/// PackedGenotypes::bytes_per_variant with missing calls; `options.counted_allele` sets
/// which allele the codes' values count. The checks and errors are read_plink's
/// (FormatError naming the file); memory is the packed codes alone.
PackedGenotypes read_plink_packed(const std::string& path, const PlinkReadOptions& options = {});

/// Only where the fileset's calls are missing (code 01), individuals x SNPs: two passes over
/// the .bed (count per individual, then fill), memory the result plus one counter per
/// individual. What a block compression of the fileset (which reads missing calls as 0)
/// keeps beside its grammar. The checks and errors are read_plink's.
MissingCalls read_plink_missing_calls(const std::string& path);

/// The fileset as a ColumnBlockSource: SNP ranges of the .bed read and decoded one block
/// at a time (memory: one block), the same checks and values as read_plink; seeks past
/// skipped SNPs. For compressing panels larger than memory (kcla::compress_blocks).
std::unique_ptr<ColumnBlockSource> open_plink_blocks(const std::string& path,
                                                     const PlinkReadOptions& options = {});

}  // namespace kcla
