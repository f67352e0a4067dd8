#include <kcla/synthetic.hpp>

#include <random>
#include <vector>

namespace kcla {

CsrMatrix<double> synthetic_genotype_panel(std::int64_t individuals, std::int64_t snps,
                                           const SyntheticPanelOptions& options) {
  if (individuals < 0 || snps < 0 || snps > INT32_MAX || options.founders < 1)
    throw InvalidArgument("synthetic_genotype_panel: bad shape or founder count");
  std::mt19937_64 gen(options.seed);
  std::bernoulli_distribution allele(options.allele_frequency), switch_here(options.switch_rate);
  std::uniform_int_distribution<int> pick(0, options.founders - 1);
  std::vector<std::vector<std::uint8_t>> founder(
      static_cast<std::size_t>(options.founders),
      std::vector<std::uint8_t>(static_cast<std::size_t>(snps)));
  for (auto& f : founder)
    for (auto& a : f) a = allele(gen);
  CsrMatrix<double> g;
  g.num_rows = individuals;
  g.num_cols = snps;
  for (std::int64_t r = 0; r < individuals; ++r) {
    int h1 = pick(gen), h2 = pick(gen);
    for (std::int64_t c = 0; c < snps; ++c) {
      if (switch_here(gen)) h1 = pick(gen);
      if (switch_here(gen)) h2 = pick(gen);
      if (const int v = founder[h1][c] + founder[h2][c]) {
        g.column_indices.push_back(static_cast<std::int32_t>(c));
        g.values.push_back(v);
      }
    }
    g.row_offsets.push_back(g.nnz());
  }
  return g;
}

}  // namespace kcla
