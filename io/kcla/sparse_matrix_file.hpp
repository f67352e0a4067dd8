// One entry point for every sparse matrix file kcla reads, chosen by the file name.
#pragma once

#include <kcla/csr_matrix.hpp>

#include <string>

namespace kcla {

/// Reads `path` with the reader its name asks for:
///   *.mtx                           Matrix Market        read_matrix_market
///   *.bed / *.bim / *.fam, or BASE  PLINK 1 fileset      read_plink (A1 counts)
///                                   (BASE when BASE.bed exists)
///   *.vcf, *.vcf.gz, *.vcf.bgz,     VCF or BCF           read_vcf (samples x variants,
///   *.bcf                                                non-REF allele counts from GT,
///                                                        multi-allelic records counted;
///                                                        needs htslib)
///   *.ms / *.scrm                   ms output            read_ms (diploid, replicate 0)
///   *.graph                         METIS graph          read_metis_graph
/// Throws FormatError for any other name (and whatever the chosen reader throws).
/// mm-repair files need a column count and are read with read_mm_repair instead.
CsrMatrix<double> read_sparse_matrix(const std::string& path);

}  // namespace kcla
