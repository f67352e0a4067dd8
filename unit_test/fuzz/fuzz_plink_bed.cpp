// libFuzzer target: the input is the .bed of a fileset whose .fam (5 individuals: the last
// byte of each SNP has padding bits) and .bim (3 SNPs) are fixed, so a valid .bed is 3 + 3 * 2
// bytes (docs/fuzzing.md). Read counting A1 and A2, unpacked and packed (read_plink_packed).
#include <kcla/plink.hpp>

#include "fuzz_support.hpp"

namespace {

const std::string& fileset() {
  static const std::string base = [] {
    const std::string fam =
        "f1 i1 0 0 1 -9\nf1 i2 0 0 2 -9\nf2 i3 i1 i2 1 1\nf2 i4 0 0 0 2\n"
        "f3 i5 0 0 1 -9\n";
    const std::string bim = "1\trs1\t0\t100\tA\tG\n1\trs2\t0.5\t200\tC\tT\n2\trs3\t0\t300\tG\tA\n";
    kcla::fuzz::write_file("fixed.fam", fam.data(), fam.size());
    kcla::fuzz::write_file("fixed.bim", bim.data(), bim.size());
    return kcla::fuzz::scratch_dir() + "/fixed";
  }();
  return base;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& base = fileset();
  kcla::fuzz::write_file("fixed.bed", data, size);
  for (const auto allele : {kcla::CountedAllele::a1, kcla::CountedAllele::a2}) {
    kcla::PlinkReadOptions options;
    options.counted_allele = allele;
    const auto r = kcla::fuzz::read_or_reject([&] { return kcla::read_plink(base, options); });
    // The packed reader accepts exactly what read_plink accepts, and holds the same calls.
    const auto packed =
        kcla::fuzz::read_or_reject([&] { return kcla::read_plink_packed(base, options); });
    const auto opened = kcla::fuzz::read_or_reject(
        [&] { return kcla::open_plink_blocks(base, options) != nullptr; });
    if (r.has_value() != opened.has_value())
      kcla::fuzz::finding("read_plink and open_plink_blocks disagree on accepting the file", "");
    if (r.has_value() != packed.has_value())
      kcla::fuzz::finding("read_plink and read_plink_packed disagree on accepting the file",
                          r ? "read_plink accepted it" : "read_plink_packed accepted it");
    if (!r) continue;
    if (packed->count_missing() != r->num_missing ||
        kcla::unpack_genotypes(*packed).values != r->matrix.values ||
        kcla::unpack_genotypes(*packed).column_indices != r->matrix.column_indices)
      kcla::fuzz::finding("read_plink_packed: calls differ from read_plink's", "");
    kcla::fuzz::check_canonical(r->matrix, "read_plink");
    // The streaming block reader (blocks of 2 SNPs) gives the same calls.
    const auto streamed = kcla::fuzz::read_or_reject([&] {
      auto source = kcla::open_plink_blocks(base, options);
      kcla::CsrMatrix<double> block;
      std::int64_t blocks = 0, nonzeros = 0;
      while (source->next_block(2, block)) {
        ++blocks;
        nonzeros += block.nnz();
      }
      return blocks == 2 ? nonzeros : -1;
    });
    if (!streamed || *streamed != r->matrix.nnz())
      kcla::fuzz::finding("open_plink_blocks: rejects or splits a file read_plink accepts", "");
    if (r->matrix.num_rows != 5 || r->matrix.num_cols != 3 || r->num_missing > 15)
      kcla::fuzz::finding(
          "read_plink: wrong shape or missing count",
          std::to_string(r->matrix.num_rows) + " x " + std::to_string(r->matrix.num_cols));
  }
  return 0;
}
