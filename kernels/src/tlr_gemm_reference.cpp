// The reference backend: every stage of a plan as plain serial loops (one multiply-add at
// a time, summed in double, rounded to the storage type on store). Obviously correct and
// slow; the BLAS and cuBLAS backends are tested against it.
#include <kcla/detail/tlr_gemm_backend.hpp>
#include <kcla/detail/tlr_host_driver.hpp>

namespace kcla::detail {

namespace {

void reference_gemm(ScalarKind kind, bool ta, bool tb, int m, int n, int k, double alpha,
                    const void* a, std::int64_t lda, const void* b, std::int64_t ldb, double beta,
                    void* c, std::int64_t ldc) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double sum = 0;
      for (int l = 0; l < k; ++l) {
        const double x = load(kind, a, ta ? l + i * lda : i + l * lda);
        const double y = load(kind, b, tb ? j + l * ldb : l + j * ldb);
        sum += x * y;
      }
      const std::int64_t e = i + j * ldc;
      store(kind, c, e, beta == 0 ? alpha * sum : alpha * sum + beta * load(kind, c, e));
    }
}

}  // namespace

void tlr_execute_reference(const TlrGemmPlan& plan, const TlrBuffers& buffers, double alpha,
                           double beta) {
  const auto& d = plan.data();
  const std::size_t es = d.element_bytes;
  walk_host_plan(plan, buffers, beta, [&](const TlrStage& stage, const TlrBuffers& buf, bool last) {
    const double al = last ? alpha : 1.0, be = last ? beta : 0.0;
    for (const auto& g : stage.groups)
      for (int t = g.first; t < g.first + g.count; ++t) {
        const auto& task = stage.tasks[t];
        reference_gemm(d.scalar, g.trans_a, g.trans_b, g.m, g.n, g.k, al,
                       buf.at(g.a, task.a_off, task.a_col, es), buf.leading_dim(g.a, g.lda),
                       buf.at(g.b, task.b_off, task.b_col, es), buf.leading_dim(g.b, g.ldb), be,
                       buf.at(g.c, task.c_off, task.c_col, es), buf.leading_dim(g.c, g.ldc));
      }
  });
}

}  // namespace kcla::detail
