#include <kcla/plink.hpp>

#include "binary_file.hpp"

#include <kcla/detail/line_reader.hpp>
#include <kcla/detail/memory_limit.hpp>
#include <kcla/detail/text_fields.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <numeric>

namespace kcla {

namespace {

bool ends_with(const std::string& s, const char* suffix) {
  const std::size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

/// Columns 1 and 2 of every non-blank line (`first` may be null); each line must have
/// at least two fields.
void read_two_columns(const std::string& path, const char* layout, std::vector<std::string>* first,
                      std::vector<std::string>& second) {
  detail::LineReader in(path);
  std::string_view line, fields[2];
  while (in.next(line)) {
    if (detail::is_blank(line)) continue;
    const auto n = detail::split_fields(line, fields, 2);
    if (n < 2)
      in.fail("expected " + std::string(layout) + ", found " + std::to_string(n) + " field");
    if (first) first->emplace_back(fields[0]);
    second.emplace_back(fields[1]);
  }
}

}  // namespace

bool PlinkAlleles::is_autosome(std::int64_t variant) const {
  std::string_view code = chromosomes[static_cast<std::size_t>(variant)];
  if (code.size() > 3 && (code.substr(0, 3) == "chr" || code.substr(0, 3) == "CHR"))
    code.remove_prefix(3);
  std::int64_t number = 0;
  return detail::parse_integer(code, number) && number >= 1 && number <= 22;
}

namespace {

/// Columns 1, 2, 4, 5 and 6 of a .bim (`ids` may be null).
void parse_bim(detail::LineReader& in, PlinkAlleles& a, std::vector<std::string>* ids) {
  std::string_view line, fields[6];
  while (in.next(line)) {
    if (detail::is_blank(line)) continue;
    const auto n = detail::split_fields(line, fields, 6);
    if (n < 6)
      in.fail("expected 'chromosome snp cM position A1 A2', found " + std::to_string(n) +
              " fields");
    std::int64_t position = 0;
    if (!detail::parse_integer(fields[3], position))
      in.fail("base-pair coordinate '" + std::string(fields[3]) + "' is not an integer");
    a.positions.push_back(position);
    a.chromosomes.emplace_back(fields[0]);
    a.allele1.emplace_back(fields[4]);
    a.allele2.emplace_back(fields[5]);
    if (ids) ids->emplace_back(fields[1]);
  }
}

}  // namespace

PlinkAlleles read_plink_alleles(const std::string& path) {
  detail::LineReader in(plink_base_name(path) + ".bim");
  PlinkAlleles a;
  parse_bim(in, a, nullptr);
  return a;
}

bool is_plink_fileset_name(const std::string& path) {
  struct stat info {};
  const auto is_regular = [&](const std::string& p) {
    return stat(p.c_str(), &info) == 0 && S_ISREG(info.st_mode);
  };
  return ends_with(path, ".bed") || ends_with(path, ".bim") || ends_with(path, ".fam") ||
         (!is_regular(path) && is_regular(path + ".bed"));
}

PlinkTables read_plink_tables(const std::string& path) {
  const std::string base = plink_base_name(path);
  PlinkTables t;
  t.fam_name = base + ".fam";
  t.bim_name = base + ".bim";
  // Whole-file reads bounded by memory (a sparse file of 2^40 bytes is an error naming it).
  const auto fam = detail::read_array_file<char>(t.fam_name);
  const auto bim = detail::read_array_file<char>(t.bim_name);
  t.fam_text.assign(fam.begin(), fam.end());
  t.bim_text.assign(bim.begin(), bim.end());
  return t;
}

PlinkSamples parse_plink_samples(const PlinkTables& tables) {
  auto in = detail::LineReader::over_text(tables.fam_name, tables.fam_text);
  std::string_view line, fields[6];
  PlinkSamples s;
  while (in.next(line)) {
    if (detail::is_blank(line)) continue;
    const auto n = detail::split_fields(line, fields, 6);
    if (n < 6)
      in.fail("expected 'family individual father mother sex phenotype', found " +
              std::to_string(n) + " fields");
    s.family_ids.emplace_back(fields[0]);
    s.individual_ids.emplace_back(fields[1]);
    s.fathers.emplace_back(fields[2]);
    s.mothers.emplace_back(fields[3]);
    s.sexes.emplace_back(fields[4]);
    s.phenotypes.emplace_back(fields[5]);
  }
  return s;
}

PlinkVariants parse_plink_variants(const PlinkTables& tables) {
  auto in = detail::LineReader::over_text(tables.bim_name, tables.bim_text);
  PlinkVariants v;
  parse_bim(in, v.alleles, &v.ids);
  return v;
}

namespace {

/// Genotype value of each 2-bit .bed code: 00 hom A1, 01 missing, 10 het, 11 hom A2.
constexpr auto values_of_codes = allele_counts_of_codes;
constexpr int missing_code = bed_code::missing;

/// Calls f(individual, code) for every genotype of one SNP's bytes (four per byte, low
/// bits first); the padding bits of the last byte are skipped.
template <class F>
void for_each_genotype(const unsigned char* bytes, std::int64_t individuals, F&& f) {
  const std::int64_t full_bytes = individuals / 4;
  for (std::int64_t b = 0; b < full_bytes; ++b) {  // by byte: HLC reads in ~1.5 s, not 2.4
    const unsigned byte = bytes[b];
    f(4 * b, byte & 3);
    f(4 * b + 1, (byte >> 2) & 3);
    f(4 * b + 2, (byte >> 4) & 3);
    f(4 * b + 3, byte >> 6);
  }
  for (std::int64_t i = 4 * full_bytes; i < individuals; ++i)
    f(i, (bytes[i / 4] >> (2 * (i % 4))) & 3);
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

/// Reads the .bed one block of SNPs at a time, calling visit(snp, bytes) for each SNP.
template <class Visit>
void for_each_snp(const std::string& path, std::FILE* bed, std::int64_t num_snps,
                  std::size_t bytes_per_snp, Visit&& visit) {
  if (std::fseek(bed, 3, SEEK_SET) != 0)
    throw FormatError(path, std::string("seek failed: ") + std::strerror(errno));
  // About 4 MiB at a time, but no more SNPs than there are: a small fileset gets a small
  // buffer (zeroing 4 MiB per pass dominated reading the fuzz targets' 9-byte files).
  const std::size_t block =
      bytes_per_snp == 0
          ? 1
          : std::max<std::size_t>(1, std::min<std::uint64_t>((4u << 20) / bytes_per_snp,
                                                             static_cast<std::uint64_t>(num_snps)));
  std::vector<unsigned char> buffer(block * bytes_per_snp);
  for (std::int64_t first = 0; first < num_snps; first += static_cast<std::int64_t>(block)) {
    const auto count = static_cast<std::size_t>(
        std::min<std::int64_t>(static_cast<std::int64_t>(block), num_snps - first));
    const std::size_t bytes = count * bytes_per_snp;
    if (std::fread(buffer.data(), 1, bytes, bed) != bytes)
      throw FormatError(path, "read failed at SNP " + std::to_string(first) +
                                  " (was the file changed while being read?)");
    for (std::size_t s = 0; s < count; ++s)
      visit(first + static_cast<std::int64_t>(s), buffer.data() + s * bytes_per_snp);
  }
}

/// Opens BED_PATH and checks it against the fileset's shape: the magic bytes 6c 1b 01
/// (SNP-major) and a size of exactly 3 + snps * ceil(individuals / 4) bytes. The file is
/// left positioned after the magic bytes.
std::unique_ptr<std::FILE, FileCloser> open_bed(const std::string& bed_path,
                                                const std::string& bim_path,
                                                const std::string& fam_path,
                                                std::int64_t individuals, std::int64_t snps) {
  std::unique_ptr<std::FILE, FileCloser> bed(std::fopen(bed_path.c_str(), "rb"));
  if (!bed) throw FormatError(bed_path, std::string("cannot open: ") + std::strerror(errno));
  unsigned char magic[3] = {0, 0, 0};
  const auto got = std::fread(magic, 1, 3, bed.get());
  if (got < 3 || magic[0] != 0x6c || magic[1] != 0x1b)
    throw FormatError(bed_path, "not a PLINK 1 .bed file (the first bytes must be 6c 1b 01)");
  if (magic[2] != 0x01)
    throw FormatError(bed_path, magic[2] == 0x00
                                    ? "individual-major .bed (mode byte 00) is not supported; "
                                      "convert it with plink --make-bed"
                                    : "unknown .bed mode byte (expected 01, SNP-major)");
  struct stat info {};
  if (fstat(fileno(bed.get()), &info) != 0)
    throw FormatError(bed_path, std::string("cannot stat: ") + std::strerror(errno));
  const auto bytes_per_snp = static_cast<std::uint64_t>((individuals + 3) / 4);
  const auto actual = static_cast<std::uint64_t>(info.st_size);
  const bool fits =
      bytes_per_snp == 0 || static_cast<std::uint64_t>(snps) <=
                                (std::numeric_limits<std::uint64_t>::max() - 3) / bytes_per_snp;
  const std::uint64_t expected = fits ? 3 + static_cast<std::uint64_t>(snps) * bytes_per_snp : 0;
  if (!fits || actual != expected)
    throw FormatError(
        bed_path, "size is " + std::to_string(actual) + " bytes, but " + std::to_string(snps) +
                      " SNPs (" + bim_path + ") x " + std::to_string(individuals) +
                      " individuals (" + fam_path + ") need 3 + " + std::to_string(snps) + " * " +
                      std::to_string(bytes_per_snp) + " = " +
                      (fits ? std::to_string(expected) : std::string("> 2^64")) + " bytes");
  return bed;
}

}  // namespace

std::string plink_base_name(const std::string& path) {
  for (const char* suffix : {".bed", ".bim", ".fam"})
    if (ends_with(path, suffix)) return path.substr(0, path.size() - 4);
  return path;
}

namespace {

/// A fileset's shape from its tables (parsed and checked; only the line counts are kept)
/// and its .bed opened and checked against that shape.
struct OpenedBed {
  std::string bed_path, bim_path;
  std::int64_t individuals = 0, snps = 0;
  std::unique_ptr<std::FILE, FileCloser> bed;
};

OpenedBed open_fileset(const std::string& path) {
  const std::string base = plink_base_name(path);
  OpenedBed o;
  o.bed_path = base + ".bed";
  o.bim_path = base + ".bim";
  const std::string fam_path = base + ".fam";
  std::vector<std::string> individual_ids, snp_ids;
  read_two_columns(fam_path, "'family individual father mother sex phenotype'", nullptr,
                   individual_ids);
  read_two_columns(o.bim_path, "'chromosome snp cM position A1 A2'", nullptr, snp_ids);
  o.individuals = static_cast<std::int64_t>(individual_ids.size());
  o.snps = static_cast<std::int64_t>(snp_ids.size());
  individual_ids = {};
  snp_ids = {};
  o.bed = open_bed(o.bed_path, o.bim_path, fam_path, o.individuals, o.snps);
  return o;
}

/// FormatError naming the .bim when the fileset has more SNPs than a CSR column index holds.
void check_column_limit(const OpenedBed& o) {
  if (o.snps > std::numeric_limits<std::int32_t>::max())
    throw FormatError(o.bim_path,
                      std::to_string(o.snps) + " SNPs: kcla supports at most 2^31-1 columns");
}

// Variant ranges of a .bed, decoded into samples x width CSR blocks one read at a time.
class PlinkBlocks : public ColumnBlockSource {
 public:
  PlinkBlocks(const std::string& path, const PlinkReadOptions& options)
      : value_of_code_(values_of_codes(options.counted_allele)) {
    auto fileset = open_fileset(path);
    check_column_limit(fileset);
    bed_path_ = fileset.bed_path;
    individuals_ = fileset.individuals;
    snps_ = fileset.snps;
    bytes_per_snp_ = static_cast<std::uint64_t>((individuals_ + 3) / 4);
    bed_ = std::move(fileset.bed);
  }
  std::int64_t num_rows() const override { return individuals_; }
  std::int64_t num_cols() const override { return snps_; }
  std::string name() const override { return bed_path_; }

  bool next_block(std::int64_t max_cols, CsrMatrix<double>& block) override {
    if (max_cols <= 0) throw InvalidArgument(bed_path_ + ": block width must be positive");
    block = CsrMatrix<double>{};
    if (next_ >= snps_) return false;
    const std::int64_t width = std::min(max_cols, snps_ - next_);
    detail::check_allocation(bed_path_, "a block of SNPs", static_cast<std::uint64_t>(width),
                             bytes_per_snp_);
    buffer_.resize(static_cast<std::size_t>(width) * bytes_per_snp_);
    if (fseeko(bed_.get(), static_cast<off_t>(3 + next_ * bytes_per_snp_), SEEK_SET) != 0 ||
        std::fread(buffer_.data(), 1, buffer_.size(), bed_.get()) != buffer_.size())
      throw FormatError(bed_path_, "read failed at SNP " + std::to_string(next_) +
                                       " (was the file changed while being read?)");
    block.num_rows = individuals_;
    block.num_cols = width;
    block.row_offsets.assign(static_cast<std::size_t>(individuals_) + 1, 0);
    std::int64_t* const row_length = block.row_offsets.data() + 1;
    for (std::int64_t s = 0; s < width; ++s)
      for_each_genotype(
          buffer_.data() + s * bytes_per_snp_, individuals_,
          [&](std::int64_t i, int code) { row_length[i] += value_of_code_[code] != 0; });
    std::partial_sum(block.row_offsets.begin(), block.row_offsets.end(), block.row_offsets.begin());
    block.column_indices.resize(static_cast<std::size_t>(block.row_offsets.back()));
    block.values.resize(block.column_indices.size());
    std::vector<std::int64_t> next(block.row_offsets.begin(), block.row_offsets.end() - 1);
    for (std::int64_t s = 0; s < width; ++s)
      for_each_genotype(buffer_.data() + s * bytes_per_snp_, individuals_,
                        [&](std::int64_t i, int code) {
                          if (value_of_code_[code] == 0) return;
                          const auto at = next[i]++;
                          block.column_indices[at] = static_cast<std::int32_t>(s);
                          block.values[at] = value_of_code_[code];
                        });
    next_ += width;
    return true;
  }
  void skip_columns(std::int64_t count) override {
    next_ = std::min(snps_, next_ + std::max<std::int64_t>(0, count));
  }

 private:
  std::array<std::uint8_t, 4> value_of_code_;
  std::string bed_path_;
  std::int64_t individuals_ = 0, snps_ = 0, next_ = 0;
  std::uint64_t bytes_per_snp_ = 0;
  std::unique_ptr<std::FILE, FileCloser> bed_;
  std::vector<unsigned char> buffer_;
};

}  // namespace

MissingCalls read_plink_missing_calls(const std::string& path) try {
  const auto fileset = open_fileset(path);
  check_column_limit(fileset);
  const auto& bed_path = fileset.bed_path;
  const auto& bed = fileset.bed;
  const auto individuals = fileset.individuals, snps = fileset.snps;
  const auto bytes_per_snp = static_cast<std::size_t>((individuals + 3) / 4);
  MissingCalls m;
  m.num_rows = individuals;
  m.num_cols = snps;
  m.row_offsets.assign(static_cast<std::size_t>(individuals) + 1, 0);
  for_each_snp(bed_path, bed.get(), snps, bytes_per_snp,
               [&](std::int64_t, const unsigned char* bytes) {
                 for_each_genotype(bytes, individuals, [&](std::int64_t i, int code) {
                   m.row_offsets[static_cast<std::size_t>(i) + 1] += code == missing_code;
                 });
               });
  std::partial_sum(m.row_offsets.begin(), m.row_offsets.end(), m.row_offsets.begin());
  m.columns.resize(static_cast<std::size_t>(m.row_offsets.back()));
  if (m.columns.empty()) return m;
  std::vector<std::int64_t> next(m.row_offsets.begin(), m.row_offsets.end() - 1);
  for_each_snp(bed_path, bed.get(), snps, bytes_per_snp,
               [&](std::int64_t snp, const unsigned char* bytes) {
                 for_each_genotype(bytes, individuals, [&](std::int64_t i, int code) {
                   if (code != missing_code) return;
                   auto& at = next[static_cast<std::size_t>(i)];
                   if (at == m.row_offsets[static_cast<std::size_t>(i) + 1])
                     throw FormatError(bed_path, "changed while being read");
                   m.columns[static_cast<std::size_t>(at++)] = static_cast<std::int32_t>(snp);
                 });
               });
  for (std::int64_t i = 0; i < individuals; ++i)
    if (next[static_cast<std::size_t>(i)] != m.row_offsets[static_cast<std::size_t>(i) + 1])
      throw FormatError(bed_path, "changed while being read");
  return m;
} catch (const std::bad_alloc&) {
  detail::throw_out_of_memory(path);
}

std::unique_ptr<ColumnBlockSource> open_plink_blocks(const std::string& path,
                                                     const PlinkReadOptions& options) {
  return std::make_unique<PlinkBlocks>(path, options);
}

PlinkGenotypes read_plink(const std::string& path, const PlinkReadOptions& options) try {
  const std::string base = plink_base_name(path);
  const std::string bed_path = base + ".bed", bim_path = base + ".bim", fam_path = base + ".fam";
  PlinkGenotypes result;
  read_two_columns(fam_path, "'family individual father mother sex phenotype'", &result.family_ids,
                   result.individual_ids);
  read_two_columns(bim_path, "'chromosome snp cM position A1 A2'", nullptr, result.snp_ids);
  const auto individuals = static_cast<std::int64_t>(result.individual_ids.size());
  const auto snps = static_cast<std::int64_t>(result.snp_ids.size());
  if (snps > std::numeric_limits<std::int32_t>::max())
    throw FormatError(bim_path,
                      std::to_string(snps) + " SNPs: kcla supports at most 2^31-1 columns");

  const auto bytes_per_snp = static_cast<std::uint64_t>((individuals + 3) / 4);
  const auto bed = open_bed(bed_path, bim_path, fam_path, individuals, snps);

  const auto value_of_code = values_of_codes(options.counted_allele);

  // Pass 1: nonzeros per individual (the CSR row lengths) and missing calls.
  auto& a = result.matrix;
  a.num_rows = individuals;
  a.num_cols = snps;
  a.row_offsets.assign(static_cast<std::size_t>(individuals) + 1, 0);
  std::int64_t* const row_length = a.row_offsets.data() + 1;
  auto& m = result.missing;
  m.num_rows = individuals;
  m.num_cols = snps;
  m.row_offsets.assign(static_cast<std::size_t>(individuals) + 1, 0);
  std::int64_t* const row_missing = m.row_offsets.data() + 1;
  for_each_snp(bed_path, bed.get(), snps, bytes_per_snp,
               [&](std::int64_t, const unsigned char* bytes) {
                 for_each_genotype(bytes, individuals, [&](std::int64_t i, int code) {
                   row_length[i] += value_of_code[code] != 0;
                   row_missing[i] += code == missing_code;
                 });
               });
  std::partial_sum(a.row_offsets.begin(), a.row_offsets.end(), a.row_offsets.begin());
  std::partial_sum(m.row_offsets.begin(), m.row_offsets.end(), m.row_offsets.begin());
  result.num_missing = m.row_offsets.back();
  m.columns.resize(static_cast<std::size_t>(result.num_missing));
  std::vector<std::int64_t> next_missing(m.row_offsets.begin(), m.row_offsets.end() - 1);

  // Pass 2: fill SNP by SNP, so columns come out ascending within each row.
  a.column_indices.resize(static_cast<std::size_t>(a.row_offsets.back()));
  a.values.resize(a.column_indices.size());
  std::vector<std::int64_t> next(a.row_offsets.begin(), a.row_offsets.end() - 1);
  for_each_snp(bed_path, bed.get(), snps, bytes_per_snp,
               [&](std::int64_t snp, const unsigned char* bytes) {
                 for_each_genotype(bytes, individuals, [&](std::int64_t i, int code) {
                   if (code == missing_code)
                     m.columns[next_missing[i]++] = static_cast<std::int32_t>(snp);
                   if (value_of_code[code] == 0) return;
                   const auto at = next[i]++;
                   a.column_indices[at] = static_cast<std::int32_t>(snp);
                   a.values[at] = value_of_code[code];
                 });
               });
  return result;
} catch (const std::bad_alloc&) {  // even a file too large for memory gives an error naming it
  detail::throw_out_of_memory(path);
}

PackedGenotypes read_plink_packed(const std::string& path, const PlinkReadOptions& options) try {
  const auto fileset = open_fileset(path);
  const auto& bed_path = fileset.bed_path;
  const auto& bed = fileset.bed;
  const auto individuals = fileset.individuals, snps = fileset.snps;
  const auto bytes_per_snp = static_cast<std::uint64_t>((individuals + 3) / 4);

  const auto stride =
      static_cast<std::uint64_t>(PackedGenotypes::padded_bytes_per_variant(individuals));
  detail::check_allocation(bed_path, "packed genotype codes", static_cast<std::uint64_t>(snps),
                           stride);
  auto packed = PackedGenotypes::all_missing(individuals, snps, options.counted_allele);
  // The last byte's padding calls (individuals beyond the last) become missing, like the
  // bytes that pad each variant to its 16-byte boundary.
  const auto tail = static_cast<unsigned>(individuals % 4);
  const unsigned keep = tail == 0 ? 0xffu : (1u << (2 * tail)) - 1u;
  if (bytes_per_snp == 0) return packed;  // no individuals: nothing to read
  for_each_snp(
      bed_path, bed.get(), snps, bytes_per_snp, [&](std::int64_t snp, const unsigned char* bytes) {
        std::uint8_t* column = packed.codes.data() + snp * packed.bytes_per_variant;
        std::memcpy(column, bytes, bytes_per_snp);
        if (tail != 0)
          column[bytes_per_snp - 1] =
              static_cast<std::uint8_t>((bytes[bytes_per_snp - 1] & keep) | (0x55u & ~keep));
      });
  return packed;
} catch (const std::bad_alloc&) {
  detail::throw_out_of_memory(path);
}

}  // namespace kcla
