#include <kcla/dense_matrix_market.hpp>

#include <kcla/detail/atomic_file.hpp>
#include <kcla/detail/line_reader.hpp>
#include <kcla/detail/memory_limit.hpp>
#include <kcla/detail/text_fields.hpp>
#include <kcla/error.hpp>
#include <kcla/matrix_market.hpp>

#include <cctype>
#include <charconv>
#include <limits>

namespace kcla {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool next_content_line(detail::LineReader& in, std::string_view& line) {
  while (in.next(line))
    if (!(line.empty() || line[0] == '%' || detail::is_blank(line))) return true;
  return false;
}

DenseMatrix densify(const std::string& path) {
  const auto csr = read_matrix_market(path);
  DenseMatrix d;
  d.rows = csr.num_rows;
  d.cols = csr.num_cols;
  if (d.cols > 0 && d.rows > std::numeric_limits<std::int64_t>::max() / d.cols)
    throw FormatError(path, "absurd shape");
  detail::check_allocation(
      path, "a dense " + std::to_string(d.rows) + " x " + std::to_string(d.cols) + " matrix",
      static_cast<std::uint64_t>(d.rows * d.cols), sizeof(double));
  d.values.assign(static_cast<std::size_t>(d.rows * d.cols), 0.0);
  for (std::int64_t r = 0; r < csr.num_rows; ++r)
    for (auto k = csr.row_offsets[r]; k < csr.row_offsets[r + 1]; ++k)
      d(r, csr.column_indices[k]) = csr.values[k];
  return d;
}

}  // namespace

DenseMatrix read_dense_matrix_market(const std::string& path) {
  detail::LineReader in(path);
  std::string_view line, f[5];
  if (!in.next(line)) throw FormatError(path, "empty file (expected a Matrix Market banner)");
  const auto words = detail::split_fields(line, f, 5);
  if (words == 0 || lower(f[0]) != "%%matrixmarket")
    in.fail("not a Matrix Market file (the first line must start with %%MatrixMarket)");
  if (words != 5)
    in.fail("the banner must read '%%MatrixMarket matrix <format> <field> <symmetry>'");
  if (lower(f[1]) != "matrix") in.fail("unsupported object '" + std::string(f[1]) + "'");
  const auto format = lower(f[2]);
  if (format == "coordinate") return densify(path);
  if (format != "array") in.fail("unknown format '" + std::string(f[2]) + "'");
  const auto field = lower(f[3]);
  const bool integer = field == "integer";
  if (!integer && field != "real" && field != "double")
    in.fail("unsupported field '" + std::string(f[3]) + "' (real or integer)");
  const auto symmetry = lower(f[4]);
  const bool symmetric = symmetry == "symmetric", skew = symmetry == "skew-symmetric";
  if (!symmetric && !skew && symmetry != "general")
    in.fail("unsupported symmetry '" + std::string(f[4]) + "'");

  if (!next_content_line(in, line))
    throw FormatError(path, "no size line ('rows columns') after the banner");
  DenseMatrix d;
  if (detail::split_fields(line, f, 3) != 2 || !detail::parse_integer(f[0], d.rows) ||
      !detail::parse_integer(f[1], d.cols))
    in.fail("the size line of an array file must be two integers 'rows columns'");
  if (d.rows < 0 || d.cols < 0) in.fail("negative size in the size line");
  if ((symmetric || skew) && d.rows != d.cols)
    in.fail("a symmetric or skew-symmetric matrix must be square");
  if (d.cols > 0 && d.rows > std::numeric_limits<std::int64_t>::max() / d.cols)
    in.fail("absurd size " + std::to_string(d.rows) + " x " + std::to_string(d.cols));
  const std::int64_t n = d.rows;
  const std::int64_t expected = symmetric ? n * (n + 1) / 2 : skew ? n * (n - 1) / 2 : n * d.cols;
  // Every value takes at least two bytes ("0\n"): a size the rest of the file cannot hold
  // is an error before anything is allocated.
  const std::uint64_t remaining = in.remaining_bytes();
  if (remaining != std::numeric_limits<std::uint64_t>::max() &&
      static_cast<std::uint64_t>(expected) > (remaining + 1) / 2)
    in.fail("declares " + std::to_string(d.rows) + " x " + std::to_string(d.cols) +
            " values, more than the " + std::to_string(remaining) +
            " bytes after the size line can hold");
  detail::check_allocation(
      path, "a dense " + std::to_string(d.rows) + " x " + std::to_string(d.cols) + " matrix",
      static_cast<std::uint64_t>(d.rows * d.cols), sizeof(double));
  d.values.assign(static_cast<std::size_t>(d.rows * d.cols), 0.0);

  // Values in column-major order (the lower triangle for symmetric kinds), any number per
  // line (the standard has one).
  std::int64_t r = 0, c = 0, read = 0;
  auto advance = [&]() {
    ++r;
    if (r == d.rows) {
      ++c;
      r = symmetric ? c : skew ? c + 1 : 0;
    }
  };
  if (skew) r = 1;
  while (read < expected && next_content_line(in, line)) {
    std::string_view rest = line, value;
    while (detail::next_field(rest, value)) {
      if (read == expected) in.fail("more values than the declared size holds");
      double v = 0;
      if (integer) {
        std::int64_t iv = 0;
        if (!detail::parse_integer(value, iv))
          in.fail("value '" + std::string(value) + "' is not an integer");
        v = static_cast<double>(iv);
      } else if (!detail::parse_real(value, v)) {
        in.fail("value '" + std::string(value) + "' is not a number");
      }
      d(r, c) = v;
      if (symmetric) d(c, r) = v;
      if (skew) d(c, r) = -v;
      ++read;
      advance();
    }
  }
  if (read < expected)
    throw FormatError(path, "the file ends after " + std::to_string(read) + " of the " +
                                std::to_string(expected) + " values");
  if (next_content_line(in, line)) in.fail("more values than the declared size holds");
  return d;
}

void write_dense_matrix_market(const std::string& path, const DenseMatrix& a) {
  if (a.rows < 0 || a.cols < 0 || static_cast<std::int64_t>(a.values.size()) != a.rows * a.cols)
    throw InvalidArgument("write_dense_matrix_market: values must hold rows x cols entries");
  detail::AtomicFile out(path);
  out.write("%%MatrixMarket matrix array real general\n% written by kcla\n" +
            std::to_string(a.rows) + " " + std::to_string(a.cols) + "\n");
  char line[40];
  for (double v : a.values) {
    const auto [end, ec] = std::to_chars(line, line + sizeof line - 1, v);
    if (ec != std::errc()) throw InvalidArgument("write_dense_matrix_market: number too long");
    *end = '\n';
    out.write(line, static_cast<std::size_t>(end + 1 - line));
  }
  out.commit();
}

}  // namespace kcla
