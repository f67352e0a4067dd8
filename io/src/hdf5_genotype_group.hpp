// The genotype part of a grammar or block grammar file (group /kcla_genotypes: missing
// calls, counted allele, the fileset's .fam and .bim): shared by both file kinds. Private
// to io/src.
#pragma once

#include <kcla/hdf5_genotype_grammar.hpp>
#include "hdf5_handle.hpp"

#include <cstdint>
#include <string>

namespace kcla::detail {

/// InvalidArgument prefixed with `what` unless `part` describes a rows x cols matrix.
void check_genotype_part(std::int64_t rows, std::int64_t cols, const GenotypePart& part,
                         const std::string& what);
/// Writes the group (the part already checked).
void write_genotype_group(const Hdf5File& file, const GenotypePart& part);
/// Reads and validates the group of `file` (named `path` in errors) against the matrix's
/// shape; FormatError when the file has none.
GenotypePart read_genotype_group(const Hdf5File& file, const std::string& path, std::int64_t rows,
                                 std::int64_t cols);

}  // namespace kcla::detail
