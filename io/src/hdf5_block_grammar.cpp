#include <kcla/config.hpp>
#include <kcla/hdf5_block_grammar.hpp>
#include <kcla/hdf5_grammar.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <new>
#include <random>

#include <unistd.h>

#if KCLA_HAVE_HDF5
#include <kcla/detail/memory_limit.hpp>
#include "hdf5_handle.hpp"

#include "hdf5_genotype_group.hpp"
#include "hdf5_grammar_group.hpp"
#endif

namespace kcla {

#if KCLA_HAVE_HDF5

namespace {

constexpr const char* kGroup = "/kcla_block_grammar";

std::string block_group_name(std::int64_t id) {
  char name[64];
  std::snprintf(name, sizeof name, "%s/block_%08lld", kGroup, static_cast<long long>(id));
  return name;
}

std::string temporary_name(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::random_device rd;
  return (folder / ("." + target.filename().string() + ".tmp." + std::to_string(::getpid()) + "." +
                    std::to_string(rd() % 100000)))
      .string();
}

// Extents as one int64 array of 4 values per block: row_begin, row_end, col_begin, col_end.
std::vector<std::int64_t> flatten(const std::vector<BlockExtent>& blocks) {
  std::vector<std::int64_t> flat;
  flat.reserve(blocks.size() * 4);
  for (const auto& e : blocks)
    flat.insert(flat.end(), {e.row_begin, e.row_end, e.col_begin, e.col_end});
  return flat;
}

BlockLayout read_layout(const detail::Hdf5File& file, hid_t group) {
  const auto format = file.read_string_attribute(group, "format");
  if (format != kBlockGrammarFormatName)
    file.fail("format", "is '" + format + "', expected '" + kBlockGrammarFormatName + "'");
  const auto version = file.read_int_attribute(group, "version");
  if (version < 1 || version > kBlockGrammarFormatVersion)
    file.fail("version", std::to_string(version) + " is not supported (this kcla reads 1.." +
                             std::to_string(kBlockGrammarFormatVersion) + ")");
  BlockLayout layout;
  layout.num_rows = file.read_int_attribute(group, "rows");
  layout.num_cols = file.read_int_attribute(group, "cols");
  const auto blocks = file.read_int_attribute(group, "blocks");
  if (blocks < 0 || blocks > (std::int64_t(1) << 32))
    file.fail("blocks", "absurd block count " + std::to_string(blocks));
  const auto flat = file.read_dataset<std::int64_t>(group, "extents", 4 * blocks);
  for (std::int64_t b = 0; b < blocks; ++b)
    layout.blocks.push_back({flat[4 * b], flat[4 * b + 1], flat[4 * b + 2], flat[4 * b + 3]});
  try {
    layout.validate("block layout");
  } catch (const InvalidArgument& e) {
    throw FormatError(file.name(), std::string("inconsistent content: ") + e.what());
  }
  return layout;
}

bool has_block_group(const detail::Hdf5File& file) {
  detail::Hdf5Quiet quiet;
  return H5Lexists(file.id(), kGroup, H5P_DEFAULT) > 0;
}

}  // namespace

struct BlockGrammarFileWriter::State {
  std::string path, temp;
  detail::Hdf5File file;
  detail::Hdf5Handle group;
  std::vector<BlockExtent> written;  // by block id; rows_end < 0: not written
  bool finished = false;
  bool genotypes = false;
  std::int64_t genotype_rows = 0, genotype_cols = 0;
};

BlockGrammarFileWriter::BlockGrammarFileWriter(const std::string& path)
    : state_(std::make_unique<State>()) {
  state_->path = path;
  state_->temp = temporary_name(path);
  state_->file = detail::Hdf5File::create(state_->temp, path);
  state_->group = state_->file.create_group(kGroup);
}

BlockGrammarFileWriter::~BlockGrammarFileWriter() {
  if (!state_ || state_->finished) return;
  state_->group.reset();
  state_->file = detail::Hdf5File{};
  std::remove(state_->temp.c_str());
}

void BlockGrammarFileWriter::append(std::int64_t block_id, const BlockExtent& extent,
                                    const Grammar& g) {
  auto& s = *state_;
  if (s.finished) throw InvalidArgument(s.path + ": append after finish");
  if (block_id < 0) throw InvalidArgument(s.path + ": negative block id");
  if (g.num_rows != extent.rows() || g.num_cols != extent.cols())
    throw InvalidArgument(s.path + ": block " + std::to_string(block_id) +
                          " grammar shape differs from its extent");
  if (static_cast<std::int64_t>(s.written.size()) <= block_id)
    s.written.resize(static_cast<std::size_t>(block_id) + 1, BlockExtent{0, -1, 0, -1});
  if (s.written[block_id].row_end >= 0)
    throw InvalidArgument(s.path + ": block " + std::to_string(block_id) + " written twice");
  g.validate("block " + std::to_string(block_id));
  auto group = s.file.create_group(block_group_name(block_id));
  detail::write_grammar_group(s.file, group.get(), g);
  s.written[block_id] = extent;
}

std::int64_t BlockGrammarFileWriter::bytes_written() const {
  hsize_t size = 0;
  if (state_->file.id() >= 0 && H5Fget_filesize(state_->file.id(), &size) >= 0)
    return static_cast<std::int64_t>(size);
  return 0;
}

void BlockGrammarFileWriter::append_genotypes(const GenotypePart& part) {
  auto& s = *state_;
  if (s.finished) throw InvalidArgument(s.path + ": append_genotypes after finish");
  if (s.genotypes) throw InvalidArgument(s.path + ": append_genotypes called twice");
  detail::check_genotype_part(part.missing.num_rows, part.missing.num_cols, part, s.path);
  detail::write_genotype_group(s.file, part);
  s.genotypes = true;
  s.genotype_rows = part.missing.num_rows;
  s.genotype_cols = part.missing.num_cols;
}

void BlockGrammarFileWriter::finish(const BlockLayout& layout) {
  auto& s = *state_;
  if (s.finished) throw InvalidArgument(s.path + ": finish called twice");
  layout.validate(s.path);
  if (s.genotypes && (s.genotype_rows != layout.num_rows || s.genotype_cols != layout.num_cols))
    throw InvalidArgument(s.path + ": the genotype part is " + std::to_string(s.genotype_rows) +
                          " x " + std::to_string(s.genotype_cols) + ", the layout " +
                          std::to_string(layout.num_rows) + " x " +
                          std::to_string(layout.num_cols));
  if (static_cast<std::int64_t>(s.written.size()) != layout.num_blocks())
    throw InvalidArgument(s.path + ": " + std::to_string(s.written.size()) +
                          " block ids written, the layout has " +
                          std::to_string(layout.num_blocks()));
  for (std::int64_t b = 0; b < layout.num_blocks(); ++b)
    if (!(s.written[b] == layout.blocks[b]))
      throw InvalidArgument(s.path + ": block " + std::to_string(b) +
                            " is missing or has another extent than the layout's");
  const hid_t group = s.group.get();
  s.file.write_attribute(group, "format", std::string(kBlockGrammarFormatName));
  s.file.write_attribute(group, "version", std::int64_t{kBlockGrammarFormatVersion});
  s.file.write_attribute(group, "rows", layout.num_rows);
  s.file.write_attribute(group, "cols", layout.num_cols);
  s.file.write_attribute(group, "blocks", layout.num_blocks());
  s.file.write_dataset(group, "extents", flatten(layout.blocks));
  s.group.reset();
  if (H5Fflush(s.file.id(), H5F_SCOPE_GLOBAL) < 0) s.file.fail("", "flush failed");
  s.file = detail::Hdf5File{};
  if (std::rename(s.temp.c_str(), s.path.c_str()) != 0) {
    std::remove(s.temp.c_str());
    throw FormatError(s.path, "cannot rename the temporary file into place");
  }
  s.finished = true;
}

void write_block_grammar_hdf5(const std::string& path, const BlockGrammar& g) {
  g.validate("write_block_grammar_hdf5");
  if (!g.complete())
    throw InvalidArgument("write_block_grammar_hdf5: " + path +
                          ": the grammar holds only some blocks (a rank's share)");
  BlockGrammarFileWriter writer(path);
  for (std::size_t i = 0; i < g.grammars.size(); ++i)
    writer.append(g.block_ids[i], g.extent_of(i), g.grammars[i]);
  writer.finish(g.layout);
}

bool is_block_grammar_hdf5(const std::string& path) {
  if (!is_hdf5_file(path)) return false;
  try {
    auto file = detail::Hdf5File::open(path);
    return has_block_group(file);
  } catch (const Error&) {
    return false;
  }
}

BlockLayout read_block_layout_hdf5(const std::string& path) {
  auto file = detail::Hdf5File::open(path);
  if (!has_block_group(file)) {
    const auto g = read_grammar_hdf5(path);
    return BlockGrammar::single(g).layout;
  }
  auto group = file.open_group(kGroup);
  return read_layout(file, group.get());
}

BlockGrammar read_block_grammar_hdf5(const std::string& path,
                                     const std::vector<std::int64_t>& block_ids) try {
  auto file = detail::Hdf5File::open(path);
  if (!has_block_group(file)) {
    auto single = BlockGrammar::single(read_grammar_hdf5(path));
    for (auto id : block_ids)
      if (id != 0)
        throw InvalidArgument(path + ": block " + std::to_string(id) +
                              " requested, a single-grammar file has block 0 only");
    return single;
  }
  auto group = file.open_group(kGroup);
  BlockGrammar g;
  g.layout = read_layout(file, group.get());
  if (block_ids.empty()) {
    for (std::int64_t b = 0; b < g.layout.num_blocks(); ++b) g.block_ids.push_back(b);
  } else {
    g.block_ids = block_ids;
  }
  for (std::size_t i = 0; i < g.block_ids.size(); ++i) {
    const auto id = g.block_ids[i];
    if (id < 0 || id >= g.layout.num_blocks() || (i > 0 && id <= g.block_ids[i - 1]))
      throw InvalidArgument(path + ": block ids must be ascending and inside [0, " +
                            std::to_string(g.layout.num_blocks()) + ")");
    const auto name = block_group_name(id);
    auto block = file.open_group(name);
    g.grammars.push_back(
        detail::read_grammar_group(file, block.get(), "block " + std::to_string(id) + ": "));
  }
  try {
    g.validate("block grammar");
  } catch (const InvalidArgument& e) {
    throw FormatError(path, std::string("inconsistent content: ") + e.what());
  }
  return g;
} catch (const std::bad_alloc&) {
  detail::throw_out_of_memory(path);
}

#else

namespace {
[[noreturn]] void no_hdf5(const std::string& path) {
  throw FormatError(path, "kcla was built without HDF5 (KCLA_ENABLE_HDF5)");
}
}  // namespace

struct BlockGrammarFileWriter::State {};
BlockGrammarFileWriter::BlockGrammarFileWriter(const std::string& path) {
  no_hdf5(path);
}
BlockGrammarFileWriter::~BlockGrammarFileWriter() = default;
void BlockGrammarFileWriter::append(std::int64_t, const BlockExtent&, const Grammar&) {}
void BlockGrammarFileWriter::append_genotypes(const GenotypePart&) {}
void BlockGrammarFileWriter::finish(const BlockLayout&) {}
std::int64_t BlockGrammarFileWriter::bytes_written() const {
  return 0;
}
void write_block_grammar_hdf5(const std::string& path, const BlockGrammar&) {
  no_hdf5(path);
}
bool is_block_grammar_hdf5(const std::string&) {
  return false;
}
BlockLayout read_block_layout_hdf5(const std::string& path) {
  no_hdf5(path);
}
BlockGrammar read_block_grammar_hdf5(const std::string& path, const std::vector<std::int64_t>&) {
  no_hdf5(path);
}

#endif

}  // namespace kcla
