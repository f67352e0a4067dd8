#include <kcla/config.hpp>
#include <kcla/hdf5_genotype_grammar.hpp>

#include <kcla/hdf5_block_grammar.hpp>
#include <kcla/hdf5_grammar.hpp>

#if KCLA_HAVE_HDF5
#include <kcla/detail/atomic_file.hpp>
#include <kcla/detail/memory_limit.hpp>
#include "hdf5_genotype_group.hpp"
#include "hdf5_grammar_group.hpp"
#include "hdf5_handle.hpp"

#include <cstdint>
#include <limits>
#include <new>
#endif

namespace kcla {

#if KCLA_HAVE_HDF5

namespace {

constexpr const char* kGroup = "/kcla_genotypes";

const char* to_string(CountedAllele a) {
  return a == CountedAllele::a1 ? "a1" : "a2";
}

/// The parts must describe one rows x cols matrix: throws through `fail` (InvalidArgument
/// on write, FormatError on read).
template <class Fail>
void check_parts(std::int64_t rows, std::int64_t cols, const MissingCalls& missing,
                 const PlinkTables& tables, Fail&& fail) {
  if (missing.num_rows != rows || missing.num_cols != cols)
    fail("missing calls are " + std::to_string(missing.num_rows) + " x " +
         std::to_string(missing.num_cols) + ", the genotypes " + std::to_string(rows) + " x " +
         std::to_string(cols));
  const auto samples = static_cast<std::int64_t>(parse_plink_samples(tables).size());
  if (samples != rows)
    fail(tables.fam_name + " lists " + std::to_string(samples) + " samples, the genotypes have " +
         std::to_string(rows) + " rows");
  const auto variants = static_cast<std::int64_t>(parse_plink_variants(tables).size());
  if (variants != cols)
    fail(tables.bim_name + " lists " + std::to_string(variants) + " variants, the genotypes have " +
         std::to_string(cols) + " columns");
}

void write_text(const detail::Hdf5File& file, hid_t group, const std::string& name,
                const std::string& text) {
  file.write_dataset(group, name, reinterpret_cast<const std::uint8_t*>(text.data()),
                     static_cast<std::int64_t>(text.size()));
}

std::string read_text(const detail::Hdf5File& file, hid_t group, const std::string& name) {
  const auto bytes = file.read_dataset<std::uint8_t>(group, name);
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace

namespace detail {

void check_genotype_part(std::int64_t rows, std::int64_t cols, const GenotypePart& part,
                         const std::string& what) {
  try {
    part.missing.validate(what + ": missing calls");
    check_parts(rows, cols, part.missing, part.tables,
                [&](const std::string& why) { throw InvalidArgument(what + ": " + why); });
  } catch (const FormatError& e) {  // a table that does not parse
    throw InvalidArgument(what + ": " + e.what());
  }
}

void write_genotype_group(const Hdf5File& file, const GenotypePart& part) {
  auto group = file.create_group(kGroup);
  file.write_attribute(group.get(), "format", std::string(kGenotypeFormatName));
  file.write_attribute(group.get(), "version", std::int64_t{kGenotypeFormatVersion});
  file.write_attribute(group.get(), "counted_allele", std::string(to_string(part.counted_allele)));
  file.write_attribute(group.get(), "fam_name", part.tables.fam_name);
  file.write_attribute(group.get(), "bim_name", part.tables.bim_name);
  file.write_dataset(group.get(), "missing_row_offsets", part.missing.row_offsets);
  file.write_dataset(group.get(), "missing_columns", part.missing.columns);
  write_text(file, group.get(), "fam", part.tables.fam_text);
  write_text(file, group.get(), "bim", part.tables.bim_text);
}

GenotypePart read_genotype_group(const Hdf5File& file, const std::string& path, std::int64_t rows,
                                 std::int64_t cols) {
  {
    Hdf5Quiet quiet;
    if (H5Lexists(file.id(), kGroup, H5P_DEFAULT) <= 0)
      file.fail("",
                "holds a grammar but no genotype part (samples, variants, missing calls): it "
                "was compressed from another format or by an older kcla; compress the PLINK "
                "fileset again with `kcla compress FILESET -o OUT.h5` (with --block-cols N for a "
                "block grammar file)");
  }
  // The shape comes from a grammar or a block layout, validated but not bounded above:
  // rows + 1 below must not overflow.
  if (rows < 0 || cols < 0 || rows == std::numeric_limits<std::int64_t>::max())
    file.fail("", "matrix shape " + std::to_string(rows) + " x " + std::to_string(cols) +
                      " cannot carry a genotype part");
  GenotypePart g;
  auto group = file.open_group(kGroup);
  const auto format = file.read_string_attribute(group.get(), "format");
  if (format != kGenotypeFormatName)
    file.fail("kcla_genotypes/format",
              "is '" + format + "', expected '" + kGenotypeFormatName + "'");
  const auto version = file.read_int_attribute(group.get(), "version");
  if (version < 1 || version > kGenotypeFormatVersion)
    file.fail("kcla_genotypes/version", std::to_string(version) +
                                            " is not supported (this kcla reads 1.." +
                                            std::to_string(kGenotypeFormatVersion) + ")");
  const auto allele = file.read_string_attribute(group.get(), "counted_allele");
  if (allele != "a1" && allele != "a2")
    file.fail("kcla_genotypes/counted_allele", "is '" + allele + "', expected a1 or a2");
  g.counted_allele = allele == "a1" ? CountedAllele::a1 : CountedAllele::a2;
  // The tables' errors name the file and the table inside it.
  const std::string where = path + ":/kcla_genotypes/";
  g.tables.fam_name = where + "fam (" + file.read_string_attribute(group.get(), "fam_name") + ")";
  g.tables.bim_name = where + "bim (" + file.read_string_attribute(group.get(), "bim_name") + ")";
  g.tables.fam_text = read_text(file, group.get(), "fam");
  g.tables.bim_text = read_text(file, group.get(), "bim");
  auto& m = g.missing;
  m.num_rows = rows;
  m.num_cols = cols;
  m.row_offsets = file.read_dataset<std::int64_t>(group.get(), "missing_row_offsets", rows + 1);
  m.columns = file.read_dataset<std::int32_t>(group.get(), "missing_columns");
  try {
    m.validate("missing calls");
  } catch (const InvalidArgument& e) {
    file.fail("kcla_genotypes", e.what());
  }
  check_parts(rows, cols, g.missing, g.tables,
              [&](const std::string& what) { file.fail("kcla_genotypes", what); });
  return g;
}

}  // namespace detail

void write_genotype_grammar_hdf5(const std::string& path, const GenotypeGrammar& g) {
  g.grammar.validate("write_genotype_grammar_hdf5");
  const GenotypePart part{g.missing, g.counted_allele, g.tables};
  detail::check_genotype_part(g.grammar.num_rows, g.grammar.num_cols, part,
                              "write_genotype_grammar_hdf5");
  detail::write_atomically(path, [&](const std::string& tmp) {
    auto file = detail::Hdf5File::create(tmp, path);
    detail::write_grammar_file_group(file, g.grammar);
    detail::write_genotype_group(file, part);
  });
}

bool is_genotype_grammar_hdf5(const std::string& path) {
  if (!is_hdf5_file(path)) return false;
  detail::Hdf5Quiet quiet;
  detail::Hdf5Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  return file.valid() && H5Lexists(file.get(), kGroup, H5P_DEFAULT) > 0;
}

GenotypeGrammar read_genotype_grammar_hdf5(const std::string& path) try {
  auto file = detail::Hdf5File::open(path);
  GenotypeGrammar g;
  g.grammar = detail::read_grammar_file_group(file);
  auto part = detail::read_genotype_group(file, path, g.grammar.num_rows, g.grammar.num_cols);
  g.missing = std::move(part.missing);
  g.counted_allele = part.counted_allele;
  g.tables = std::move(part.tables);
  return g;
} catch (const std::bad_alloc&) {
  detail::throw_out_of_memory(path);
}

GenotypePart read_genotype_part_hdf5(const std::string& path) try {
  const auto layout = read_block_layout_hdf5(path);  // a single grammar reads as one block
  auto file = detail::Hdf5File::open(path);
  return detail::read_genotype_group(file, path, layout.num_rows, layout.num_cols);
} catch (const std::bad_alloc&) {
  detail::throw_out_of_memory(path);
}

#else

void write_genotype_grammar_hdf5(const std::string& path, const GenotypeGrammar&) {
  throw FormatError(path, "kcla was built without HDF5 (KCLA_ENABLE_HDF5)");
}
GenotypeGrammar read_genotype_grammar_hdf5(const std::string& path) {
  throw FormatError(path, "kcla was built without HDF5 (KCLA_ENABLE_HDF5)");
}
GenotypePart read_genotype_part_hdf5(const std::string& path) {
  throw FormatError(path, "kcla was built without HDF5 (KCLA_ENABLE_HDF5)");
}
bool is_genotype_grammar_hdf5(const std::string&) {
  return false;
}

#endif

}  // namespace kcla
