// libFuzzer target: the input is a .fam and a .bim, separated by the input's first NUL
// byte (docs/fuzzing.md). The target writes a .bed of the size the two files' non-blank
// line counts imply (its genotype bytes drawn from the input), so inputs whose text the
// reader accepts go on to a full read.
#include <kcla/plink.hpp>

#include <cstring>

#include "fuzz_support.hpp"

namespace {

/// Lines with a character other than the reader's blanks (' ', '\t', '\r', '\v', '\f').
std::uint64_t non_blank_lines(const std::uint8_t* text, std::size_t size) {
  std::uint64_t lines = 0;
  bool content = false;
  for (std::size_t k = 0; k <= size; ++k) {
    if (k == size || text[k] == '\n') {
      lines += content;
      content = false;
    } else if (std::strchr(" \t\r\v\f", text[k]) == nullptr || text[k] == '\0') {
      content = true;
    }
  }
  return lines;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto* nul = static_cast<const std::uint8_t*>(std::memchr(data, 0, size));
  const std::size_t fam_size = nul ? static_cast<std::size_t>(nul - data) : size;
  const std::uint8_t* bim = nul ? nul + 1 : data + size;
  const std::size_t bim_size = static_cast<std::size_t>(data + size - bim);
  kcla::fuzz::write_file("text.fam", data, fam_size);
  kcla::fuzz::write_file("text.bim", bim, bim_size);

  const std::uint64_t individuals = non_blank_lines(data, fam_size);
  const std::uint64_t snps = non_blank_lines(bim, bim_size);
  std::string bed = "\x6c\x1b\x01";
  if (snps * ((individuals + 3) / 4) <= (1u << 20)) {
    std::uint32_t state = static_cast<std::uint32_t>(size) * 2654435761u + 1;
    for (std::uint64_t k = 0; k < snps * ((individuals + 3) / 4); ++k) {
      state = state * 1664525u + 1013904223u;
      bed.push_back(static_cast<char>(state >> 24));
    }
  }
  kcla::fuzz::write_file("text.bed", bed.data(), bed.size());

  const auto base = kcla::fuzz::scratch_dir() + "/text";
  if (const auto r = kcla::fuzz::read_or_reject([&] { return kcla::read_plink(base); })) {
    kcla::fuzz::check_canonical(r->matrix, "read_plink");
    if (r->family_ids.size() != r->individual_ids.size() ||
        static_cast<std::int64_t>(r->individual_ids.size()) != r->matrix.num_rows ||
        static_cast<std::int64_t>(r->snp_ids.size()) != r->matrix.num_cols)
      kcla::fuzz::finding(
          "read_plink: id lists disagree with the matrix",
          std::to_string(r->matrix.num_rows) + " x " + std::to_string(r->matrix.num_cols));
    // The tables as a genotype grammar file carries them (PLINK's six fields per line,
    // where read_plink needs two): where they parse, the same samples and variants.
    const auto tables = kcla::read_plink_tables(base);
    const auto samples =
        kcla::fuzz::read_or_reject([&] { return kcla::parse_plink_samples(tables); });
    const auto variants =
        kcla::fuzz::read_or_reject([&] { return kcla::parse_plink_variants(tables); });
    if ((samples && samples->individual_ids != r->individual_ids) ||
        (variants && variants->ids != r->snp_ids))
      kcla::fuzz::finding(
          "parse_plink_samples/variants disagree with read_plink",
          std::to_string(r->matrix.num_rows) + " x " + std::to_string(r->matrix.num_cols));
  }
  return 0;
}
