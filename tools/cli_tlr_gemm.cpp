// kcla tlr gemm: C = alpha op(A) op(B) + beta C with TLR operands, timed and verified
// (single process; under mpirun the SUMMA form in cli_tlr_grid.cpp).
#include "cli_common.hpp"
#include "cli_mpi.hpp"
#include "cli_tlr_grid.hpp"
#include "cli_tlr_support.hpp"

#include <kcla/config.hpp>
#include <kcla/dense_matrix_market.hpp>
#include <kcla/hdf5_tlr.hpp>
#include <kcla/tlr_compress.hpp>
#include <kcla/tlr_compress_randomized.hpp>
#include <kcla/tlr_gemm.hpp>
#include <kcla/tlr_random.hpp>
#include <kcla/tlr_to_dense.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <numeric>
#include <random>
#include <type_traits>

namespace kcla::cli {

namespace {

Command tlr_gemm_command() {
  Command c("kcla tlr gemm A.h5 [B.h5 | --dense-cols K] [options]",
            "C = alpha op(A) op(B) + beta C with A a kcla TLR file and B another one or a random "
            "dense matrix with K columns in op(B) (default K = 64); C is random, or read with "
            "--c. Timed over --repeat products (median); prints time, GFLOP/s executed, and the "
            "workspace.");
  c.positional("A.h5", "the TLR matrix A")
      .positional("B.h5", "a TLR matrix B (else B is dense and random)", false)
      .integer("--dense-cols", "K",
               "dense random B, op(B) of size k x K (without B.h5; default 64)", 1, 1 << 24)
      .flag("--transa", "op(A) = A^T")
      .flag("--transb", "op(B) = B^T")
      .real("--alpha", "A", "scalar alpha (default 1)")
      .real("--beta", "B", "scalar beta (default 0)")
      .text("--c", "FILE", "initial C (Matrix Market, m x n); default random")
      .choice("--precision", {"fp64", "fp32", "fp16", "bf16"},
              "compute in this precision (default: A's file precision; operands in other "
              "precisions are converted on reading)")
      .flag("--tf32", "fp32 storage, TF32 tensor-core math (CUDA; fp32 on the host)")
      .integer("--workspace", "BYTES", "workspace budget (default 0: see --rectangles)", 0)
      .integer("--rectangles", "N",
               "without --workspace: split C into at most N rectangles, pipelined (less "
               "workspace; default 1, all of C at once)",
               1, 1 << 20)
      .choice("--backend", {"cuda", "openmp", "serial"},
              "where the product runs (default: the build's default device)")
      .integer("--repeat", "N", "timed products (default 10; the median is reported)", 1, 1 << 24)
      .integer("--seed", "S", "random B and C (default 1)")
      .flag("--verify",
            "compare with alpha op(A) op(B) + beta C computed in double from the decompressed "
            "operands; exit 1 when the relative Frobenius error exceeds the precision's "
            "tolerance")
      .text("-o,--output", "FILE",
            "write the result C (one product from the initial C) as Matrix Market array")
      .text("--grid", "PxQ", "under mpirun: the process grid shape (P Q = N)")
      .footer(
          R"(Under mpirun -np N (N > 1) each rank of a P x Q grid reads its tiles of A (and B) and the
product runs SUMMA-style (panels of A broadcast along grid rows, of B along grid columns);
B and C are dense 2D block-cyclic in blocks of A's tile size, with the values one process
would draw. Times are the slowest rank's; the panel bytes received are printed next to the
SUMMA model. --verify and --output gather C on rank 0.)");
  return c;
}

struct GemmResult {
  std::int64_t m = 0, n = 0, k = 0;
  double median_seconds = 0, flops = 0;
  std::size_t workspace = 0;
  int rectangles = 0;
  double verify_error = -1, tolerance = 0;
  std::string a_desc, b_desc;
};

template <class Scalar, class Exec>
GemmResult run_gemm(const Arguments& args) {
  using memory = typename Exec::memory_space;
  using traits = TlrScalarTraits<Scalar>;
  const bool transa = args.has("transa"), transb = args.has("transb");
  const Op op_a = transa ? Op::T : Op::N, op_b = transb ? Op::T : Op::N;
  const double alpha = args.get_double("alpha", 1.0), beta = args.get_double("beta", 0.0);
  const auto seed = static_cast<std::uint64_t>(args.get_int("seed", 1));
  const auto repeat = std::max<std::int64_t>(1, args.get_int("repeat", 10));
  Exec exec;
  GemmResult res;

  const auto& files = args.positional();
  const auto a = read_tlr_hdf5<Scalar, memory>(files[0]);
  res.m = transa ? a.num_cols() : a.num_rows();
  res.k = transa ? a.num_rows() : a.num_cols();
  // Operands stored in another precision are converted on reading: say so.
  auto describe = [](const std::string& path) {
    const ScalarKind stored = read_tlr_hdf5_info(path).value_type;
    return stored == traits::kind ? path
                                  : path + " (" + to_string(stored) + ", converted on reading)";
  };
  res.a_desc = describe(files[0]);

  TlrGemmOptions options;
  options.workspace_bytes = static_cast<std::size_t>(args.get_int("workspace", 0));
  options.tuning.rectangles = static_cast<int>(args.get_int("rectangles", 0));
  if (args.has("tf32")) options.math = TlrMath::tf32;

  auto run = [&](const auto& b, std::int64_t b_rows, std::int64_t b_cols) {
    const std::int64_t bk = transb ? b_cols : b_rows;
    res.n = transb ? b_rows : b_cols;
    if (bk != res.k)
      throw InvalidArgument("op(A) is " + std::to_string(res.m) + " x " + std::to_string(res.k) +
                            " but op(B) has " + std::to_string(bk) + " rows");
    PaddedMatrix<Scalar, memory> c("kcla::cli::C", res.m, res.n), c0("kcla::cli::C0", res.m, res.n);
    if (args.has("c")) {
      const auto given = read_initial_c(args.get("c"), res.m, res.n);
      auto h = Kokkos::create_mirror_view(c0.full);
      for (std::int64_t col = 0; col < res.n; ++col)
        for (std::int64_t r = 0; r < res.m; ++r) h(r, col) = traits::narrow(given(r, col));
      Kokkos::deep_copy(c0.full, h);
    } else {
      fill_random(exec, c0.view, seed + 2);
    }
    Kokkos::deep_copy(exec, c.full, c0.full);
    const TlrGemmPlan plan = analyze(op_a, a, op_b, b, options);
    res.flops = plan.flops();
    res.workspace = plan.workspace_bytes();
    res.rectangles = plan.num_rectangles();
    gemm(exec, plan, a, b, alpha, beta, c.view);  // warm-up: backend state, workspace
    exec.fence();
    std::vector<double> times;
    for (std::int64_t r = 0; r < repeat; ++r) {
      const auto start = std::chrono::steady_clock::now();
      gemm(exec, plan, a, b, alpha, beta, c.view);
      exec.fence();
      times.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(times.begin(), times.end());
    res.median_seconds = times[times.size() / 2];
    if (!args.has("verify") && !args.has("output")) return;
    // One product from the initial C: what --output writes and --verify checks.
    Kokkos::deep_copy(exec, c.full, c0.full);
    gemm(exec, plan, a, b, alpha, beta, c.view);
    exec.fence();
    const DenseMatrix result = dense_to_host(c.view);
    if (args.has("output")) write_dense_matrix_market(args.get("output"), result);
    if (!args.has("verify")) return;
    const DenseMatrix ha = tlr_to_host(a);
    DenseMatrix hb;
    if constexpr (std::is_same<std::decay_t<decltype(b)>, TlrMatrix<Scalar, memory>>::value)
      hb = tlr_to_host(b);
    else
      hb = dense_to_host(b);
    DenseMatrix ref = dense_to_host(c0.view);
    res.verify_error = product_error(transa, transb, alpha, beta, ha, hb, ref, result);
    res.tolerance = product_tolerance(traits::kind, args.has("tf32"), res.k);
  };

  if (files.size() == 2) {
    const auto b = read_tlr_hdf5<Scalar, memory>(files[1]);
    res.b_desc = describe(files[1]);
    run(b, b.num_rows(), b.num_cols());
  } else {
    const auto cols = args.get_int("dense-cols", 64);
    const std::int64_t rows = transb ? cols : res.k, width = transb ? res.k : cols;
    PaddedMatrix<Scalar, memory> b("kcla::cli::B", rows, width);
    fill_random(exec, b.view, seed + 1);
    res.b_desc = "dense random " + std::to_string(rows) + " x " + std::to_string(width);
    run(b.view, rows, width);
  }
  return res;
}

template <class Scalar>
GemmResult dispatch_gemm(const std::string& backend, const Arguments& args) {
  GemmResult res;
  with_backend(backend, [&](const std::string& name) {
#if KCLA_HAVE_CUDA
    if (name == "cuda") res = run_gemm<Scalar, Kokkos::Cuda>(args);
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
    if (name == "openmp") res = run_gemm<Scalar, Kokkos::OpenMP>(args);
#endif
#if defined(KOKKOS_ENABLE_SERIAL)
    if (name == "serial") res = run_gemm<Scalar, Kokkos::Serial>(args);
#endif
    (void)name;
  });
  return res;
}

}  // namespace

int run_tlr_gemm(int argc, char** argv) {
  auto command = tlr_gemm_command();
  const auto args = command.parse(argc, argv, 3);
  if (args.has("help")) {
    std::cout << command.help();
    return ok;
  }
  if (args.has("grid") && mpi_ranks() < 2) throw UsageError("--grid goes with mpirun -np N, N > 1");
  const auto& files = args.positional();
  if (files.size() == 2 && args.has("dense-cols"))
    throw UsageError("give B.h5 or --dense-cols K, not both");
  const auto backend = args.get("backend");
  // The precision: A's file's unless --precision says otherwise.
  const auto info = read_tlr_hdf5_info(files[0]);
  const ScalarKind kind =
      args.has("precision") ? parse_precision(args.get("precision")) : info.value_type;
  if (args.has("tf32") && kind != ScalarKind::f32)
    throw UsageError("--tf32 needs fp32 (this product is " + std::string(to_string(kind)) + ")");
  if (mpi_ranks() > 1) return gemm_on_grid(args, kind, backend);
  GemmResult res;
  ScalarKind used = kind;
  with_scalar(kind, [&](auto tag) {
    using Scalar = typename decltype(tag)::type;
    used = TlrScalarTraits<Scalar>::kind;
    res = dispatch_gemm<Scalar>(backend, args);
  });
  std::string backend_name = backend;
  if (backend_name.empty()) with_backend("", [&](const std::string& n) { backend_name = n; });
  std::printf("tlr gemm: C (%lld x %lld) = %g op(A) op(B) + %g C, k = %lld, ops %s%s\n",
              static_cast<long long>(res.m), static_cast<long long>(res.n),
              args.get_double("alpha", 1.0), args.get_double("beta", 0.0),
              static_cast<long long>(res.k), args.has("transa") ? "T" : "N",
              args.has("transb") ? "T" : "N");
  std::printf("operands  A %s, B %s; precision %s%s; back end %s\n", res.a_desc.c_str(),
              res.b_desc.c_str(), precision_note(kind, used).c_str(),
              args.has("tf32") ? " (tf32 math)" : "", backend_name.c_str());
  const double dense_flops =
      2.0 * static_cast<double>(res.m) * static_cast<double>(res.n) * static_cast<double>(res.k);
  std::printf(
      "time      %.4f ms (median of %lld); %.2f GFLOP/s executed (%.3g GFLOP), %.2f GFLOP/s "
      "dense-equivalent\n",
      res.median_seconds * 1e3,
      static_cast<long long>(std::max<std::int64_t>(1, args.get_int("repeat", 10))),
      res.median_seconds > 0 ? res.flops / res.median_seconds / 1e9 : 0.0, res.flops / 1e9,
      res.median_seconds > 0 ? dense_flops / res.median_seconds / 1e9 : 0.0);
  std::printf("workspace %s (%zu bytes), %d rectangle%s\n",
              megabytes(static_cast<double>(res.workspace)).c_str(), res.workspace, res.rectangles,
              res.rectangles == 1 ? "" : "s");
  if (args.has("verify")) {
    const bool passed = res.verify_error <= res.tolerance;
    std::printf(
        "verify    relative Frobenius error vs dense double product %.3g (tolerance %.3g): %s\n",
        res.verify_error, res.tolerance, passed ? "OK" : "FAILED");
    if (!passed) return failure;
  }
  return ok;
}

}  // namespace kcla::cli
