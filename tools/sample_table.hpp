// Per-sample value tables of PLINK's phenotype and covariate files, matched to a fileset's
// samples: "FID IID v1 v2 ..." lines, an optional header (#FID / FID / #IID / IID), the
// missing values -9, NA, nan and '.'.
#pragma once

#include <kcla/plink.hpp>

#include <string>
#include <vector>

namespace kcla::cli {

struct SampleTable {
  std::vector<std::string> names;
  std::vector<double> values;  ///< samples x names, row-major, fileset order; NaN = missing
  std::size_t width() const { return names.size(); }
};

/// Reads `path`; samples of the fileset absent from it get NaN, lines of samples the
/// fileset lacks are skipped. Without a header the columns are called PREFIX1, PREFIX2...
/// Throws FormatError naming the file and line: a non-numeric value, a sample listed
/// twice, lines of different lengths, no value column.
SampleTable read_sample_table(const std::string& path, const std::vector<std::string>& family_ids,
                              const std::vector<std::string>& individual_ids,
                              const std::string& prefix);

/// What the .fam holds besides the IDs the genotype reader keeps.
struct FamColumns {
  std::vector<char> founder;  ///< both parent IDs (columns 3 and 4) are "0"
  SampleTable phenotype;      ///< the sixth column as {PHENO1} (-9 and NA missing)
};
/// Parses the fileset's .fam (from a file or a genotype grammar file); throws FormatError
/// naming it when a line has fewer than six fields or the number of samples is not
/// `samples`.
FamColumns read_fam_columns(const PlinkTables& tables, std::size_t samples);

}  // namespace kcla::cli
