// An independent cross-check of the cuSPARSE SpMV figures of kcla_bench_baselines: the same
// CSR (decompressed from a grammar file), but plain cudaMalloc arrays, raw CUDA runtime and
// cuSPARSE calls, no Kokkos and none of kcla's baseline code. Every CSR SpMV algorithm with
// and without one untimed cusparseSpMV_preprocess, descriptors made once; also the matrix
// stored transposed (CSR of Gᵀ, op = transpose) and with 64-bit indices, the forms a user
// might hold instead, and the int32 form again after cudaDeviceSetCacheConfig(
// cudaFuncCachePreferShared), the device-wide setting Kokkos 3.4's initialization makes. Per row:
// per-call median of N products with events around each (hot L2), mean of N back-to-back products
// between two events, and the GB/s over the CSR bytes (+ x, y). If these agree with the baseline
// suite's, its cuSPARSE figures are what cuSPARSE gives on this matrix.
//
//   kcla_bench_cusparse_check [--repeat N] A.h5 ...
#include <kcla/hdf5_grammar.hpp>

#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

void cuda_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "kcla_bench_cusparse_check: %s: %s\n", what, cudaGetErrorString(status));
    std::exit(2);
  }
}

void sparse_check(cusparseStatus_t status, const char* what) {
  if (status != CUSPARSE_STATUS_SUCCESS) {
    std::fprintf(stderr, "kcla_bench_cusparse_check: %s: %s\n", what,
                 cusparseGetErrorString(status));
    std::exit(2);
  }
}

template <class T>
T* upload(const std::vector<T>& host) {
  T* device = nullptr;
  cuda_check(cudaMalloc(&device, std::max<std::size_t>(1, host.size()) * sizeof(T)), "cudaMalloc");
  cuda_check(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice),
             "cudaMemcpy");
  return device;
}

/// One stored form of the matrix on the device.
struct DeviceCsr {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  bool indices64 = false;  // offsets and column indices (cuSPARSE takes no mix)
  void* offsets = nullptr;
  void* columns = nullptr;
  float* values = nullptr;
  std::int64_t bytes() const {
    const std::int64_t index = indices64 ? 8 : 4;
    return (rows + 1) * index + nnz * (index + 4);
  }
};

DeviceCsr to_device(const kcla::CsrMatrix<double>& a, bool indices64) {
  DeviceCsr d;
  d.rows = a.num_rows;
  d.cols = a.num_cols;
  d.nnz = a.nnz();
  d.indices64 = indices64;
  if (indices64) {
    d.offsets = upload(a.row_offsets);
    d.columns = upload(std::vector<std::int64_t>(a.column_indices.begin(), a.column_indices.end()));
  } else {
    d.offsets = upload(std::vector<int>(a.row_offsets.begin(), a.row_offsets.end()));
    d.columns = upload(a.column_indices);
  }
  d.values = upload(std::vector<float>(a.values.begin(), a.values.end()));
  return d;
}

void release(DeviceCsr& d) {
  cudaFree(d.offsets);
  cudaFree(d.columns);
  cudaFree(d.values);
}

kcla::CsrMatrix<double> transpose(const kcla::CsrMatrix<double>& a) {
  kcla::CsrMatrix<double> t;
  t.num_rows = a.num_cols;
  t.num_cols = a.num_rows;
  t.row_offsets.assign(static_cast<std::size_t>(t.num_rows) + 1, 0);
  for (auto c : a.column_indices) ++t.row_offsets[static_cast<std::size_t>(c) + 1];
  for (std::size_t i = 1; i < t.row_offsets.size(); ++i) t.row_offsets[i] += t.row_offsets[i - 1];
  t.column_indices.resize(a.column_indices.size());
  t.values.resize(a.values.size());
  auto next = t.row_offsets;
  for (std::int64_t r = 0; r < a.num_rows; ++r)
    for (auto k = a.row_offsets[static_cast<std::size_t>(r)];
         k < a.row_offsets[static_cast<std::size_t>(r) + 1]; ++k) {
      const auto c = static_cast<std::size_t>(a.column_indices[static_cast<std::size_t>(k)]);
      const auto at = static_cast<std::size_t>(next[c]++);
      t.column_indices[at] = static_cast<int>(r);
      t.values[at] = a.values[static_cast<std::size_t>(k)];
    }
  return t;
}

struct Timing {
  double median_ms = 0, back_to_back_ms = 0;
};

/// y = op(A) x with one algorithm; returns the timings and checks y against `expected`.
Timing measure(cusparseHandle_t handle, cudaStream_t stream, const DeviceCsr& d, bool transposed,
               cusparseSpMVAlg_t alg, bool preprocess, const float* x, float* y,
               const std::vector<float>& expected, int repeat, double* error) {
  const auto index = d.indices64 ? CUSPARSE_INDEX_64I : CUSPARSE_INDEX_32I;
  cusparseSpMatDescr_t A = nullptr;
  sparse_check(cusparseCreateCsr(&A, d.rows, d.cols, d.nnz, d.offsets, d.columns, d.values, index,
                                 index, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
               "cusparseCreateCsr");
  const auto op = transposed ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE;
  const std::int64_t in = transposed ? d.rows : d.cols, out = transposed ? d.cols : d.rows;
  cusparseDnVecDescr_t X = nullptr, Y = nullptr;
  sparse_check(cusparseCreateDnVec(&X, in, const_cast<float*>(x), CUDA_R_32F), "DnVec x");
  sparse_check(cusparseCreateDnVec(&Y, out, y, CUDA_R_32F), "DnVec y");
  const float one = 1, zero = 0;
  std::size_t bytes = 0;
  sparse_check(cusparseSpMV_bufferSize(handle, op, &one, A, X, &zero, Y, CUDA_R_32F, alg, &bytes),
               "cusparseSpMV_bufferSize");
  void* workspace = nullptr;
  cuda_check(cudaMalloc(&workspace, std::max<std::size_t>(bytes, 1)), "cudaMalloc(workspace)");
  if (preprocess)
    sparse_check(
        cusparseSpMV_preprocess(handle, op, &one, A, X, &zero, Y, CUDA_R_32F, alg, workspace),
        "cusparseSpMV_preprocess");
  auto product = [&] {
    sparse_check(cusparseSpMV(handle, op, &one, A, X, &zero, Y, CUDA_R_32F, alg, workspace),
                 "cusparseSpMV");
  };
  for (int i = 0; i < 3; ++i) product();  // warm-up
  cudaEvent_t start, stop;
  cuda_check(cudaEventCreate(&start), "cudaEventCreate");
  cuda_check(cudaEventCreate(&stop), "cudaEventCreate");
  std::vector<float> per_call;
  for (int i = 0; i < repeat; ++i) {
    cuda_check(cudaEventRecord(start, stream), "cudaEventRecord");
    product();
    cuda_check(cudaEventRecord(stop, stream), "cudaEventRecord");
    cuda_check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    per_call.push_back(ms);
  }
  std::sort(per_call.begin(), per_call.end());
  Timing t;
  t.median_ms = per_call[per_call.size() / 2];
  cuda_check(cudaEventRecord(start, stream), "cudaEventRecord");
  for (int i = 0; i < repeat; ++i) product();
  cuda_check(cudaEventRecord(stop, stream), "cudaEventRecord");
  cuda_check(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float total = 0;
  cuda_check(cudaEventElapsedTime(&total, start, stop), "cudaEventElapsedTime");
  t.back_to_back_ms = total / repeat;
  std::vector<float> got(expected.size());
  cuda_check(cudaMemcpy(got.data(), y, got.size() * sizeof(float), cudaMemcpyDeviceToHost),
             "cudaMemcpy(y)");
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    diff +=
        (static_cast<double>(got[i]) - expected[i]) * (static_cast<double>(got[i]) - expected[i]);
    norm += static_cast<double>(expected[i]) * expected[i];
  }
  *error = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(workspace);
  cusparseDestroyDnVec(X);
  cusparseDestroyDnVec(Y);
  cusparseDestroySpMat(A);
  return t;
}

void run_file(const std::string& path, int repeat) {
  const auto a = kcla::read_grammar_hdf5(path).decompress();
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> x(static_cast<std::size_t>(a.num_cols));
  for (auto& v : x) v = dist(gen);
  std::vector<float> expected(static_cast<std::size_t>(a.num_rows));
  for (std::int64_t r = 0; r < a.num_rows; ++r) {
    double s = 0;
    for (auto k = a.row_offsets[static_cast<std::size_t>(r)];
         k < a.row_offsets[static_cast<std::size_t>(r) + 1]; ++k)
      s += a.values[static_cast<std::size_t>(k)] *
           x[static_cast<std::size_t>(a.column_indices[static_cast<std::size_t>(k)])];
    expected[static_cast<std::size_t>(r)] = static_cast<float>(s);
  }
  std::printf("%s: %lld x %lld, %lld nonzeros\n", path.c_str(), static_cast<long long>(a.num_rows),
              static_cast<long long>(a.num_cols), static_cast<long long>(a.nnz()));
  std::printf("  %-44s %12s %12s %9s %9s\n", "form / algorithm", "median ms", "b2b ms", "GB/s",
              "rel.err");
  float* dx = upload(x);
  float* dy = nullptr;
  cuda_check(cudaMalloc(&dy, expected.size() * sizeof(float)), "cudaMalloc(y)");
  cusparseHandle_t handle = nullptr;
  sparse_check(cusparseCreate(&handle), "cusparseCreate");
  cudaStream_t stream = nullptr;
  cuda_check(cudaStreamCreate(&stream), "cudaStreamCreate");
  sparse_check(cusparseSetStream(handle, stream), "cusparseSetStream");
  const std::pair<cusparseSpMVAlg_t, const char*> algorithms[] = {
      {CUSPARSE_SPMV_ALG_DEFAULT, "ALG_DEFAULT"},
      {CUSPARSE_SPMV_CSR_ALG1, "CSR_ALG1"},
      {CUSPARSE_SPMV_CSR_ALG2, "CSR_ALG2"}};
  struct Form {
    const char* name;
    bool transposed, indices64, prefer_shared;
  };
  const Form forms[] = {{"CSR int32", false, false, false},
                        {"CSR int64", false, true, false},
                        {"CSR of G^T int32, op = T", true, false, false},
                        {"CSR int32, PreferShared", false, false, true}};
  for (const auto& form : forms) {
    cuda_check(cudaDeviceSetCacheConfig(form.prefer_shared ? cudaFuncCachePreferShared
                                                           : cudaFuncCachePreferNone),
               "cudaDeviceSetCacheConfig");
    DeviceCsr d = to_device(form.transposed ? transpose(a) : a, form.indices64);
    const double traffic =
        static_cast<double>(d.bytes()) + 4.0 * static_cast<double>(a.num_cols + a.num_rows);
    for (const auto& [alg, alg_name] : algorithms)
      for (const bool pre : {false, true}) {
        double error = 0;
        const auto t =
            measure(handle, stream, d, form.transposed, alg, pre, dx, dy, expected, repeat, &error);
        const std::string label =
            std::string(form.name) + " " + alg_name + (pre ? "+preprocess" : "");
        std::printf("  %-44s %12.4f %12.4f %9.1f %9.2e\n", label.c_str(), t.median_ms,
                    t.back_to_back_ms, traffic / (t.median_ms * 1e-3) / 1e9, error);
      }
    release(d);
  }
  cusparseDestroy(handle);
  cudaStreamDestroy(stream);
  cudaFree(dx);
  cudaFree(dy);
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 50;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "-h" || arg == "--help") {
      std::printf("usage: kcla_bench_cusparse_check [--repeat N] A.h5 ...\n");
      return 0;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "kcla_bench_cusparse_check: unknown option %s\n", arg.c_str());
      return 2;
    } else {
      files.push_back(arg);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: kcla_bench_cusparse_check [--repeat N] A.h5 ...\n");
    return 2;
  }
  try {
    for (const auto& f : files) run_file(f, repeat);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kcla_bench_cusparse_check: %s\n", e.what());
    return 1;
  }
  return 0;
}
