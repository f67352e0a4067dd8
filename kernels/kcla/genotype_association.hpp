// Marginal linear association scan on a genotype grammar (kcla/linear_association.hpp):
// per group of phenotypes with the same included samples, one batched left product
// G^T [1 C Y] (intercept, covariates, phenotypes) on the device and the per-variant sums of
// squared counts over the included samples (on a device: a left product of the squared
// matrix, the same schedule with its values squared; on the host: one pass over the
// grammar); the per-variant least-squares statistics follow on the host from those sums
// and the missing calls.
//
//   LinearAssociationData d;  // phenotypes and covariates, NaN = missing
//   auto r = kcla::linear_association<double>(exec, grammar, plink.missing, d);
//   r.beta[j * d.phenotypes + p], r.p_value[...], r.status[...]
//
// Over a block grammar (a panel compressed in column blocks) the left products run on the
// block matrix and the squared counts come from a host pass over each block.
#pragma once

#include <kcla/block_grammar_matrix.hpp>
#include <kcla/block_grammar_multiply.hpp>
#include <kcla/genotype_transform.hpp>
#include <kcla/grammar_matrix.hpp>
#include <kcla/grammar_multiply.hpp>
#include <kcla/linear_association.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kcla {

namespace detail {

/// The scan over any genotype matrix: `left_product(Y, Z)` computes Z = G^T Y (device Views,
/// n x w and m x w), `square_sums(included)` the per-variant sums of squared counts over
/// the included samples.
template <class Scalar, class ExecutionSpace, class LeftProduct, class SquareSums>
LinearAssociationResult linear_association_scan(const ExecutionSpace& exec, std::int64_t n,
                                                std::int64_t m, const MissingCalls& missing,
                                                const LinearAssociationData& data,
                                                const LinearAssociationOptions& options,
                                                LeftProduct&& left_product,
                                                SquareSums&& square_sums) {
  using memory = typename ExecutionSpace::memory_space;
  using matrix = Kokkos::View<Scalar**, Kokkos::LayoutRight, memory>;
  data.validate();
  missing.validate("kcla::linear_association: missing calls");
  if (data.samples != n || missing.num_rows != n || missing.num_cols != m)
    throw InvalidArgument("kcla::linear_association: " + std::to_string(data.samples) +
                          " samples of data, missing calls " + std::to_string(missing.num_rows) +
                          " x " + std::to_string(missing.num_cols) + ", genotypes " +
                          std::to_string(n) + " x " + std::to_string(m));
  const auto groups = association_groups(data);
  LinearAssociationResult result;
  result.resize(m, data.phenotypes);
  for (const auto& group : groups) {
    if (group.size == 0) {
      for (auto p : group.phenotypes)
        for (std::int64_t j = 0; j < m; ++j)
          result.status[j * data.phenotypes + p] = AssociationStatus::too_few_observations;
      continue;
    }
    const std::int64_t w = group.width(data);
    const auto operands = group.operands(data);
    matrix Y("kcla::assoc::operands", n, w), Z("kcla::assoc::products", m, w);
    auto Yh = Kokkos::create_mirror_view(Y);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t c = 0; c < w; ++c) Yh(i, c) = static_cast<Scalar>(operands[i * w + c]);
    Kokkos::deep_copy(exec, Y, Yh);
    left_product(Y, Z);
    std::vector<double> squares = square_sums(group.included);
    auto Zh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Z);
    std::vector<double> products(static_cast<std::size_t>(m * w));
    for (std::int64_t j = 0; j < m; ++j)
      for (std::int64_t c = 0; c < w; ++c) products[j * w + c] = static_cast<double>(Zh(j, c));
    linear_association_statistics(data, missing, group, products, squares, options, result);
  }
  return result;
}

}  // namespace detail

/// Scalar: the precision of the products (double unless speed matters more than the last
/// digits: the sums are of up to samples x 2 terms). Phenotypes no group includes any
/// sample of get status too_few_observations.
template <class Scalar, class ExecutionSpace>
LinearAssociationResult linear_association(const ExecutionSpace& exec, const Grammar& g,
                                           const MissingCalls& missing,
                                           const LinearAssociationData& data,
                                           const LinearAssociationOptions& options = {}) {
  using memory = typename ExecutionSpace::memory_space;
  using matrix = Kokkos::View<Scalar**, Kokkos::LayoutRight, memory>;
  GrammarMatrixOptions o;
  o.products = GrammarProducts::transpose;
  o.expected_vectors = 1 + data.covariates + data.phenotypes;
  // Built after the checks: a mismatched call fails before any upload.
  std::unique_ptr<GrammarMatrix<Scalar, memory>> G, G2;
  return detail::linear_association_scan<Scalar>(
      exec, g.num_rows, g.num_cols, missing, data, options,
      [&](const matrix& Y, const matrix& Z) {
        if (!G) G = std::make_unique<GrammarMatrix<Scalar, memory>>(g, o);
        multiply_transpose(exec, *G, Y, Z);
      },
      [&](const std::vector<char>& included) {
        // On host back ends one pass over the grammar in double is cheaper than a second
        // product (HLC, 2 cores: the scan 3.2 -> 2.9 s); on a device the same schedule with
        // its values squared, times the included samples' indicator, keeps it on the GPU.
        if (Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory>::accessible)
          return column_square_sums(g, included);
        if (!G2) G2 = std::make_unique<GrammarMatrix<Scalar, memory>>(G->squared_coefficients());
        const std::int64_t n = g.num_rows, m = g.num_cols;
        matrix one("kcla::assoc::included", n, 1), q("kcla::assoc::squares", m, 1);
        auto oh = Kokkos::create_mirror_view(one);
        for (std::int64_t i = 0; i < n; ++i) oh(i, 0) = static_cast<Scalar>(included[i] ? 1 : 0);
        Kokkos::deep_copy(exec, one, oh);
        multiply_transpose(exec, *G2, one, q);
        auto qh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), q);
        std::vector<double> squares(static_cast<std::size_t>(m));
        for (std::int64_t j = 0; j < m; ++j) squares[j] = static_cast<double>(qh(j, 0));
        return squares;
      });
}

/// The same over a block grammar holding every block (a panel compressed with
/// --block-cols); `block_options` as for BlockGrammarMatrix (resident blocks: the scan's
/// left products need every block's transpose schedule). The squared counts come from one
/// host pass per block (column_square_sums).
template <class Scalar, class ExecutionSpace>
LinearAssociationResult linear_association(const ExecutionSpace& exec, const BlockGrammar& g,
                                           const MissingCalls& missing,
                                           const LinearAssociationData& data,
                                           const LinearAssociationOptions& options = {},
                                           const BlockMatrixOptions& block_options = {}) {
  using memory = typename ExecutionSpace::memory_space;
  using matrix = Kokkos::View<Scalar**, Kokkos::LayoutRight, memory>;
  g.require_complete("kcla::linear_association");
  GrammarMatrixOptions o;
  o.products = GrammarProducts::transpose;
  o.expected_vectors = 1 + data.covariates + data.phenotypes;
  std::unique_ptr<BlockGrammarMatrix<Scalar, memory>> G;
  return detail::linear_association_scan<Scalar>(
      exec, g.num_rows(), g.num_cols(), missing, data, options,
      [&](const matrix& Y, const matrix& Z) {
        if (!G) G = std::make_unique<BlockGrammarMatrix<Scalar, memory>>(g, o, block_options);
        multiply_transpose(exec, *G, Y, Z);
      },
      [&](const std::vector<char>& included) { return column_square_sums(g, included); });
}

}  // namespace kcla
