#include <kcla/sparse_matrix_file.hpp>

#include <kcla/matrix_market.hpp>
#include <kcla/metis_graph.hpp>
#include <kcla/ms_format.hpp>
#include <kcla/plink.hpp>
#include <kcla/vcf.hpp>

namespace kcla {

namespace {

bool has_extension(const std::string& path, const std::string& ext) {
  return path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
}

}  // namespace

CsrMatrix<double> read_sparse_matrix(const std::string& path) {
  if (has_extension(path, ".mtx")) return read_matrix_market(path);
  if (has_extension(path, ".graph")) return read_metis_graph(path);
  if (has_extension(path, ".ms") || has_extension(path, ".scrm")) return read_ms(path).matrix;
  if (is_vcf_file_name(path)) return read_vcf(path).matrix;
  if (is_plink_fileset_name(path)) return read_plink(path).matrix;
  throw FormatError(path,
                    "unknown kind of matrix file: expected .mtx (Matrix Market), .bed or a "
                    "PLINK base name, .vcf/.vcf.gz/.bcf (VCF/BCF), .ms/.scrm (ms output) or "
                    ".graph (METIS)");
}

}  // namespace kcla
