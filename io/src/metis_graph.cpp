#include <kcla/metis_graph.hpp>

#include <kcla/detail/line_reader.hpp>
#include <kcla/detail/memory_limit.hpp>
#include <kcla/detail/text_fields.hpp>
#include "csr_assembly.hpp"

#include <algorithm>
#include <limits>
#include <new>

namespace kcla {

namespace {

/// The next line that is not a '%' comment (blank lines count: an isolated vertex).
bool next_non_comment(detail::LineReader& in, std::string_view& line) {
  while (in.next(line))
    if (line.empty() || line[0] != '%') return true;
  return false;
}

}  // namespace

CsrMatrix<double> read_metis_graph(const std::string& path) try {
  detail::LineReader in(path);
  std::string_view line;
  do {
    if (!next_non_comment(in, line)) throw FormatError(path, "no header line 'n m [fmt [ncon]]'");
  } while (detail::is_blank(line));
  std::string_view f[5];
  const auto header_fields = detail::split_fields(line, f, 5);
  std::int64_t n = 0, m = 0, ncon = 0;
  if (header_fields < 2 || header_fields > 4 || !detail::parse_integer(f[0], n) ||
      !detail::parse_integer(f[1], m))
    in.fail("the header must be 'n m [fmt [ncon]]' with integers n and m");
  if (n < 0 || m < 0) in.fail("negative vertex or edge count in the header");
  bool has_sizes = false, has_vertex_weights = false, has_edge_weights = false;
  if (header_fields >= 3) {
    const auto fmt = f[2];
    if (fmt.size() > 3 || fmt.find_first_not_of("01") != std::string_view::npos)
      in.fail("fmt '" + std::string(fmt) + "' must be up to three digits 0/1");
    const std::string digits = std::string(3 - fmt.size(), '0') + std::string(fmt);
    has_sizes = digits[0] == '1';
    has_vertex_weights = digits[1] == '1';
    has_edge_weights = digits[2] == '1';
  }
  if (has_vertex_weights) ncon = 1;
  if (header_fields == 4 && (!detail::parse_integer(f[3], ncon) || ncon < 0))
    in.fail("ncon must be an integer >= 0");
  if (n > std::numeric_limits<std::int32_t>::max())
    in.fail(std::to_string(n) + " vertices: kcla supports at most 2^31-1 columns");
  // A vertex takes a line of at least "\n", an adjacency entry at least "k ": bound both by
  // what the rest of the file could hold before allocating anything. A pipe has no known
  // size (remaining_bytes() is UINT64_MAX): then only 2m must fit in an int64, and the
  // reservations below stay modest.
  const std::uint64_t remaining = in.remaining_bytes();
  const bool sized = remaining != std::numeric_limits<std::uint64_t>::max();
  if (sized && static_cast<std::uint64_t>(n) > remaining + 1)
    in.fail("declares " + std::to_string(n) + " vertices, but the " + std::to_string(remaining) +
            " bytes after the header hold at most " + std::to_string(remaining + 1) + " lines");
  const std::uint64_t entry_bytes = has_edge_weights ? 4 : 2;
  const std::uint64_t max_edges =
      sized ? (remaining + 1) / entry_bytes / 2 : std::numeric_limits<std::int64_t>::max() / 2;
  if (static_cast<std::uint64_t>(m) > max_edges)
    in.fail("declares " + std::to_string(m) + " edges, but " +
            (sized ? "the " + std::to_string(remaining) + " bytes after the header hold"
                   : std::string("kcla supports")) +
            " at most " + std::to_string(max_edges));
  if (!has_vertex_weights) ncon = 0;  // ncon only counts when fmt has vertex weights
  const std::size_t skipped = (has_sizes ? 1 : 0) + static_cast<std::size_t>(ncon);

  CsrMatrix<double> a;
  a.num_rows = a.num_cols = n;
  const std::uint64_t cap = sized ? std::numeric_limits<std::uint64_t>::max() : 1u << 24;
  a.row_offsets.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(n + 1, cap)));
  const auto entries = static_cast<std::size_t>(std::min<std::uint64_t>(2 * m, cap));
  a.column_indices.reserve(entries);
  a.values.reserve(entries);
  std::string_view field;
  for (std::int64_t v = 0; v < n; ++v) {
    if (!next_non_comment(in, line))
      in.fail("the file ends after " + std::to_string(v) + " of the " + std::to_string(n) +
              " vertex lines");
    for (std::size_t k = 0; k < skipped; ++k)
      if (!detail::next_field(line, field))
        in.fail("vertex " + std::to_string(v + 1) + " lacks its vertex size/weights");
    while (detail::next_field(line, field)) {
      std::int64_t u = 0;
      if (!detail::parse_integer(field, u))
        in.fail("neighbour '" + std::string(field) + "' is not an integer");
      if (u < 1 || u > n)
        in.fail("neighbour " + std::to_string(u) + " outside [1, " + std::to_string(n) + "]");
      std::int64_t weight = 1;
      if (has_edge_weights &&
          (!detail::next_field(line, field) || !detail::parse_integer(field, weight)))
        in.fail("neighbour " + std::to_string(u) + " lacks its integer edge weight");
      if (a.nnz() == 2 * m)
        in.fail("more adjacency entries than the 2 x " + std::to_string(m) +
                " the header's edge count allows");
      a.column_indices.push_back(static_cast<std::int32_t>(u - 1));
      a.values.push_back(static_cast<double>(weight));
    }
    a.row_offsets.push_back(a.nnz());
  }
  if (a.nnz() != 2 * m)
    in.fail("the adjacency lists hold " + std::to_string(a.nnz()) + " entries, but the header's " +
            std::to_string(m) + " edges need 2 x " + std::to_string(m));
  while (next_non_comment(in, line))
    if (!detail::is_blank(line))
      in.fail("more vertex lines than the " + std::to_string(n) + " declared");
  detail::canonicalize_rows(a);
  return a;
} catch (const std::bad_alloc&) {  // even a file too large for memory gives an error naming it
  detail::throw_out_of_memory(path);
}

}  // namespace kcla
