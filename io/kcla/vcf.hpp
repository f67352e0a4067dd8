// VCF and BCF genotype files (text .vcf, bgzip/gzip .vcf.gz, binary .bcf) read through
// htslib into a sparse dosage matrix: rows are samples (individuals), columns are variants
// (records), values count non-reference alleles.
#pragma once

#include <kcla/column_block_source.hpp>
#include <kcla/config.hpp>
#include <kcla/csr_matrix.hpp>
#include <kcla/missing_calls.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kcla {

/// What a record with more than one ALT allele becomes.
enum class MultiallelicPolicy {
  /// One column whose value counts every non-REF allele (GT 1/2 gives 2): the dosage of
  /// "not the reference", so the column count equals the record count.
  count_non_ref,
  /// No column; the record is counted in VcfGenotypes::num_skipped_multiallelic.
  skip,
};

struct VcfReadOptions {
  MultiallelicPolicy multiallelic = MultiallelicPolicy::count_non_ref;
  /// Read the FORMAT/DS field (expected ALT dosage, Number=A or 1) instead of GT in the
  /// records that have one; the sample's values over ALT alleles are summed. A missing DS
  /// value is a missing call. Records without DS use GT.
  bool use_dosage_field = false;
  /// Keep one id per column in VcfGenotypes::variant_ids.
  bool keep_variant_ids = true;
};

struct VcfGenotypes {
  /// samples x variants (records kept, in file order). Missing calls are 0 (absent).
  CsrMatrix<double> matrix;
  std::vector<std::string> sample_ids;   ///< header sample names, one per row
  std::vector<std::string> variant_ids;  ///< ID column, or CHROM:POS:REF:ALT when it is '.'
  /// Calls (sample, kept record) that were missing: a GT with any missing allele ("./.",
  /// "0/.", "."), a sample without GT, a record without GT, or a missing DS value.
  std::int64_t num_missing = 0;
  /// Where they are (samples x kept records), for standardized products.
  MissingCalls missing;
  std::int64_t num_multiallelic = 0;          ///< records with 2+ ALT alleles (kept or not)
  std::int64_t num_skipped_multiallelic = 0;  ///< of those, skipped (MultiallelicPolicy::skip)
  std::int64_t num_dosage_records = 0;        ///< records read from DS (use_dosage_field)
};

/// Reads a VCF (.vcf, .vcf.gz: plain or bgzip-compressed text) or BCF (.bcf) file; the
/// format is detected from the content, not the name. GT gives the count of non-REF alleles
/// of each call, whatever the ploidy (diploid 0/1/2, haploid 0/1) and phasing ('|' or '/').
///
/// Streams the records once: memory is about twice the result (the entries are collected
/// per variant, then transposed into rows), never a dense matrix.
///
/// Throws FormatError naming the file, and the line (text) or record number (BCF) when
/// the fault lies in a record: unreadable file, no header or sample line, a record htslib
/// cannot parse (wrong column count, bad GT), an allele index beyond the record's alleles,
/// a non-finite DS, more than 2^31-1 variants or samples. Without htslib
/// (KCLA_HAVE_HTSLIB == 0) it always throws FormatError saying so.
VcfGenotypes read_vcf(const std::string& path, const VcfReadOptions& options = {});

/// The file as a ColumnBlockSource for block compression (kcla::compress_blocks): records
/// read and decoded one block at a time (the columns read_vcf gives, the same values), so
/// memory stays bounded by a block whatever the file's size. The column count is known
/// only at the end (num_cols() is -1), so ranks cannot split the file by columns. Missing
/// calls read as 0. Errors as read_vcf, raised by next_block.
std::unique_ptr<ColumnBlockSource> open_vcf_blocks(const std::string& path,
                                                   const VcfReadOptions& options = {});

/// True when the name says VCF/BCF: ends in .vcf, .vcf.gz, .vcf.bgz or .bcf.
bool is_vcf_file_name(const std::string& path);

}  // namespace kcla
