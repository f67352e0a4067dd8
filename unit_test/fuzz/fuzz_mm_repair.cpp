// libFuzzer target: the input packs the three mm-repair files and the column count
// (docs/fuzzing.md):
//   bytes 0-3  num_cols, little-endian, top bit cleared (any of [0, 2^31-1])
//   bytes 4-5  length of BASE.val, little-endian     bytes 6-7  length of BASE.vc.R
//   then BASE.val, BASE.vc.R and, with all the bytes left, BASE.vc.C
// Lengths past the end of the input are cut short. make_seeds.cpp writes seeds this way.
#include <kcla/mm_repair.hpp>

#include <algorithm>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::uint8_t header[8] = {};
  std::copy(data, data + std::min<std::size_t>(size, 8), header);
  const std::int64_t num_cols = header[0] | header[1] << 8 | header[2] << 16 |
                                static_cast<std::int64_t>(header[3] & 0x7f) << 24;
  const std::size_t body = size > 8 ? size - 8 : 0;
  const std::uint8_t* p = data + (size - body);
  const std::size_t val = std::min<std::size_t>(header[4] | header[5] << 8, body);
  const std::size_t rules = std::min<std::size_t>(header[6] | header[7] << 8, body - val);
  kcla::fuzz::write_file("input.val", p, val);
  kcla::fuzz::write_file("input.vc.R", p + val, rules);
  kcla::fuzz::write_file("input.vc.C", p + val + rules, body - val - rules);

  const auto base = kcla::fuzz::scratch_dir() + "/input";
  const auto g = kcla::fuzz::read_or_reject([&] { return kcla::read_mm_repair(base, num_cols); });
  if (!g) return 0;
  try {
    g->validate("read_mm_repair");
  } catch (const std::exception& e) {
    kcla::fuzz::finding("read_mm_repair returned an invalid grammar", e.what());
  }
  if (g->num_cols != num_cols)
    kcla::fuzz::finding("read_mm_repair: wrong column count", std::to_string(g->num_cols));
  return 0;
}
