#include <kcla/ms_format.hpp>

#include <kcla/detail/line_reader.hpp>
#include <kcla/detail/memory_limit.hpp>
#include <kcla/detail/text_fields.hpp>

#include <algorithm>
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

}  // namespace

MsGenotypes read_ms(const std::string& path, const MsReadOptions& options) try {
  if (options.ploidy != 1 && options.ploidy != 2)
    throw InvalidArgument("read_ms: ploidy must be 1 or 2, not " + std::to_string(options.ploidy));
  if (options.replicate < 0)
    throw InvalidArgument("read_ms: replicate must be >= 0, not " +
                          std::to_string(options.replicate));
  detail::LineReader in(path);
  std::string_view line;
  if (!in.next(line)) throw FormatError(path, "empty file (expected ms output)");
  const auto nsam = sample_count_from_command(line);

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
  std::int64_t sites = 0;
  std::string_view f[2];
  if (detail::split_fields(line, f, 2) != 2 || !detail::parse_integer(f[1], sites) || sites < 0)
    in.fail("expected 'segsites: S' with an integer S >= 0");
  if (sites > std::numeric_limits<std::int32_t>::max())
    in.fail(std::to_string(sites) + " segregating sites: kcla supports at most 2^31-1 columns");

  MsGenotypes result;
  if (sites > 0) {
    if (!in.next(line) || !starts_with(line, "positions:"))
      in.fail("expected a 'positions:' line after 'segsites: " + std::to_string(sites) + "'");
    line.remove_prefix(10);
    result.positions.reserve(static_cast<std::size_t>(std::min<std::int64_t>(sites, line.size())));
    std::string_view field;
    while (detail::next_field(line, field)) {
      double x = 0;
      if (!detail::parse_real(field, x))
        in.fail("position '" + std::string(field) + "' is not a number");
      result.positions.push_back(x);
    }
    if (static_cast<std::int64_t>(result.positions.size()) != sites)
      in.fail("'positions:' lists " + std::to_string(result.positions.size()) +
              " positions, but segsites is " + std::to_string(sites));
  }

  auto& a = result.matrix;
  a.num_cols = sites;
  std::vector<std::uint8_t> row;  // allele counts of the individual being assembled
  std::int64_t haplotypes = 0;
  auto emit_row = [&]() {
    for (std::int64_t j = 0; j < sites; ++j)
      if (row[j] != 0) {
        a.column_indices.push_back(static_cast<std::int32_t>(j));
        a.values.push_back(row[j]);
      }
    a.row_offsets.push_back(a.nnz());
  };
  // ms writes no haplotype lines when there are no segregating sites.
  if (sites > 0) {
    row.assign(static_cast<std::size_t>(sites), 0);
    while (!nsam || haplotypes < *nsam) {
      if (!in.next(line) || detail::is_blank(line) || starts_with(line, "//")) {
        if (nsam)
          in.fail("replicate has " + std::to_string(haplotypes) +
                  " haplotype lines, but the command line says " + std::to_string(*nsam));
        break;
      }
      check_haplotype(in, line, sites);
      for (std::int64_t j = 0; j < sites; ++j)
        row[j] = static_cast<std::uint8_t>(row[j] + (line[j] == '1'));
      if (++haplotypes % options.ploidy == 0) {
        emit_row();
        std::fill(row.begin(), row.end(), 0);
      }
    }
    if (nsam && in.next(line) && !detail::is_blank(line) && !starts_with(line, "//"))
      in.fail("more haplotype lines than the " + std::to_string(*nsam) +
              " the command line declares");
  } else if (nsam) {
    detail::check_allocation(path, "row offsets for " + std::to_string(*nsam) + " haplotypes",
                             static_cast<std::uint64_t>(*nsam) + 1, sizeof(std::int64_t));
    haplotypes = *nsam;
    a.row_offsets.assign(static_cast<std::size_t>(*nsam / options.ploidy) + 1, 0);
  }
  if (haplotypes % options.ploidy != 0)
    in.fail(std::to_string(haplotypes) +
            " haplotypes cannot pair into diploid individuals (read with ploidy 1)");
  result.num_haplotypes = haplotypes;
  a.num_rows = haplotypes / options.ploidy;
  return result;
} catch (const std::bad_alloc&) {  // even a file too large for memory gives an error naming it
  detail::throw_out_of_memory(path);
}

}  // namespace kcla
