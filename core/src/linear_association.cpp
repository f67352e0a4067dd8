#include <kcla/error.hpp>
#include <kcla/linear_association.hpp>
#include <kcla/student_t.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace kcla {

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// Cholesky factor of the leading n x n block of a (row-major, stride ld) into l (n x n,
// lower, row-major). False when the block is not numerically positive definite.
bool cholesky(const double* a, std::int64_t ld, std::int64_t n, std::vector<double>& l) {
  l.assign(static_cast<std::size_t>(n * n), 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j <= i; ++j) {
      double s = a[i * ld + j];
      for (std::int64_t k = 0; k < j; ++k) s -= l[i * n + k] * l[j * n + k];
      if (i == j) {
        // Relative to the diagonal entry: a covariate that the others reproduce leaves
        // only rounding behind.
        if (!(s > 1e-10 * std::max(a[i * ld + i], 1e-300))) return false;
        l[i * n + i] = std::sqrt(s);
      } else {
        l[i * n + j] = s / l[j * n + j];
      }
    }
  }
  return true;
}

// z = L^{-1} b (forward substitution).
void forward(const std::vector<double>& l, std::int64_t n, const double* b, double* z) {
  for (std::int64_t i = 0; i < n; ++i) {
    double s = b[i];
    for (std::int64_t k = 0; k < i; ++k) s -= l[i * n + k] * z[k];
    z[i] = s / l[i * n + i];
  }
}

}  // namespace

void LinearAssociationData::validate() const {
  if (samples < 0 || phenotypes < 0 || covariates < 0)
    throw InvalidArgument("linear association: negative dimension");
  if (static_cast<std::int64_t>(phenotype_values.size()) != samples * phenotypes)
    throw InvalidArgument("linear association: phenotype values are not samples x phenotypes");
  if (static_cast<std::int64_t>(covariate_values.size()) != samples * covariates)
    throw InvalidArgument("linear association: covariate values are not samples x covariates");
  for (double v : phenotype_values)
    if (std::isinf(v)) throw InvalidArgument("linear association: an infinite phenotype value");
  for (double v : covariate_values)
    if (std::isinf(v)) throw InvalidArgument("linear association: an infinite covariate value");
}

const char* to_string(AssociationStatus s) {
  switch (s) {
    case AssociationStatus::ok:
      return ".";
    case AssociationStatus::constant_genotype:
      return "CONST_OMITTED_ALLELE";
    case AssociationStatus::collinear:
      return "VIF_INFINITE";
    case AssociationStatus::too_few_observations:
      return "SAMPLE_CT<=COVAR_CT";
    case AssociationStatus::skipped:
      return "SKIPPED";
  }
  return "?";
}

void LinearAssociationResult::resize(std::int64_t v, std::int64_t p) {
  variants = v;
  phenotypes = p;
  const auto n = static_cast<std::size_t>(v * p);
  beta.assign(n, nan);
  standard_error.assign(n, nan);
  t_statistic.assign(n, nan);
  p_value.assign(n, nan);
  observations.assign(n, 0);
  status.assign(n, AssociationStatus::skipped);
}

std::vector<AssociationGroup> association_groups(const LinearAssociationData& d) {
  d.validate();
  std::vector<char> covariates_present(static_cast<std::size_t>(d.samples), 1);
  for (std::int64_t i = 0; i < d.samples; ++i)
    for (std::int64_t c = 0; c < d.covariates; ++c)
      if (std::isnan(d.covariate_values[i * d.covariates + c])) covariates_present[i] = 0;
  std::map<std::vector<char>, std::size_t> by_mask;
  std::vector<AssociationGroup> groups;
  for (std::int64_t p = 0; p < d.phenotypes; ++p) {
    std::vector<char> included(covariates_present);
    for (std::int64_t i = 0; i < d.samples; ++i)
      if (std::isnan(d.phenotype_values[i * d.phenotypes + p])) included[i] = 0;
    auto it = by_mask.find(included);
    if (it == by_mask.end()) {
      AssociationGroup g;
      g.size = std::count(included.begin(), included.end(), 1);
      g.included = included;
      it = by_mask.emplace(std::move(included), groups.size()).first;
      groups.push_back(std::move(g));
    }
    groups[it->second].phenotypes.push_back(p);
  }
  return groups;
}

std::vector<double> AssociationGroup::operands(const LinearAssociationData& d) const {
  const std::int64_t w = width(d), n = d.samples;
  // Column j of the operands reads sample i's value through `value`.
  auto value = [&](std::int64_t i, std::int64_t j) {
    if (j == 0) return 1.0;
    if (j <= d.covariates) return d.covariate_values[i * d.covariates + (j - 1)];
    return d.phenotype_values[i * d.phenotypes + phenotypes[j - 1 - d.covariates]];
  };
  std::vector<double> mean(static_cast<std::size_t>(w), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    if (included[i])
      for (std::int64_t j = 1; j < w; ++j) mean[j] += value(i, j);
  for (std::int64_t j = 1; j < w; ++j)
    mean[j] /= static_cast<double>(std::max<std::int64_t>(size, 1));
  std::vector<double> o(static_cast<std::size_t>(n * w), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    if (included[i])
      for (std::int64_t j = 0; j < w; ++j) o[i * w + j] = value(i, j) - mean[j];
  return o;
}

void linear_association_statistics(const LinearAssociationData& d, const MissingCalls& missing,
                                   const AssociationGroup& group,
                                   const std::vector<double>& gt_operands,
                                   const std::vector<double>& square_sums,
                                   const LinearAssociationOptions& options,
                                   LinearAssociationResult& result) {
  const std::int64_t n = d.samples, m = missing.num_cols, w = group.width(d);
  const std::int64_t c1 = 1 + d.covariates, np = static_cast<std::int64_t>(group.phenotypes.size());
  if (missing.num_rows != n)
    throw InvalidArgument("linear association: missing calls have " +
                          std::to_string(missing.num_rows) + " samples, the data " +
                          std::to_string(n));
  if (static_cast<std::int64_t>(gt_operands.size()) != m * w ||
      static_cast<std::int64_t>(square_sums.size()) != m)
    throw InvalidArgument("linear association: products are not variants x operands");
  if (result.variants != m || result.phenotypes != d.phenotypes)
    throw InvalidArgument("linear association: the result is not variants x phenotypes");
  const auto o = group.operands(d);
  // The Gram matrix of the operands over the included samples.
  std::vector<double> gram(static_cast<std::size_t>(w * w), 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    if (!group.included[i]) continue;
    const double* oi = &o[i * w];
    for (std::int64_t a = 0; a < w; ++a)
      for (std::int64_t b = 0; b <= a; ++b) gram[a * w + b] += oi[a] * oi[b];
  }
  for (std::int64_t a = 0; a < w; ++a)
    for (std::int64_t b = a + 1; b < w; ++b) gram[a * w + b] = gram[b * w + a];
  // Missing calls among the included samples, by variant.
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(m) + 1, 0);
  for (std::int64_t i = 0; i < n; ++i)
    if (group.included[i])
      for (auto k = missing.row_offsets[i]; k < missing.row_offsets[i + 1]; ++k)
        ++offsets[missing.columns[k] + 1];
  for (std::int64_t j = 0; j < m; ++j) offsets[j + 1] += offsets[j];
  std::vector<std::int64_t> absent(static_cast<std::size_t>(offsets[m]));
  {
    std::vector<std::int64_t> fill(offsets.begin(), offsets.end() - 1);
    for (std::int64_t i = 0; i < n; ++i)
      if (group.included[i])
        for (auto k = missing.row_offsets[i]; k < missing.row_offsets[i + 1]; ++k)
          absent[fill[missing.columns[k]]++] = i;
  }
  // Without missing calls every variant shares the covariates' factor and projections.
  std::vector<double> l0, e0(static_cast<std::size_t>(np * c1));
  const bool covariates_ok = cholesky(gram.data(), w, c1, l0);
  if (covariates_ok)
    for (std::int64_t p = 0; p < np; ++p) {
      std::vector<double> u(static_cast<std::size_t>(c1));
      for (std::int64_t a = 0; a < c1; ++a) u[a] = gram[a * w + c1 + p];
      forward(l0, c1, u.data(), &e0[p * c1]);
    }
  std::vector<double> gram_j, l_j, e_j(static_cast<std::size_t>(np * c1)), z(c1), u(c1);
  for (std::int64_t j = 0; j < m; ++j) {
    const std::int64_t dropped = offsets[j + 1] - offsets[j];
    const std::int64_t obs = group.size - dropped;
    const std::vector<double>* l = &l0;
    const std::vector<double>* e = &e0;
    const std::vector<double>* g = &gram;
    bool factor_ok = covariates_ok;
    if (dropped > 0) {
      gram_j = gram;
      for (auto k = offsets[j]; k < offsets[j + 1]; ++k) {
        const double* oi = &o[absent[k] * w];
        for (std::int64_t a = 0; a < w; ++a)
          for (std::int64_t b = 0; b < w; ++b) gram_j[a * w + b] -= oi[a] * oi[b];
      }
      factor_ok = cholesky(gram_j.data(), w, c1, l_j);
      if (factor_ok)
        for (std::int64_t p = 0; p < np; ++p) {
          for (std::int64_t a = 0; a < c1; ++a) u[a] = gram_j[a * w + c1 + p];
          forward(l_j, c1, u.data(), &e_j[p * c1]);
        }
      l = &l_j;
      e = &e_j;
      g = &gram_j;
    }
    const double* gt = &gt_operands[j * w];
    const double gg = square_sums[j];
    // Sum of squares of g about its mean over the included samples with a call.
    const double centered = obs > 0 ? gg - gt[0] * gt[0] / static_cast<double>(obs) : 0.0;
    AssociationStatus status = AssociationStatus::ok;
    double s = 0;
    if (obs <= 0 || !(centered > 1e-9 * std::max(gg, 1.0))) {
      status = AssociationStatus::constant_genotype;
    } else if (!factor_ok) {
      status = AssociationStatus::collinear;
    } else {
      forward(*l, c1, gt, z.data());
      s = gg;
      for (std::int64_t a = 0; a < c1; ++a) s -= z[a] * z[a];
      if (!(s > 0) || centered / s > options.max_vif) status = AssociationStatus::collinear;
    }
    const double df = static_cast<double>(obs - c1 - 1);
    if (status == AssociationStatus::ok && !(df > 0))
      status = AssociationStatus::too_few_observations;
    for (std::int64_t p = 0; p < np; ++p) {
      const std::int64_t at = j * d.phenotypes + group.phenotypes[p];
      result.observations[at] = obs;
      result.status[at] = status;
      if (status != AssociationStatus::ok) continue;
      const double* ep = &(*e)[p * c1];
      double ze = 0, ee = 0;
      for (std::int64_t a = 0; a < c1; ++a) ze += z[a] * ep[a], ee += ep[a] * ep[a];
      const double yy = (*g)[(c1 + p) * w + c1 + p];
      const double beta = (gt[c1 + p] - ze) / s;
      const double rss = std::max(yy - ee - beta * beta * s, 0.0);
      const double se = std::sqrt(rss / df / s);
      const double t = beta / se;
      result.beta[at] = beta;
      result.standard_error[at] = se;
      result.t_statistic[at] = t;
      result.p_value[at] = student_t_two_sided_p(t, df);
    }
  }
}

}  // namespace kcla
