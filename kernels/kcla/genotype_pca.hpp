// Principal components of a standardized genotype matrix X (samples x variants, a
// kcla::GenotypeOperator) by randomized block Krylov (default) or subspace iteration:
// every product with X or X^T runs on the operator's device; the small dense steps
// (orthonormalizing, the Rayleigh-Ritz eigenproblem) run on the host.
//
//   block Krylov:  Q = orth[X Omega, (X X^T) X Omega, ..., (X X^T)^q X Omega] (grown block by
//                  block), T = Q^T X X^T Q = V Lambda V^T: eigenvalues ~ Lambda, vectors ~ Q V.
//   subspace:      Y = X Omega;  repeat: Q = orth(Y), Y = X (X^T Q);  Q = orth(Y),
//                  Z = X^T Q, Z^T Z = V Lambda V^T.
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

enum class PcaMethod {
  /// Every block of the Krylov space [X X^T]^t X Omega kept (full reorthogonalization) and
  /// Rayleigh-Ritz on all of it: converges much faster where eigenvalues crowd (the flat
  /// tail of genotype spectra). Host memory: two doubles per sample per basis column,
  /// basis = (components + oversampling) x (iterations + 1) columns at most.
  block_krylov,
  /// Classic randomized subspace iteration: only the last block kept (memory: one block).
  subspace_iteration
};

struct PcaOptions {
  std::int64_t components = 10;
  std::int64_t oversampling = 10;  ///< extra vectors per block (accuracy of the last PCs)
  std::int64_t iterations = 10;    ///< power iterations (each: one X^T and one X product)
  PcaMethod method = PcaMethod::block_krylov;
  std::uint64_t seed = 1;
  /// Called after each iteration with (iteration, iterations); may be empty.
  std::function<void(std::int64_t, std::int64_t)> progress;
};

struct PcaResult {
  std::int64_t samples = 0, components = 0;
  std::vector<double> eigenvalues;  ///< of X X^T / variants, descending
  /// samples x components, row-major, unit columns; each column's entry of largest
  /// magnitude is positive (an eigenvector's sign is arbitrary: this fixes it, so runs
  /// whose sums differ in rounding write the same vectors).
  std::vector<double> eigenvectors;
};

namespace detail {

/// Flips every eigenvector whose entry of largest magnitude is negative (as scikit-learn's
/// svd_flip does).
inline void orient_eigenvectors(PcaResult& r) {
  for (std::int64_t j = 0; j < r.components; ++j) {
    double largest = 0;
    for (std::int64_t i = 0; i < r.samples; ++i) {
      const double v = r.eigenvectors[static_cast<std::size_t>(i * r.components + j)];
      if (std::abs(v) > std::abs(largest)) largest = v;
    }
    if (largest < 0)
      for (std::int64_t i = 0; i < r.samples; ++i)
        r.eigenvectors[static_cast<std::size_t>(i * r.components + j)] *= -1.0;
  }
}

/// Rayleigh-Ritz: the eigenpairs of the symmetric dim x dim matrix `t` (the operator
/// projected on an orthonormal basis) give the top k eigenvalues (divided by `variants`)
/// and the eigenvectors basis x V; basis(i, a) reads the basis' entry of sample i, column a.
/// Orthonormal basis and V make the eigenvectors orthonormal too.
template <class Basis>
PcaResult ritz_pairs(std::int64_t n, std::int64_t k, std::int64_t variants, std::int64_t dim,
                     const std::vector<double>& t, const Basis& basis) {
  std::vector<double> values, vectors;
  symmetric_eigen_descending(dim, t, values, vectors);
  PcaResult result;
  result.samples = n;
  result.components = k;
  result.eigenvalues.resize(static_cast<std::size_t>(k));
  for (std::int64_t j = 0; j < k; ++j)
    result.eigenvalues[j] = values[j] / static_cast<double>(variants);
  result.eigenvectors.assign(static_cast<std::size_t>(n * k), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t a = 0; a < dim; ++a) {
      const double q = basis(i, a);
      for (std::int64_t j = 0; j < k; ++j)
        result.eigenvectors[i * k + j] += q * vectors[a * dim + j];
    }
  orient_eigenvectors(result);
  return result;
}

/// Block Krylov with full reorthogonalization and Rayleigh-Ritz on the whole space:
/// basis blocks Q_0 = orth(X Omega), Q_{t+1} = the part of X X^T Q_t new to the basis;
/// T = Q^T (X X^T Q) from the images every block's product leaves behind.
template <class ExecutionSpace, class Scalar, class MemorySpace>
PcaResult genotype_pca_krylov(const ExecutionSpace& exec,
                              const GenotypeOperator<Scalar, MemorySpace>& X, std::int64_t variants,
                              const PcaOptions& options, std::int64_t l) {
  const std::int64_t n = X.num_rows(), m = X.num_cols(), k = options.components;
  const std::int64_t capacity = std::min({n, m, l * (options.iterations + 1)});
  using matrix = Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace>;
  const double bytes = 2.0 * 8.0 * static_cast<double>(n) * static_cast<double>(capacity);
  if (bytes > 64.0 * (1ull << 30))
    throw InvalidArgument("kcla::genotype_pca: the block Krylov basis would take " +
                          std::to_string(static_cast<long long>(bytes / (1ull << 30))) +
                          " GiB of host memory; use fewer iterations or oversampling, or "
                          "subspace iteration");
  std::vector<double> block(static_cast<std::size_t>(n * l));
  {
    matrix omega("kcla::pca::Omega", m, l), Y("kcla::pca::Y", n, l);
    auto oh = Kokkos::create_mirror_view(omega);
    std::mt19937_64 gen(options.seed);
    std::normal_distribution<double> normal;
    for (std::int64_t i = 0; i < m * l; ++i) oh.data()[i] = static_cast<Scalar>(normal(gen));
    Kokkos::deep_copy(omega, oh);
    X.apply(exec, omega, Y);
    auto yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Y);
    for (std::int64_t i = 0; i < n * l; ++i) block[i] = static_cast<double>(yh.data()[i]);
  }
  OrthonormalBasis basis(n);
  basis.append(block, l, capacity);
  std::vector<std::vector<double>> images;  // X X^T q, one per basis column
  const std::int64_t blocks = options.iterations + 1;
  std::int64_t first = 0;
  for (std::int64_t step = 1; first < basis.size(); ++step) {
    const std::int64_t w = basis.size() - first;
    matrix Q("kcla::pca::Q", n, w), Z("kcla::pca::Z", m, w), W("kcla::pca::W", n, w);
    auto qh = Kokkos::create_mirror_view(Q);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t c = 0; c < w; ++c)
        qh(i, c) = static_cast<Scalar>(basis.column(first + c)[i]);
    Kokkos::deep_copy(Q, qh);
    X.apply_transpose(exec, Q, Z);
    X.apply(exec, Z, W);
    auto wh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), W);
    block.assign(static_cast<std::size_t>(n * w), 0.0);
    for (std::int64_t c = 0; c < w; ++c) {
      std::vector<double> image(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i)
        block[i * w + c] = image[i] = static_cast<double>(wh(i, c));
      images.push_back(std::move(image));
    }
    if (options.progress && step < blocks) options.progress(step, blocks);
    first = basis.size();
    if (step >= blocks || basis.size() >= capacity) break;
    basis.append(block, w, capacity);
  }
  const std::int64_t s = basis.size();
  if (s < k)
    throw InvalidArgument("kcla::genotype_pca: the genotypes span only " + std::to_string(s) +
                          " dimensions, fewer than the " + std::to_string(k) +
                          " components asked for");
  if (options.progress) options.progress(blocks, blocks);  // also when the space filled early
  std::vector<double> t(static_cast<std::size_t>(s * s));
  for (std::int64_t a = 0; a < s; ++a)
    for (std::int64_t b = 0; b < s; ++b) {
      double dot = 0;
      const auto& q = basis.column(a);
      const auto& y = images[b];
      for (std::int64_t i = 0; i < n; ++i) dot += q[i] * y[i];
      t[a * s + b] = dot;
    }
  for (std::int64_t a = 0; a < s; ++a)  // symmetric up to rounding
    for (std::int64_t b = 0; b < a; ++b)
      t[a * s + b] = t[b * s + a] = 0.5 * (t[a * s + b] + t[b * s + a]);
  return ritz_pairs(n, k, variants, s, t,
                    [&](std::int64_t i, std::int64_t c) { return basis.column(c)[i]; });
}

}  // namespace detail

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
  if (options.iterations < 0) throw InvalidArgument("kcla::genotype_pca: negative iterations");
  if (options.method == PcaMethod::block_krylov)
    return detail::genotype_pca_krylov(exec, X, variants, options, l);
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
  return detail::ritz_pairs(n, k, variants, l, s,
                            [&](std::int64_t i, std::int64_t c) { return q[i * l + c]; });
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
  detail::orient_eigenvectors(result);
  return result;
}

}  // namespace kcla
