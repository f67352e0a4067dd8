#include "cli_tlr_support.hpp"

#include <cblas.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <random>

namespace kcla::cli {

ScalarKind parse_precision(const std::string& name) {
  if (name == "fp64") return ScalarKind::f64;
  if (name == "fp32") return ScalarKind::f32;
  if (name == "fp16") return ScalarKind::f16;
  if (name == "bf16") return ScalarKind::bf16;
  throw UsageError("--precision: fp64, fp32, fp16 or bf16 (not '" + name + "')");
}

/// "fp16 (as fp32: ...)" when the build stores a precision in a wider type.
std::string precision_note(ScalarKind wanted, ScalarKind used) {
  if (wanted == used) return to_string(wanted);
  return std::string(to_string(wanted)) + " (computed in " + to_string(used) +
         ": this build has no 16-bit " + to_string(wanted) + " type)";
}

std::string megabytes(double bytes) {
  char buffer[64];
  if (bytes >= 1e9)
    std::snprintf(buffer, sizeof buffer, "%.2f GB", bytes / 1e9);
  else if (bytes >= 1e6)
    std::snprintf(buffer, sizeof buffer, "%.2f MB", bytes / 1e6);
  else
    std::snprintf(buffer, sizeof buffer, "%.1f kB", bytes / 1e3);
  return buffer;
}

void print_summary(const TlrLayout& l, ScalarKind kind) {
  const auto& ranks = l.ranks();
  const auto& stored = l.stored_ranks();
  const std::size_t tiles = ranks.size();
  int lo = 0, hi = 0;
  double mean = 0, stored_mean = 0;
  std::int64_t zero = 0, full = 0;
  if (tiles > 0) {
    lo = *std::min_element(ranks.begin(), ranks.end());
    hi = *std::max_element(ranks.begin(), ranks.end());
    mean = std::accumulate(ranks.begin(), ranks.end(), 0.0) / static_cast<double>(tiles);
    stored_mean = std::accumulate(stored.begin(), stored.end(), 0.0) / static_cast<double>(tiles);
    for (int i = 0; i < l.tile_rows(); ++i)
      for (int j = 0; j < l.tile_cols(); ++j) {
        zero += l.rank(i, j) == 0;
        full += l.rank(i, j) == std::min(l.tile_height(i), l.tile_width(j));
      }
  }
  const double compressed = static_cast<double>(l.outer_size() + l.inner_size()) *
                            static_cast<double>(element_bytes(kind));
  const double dense = static_cast<double>(l.num_rows()) * static_cast<double>(l.num_cols()) *
                       static_cast<double>(element_bytes(kind));
  std::printf("shape      %lld x %lld, tiles of %d: %d x %d grid (%zu tiles)\n",
              static_cast<long long>(l.num_rows()), static_cast<long long>(l.num_cols()),
              l.tile_size(), l.tile_rows(), l.tile_cols(), tiles);
  std::printf("precision  %s (%s), rank multiple %d, leading dimension %d\n", to_string(kind),
              tlr_value_type_name(kind), l.rank_multiple(), l.leading_dim());
  std::printf(
      "ranks      min %d, mean %.2f, max %d (stored mean %.2f); %lld rank-0, %lld full-rank "
      "tiles\n",
      lo, mean, hi, stored_mean, static_cast<long long>(zero), static_cast<long long>(full));
  std::printf("bytes      %s compressed vs %s dense (%.2f%%, %.1fx smaller)\n",
              megabytes(compressed).c_str(), megabytes(dense).c_str(),
              dense > 0 ? 100.0 * compressed / dense : 0.0,
              compressed > 0 ? dense / compressed : 0.0);
}

void print_method(bool randomized, const TlrCompressReport& report) {
  if (!randomized) {
    std::printf("method     svd: LAPACK gesdd per tile on the host\n");
    return;
  }
  std::printf(
      "method     randomized on %s: %d tiles in %d batches, %lld sample columns, every tile's "
      "error measured (max %.3f of its bound); %d redone by the SVD%s\n",
      Kokkos::DefaultExecutionSpace::name(), report.tiles, report.batches,
      static_cast<long long>(report.sample_columns), report.max_error_ratio, report.fallback_tiles,
      report.capped_tiles > 0
          ? (", " + std::to_string(report.capped_tiles) + " over it at the rank cap").c_str()
          : "");
}

KernelType parse_kernel(const std::string& name) {
  if (const auto type = kernel_type_from_string(name)) return *type;
  throw UsageError(
      "--kernel: exponential, matern12, matern32, matern52, gaussian or "
      "inverse_distance (not '" +
      name + "')");
}

/// ||A - Ã||_F / ||A||_F with Ã the stored matrix (widened to double), tile by tile.
double compression_error(const Source& src, const TlrMatrix<double, Kokkos::HostSpace>& a) {
  const auto& l = a.layout();
  const auto& u = a.outer_factors();
  const auto& v = a.inner_factors();
  const std::int64_t ld = l.leading_dim();
  const int tiles = l.tile_rows() * l.tile_cols();
  std::vector<double> err(static_cast<std::size_t>(tiles)), norm(static_cast<std::size_t>(tiles));
  Kokkos::parallel_for(
      "kcla::cli::tlr_error", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, tiles),
      [&](const int t) {
        const int i = t / l.tile_cols(), j = t % l.tile_cols();
        double e = 0, n = 0;
        for (int c = 0; c < l.tile_width(j); ++c)
          for (int r = 0; r < l.tile_height(i); ++r) {
            double s = 0;
            for (int q = 0; q < l.stored_rank(i, j); ++q)
              s += u(l.outer_offset(i, j) + q * ld + r) * v(l.inner_offset(i, j) + q * ld + c);
            const double x = src(static_cast<std::int64_t>(i) * l.tile_size() + r,
                                 static_cast<std::int64_t>(j) * l.tile_size() + c);
            e += (x - s) * (x - s);
            n += x * x;
          }
        err[static_cast<std::size_t>(t)] = e;
        norm[static_cast<std::size_t>(t)] = n;
      });
  Kokkos::DefaultHostExecutionSpace().fence();
  const double e = std::accumulate(err.begin(), err.end(), 0.0);
  const double n = std::accumulate(norm.begin(), norm.end(), 0.0);
  return n > 0 ? std::sqrt(e / n) : std::sqrt(e);
}

/// Tolerance of the relative Frobenius error of a product in each precision: the storage
/// precision's own (as the tests use), or 4 u sqrt(k) when larger.
double product_tolerance(ScalarKind kind, bool tf32, std::int64_t k) {
  const double sk = std::sqrt(static_cast<double>(std::max<std::int64_t>(1, k)));
  if (tf32) return std::max(1e-2, 4 * 4.9e-4 * sk);
  switch (kind) {
    case ScalarKind::f64:
      return std::max(1e-12, 4 * 1.1e-16 * sk);
    case ScalarKind::f32:
      return std::max(1e-5, 4 * 6e-8 * sk);
    case ScalarKind::f16:
      return std::max(1e-2, 4 * 6e-8 * sk);
    default:
      return std::max(3e-2, 4 * 6e-8 * sk);
  }
}

DenseMatrix read_initial_c(const std::string& path, std::int64_t m, std::int64_t n) {
  DenseMatrix given = read_dense_matrix_market(path);
  if (given.rows != m || given.cols != n)
    throw FormatError(path, "is " + std::to_string(given.rows) + " x " +
                                std::to_string(given.cols) + ", C must be " + std::to_string(m) +
                                " x " + std::to_string(n));
  return given;
}

double product_error(bool transa, bool transb, double alpha, double beta, const DenseMatrix& a,
                     const DenseMatrix& b, DenseMatrix& reference, const DenseMatrix& result) {
  const std::int64_t m = reference.rows, n = reference.cols, k = transa ? a.rows : a.cols;
  if (m > 0 && n > 0)
    cblas_dgemm(CblasColMajor, transa ? CblasTrans : CblasNoTrans,
                transb ? CblasTrans : CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), alpha, a.values.data(),
                static_cast<int>(std::max<std::int64_t>(1, a.rows)), b.values.data(),
                static_cast<int>(std::max<std::int64_t>(1, b.rows)), beta, reference.values.data(),
                static_cast<int>(std::max<std::int64_t>(1, m)));
  double num = 0, den = 0;
  for (std::size_t e = 0; e < reference.values.size(); ++e) {
    const double d = result.values[e] - reference.values[e];
    num += d * d;
    den += reference.values[e] * reference.values[e];
  }
  const double error = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  return std::isfinite(error) ? error : std::numeric_limits<double>::infinity();
}

}  // namespace kcla::cli
