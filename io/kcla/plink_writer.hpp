// Writing PLINK 1 binary filesets (.bed + .bim + .fam) from a matrix delivered in column
// blocks, so a panel of any size goes to disk with memory bounded by one block.
#pragma once

#include <kcla/column_block_source.hpp>
#include <kcla/packed_genotypes.hpp>  // CountedAllele

#include <cstdint>
#include <functional>
#include <string>

namespace kcla {

struct PlinkWriteOptions {
  /// Columns per block asked of the source; 0: about 2^25 calls per block.
  std::int64_t block_cols = 0;
  /// Threads that pack a block into .bed codes; 0 = all cores (the files do not depend on it).
  int threads = 0;
  /// The allele the matrix's values count (read_plink with the same choice reads the
  /// same matrix back).
  CountedAllele counted_allele = CountedAllele::a1;
  /// Called after each block with (columns written, source.num_cols()).
  std::function<void(std::int64_t, std::int64_t)> progress;
};

/// Writes BASE.bed (SNP-major), BASE.bim and BASE.fam, BASE = plink_base_name(base), from
/// `source`'s remaining blocks. Synthetic ids: individual i is "s<i+1>" (family and
/// individual id), variant j is "v<j+1>" on chromosome 1 at position j + 1, with alleles A
/// (A1) and C (A2). All three files are written under temporary names and renamed into
/// place only at the end, the .bed last (an old BASE.bed is removed first), so a failure
/// never leaves a complete-looking fileset. Values must be 0, 1 or 2; throws FormatError
/// naming the source for any other, and FormatError naming the file when writing fails.
/// Returns the number of variants written.
std::int64_t write_plink(ColumnBlockSource& source, const std::string& base,
                         const PlinkWriteOptions& options = {});

}  // namespace kcla
