// libFuzzer target: the input is a METIS graph file (docs/fuzzing.md).
#include <kcla/metis_graph.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = kcla::fuzz::write_file("input.graph", data, size);
  if (const auto a = kcla::fuzz::read_or_reject([&] { return kcla::read_metis_graph(path); }))
    kcla::fuzz::check_canonical(*a, "read_metis_graph");
  return 0;
}
