// libFuzzer target: the input is a Matrix Market file (docs/fuzzing.md).
#include <kcla/matrix_market.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = kcla::fuzz::write_file("input.mtx", data, size);
  if (const auto a = kcla::fuzz::read_or_reject([&] { return kcla::read_matrix_market(path); }))
    kcla::fuzz::check_canonical(*a, "read_matrix_market");
  return 0;
}
