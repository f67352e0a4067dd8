#include <kcla/matrix_market.hpp>

#include <kcla/detail/atomic_file.hpp>
#include <kcla/detail/line_reader.hpp>
#include <kcla/detail/memory_limit.hpp>
#include <kcla/detail/text_fields.hpp>
#include "csr_assembly.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <new>

namespace kcla {

namespace {

enum class Field { real, integer, pattern };
enum class Symmetry { general, symmetric, skew_symmetric };

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

struct Banner {
  Field field = Field::real;
  Symmetry symmetry = Symmetry::general;
};

Banner parse_banner(detail::LineReader& in) {
  std::string_view line;
  if (!in.next(line)) throw FormatError(in.path(), "empty file (expected a Matrix Market banner)");
  std::string_view f[5];
  const auto n = detail::split_fields(line, f, 5);
  if (n == 0 || lower(f[0]) != "%%matrixmarket")
    in.fail("not a Matrix Market file (the first line must start with %%MatrixMarket)");
  if (n != 5)
    in.fail("the banner must read '%%MatrixMarket matrix <format> <field> <symmetry>', found " +
            std::to_string(n) + " words");
  if (lower(f[1]) != "matrix")
    in.fail("unsupported object '" + std::string(f[1]) + "' (only 'matrix' is supported)");
  const auto format = lower(f[2]);
  if (format == "array") in.fail("the dense 'array' format is not supported (only 'coordinate')");
  if (format != "coordinate") in.fail("unknown format '" + std::string(f[2]) + "'");
  Banner b;
  const auto field = lower(f[3]);
  if (field == "real" || field == "double") {
    b.field = Field::real;
  } else if (field == "integer") {
    b.field = Field::integer;
  } else if (field == "pattern") {
    b.field = Field::pattern;
  } else if (field == "complex") {
    in.fail("the 'complex' field is not supported (real, integer or pattern only)");
  } else {
    in.fail("unknown field '" + std::string(f[3]) + "'");
  }
  const auto symmetry = lower(f[4]);
  if (symmetry == "general") {
    b.symmetry = Symmetry::general;
  } else if (symmetry == "symmetric") {
    b.symmetry = Symmetry::symmetric;
  } else if (symmetry == "skew-symmetric") {
    b.symmetry = Symmetry::skew_symmetric;
  } else if (symmetry == "hermitian") {
    in.fail("'hermitian' symmetry is not supported (it implies complex values)");
  } else {
    in.fail("unknown symmetry '" + std::string(f[4]) + "'");
  }
  // As in the format's reference reader (mmio.c, mm_is_valid): a pattern has no values to
  // negate. Accepting it also reported a stale value field for a diagonal entry.
  if (b.field == Field::pattern && b.symmetry == Symmetry::skew_symmetric)
    in.fail("a 'pattern' matrix cannot be 'skew-symmetric' (it has no values to negate)");
  return b;
}

/// The next line that is neither a comment nor blank; false at the end of the file.
bool next_content_line(detail::LineReader& in, std::string_view& line) {
  while (in.next(line))
    if (!(line.empty() || line[0] == '%' || detail::is_blank(line))) return true;
  return false;
}

}  // namespace

CsrMatrix<double> read_matrix_market(const std::string& path) try {
  detail::LineReader in(path);
  const Banner banner = parse_banner(in);
  const bool mirrored = banner.symmetry != Symmetry::general;

  std::string_view line, f[4];
  if (!next_content_line(in, line))
    throw FormatError(path, "no size line ('rows columns entries') after the banner");
  std::int64_t rows = 0, cols = 0, declared = 0;
  if (detail::split_fields(line, f, 4) != 3 || !detail::parse_integer(f[0], rows) ||
      !detail::parse_integer(f[1], cols) || !detail::parse_integer(f[2], declared))
    in.fail("the size line must be three integers 'rows columns entries'");
  if (rows < 0 || cols < 0 || declared < 0) in.fail("negative size in the size line");
  if (cols > std::numeric_limits<std::int32_t>::max())
    in.fail(std::to_string(cols) + " columns: kcla supports at most 2^31-1");
  if (mirrored && rows != cols)
    in.fail("a symmetric or skew-symmetric matrix must be square, not " + std::to_string(rows) +
            " x " + std::to_string(cols));
  // Two arrays of rows + 1 offsets: the result's and csr_from_coo's scatter cursors.
  detail::check_allocation(path, "row offsets for " + std::to_string(rows) + " rows",
                           static_cast<std::uint64_t>(rows) + 1, 2 * sizeof(std::int64_t));
  // Each entry takes a line of at least "i j\n" (pattern) or "i j v\n": a declared count
  // the rest of the file cannot hold is an error now, before reserving anything.
  const std::uint64_t min_line = banner.field == Field::pattern ? 4 : 6;
  const std::uint64_t remaining = in.remaining_bytes();
  const std::uint64_t max_entries = remaining == std::numeric_limits<std::uint64_t>::max()
                                        ? remaining
                                        : (remaining + 1) / min_line;
  if (static_cast<std::uint64_t>(declared) > max_entries)
    in.fail("declares " + std::to_string(declared) + " entries, but the " +
            std::to_string(remaining) + " bytes after the size line hold at most " +
            std::to_string(max_entries));

  detail::CooEntries entries;
  // From a pipe (no size known) the declared count is unchecked: reserve modestly.
  const auto reserve =
      remaining == std::numeric_limits<std::uint64_t>::max()
          ? std::min<std::uint64_t>(static_cast<std::uint64_t>(declared), std::uint64_t(1) << 24)
          : static_cast<std::uint64_t>(declared);
  entries.reserve(static_cast<std::size_t>(reserve * (mirrored ? 2 : 1)));
  const std::size_t expected_fields = banner.field == Field::pattern ? 2 : 3;
  const char* layout = banner.field == Field::pattern ? "'row column'" : "'row column value'";
  for (std::int64_t k = 0; k < declared; ++k) {
    if (!next_content_line(in, line))
      in.fail("the file ends after " + std::to_string(k) + " of the " + std::to_string(declared) +
              " declared entries");
    const auto n = detail::split_fields(line, f, 4);
    if (n != expected_fields)
      in.fail("expected " + std::string(layout) + ", found " + std::to_string(n) + " fields");
    std::int64_t i = 0, j = 0;
    if (!detail::parse_integer(f[0], i) || !detail::parse_integer(f[1], j))
      in.fail("the row and column indices must be integers");
    if (i < 1 || i > rows)
      in.fail("row index " + std::to_string(i) + " outside [1, " + std::to_string(rows) + "]");
    if (j < 1 || j > cols)
      in.fail("column index " + std::to_string(j) + " outside [1, " + std::to_string(cols) + "]");
    double v = 1.0;
    if (banner.field == Field::real) {
      if (!detail::parse_real(f[2], v))
        in.fail("value '" + std::string(f[2]) + "' is not a number");
    } else if (banner.field == Field::integer) {
      std::int64_t iv = 0;
      if (!detail::parse_integer(f[2], iv))
        in.fail("value '" + std::string(f[2]) + "' is not an integer");
      v = static_cast<double>(iv);
    }
    const auto r = i - 1;
    const auto c = static_cast<std::int32_t>(j - 1);
    entries.push_back(r, c, v);
    if (mirrored && i != j) {
      entries.push_back(c, static_cast<std::int32_t>(r),
                        banner.symmetry == Symmetry::skew_symmetric ? -v : v);
    } else if (banner.symmetry == Symmetry::skew_symmetric && v != 0) {
      in.fail("a skew-symmetric matrix has a zero diagonal, but this entry is " +
              std::string(f[2]));
    }
  }
  if (next_content_line(in, line))
    in.fail("more entries than the " + std::to_string(declared) + " declared in the size line");
  return detail::csr_from_coo(rows, cols, std::move(entries));
} catch (const std::bad_alloc&) {  // even a file too large for memory gives an error naming it
  detail::throw_out_of_memory(path);
}

void write_matrix_market(const std::string& path, const CsrMatrix<double>& a) {
  a.validate("write_matrix_market(" + path + ")");
  detail::AtomicFile out(path);
  out.write("%%MatrixMarket matrix coordinate real general\n% written by kcla\n" +
            std::to_string(a.num_rows) + " " + std::to_string(a.num_cols) + " " +
            std::to_string(a.nnz()) + "\n");
  char line[96];  // two integers and a double: at most 20 + 11 + 25 characters
  char* p = line;
  char* const end = line + sizeof line;
  auto append = [&](auto number, char separator) {
    const auto [next, ec] = std::to_chars(p, end - 1, number);
    if (ec != std::errc()) throw InvalidArgument("write_matrix_market: number too long");
    p = next;
    *p++ = separator;
  };
  for (std::int64_t r = 0; r < a.num_rows; ++r) {
    for (auto k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k) {
      p = line;
      append(r + 1, ' ');
      append(a.column_indices[k] + 1, ' ');
      append(a.values[k], '\n');  // the shortest form that reads back exactly
      out.write(line, static_cast<std::size_t>(p - line));
    }
  }
  out.commit();
}

}  // namespace kcla
