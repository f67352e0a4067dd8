// Principal components of a standardized genotype matrix X (samples x variants, a
// kcla::GenotypeOperator) by randomized subspace iteration: every product with X or X^T
// runs on the operator's device; the small dense steps (orthonormalizing n x l blocks, the
// l x l eigenproblem) run on the host with LAPACK.
//
//   Y = X Omega;  repeat: Q = orth(Y), Y = X (X^T Q);  Q = orth(Y), Z = X^T Q,
//   Z^T Z = V Lambda V^T:  eigenvalues of X X^T ~ Lambda, eigenvectors ~ Q V.
//
// Eigenvalues are reported for the genomic relationship matrix X X^T / variants (PLINK's
// scaling, with variants = the variants that carry a standardized value).
#pragma once

#include <kcla/error.hpp>
#include <kcla/genotype_operator.hpp>
#include <kcla/small_dense.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

namespace kcla {

struct PcaOptions {
  std::int64_t components = 10;
  std::int64_t oversampling = 10;  ///< extra vectors in the subspace (accuracy of the last PCs)
  std::int64_t iterations = 10;    ///< power iterations (each: one X^T and one X product)
  std::uint64_t seed = 1;
  /// Called after each iteration with (iteration, iterations); may be empty.
  std::function<void(std::int64_t, std::int64_t)> progress;
};

struct PcaResult {
  std::int64_t samples = 0, components = 0;
  std::vector<double> eigenvalues;   ///< of X X^T / variants, descending
  std::vector<double> eigenvectors;  ///< samples x components, row-major, unit columns
};

/// `variants` divides the eigenvalues (the GRM's denominator; > 0).
template <class ExecutionSpace, class Scalar, class MemorySpace>
PcaResult genotype_pca(const ExecutionSpace& exec, const GenotypeOperator<Scalar, MemorySpace>& X,
                       std::int64_t variants, const PcaOptions& options = {}) {
  const std::int64_t n = X.num_rows(), m = X.num_cols();
  const std::int64_t k = options.components;
  const std::int64_t l =
      std::min(k + std::max<std::int64_t>(0, options.oversampling), std::min(n, m));
  if (k < 1 || k > l)
    throw InvalidArgument("kcla::genotype_pca: " + std::to_string(k) +
                          " components need 1 <= components <= min(samples, variants) = " +
                          std::to_string(std::min(n, m)));
  if (variants <= 0) throw InvalidArgument("kcla::genotype_pca: variants must be positive");
  using matrix = Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace>;
  matrix Yd("kcla::pca::Y", n, l), Zd("kcla::pca::Z", m, l);
  auto Yh = Kokkos::create_mirror_view(Yd);
  auto Zh = Kokkos::create_mirror_view(Zd);
  std::vector<double> q(static_cast<std::size_t>(n * l));

  auto to_q = [&] {  // Yd -> orthonormal q (host) -> Yd
    Kokkos::deep_copy(Yh, Yd);
    for (std::int64_t i = 0; i < n * l; ++i) q[i] = static_cast<double>(Yh.data()[i]);
    orthonormalize_columns(n, l, q);
    for (std::int64_t i = 0; i < n * l; ++i) Yh.data()[i] = static_cast<Scalar>(q[i]);
    Kokkos::deep_copy(Yd, Yh);
  };

  std::mt19937_64 gen(options.seed);
  std::normal_distribution<double> normal;
  for (std::int64_t i = 0; i < m * l; ++i) Zh.data()[i] = static_cast<Scalar>(normal(gen));
  Kokkos::deep_copy(Zd, Zh);
  X.apply(exec, Zd, Yd);  // Y = X Omega
  for (std::int64_t it = 0; it < options.iterations; ++it) {
    to_q();
    X.apply_transpose(exec, Yd, Zd);
    X.apply(exec, Zd, Yd);
    if (options.progress) options.progress(it + 1, options.iterations);
  }
  to_q();
  X.apply_transpose(exec, Yd, Zd);  // Z = X^T Q
  Kokkos::deep_copy(Zh, Zd);
  // S = Z^T Z (l x l), accumulated in double.
  std::vector<double> s(static_cast<std::size_t>(l * l), 0.0);
  for (std::int64_t r = 0; r < m; ++r) {
    const Scalar* z = Zh.data() + r * l;
    for (std::int64_t a = 0; a < l; ++a) {
      const double za = static_cast<double>(z[a]);
      for (std::int64_t b = a; b < l; ++b) s[a * l + b] += za * static_cast<double>(z[b]);
    }
  }
  for (std::int64_t a = 0; a < l; ++a)
    for (std::int64_t b = 0; b < a; ++b) s[a * l + b] = s[b * l + a];
  std::vector<double> values, vectors;
  symmetric_eigen_descending(l, s, values, vectors);
  PcaResult result;
  result.samples = n;
  result.components = k;
  result.eigenvalues.resize(static_cast<std::size_t>(k));
  for (std::int64_t j = 0; j < k; ++j)
    result.eigenvalues[j] = values[j] / static_cast<double>(variants);
  // U = Q V (first k columns); Q's columns and V's are orthonormal, so U's are too.
  result.eigenvectors.assign(static_cast<std::size_t>(n * k), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < k; ++j) {
      double u = 0;
      for (std::int64_t a = 0; a < l; ++a) u += q[i * l + a] * vectors[a * l + j];
      result.eigenvectors[i * k + j] = u;
    }
  return result;
}

/// The exact eigenpairs: the whole GRM X X^T / variants (n x n, built by products with
/// blocks of identity columns, `block` at a time) and LAPACK's dense eigensolver. Memory:
/// n x n doubles on the host plus variants x block values on the device; for panels of up
/// to a few ten thousand samples, and as the reference the randomized solver is checked by.
template <class ExecutionSpace, class Scalar, class MemorySpace>
PcaResult genotype_pca_exact(const ExecutionSpace& exec,
                             const GenotypeOperator<Scalar, MemorySpace>& X, std::int64_t variants,
                             std::int64_t components, std::int64_t block = 64) {
  const std::int64_t n = X.num_rows(), m = X.num_cols();
  if (components < 1 || components > n)
    throw InvalidArgument("kcla::genotype_pca_exact: components must be in 1.." +
                          std::to_string(n));
  if (variants <= 0) throw InvalidArgument("kcla::genotype_pca_exact: variants must be positive");
  block = std::max<std::int64_t>(1, std::min(block, n));
  using matrix = Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace>;
  matrix E("kcla::pca::E", n, block), Z("kcla::pca::Z", m, block), G("kcla::pca::G", n, block);
  auto Eh = Kokkos::create_mirror_view(E);
  auto Gh = Kokkos::create_mirror_view(G);
  std::vector<double> grm(static_cast<std::size_t>(n * n));
  for (std::int64_t first = 0; first < n; first += block) {
    Kokkos::deep_copy(Eh, Scalar(0));
    for (std::int64_t c = 0; c < block && first + c < n; ++c) Eh(first + c, c) = Scalar(1);
    Kokkos::deep_copy(E, Eh);
    X.apply_transpose(exec, E, Z);
    X.apply(exec, Z, G);
    Kokkos::deep_copy(Gh, G);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t c = 0; c < block && first + c < n; ++c)
        grm[i * n + first + c] = static_cast<double>(Gh(i, c)) / static_cast<double>(variants);
  }
  for (std::int64_t i = 0; i < n; ++i)  // exact symmetry (rounding differs by order)
    for (std::int64_t j = 0; j < i; ++j)
      grm[i * n + j] = grm[j * n + i] = 0.5 * (grm[i * n + j] + grm[j * n + i]);
  std::vector<double> values, vectors;
  symmetric_eigen_descending(n, grm, values, vectors);
  PcaResult result;
  result.samples = n;
  result.components = components;
  result.eigenvalues.assign(values.begin(), values.begin() + components);
  result.eigenvectors.resize(static_cast<std::size_t>(n * components));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < components; ++j)
      result.eigenvectors[i * components + j] = vectors[i * n + j];
  return result;
}

}  // namespace kcla
