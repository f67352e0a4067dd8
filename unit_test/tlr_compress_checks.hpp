// Checks shared by the TLR compression tests: clustered point sets, the dense kernel
// matrix, and the per-tile and global error bound of a compression.
#pragma once

#include <kcla/tlr_kernel_function.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "tlr_test_support.hpp"

namespace kcla::test {

/// n points in the unit square, ordered along rows of a coarse grid so that nearby
/// points get nearby indices (off-diagonal tiles are then far apart, hence low rank).
inline kcla::PointSet clustered_points(std::mt19937_64& gen, std::int64_t n) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<std::pair<double, double>> p(static_cast<std::size_t>(n));
  for (auto& q : p) q = {u(gen), u(gen)};
  const int cells = 4;
  std::sort(p.begin(), p.end(), [&](const auto& a, const auto& b) {
    const int ca = static_cast<int>(a.first * cells) * cells + static_cast<int>(a.second * cells);
    const int cb = static_cast<int>(b.first * cells) * cells + static_cast<int>(b.second * cells);
    return ca != cb ? ca < cb : a.first < b.first;
  });
  kcla::PointSet s;
  s.dimension = 2;
  for (const auto& q : p) {
    s.coordinates.push_back(q.first);
    s.coordinates.push_back(q.second);
  }
  return s;
}

/// K_pq = k(|rows_p - cols_q|), dense.
inline HostMatrix kernel_matrix(const kcla::PointSet& rows, const kcla::PointSet& cols,
                                const kcla::CovarianceKernel& k) {
  HostMatrix a{rows.size(), cols.size(),
               std::vector<double>(static_cast<std::size_t>(rows.size() * cols.size()))};
  for (std::int64_t c = 0; c < a.cols; ++c)
    for (std::int64_t r = 0; r < a.rows; ++r) a(r, c) = k(rows, r, cols, c);
  return a;
}

inline HostMatrix kernel_matrix(const kcla::PointSet& x, const kcla::CovarianceKernel& k) {
  return kernel_matrix(x, x, k);
}

inline double frobenius(const HostMatrix& a) {
  double s = 0;
  for (double v : a.v) s += v * v;
  return std::sqrt(s);
}

/// Every tile's error within max(rel ||A_ij||, abs), and the global consequence.
inline void check_error(const HostMatrix& a, const HostMatrix& approx, int b, double rel,
                        double abs) {
  double total = 0, tiles = 0;
  for (std::int64_t i0 = 0; i0 < a.rows; i0 += b)
    for (std::int64_t j0 = 0; j0 < a.cols; j0 += b) {
      double err = 0, norm = 0;
      for (std::int64_t c = j0; c < std::min(a.cols, j0 + b); ++c)
        for (std::int64_t r = i0; r < std::min(a.rows, i0 + b); ++r) {
          err += (a(r, c) - approx(r, c)) * (a(r, c) - approx(r, c));
          norm += a(r, c) * a(r, c);
        }
      EXPECT_LE(std::sqrt(err), std::max(rel * std::sqrt(norm), abs) * (1 + 1e-9) + 1e-14)
          << "tile at " << i0 << "," << j0;
      total += err;
      tiles += 1;
    }
  EXPECT_LE(std::sqrt(total), rel * frobenius(a) + abs * std::sqrt(tiles) + 1e-13);
}

}  // namespace kcla::test
