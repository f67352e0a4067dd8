// libFuzzer target: the input is ms output, read as diploid and haploid replicate 0 and as
// diploid replicate 1 (docs/fuzzing.md).
#include <kcla/ms_format.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = kcla::fuzz::write_file("input.ms", data, size);
  const kcla::MsReadOptions ways[] = {{0, 2}, {0, 1}, {1, 2}};
  for (const auto& options : ways) {
    const auto r = kcla::fuzz::read_or_reject([&] { return kcla::read_ms(path, options); });
    if (!r) continue;
    kcla::fuzz::check_canonical(r->matrix, "read_ms");
    if (static_cast<std::int64_t>(r->positions.size()) != r->matrix.num_cols ||
        r->num_haplotypes != r->matrix.num_rows * options.ploidy)
      kcla::fuzz::finding("read_ms: positions or haplotypes disagree with the matrix",
                          std::to_string(r->positions.size()) + " positions, " +
                              std::to_string(r->num_haplotypes) + " haplotypes");
  }
  return 0;
}
