// Genotype panels for tests: calls 0, 1, 2 or missing, as a CSR matrix (missing = 0) and
// the MissingCalls beside it.
#pragma once

#include <kcla/csr_matrix.hpp>
#include <kcla/missing_calls.hpp>

#include <cstdint>
#include <random>
#include <vector>

namespace kcla::test {

constexpr int kMissing = -1;

struct Panel {
  std::int64_t rows = 0, cols = 0;
  std::vector<int> calls;  // rows x cols: 0, 1, 2 or kMissing
  kcla::CsrMatrix<double> matrix() const {
    kcla::CsrMatrix<double> a;
    a.num_rows = rows;
    a.num_cols = cols;
    for (std::int64_t i = 0; i < rows; ++i) {
      for (std::int64_t j = 0; j < cols; ++j)
        if (calls[i * cols + j] > 0) {
          a.column_indices.push_back(static_cast<std::int32_t>(j));
          a.values.push_back(calls[i * cols + j]);
        }
      a.row_offsets.push_back(a.nnz());
    }
    return a;
  }
  kcla::MissingCalls missing() const {
    auto m = kcla::MissingCalls::none(rows, cols);
    for (std::int64_t i = 0; i < rows; ++i) {
      for (std::int64_t j = 0; j < cols; ++j)
        if (calls[i * cols + j] == kMissing) m.columns.push_back(static_cast<std::int32_t>(j));
      m.row_offsets[i + 1] = m.count();
    }
    return m;
  }
};

// Haplotype-like panel (rows share segments, so the grammar has real rules), a few
// monomorphic variants and missing calls at rate `missing_rate`.
inline Panel random_panel(std::mt19937_64& gen, std::int64_t rows, std::int64_t cols,
                          double missing_rate) {
  Panel p;
  p.rows = rows;
  p.cols = cols;
  p.calls.resize(static_cast<std::size_t>(rows * cols));
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<std::vector<int>> founders(4, std::vector<int>(static_cast<std::size_t>(cols)));
  for (auto& f : founders)
    for (auto& v : f) v = u(gen) < 0.3 ? (u(gen) < 0.3 ? 2 : 1) : 0;
  for (std::int64_t i = 0; i < rows; ++i) {
    const auto& f = founders[gen() % founders.size()];
    for (std::int64_t j = 0; j < cols; ++j) {
      int v = u(gen) < 0.05 ? static_cast<int>(gen() % 3) : f[j];
      if (j % 17 == 3) v = 0;  // monomorphic (all 0 where present)
      if (u(gen) < missing_rate) v = kMissing;
      p.calls[i * cols + j] = v;
    }
  }
  return p;
}

}  // namespace kcla::test
