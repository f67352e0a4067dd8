// Marginal linear association scan on a genotype grammar (kcla/linear_association.hpp):
// per group of phenotypes with the same included samples, one batched left product
// G^T [1 C Y] (intercept, covariates, phenotypes) on the device and one of the squared
// matrix (the same schedule, values squared) with the intercept column; the per-variant
// least-squares statistics follow on the host from those sums and the missing calls.
//
//   LinearAssociationData d;  // phenotypes and covariates, NaN = missing
//   auto r = kcla::linear_association<double>(exec, grammar, plink.missing, d);
//   r.beta[j * d.phenotypes + p], r.p_value[...], r.status[...]
#pragma once

#include <kcla/grammar_matrix.hpp>
#include <kcla/grammar_multiply.hpp>
#include <kcla/linear_association.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <vector>

namespace kcla {

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
  data.validate();
  missing.validate("kcla::linear_association: missing calls");
  if (data.samples != g.num_rows || missing.num_rows != g.num_rows ||
      missing.num_cols != g.num_cols)
    throw InvalidArgument("kcla::linear_association: " + std::to_string(data.samples) +
                          " samples of data, missing calls " + std::to_string(missing.num_rows) +
                          " x " + std::to_string(missing.num_cols) + ", genotypes " +
                          std::to_string(g.num_rows) + " x " + std::to_string(g.num_cols));
  const auto groups = association_groups(data);
  LinearAssociationResult result;
  result.resize(g.num_cols, data.phenotypes);
  GrammarMatrixOptions o;
  o.products = GrammarProducts::transpose;
  o.expected_vectors = 1 + data.covariates + data.phenotypes;
  const GrammarMatrix<Scalar, memory> G(g, o);
  const auto G2 = G.squared_coefficients();  // the same schedule, values squared
  const std::int64_t n = g.num_rows, m = g.num_cols;
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
    matrix one("kcla::assoc::included", n, 1), q("kcla::assoc::squares", m, 1);
    auto Yh = Kokkos::create_mirror_view(Y);
    auto oh = Kokkos::create_mirror_view(one);
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t c = 0; c < w; ++c) Yh(i, c) = static_cast<Scalar>(operands[i * w + c]);
      oh(i, 0) = static_cast<Scalar>(group.included[i] ? 1 : 0);
    }
    Kokkos::deep_copy(exec, Y, Yh);
    Kokkos::deep_copy(exec, one, oh);
    multiply_transpose(exec, G, Y, Z);
    multiply_transpose(exec, G2, one, q);
    auto Zh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Z);
    auto qh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), q);
    std::vector<double> products(static_cast<std::size_t>(m * w)), squares(m);
    for (std::int64_t j = 0; j < m; ++j) {
      for (std::int64_t c = 0; c < w; ++c) products[j * w + c] = static_cast<double>(Zh(j, c));
      squares[j] = static_cast<double>(qh(j, 0));
    }
    linear_association_statistics(data, missing, group, products, squares, options, result);
  }
  return result;
}

}  // namespace kcla
