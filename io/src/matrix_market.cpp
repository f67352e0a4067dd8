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

namespace {

/// A coordinate file's banner and size line, read and checked.
struct MatrixMarketHeader {
  Banner banner;
  std::int64_t rows = 0, cols = 0, declared = 0;
  bool mirrored() const { return banner.symmetry != Symmetry::general; }
};

MatrixMarketHeader read_header(detail::LineReader& in) {
  const std::string& path = in.path();
  MatrixMarketHeader h;
  h.banner = parse_banner(in);
  std::string_view line, f[4];
  if (!next_content_line(in, line))
    throw FormatError(path, "no size line ('rows columns entries') after the banner");
  std::int64_t &rows = h.rows, &cols = h.cols, &declared = h.declared;
  if (detail::split_fields(line, f, 4) != 3 || !detail::parse_integer(f[0], rows) ||
      !detail::parse_integer(f[1], cols) || !detail::parse_integer(f[2], declared))
    in.fail("the size line must be three integers 'rows columns entries'");
  if (rows < 0 || cols < 0 || declared < 0) in.fail("negative size in the size line");
  if (cols > std::numeric_limits<std::int32_t>::max())
    in.fail(std::to_string(cols) + " columns: kcla supports at most 2^31-1");
  if (h.mirrored() && rows != cols)
    in.fail("a symmetric or skew-symmetric matrix must be square, not " + std::to_string(rows) +
            " x " + std::to_string(cols));
  // Two arrays of rows + 1 offsets: the result's and csr_from_coo's scatter cursors.
  detail::check_allocation(path, "row offsets for " + std::to_string(rows) + " rows",
                           static_cast<std::uint64_t>(rows) + 1, 2 * sizeof(std::int64_t));
  // Each entry takes a line of at least "i j\n" (pattern) or "i j v\n": a declared count
  // the rest of the file cannot hold is an error now, before reserving anything.
  const std::uint64_t min_line = h.banner.field == Field::pattern ? 4 : 6;
  const std::uint64_t remaining = in.remaining_bytes();
  const std::uint64_t max_entries = remaining == std::numeric_limits<std::uint64_t>::max()
                                        ? remaining
                                        : (remaining + 1) / min_line;
  if (static_cast<std::uint64_t>(declared) > max_entries)
    in.fail("declares " + std::to_string(declared) + " entries, but the " +
            std::to_string(remaining) + " bytes after the size line hold at most " +
            std::to_string(max_entries));
  return h;
}

/// Reads and checks every entry after the header, calling f(row, column, value) for each
/// stored entry and its mirror (0-based).
template <class F>
void for_each_entry(detail::LineReader& in, const MatrixMarketHeader& h, F&& f) {
  const Banner& banner = h.banner;
  std::string_view line, fields[4];
  const std::size_t expected_fields = banner.field == Field::pattern ? 2 : 3;
  const char* layout = banner.field == Field::pattern ? "'row column'" : "'row column value'";
  for (std::int64_t k = 0; k < h.declared; ++k) {
    if (!next_content_line(in, line))
      in.fail("the file ends after " + std::to_string(k) + " of the " + std::to_string(h.declared) +
              " declared entries");
    const auto n = detail::split_fields(line, fields, 4);
    if (n != expected_fields)
      in.fail("expected " + std::string(layout) + ", found " + std::to_string(n) + " fields");
    std::int64_t i = 0, j = 0;
    if (!detail::parse_integer(fields[0], i) || !detail::parse_integer(fields[1], j))
      in.fail("the row and column indices must be integers");
    if (i < 1 || i > h.rows)
      in.fail("row index " + std::to_string(i) + " outside [1, " + std::to_string(h.rows) + "]");
    if (j < 1 || j > h.cols)
      in.fail("column index " + std::to_string(j) + " outside [1, " + std::to_string(h.cols) + "]");
    double v = 1.0;
    if (banner.field == Field::real) {
      if (!detail::parse_real(fields[2], v))
        in.fail("value '" + std::string(fields[2]) + "' is not a number");
    } else if (banner.field == Field::integer) {
      std::int64_t iv = 0;
      if (!detail::parse_integer(fields[2], iv))
        in.fail("value '" + std::string(fields[2]) + "' is not an integer");
      v = static_cast<double>(iv);
    }
    const auto r = i - 1;
    const auto c = static_cast<std::int32_t>(j - 1);
    f(r, c, v);
    if (h.mirrored() && i != j) {
      f(c, static_cast<std::int32_t>(r), banner.symmetry == Symmetry::skew_symmetric ? -v : v);
    } else if (banner.symmetry == Symmetry::skew_symmetric && v != 0) {
      in.fail("a skew-symmetric matrix has a zero diagonal, but this entry is " +
              std::string(fields[2]));
    }
  }
  if (next_content_line(in, line))
    in.fail("more entries than the " + std::to_string(h.declared) + " declared in the size line");
}

/// Column ranges, each read by a pass over the whole file that keeps the entries in range:
/// memory is one block, the file is read once per block.
class MatrixMarketBlockSource : public ColumnBlockSource {
 public:
  explicit MatrixMarketBlockSource(const std::string& path) : path_(path) {
    detail::LineReader in(path);
    if (in.remaining_bytes() == std::numeric_limits<std::uint64_t>::max())
      throw FormatError(path, "reading Matrix Market in blocks needs a regular file, not a pipe");
    header_ = read_header(in);
  }
  std::int64_t num_rows() const override { return header_.rows; }
  std::int64_t num_cols() const override { return header_.cols; }
  std::string name() const override { return path_; }
  std::int64_t declared_entries() const { return header_.declared; }
  bool next_block(std::int64_t max_cols, CsrMatrix<double>& block) override {
    if (max_cols <= 0) throw InvalidArgument(path_ + ": block width must be positive");
    block = CsrMatrix<double>();
    const std::int64_t begin = next_, end = std::min(header_.cols, next_ + max_cols);
    if (begin >= end) return false;
    detail::LineReader in(path_);
    read_header(in);
    detail::CooEntries entries;
    for_each_entry(in, header_, [&](std::int64_t r, std::int32_t c, double v) {
      if (c >= begin && c < end) entries.push_back(r, static_cast<std::int32_t>(c - begin), v);
    });
    block = detail::csr_from_coo(header_.rows, end - begin, std::move(entries));
    next_ = end;
    return true;
  }
  void skip_columns(std::int64_t count) override { next_ = std::min(header_.cols, next_ + count); }

 private:
  std::string path_;
  MatrixMarketHeader header_;
  std::int64_t next_ = 0;
};

}  // namespace

CsrMatrix<double> read_matrix_market(const std::string& path) try {
  detail::LineReader in(path);
  const MatrixMarketHeader h = read_header(in);
  detail::CooEntries entries;
  // From a pipe (no size known) the declared count is unchecked: reserve modestly.
  const auto reserve =
      in.remaining_bytes() == std::numeric_limits<std::uint64_t>::max()
          ? std::min<std::uint64_t>(static_cast<std::uint64_t>(h.declared), std::uint64_t(1) << 24)
          : static_cast<std::uint64_t>(h.declared);
  entries.reserve(static_cast<std::size_t>(reserve * (h.mirrored() ? 2 : 1)));
  for_each_entry(in, h,
                 [&](std::int64_t r, std::int32_t c, double v) { entries.push_back(r, c, v); });
  return detail::csr_from_coo(h.rows, h.cols, std::move(entries));
} catch (const std::bad_alloc&) {  // even a file too large for memory gives an error naming it
  detail::throw_out_of_memory(path);
}

std::unique_ptr<ColumnBlockSource> open_matrix_market_blocks(const std::string& path,
                                                             std::int64_t* declared_entries) {
  auto source = std::make_unique<MatrixMarketBlockSource>(path);
  if (declared_entries) *declared_entries = source->declared_entries();
  return source;
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
