#include <kcla/config.hpp>
#include <kcla/hdf5_grammar.hpp>

#include <fstream>
#include <new>

#if KCLA_HAVE_HDF5
#include <kcla/detail/atomic_file.hpp>
#include <kcla/detail/grammar_checks.hpp>
#include <kcla/detail/hdf5_handle.hpp>
#include <kcla/detail/memory_limit.hpp>
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

void write_grammar_hdf5(const std::string& path, const Grammar& g) {
  g.validate("write_grammar_hdf5");
  detail::write_atomically(path, [&](const std::string& tmp) {
    auto file = detail::Hdf5File::create(tmp, path);
    auto group = file.create_group(kGroup);
    file.write_attribute(group.get(), "format", std::string(kGrammarFormatName));
    file.write_attribute(group.get(), "version", std::int64_t{kGrammarFormatVersion});
    file.write_attribute(group.get(), "rows", g.num_rows);
    file.write_attribute(group.get(), "cols", g.num_cols);
    file.write_attribute(group.get(), "value_type", std::string("float64"));
    file.write_dataset(group.get(), "values", g.values);
    file.write_dataset(group.get(), "terminal_values", g.terminal_values);
    file.write_dataset(group.get(), "terminal_columns", g.terminal_columns);
    file.write_dataset(group.get(), "rule_left", g.rule_left);
    file.write_dataset(group.get(), "rule_right", g.rule_right);
    file.write_dataset(group.get(), "row_offsets", g.row_offsets);
    file.write_dataset(group.get(), "sequence", g.sequence);
  });
}

Grammar read_grammar_hdf5(const std::string& path) try {
  auto file = detail::Hdf5File::open(path);
  auto group = file.open_group(kGroup);
  const auto format = file.read_string_attribute(group.get(), "format");
  if (format != kGrammarFormatName)
    file.fail("format", "is '" + format + "', expected '" + kGrammarFormatName + "'");
  const auto version = file.read_int_attribute(group.get(), "version");
  if (version < 1 || version > kGrammarFormatVersion)
    file.fail("version", std::to_string(version) + " is not supported (this kcla reads 1.." +
                             std::to_string(kGrammarFormatVersion) + ")");
  Grammar g;
  g.num_rows = file.read_int_attribute(group.get(), "rows");
  g.num_cols = file.read_int_attribute(group.get(), "cols");
  if (g.num_rows < 0 || g.num_cols < 0 || g.num_rows > (std::int64_t(1) << 40) ||
      g.num_cols > INT32_MAX)
    file.fail("rows/cols",
              "absurd shape " + std::to_string(g.num_rows) + " x " + std::to_string(g.num_cols));
  // Sizes first, from the dataspaces alone; then the arrays.
  const auto terminals = file.dataset_length(group.get(), "terminal_values");
  const auto rules = file.dataset_length(group.get(), "rule_left");
  g.values = file.read_dataset<double>(group.get(), "values");
  g.terminal_values = file.read_dataset<std::int32_t>(group.get(), "terminal_values");
  g.terminal_columns = file.read_dataset<std::int32_t>(group.get(), "terminal_columns", terminals);
  g.rule_left = file.read_dataset<std::int32_t>(group.get(), "rule_left");
  g.rule_right = file.read_dataset<std::int32_t>(group.get(), "rule_right", rules);
  g.row_offsets = file.read_dataset<std::int64_t>(group.get(), "row_offsets", g.num_rows + 1);
  g.sequence = file.read_dataset<std::int32_t>(group.get(), "sequence");
  try {
    g.validate("grammar");
  } catch (const InvalidArgument& e) {
    throw FormatError(path, std::string("inconsistent content: ") + e.what());
  }
  detail::check_expansion_lengths(path, path, g);
  return g;
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
