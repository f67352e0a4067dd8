// Hudson's ms output format, as written by ms, scrm and msprime's ms mode: per replicate
// "//", "segsites: S", "positions: ...", then one line of S characters 0/1 per haplotype.
#pragma once

#include <kcla/column_block_source.hpp>
#include <kcla/csr_matrix.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kcla {

struct MsReadOptions {
  /// Which replicate ("//" block) to read, 0-based.
  std::int64_t replicate = 0;
  /// 2: consecutive haplotypes pair into one individual (values 0, 1, 2);
  /// 1: one row per haplotype (values 0, 1).
  int ploidy = 2;
};

struct MsGenotypes {
  /// individuals (or haplotypes when ploidy is 1) x segregating sites.
  CsrMatrix<double> matrix;
  std::vector<double> positions;  ///< the "positions:" line, one per column
  std::int64_t num_haplotypes = 0;
};

/// Reads one replicate of an ms-format file, streaming one haplotype line at a time.
/// The number of haplotypes is taken from the command line on the first line
/// ("ms|scrm NSAM NREPS ...") when it has one, and then checked; otherwise haplotype
/// lines are read up to the next blank line, "//" or the end of the file.
/// Throws FormatError (file and line number) on malformed input, and InvalidArgument for
/// a ploidy other than 1 or 2.
MsGenotypes read_ms(const std::string& path, const MsReadOptions& options = {});

/// One replicate as a ColumnBlockSource for block compression (kcla::compress_blocks):
/// the same matrix read_ms gives, delivered in site ranges read straight from the file,
/// so memory stays bounded by a block plus one offset per haplotype. The file is checked
/// as read_ms checks it when opened (one pass) and must be a regular file (blocks seek).
/// Throws as read_ms.
std::unique_ptr<ColumnBlockSource> open_ms_blocks(const std::string& path,
                                                  const MsReadOptions& options = {});

}  // namespace kcla
