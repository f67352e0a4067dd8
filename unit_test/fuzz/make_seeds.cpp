// Writes the binary seed inputs of the fuzz targets with kcla's own writers:
//   kcla_fuzz_seeds OUTDIR FIXTURE_DIR
// OUTDIR/hdf5_grammar/*.h5 (grammar files) and OUTDIR/mm_repair/*.bin (the three mm-repair
// files packed as fuzz_mm_repair.cpp reads them; FIXTURE_DIR is unit_test/data). The text
// formats' seeds are committed under unit_test/fuzz/corpus/.
#include <kcla/config.hpp>
#include <kcla/hdf5_block_grammar.hpp>
#include <kcla/hdf5_grammar.hpp>
#include <kcla/mm_repair.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>

#include "../grammar_fixtures.hpp"

namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void spit(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

/// The layout of fuzz_mm_repair.cpp: num_cols, two lengths, then the three files.
std::string pack_mm_repair(const std::string& base, std::uint32_t num_cols) {
  const auto val = slurp(base + ".val"), rules = slurp(base + ".vc.R");
  const auto seq = slurp(base + ".vc.C");
  if (val.size() > 0xffff || rules.size() > 0xffff)
    throw std::runtime_error(base + ": too large for a seed");
  std::string packed;
  for (int k = 0; k < 4; ++k) packed.push_back(static_cast<char>(num_cols >> (8 * k)));
  for (std::size_t n : {val.size(), rules.size()}) {
    packed.push_back(static_cast<char>(n & 0xff));
    packed.push_back(static_cast<char>(n >> 8));
  }
  return packed + val + rules + seq;
}

/// One row, one entry: the smallest non-empty grammar.
kcla::Grammar single_entry() {
  kcla::Grammar g;
  g.num_rows = 1;
  g.num_cols = 1;
  g.values = {2.5};
  g.terminal_values = {0};
  g.terminal_columns = {0};
  g.row_offsets = {0, 1};
  g.sequence = {0};
  return g;
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s OUTDIR FIXTURE_DIR\n", argv[0]);
    return 2;
  }
  const fs::path out = argv[1], fixtures = argv[2];
  kcla::Grammar empty;
  empty.num_cols = 3;
  const std::pair<const char*, kcla::Grammar> grammars[] = {
      {"paper", kcla::test::paper_grammar()}, {"single", single_entry()}, {"empty", empty}};

  fs::create_directories(out / "mm_repair");
  const auto scratch = out / "mm_repair.tmp";
  fs::create_directories(scratch);
  for (const auto& [name, g] : grammars) {
    const auto base = (scratch / name).string();
    kcla::write_mm_repair(base, g);
    spit(out / "mm_repair" / (std::string(name) + ".bin"),
         pack_mm_repair(base, static_cast<std::uint32_t>(g.num_cols)));
  }
  fs::remove_all(scratch);
  spit(out / "mm_repair" / "example.bin",
       pack_mm_repair((fixtures / "mm-repair-example" / "M.csv").string(), 7));

#if KCLA_HAVE_HDF5
  fs::create_directories(out / "hdf5_grammar");
  for (const auto& [name, g] : grammars)
    kcla::write_grammar_hdf5((out / "hdf5_grammar" / (std::string(name) + ".h5")).string(), g);
  // A block grammar file: every grammar above as one block of a block-diagonal layout.
  kcla::BlockGrammar blocks;
  for (const auto& [name, g] : grammars) {
    const kcla::BlockExtent e{blocks.layout.num_rows, blocks.layout.num_rows + g.num_rows,
                              blocks.layout.num_cols, blocks.layout.num_cols + g.num_cols};
    blocks.layout.num_rows = e.row_end;
    blocks.layout.num_cols = e.col_end;
    blocks.block_ids.push_back(blocks.layout.num_blocks());
    blocks.layout.blocks.push_back(e);
    blocks.grammars.push_back(g);
  }
  kcla::write_block_grammar_hdf5((out / "hdf5_grammar" / "blocks.h5").string(), blocks);
#endif
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "kcla_fuzz_seeds: %s\n", e.what());
  return 1;
}
