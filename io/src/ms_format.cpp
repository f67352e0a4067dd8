#include <kcla/ms_format.hpp>

#include <kcla/detail/line_reader.hpp>
#include <kcla/detail/memory_limit.hpp>
#include <kcla/detail/text_fields.hpp>

#include <algorithm>
#include <fstream>
#include <limits>
#include <new>
#include <optional>

namespace kcla {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

/// NSAM from a command line "PROGRAM NSAM NREPS ...", when the line is one.
std::optional<std::int64_t> sample_count_from_command(std::string_view line) {
  std::string_view f[3];
  std::int64_t nsam = 0, nreps = 0;
  if (detail::split_fields(line, f, 3) >= 3 && detail::parse_integer(f[1], nsam) &&
      detail::parse_integer(f[2], nreps) && nsam > 0 && nreps > 0)
    return nsam;
  return std::nullopt;
}

/// A haplotype line is exactly `sites` characters, each 0 or 1.
void check_haplotype(detail::LineReader& in, std::string_view line, std::int64_t sites) {
  if (static_cast<std::int64_t>(line.size()) != sites)
    in.fail("haplotype line has " + std::to_string(line.size()) + " characters, but segsites is " +
            std::to_string(sites));
  for (std::size_t k = 0; k < line.size(); ++k)
    if (line[k] != '0' && line[k] != '1')
      in.fail("haplotype line has '" + std::string(1, line[k]) + "' at site " + std::to_string(k) +
              " (expected 0 or 1)");
}

/// What precedes the chosen replicate's haplotype lines.
struct MsReplicate {
  std::int64_t sites = 0;
  std::optional<std::int64_t> nsam;  // from the command line, when it has one
};

void check_options(const MsReadOptions& options) {
  if (options.ploidy != 1 && options.ploidy != 2)
    throw InvalidArgument("read_ms: ploidy must be 1 or 2, not " + std::to_string(options.ploidy));
  if (options.replicate < 0)
    throw InvalidArgument("read_ms: replicate must be >= 0, not " +
                          std::to_string(options.replicate));
}

/// Reads up to the chosen replicate's first haplotype line (its "positions:" read into
/// `positions` when given).
MsReplicate read_replicate_header(detail::LineReader& in, const MsReadOptions& options,
                                  std::vector<double>* positions) {
  const std::string& path = in.path();
  std::string_view line;
  if (!in.next(line)) throw FormatError(path, "empty file (expected ms output)");
  MsReplicate r;
  r.nsam = sample_count_from_command(line);

  // Skip to the chosen replicate's "//", then to its "segsites:" (trees, "time:" and
  // "prob:" lines may come between).
  std::int64_t seen = 0;
  while (true) {
    if (!in.next(line))
      throw FormatError(path, "has " + std::to_string(seen) +
                                  " replicate(s) ('//' lines), but "
                                  "replicate " +
                                  std::to_string(options.replicate) + " (0-based) was requested");
    if (starts_with(line, "//") && seen++ == options.replicate) break;
  }
  while (true) {
    if (!in.next(line) || starts_with(line, "//"))
      in.fail("replicate " + std::to_string(options.replicate) + " has no 'segsites:' line");
    if (starts_with(line, "segsites:")) break;
  }
  std::int64_t& sites = r.sites;
  std::string_view f[2];
  if (detail::split_fields(line, f, 2) != 2 || !detail::parse_integer(f[1], sites) || sites < 0)
    in.fail("expected 'segsites: S' with an integer S >= 0");
  if (sites > std::numeric_limits<std::int32_t>::max())
    in.fail(std::to_string(sites) + " segregating sites: kcla supports at most 2^31-1 columns");

  if (sites > 0) {
    if (!in.next(line) || !starts_with(line, "positions:"))
      in.fail("expected a 'positions:' line after 'segsites: " + std::to_string(sites) + "'");
    line.remove_prefix(10);
    std::vector<double> read;
    read.reserve(static_cast<std::size_t>(std::min<std::int64_t>(sites, line.size())));
    std::string_view field;
    while (detail::next_field(line, field)) {
      double x = 0;
      if (!detail::parse_real(field, x))
        in.fail("position '" + std::string(field) + "' is not a number");
      read.push_back(x);
    }
    if (static_cast<std::int64_t>(read.size()) != sites)
      in.fail("'positions:' lists " + std::to_string(read.size()) + " positions, but segsites is " +
              std::to_string(sites));
    if (positions) *positions = std::move(read);
  }
  return r;
}

/// Walks the replicate's haplotype lines, checking each, calling f(line, offset) for
/// every one; returns the haplotype count (checked against the command line's).
template <class F>
std::int64_t for_each_haplotype(detail::LineReader& in, const MsReplicate& r, F&& f) {
  std::string_view line;
  std::int64_t haplotypes = 0;
  // ms writes no haplotype lines when there are no segregating sites.
  if (r.sites == 0) return r.nsam ? *r.nsam : 0;
  while (!r.nsam || haplotypes < *r.nsam) {
    const std::uint64_t offset = in.offset();
    if (!in.next(line) || detail::is_blank(line) || starts_with(line, "//")) {
      if (r.nsam)
        in.fail("replicate has " + std::to_string(haplotypes) +
                " haplotype lines, but the command line says " + std::to_string(*r.nsam));
      break;
    }
    check_haplotype(in, line, r.sites);
    f(line, offset);
    ++haplotypes;
  }
  if (r.nsam && in.next(line) && !detail::is_blank(line) && !starts_with(line, "//"))
    in.fail("more haplotype lines than the " + std::to_string(*r.nsam) +
            " the command line declares");
  return haplotypes;
}

void check_pairing(const detail::LineReader& in, std::int64_t haplotypes, int ploidy) {
  if (haplotypes % ploidy != 0)
    in.fail(std::to_string(haplotypes) +
            " haplotypes cannot pair into diploid individuals (read with ploidy 1)");
}

}  // namespace

MsGenotypes read_ms(const std::string& path, const MsReadOptions& options) try {
  check_options(options);
  detail::LineReader in(path);
  MsGenotypes result;
  const MsReplicate r = read_replicate_header(in, options, &result.positions);
  const std::int64_t sites = r.sites;
  auto& a = result.matrix;
  a.num_cols = sites;
  std::vector<std::uint8_t> row(static_cast<std::size_t>(sites), 0);  // the individual's counts
  std::int64_t lines = 0;
  const std::int64_t haplotypes =
      for_each_haplotype(in, r, [&](std::string_view line, std::uint64_t) {
        for (std::int64_t j = 0; j < sites; ++j)
          row[j] = static_cast<std::uint8_t>(row[j] + (line[j] == '1'));
        if (++lines % options.ploidy == 0) {
          for (std::int64_t j = 0; j < sites; ++j)
            if (row[j] != 0) {
              a.column_indices.push_back(static_cast<std::int32_t>(j));
              a.values.push_back(row[j]);
            }
          a.row_offsets.push_back(a.nnz());
          std::fill(row.begin(), row.end(), 0);
        }
      });
  if (sites == 0 && r.nsam) {
    detail::check_allocation(path, "row offsets for " + std::to_string(*r.nsam) + " haplotypes",
                             static_cast<std::uint64_t>(*r.nsam) + 1, sizeof(std::int64_t));
    a.row_offsets.assign(static_cast<std::size_t>(*r.nsam / options.ploidy) + 1, 0);
  }
  check_pairing(in, haplotypes, options.ploidy);
  result.num_haplotypes = haplotypes;
  a.num_rows = haplotypes / options.ploidy;
  return result;
} catch (const std::bad_alloc&) {  // even a file too large for memory gives an error naming it
  detail::throw_out_of_memory(path);
}

namespace {

/// Site ranges of one replicate read straight from the file: the constructor checks every
/// haplotype line once and keeps where each starts; a block reads its slice of each line.
class MsBlockSource : public ColumnBlockSource {
 public:
  MsBlockSource(const std::string& path, const MsReadOptions& options)
      : path_(path), ploidy_(options.ploidy) {
    check_options(options);
    detail::LineReader in(path);
    if (in.remaining_bytes() == UINT64_MAX)
      throw FormatError(path, "reading ms output in blocks needs a regular file, not a pipe");
    const MsReplicate r = read_replicate_header(in, options, nullptr);
    sites_ = r.sites;
    const std::int64_t haplotypes = for_each_haplotype(
        in, r, [&](std::string_view, std::uint64_t offset) { offsets_.push_back(offset); });
    check_pairing(in, haplotypes, ploidy_);
    rows_ = haplotypes / ploidy_;
    file_.open(path, std::ios::binary);
    if (!file_) throw FormatError(path, "cannot reopen for reading in blocks");
  }
  std::int64_t num_rows() const override { return rows_; }
  std::int64_t num_cols() const override { return sites_; }
  std::string name() const override { return path_; }
  bool next_block(std::int64_t max_cols, CsrMatrix<double>& block) override {
    if (max_cols <= 0) throw InvalidArgument(path_ + ": block width must be positive");
    block = CsrMatrix<double>();
    const std::int64_t width = std::min(max_cols, sites_ - next_);
    if (width <= 0) return false;
    block.num_rows = rows_;
    block.num_cols = width;
    std::vector<char> slice(static_cast<std::size_t>(width));
    std::vector<std::uint8_t> counts(static_cast<std::size_t>(width));
    for (std::int64_t r = 0; r < rows_; ++r) {
      std::fill(counts.begin(), counts.end(), 0);
      for (int p = 0; p < ploidy_; ++p) {
        file_.seekg(static_cast<std::streamoff>(offsets_[r * ploidy_ + p] + next_));
        file_.read(slice.data(), width);
        if (!file_) throw FormatError(path_, "changed or shrank while it was read in blocks");
        for (std::int64_t j = 0; j < width; ++j) {
          if (slice[j] != '0' && slice[j] != '1')
            throw FormatError(path_, "changed while it was read in blocks");
          counts[j] = static_cast<std::uint8_t>(counts[j] + (slice[j] == '1'));
        }
      }
      for (std::int64_t j = 0; j < width; ++j)
        if (counts[j] != 0) {
          block.column_indices.push_back(static_cast<std::int32_t>(j));
          block.values.push_back(counts[j]);
        }
      block.row_offsets.push_back(block.nnz());
    }
    next_ += width;
    return true;
  }
  void skip_columns(std::int64_t count) override { next_ = std::min(sites_, next_ + count); }

 private:
  std::string path_;
  int ploidy_;
  std::int64_t rows_ = 0, sites_ = 0, next_ = 0;
  std::vector<std::uint64_t> offsets_;  // where each haplotype line starts
  std::ifstream file_;
};

}  // namespace

std::unique_ptr<ColumnBlockSource> open_ms_blocks(const std::string& path,
                                                  const MsReadOptions& options) try {
  return std::make_unique<MsBlockSource>(path, options);
} catch (const std::bad_alloc&) {
  detail::throw_out_of_memory(path);
}

}  // namespace kcla
