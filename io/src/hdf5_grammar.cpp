#include <kcla/config.hpp>
#include <kcla/hdf5_grammar.hpp>

#include <fstream>
#include <new>

#if KCLA_HAVE_HDF5
#include <kcla/detail/atomic_file.hpp>
#include <kcla/detail/memory_limit.hpp>
#include "grammar_checks.hpp"
#include "hdf5_handle.hpp"

#include "hdf5_grammar_group.hpp"
#endif

namespace kcla {

bool is_hdf5_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char signature[8] = {};
  in.read(signature, 8);
  static const char expected[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
  return in.gcount() == 8 && std::equal(signature, signature + 8, expected);
}

#if KCLA_HAVE_HDF5

namespace {
constexpr const char* kGroup = "/kcla_grammar";
}

namespace detail {

void write_grammar_group(const Hdf5File& file, hid_t group, const Grammar& g) {
  file.write_attribute(group, "rows", g.num_rows);
  file.write_attribute(group, "cols", g.num_cols);
  file.write_attribute(group, "value_type", std::string("float64"));
  file.write_dataset(group, "values", g.values);
  file.write_dataset(group, "terminal_values", g.terminal_values);
  file.write_dataset(group, "terminal_columns", g.terminal_columns);
  file.write_dataset(group, "rule_left", g.rule_left);
  file.write_dataset(group, "rule_right", g.rule_right);
  file.write_dataset(group, "row_offsets", g.row_offsets);
  file.write_dataset(group, "sequence", g.sequence);
}

Grammar read_grammar_group(const Hdf5File& file, hid_t group, const std::string& what) {
  Grammar g;
  g.num_rows = file.read_int_attribute(group, "rows");
  g.num_cols = file.read_int_attribute(group, "cols");
  if (g.num_rows < 0 || g.num_cols < 0 || g.num_rows > (std::int64_t(1) << 40) ||
      g.num_cols > INT32_MAX)
    file.fail(what + "rows/cols",
              "absurd shape " + std::to_string(g.num_rows) + " x " + std::to_string(g.num_cols));
  // Sizes first, from the dataspaces alone; then the arrays.
  const auto terminals = file.dataset_length(group, "terminal_values");
  const auto rules = file.dataset_length(group, "rule_left");
  g.values = file.read_dataset<double>(group, "values");
  g.terminal_values = file.read_dataset<std::int32_t>(group, "terminal_values");
  g.terminal_columns = file.read_dataset<std::int32_t>(group, "terminal_columns", terminals);
  g.rule_left = file.read_dataset<std::int32_t>(group, "rule_left");
  g.rule_right = file.read_dataset<std::int32_t>(group, "rule_right", rules);
  g.row_offsets = file.read_dataset<std::int64_t>(group, "row_offsets", g.num_rows + 1);
  g.sequence = file.read_dataset<std::int32_t>(group, "sequence");
  try {
    g.validate(what.empty() ? "grammar" : what);
  } catch (const InvalidArgument& e) {
    throw FormatError(file.name(), std::string("inconsistent content: ") + e.what());
  }
  check_expansion_lengths(file.name(), file.name(), g);
  return g;
}

void write_grammar_file_group(const Hdf5File& file, const Grammar& g) {
  auto group = file.create_group(kGroup);
  file.write_attribute(group.get(), "format", std::string(kGrammarFormatName));
  file.write_attribute(group.get(), "version", std::int64_t{kGrammarFormatVersion});
  write_grammar_group(file, group.get(), g);
}

Grammar read_grammar_file_group(const Hdf5File& file) {
  {
    Hdf5Quiet quiet;
    if (H5Lexists(file.id(), kGroup, H5P_DEFAULT) <= 0 &&
        H5Lexists(file.id(), "/kcla_block_grammar", H5P_DEFAULT) > 0)
      file.fail("",
                "holds a block grammar (several grammars), not one grammar: read it with "
                "read_block_grammar_hdf5 (<kcla/hdf5_block_grammar.hpp>)");
  }
  auto group = file.open_group(kGroup);
  const auto format = file.read_string_attribute(group.get(), "format");
  if (format != kGrammarFormatName)
    file.fail("format", "is '" + format + "', expected '" + kGrammarFormatName + "'");
  const auto version = file.read_int_attribute(group.get(), "version");
  if (version < 1 || version > kGrammarFormatVersion)
    file.fail("version", std::to_string(version) + " is not supported (this kcla reads 1.." +
                             std::to_string(kGrammarFormatVersion) + ")");
  return read_grammar_group(file, group.get(), "");
}

}  // namespace detail

void write_grammar_hdf5(const std::string& path, const Grammar& g) {
  g.validate("write_grammar_hdf5");
  detail::write_atomically(path, [&](const std::string& tmp) {
    auto file = detail::Hdf5File::create(tmp, path);
    detail::write_grammar_file_group(file, g);
  });
}

Grammar read_grammar_hdf5(const std::string& path) try {
  auto file = detail::Hdf5File::open(path);
  return detail::read_grammar_file_group(file);
} catch (const std::bad_alloc&) {  // even a file too large for memory gives an error naming it
  detail::throw_out_of_memory(path);
}

#else

void write_grammar_hdf5(const std::string& path, const Grammar&) {
  throw FormatError(path, "kcla was built without HDF5 (KCLA_ENABLE_HDF5)");
}
Grammar read_grammar_hdf5(const std::string& path) {
  throw FormatError(path, "kcla was built without HDF5 (KCLA_ENABLE_HDF5)");
}

#endif

}  // namespace kcla
