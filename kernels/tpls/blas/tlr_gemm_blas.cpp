// The host BLAS backend: stages 1 and 3 as BLAS GEMMs (OpenBLAS threads them), stage 2 as
// a loop over its tasks, spread over the host execution space's threads when the tasks
// are small. fp16/bf16 blocks are widened to float around sgemm.
#include <kcla/detail/single_threaded_blas.hpp>
#include <kcla/detail/tlr_gemm_backend.hpp>
#include <kcla/detail/tlr_host_driver.hpp>

#include <cblas.h>
#include <Kokkos_Core.hpp>

#include <vector>

namespace kcla::detail {

namespace {

void widen(ScalarKind kind, const void* p, std::int64_t ld, int rows, int cols,
           std::vector<float>& out) {
  out.resize(static_cast<std::size_t>(rows) * cols);
  for (int c = 0; c < cols; ++c)
    for (int r = 0; r < rows; ++r)
      out[r + static_cast<std::size_t>(c) * rows] = static_cast<float>(load(kind, p, r + c * ld));
}

void blas_gemm(ScalarKind kind, bool ta, bool tb, int m, int n, int k, double alpha, const void* a,
               int lda, const void* b, int ldb, double beta, void* c, int ldc) {
  const auto opa = ta ? CblasTrans : CblasNoTrans;
  const auto opb = tb ? CblasTrans : CblasNoTrans;
  switch (kind) {
    case ScalarKind::f64:
      cblas_dgemm(CblasColMajor, opa, opb, m, n, k, alpha, static_cast<const double*>(a), lda,
                  static_cast<const double*>(b), ldb, beta, static_cast<double*>(c), ldc);
      return;
    case ScalarKind::f32:
      cblas_sgemm(CblasColMajor, opa, opb, m, n, k, static_cast<float>(alpha),
                  static_cast<const float*>(a), lda, static_cast<const float*>(b), ldb,
                  static_cast<float>(beta), static_cast<float*>(c), ldc);
      return;
    default: {
      // 16-bit storage: widen the operands, multiply in fp32, round the result once.
      thread_local std::vector<float> fa, fb, fc;
      widen(kind, a, lda, ta ? k : m, ta ? m : k, fa);
      widen(kind, b, ldb, tb ? n : k, tb ? k : n, fb);
      if (beta != 0)
        widen(kind, c, ldc, m, n, fc);
      else
        fc.assign(static_cast<std::size_t>(m) * n, 0.0f);
      cblas_sgemm(CblasColMajor, opa, opb, m, n, k, static_cast<float>(alpha), fa.data(),
                  ta ? k : m, fb.data(), tb ? n : k, static_cast<float>(beta), fc.data(), m);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i)
          store(kind, c, i + static_cast<std::int64_t>(j) * ldc,
                fc[i + static_cast<std::size_t>(j) * m]);
      return;
    }
  }
}

}  // namespace

void tlr_execute_blas(const TlrGemmPlan& plan, const TlrBuffers& buffers, double alpha, double beta,
                      bool parallel) {
  const auto& d = plan.data();
  const std::size_t es = d.element_bytes;
  walk_host_plan(plan, buffers, beta, [&](const TlrStage& stage, const TlrBuffers& buf, bool last) {
    const double al = last ? alpha : 1.0, be = last ? beta : 0.0;
    auto run = [&](const TlrGemmGroup& g, int t) {
      const auto& task = stage.tasks[t];
      blas_gemm(d.scalar, g.trans_a, g.trans_b, g.m, g.n, g.k, al,
                buf.at(g.a, task.a_off, task.a_col, es), buf.leading_dim(g.a, g.lda),
                buf.at(g.b, task.b_off, task.b_col, es), buf.leading_dim(g.b, g.ldb), be,
                buf.at(g.c, task.c_off, task.c_col, es), buf.leading_dim(g.c, g.ldc));
    };
    for (const auto& g : stage.groups) {
      // Many small GEMMs: one per thread (each runs single-threaded inside BLAS). Large
      // ones: in order, BLAS threads each.
      const double task_flops = 2.0 * g.m * g.n * g.k;
      if (parallel && g.count >= 4 && task_flops < 2.0 * 128 * 128 * 128) {
        const SingleThreadedBlas one_blas_thread_per_task;
        Kokkos::parallel_for(
            "kcla::tlr::blas_stage",
            Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(g.first, g.first + g.count),
            [&](int t) { run(g, t); });
        Kokkos::DefaultHostExecutionSpace().fence();
      } else {
        for (int t = g.first; t < g.first + g.count; ++t) run(g, t);
      }
    }
  });
}

}  // namespace kcla::detail
