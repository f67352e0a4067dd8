// The cuBLAS backend of the TLR product. Per rectangle: stage 1 (fused coupling GEMMs, one
// per k) and stage 2 (tasks writing in place into the terminal matrices) as one
// cublasGemmGroupedBatchedEx call each, stage 3 as one cublasGemmEx per tile row (right)
// or tile column (left). Pipelined plans run stages 1-2 on a second stream into the other
// workspace arena, so that they overlap stage 3 of the previous rectangle.
#include <kcla/config.hpp>

#if KCLA_HAVE_CUDA

#include <kcla/detail/tlr_gemm_backend.hpp>
#include <kcla/error.hpp>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace kcla::detail {

namespace {

void check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw BackendError(std::string("cuBLAS: ") + call +
                       " failed: " + cublasGetStatusString(status));
}

void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess)
    throw BackendError(std::string("CUDA: ") + call + " failed: " + cudaGetErrorString(status));
}

struct CublasTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
  bool double_scale;  // alpha/beta as double (fp64) or float (everything else)
};

CublasTypes types_for(ScalarKind kind, TlrMath math) {
  switch (kind) {
    case ScalarKind::f64:
      return {CUDA_R_64F, CUBLAS_COMPUTE_64F, true};
    case ScalarKind::f32:
      return {CUDA_R_32F, math == TlrMath::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
              false};
    case ScalarKind::f16:
      return {CUDA_R_16F, CUBLAS_COMPUTE_32F, false};
    default:
      return {CUDA_R_16BF, CUBLAS_COMPUTE_32F, false};
  }
}

__global__ void scale_kernel_f64(double* c, int rows, long long count, long long ld, double beta) {
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<long long>(gridDim.x) * blockDim.x) {
    double& x = c[e % rows + (e / rows) * ld];
    x = beta * x;
  }
}

__global__ void scale_kernel_f32(float* c, int rows, long long count, long long ld, float beta) {
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<long long>(gridDim.x) * blockDim.x) {
    float& x = c[e % rows + (e / rows) * ld];
    x = beta * x;
  }
}

__global__ void scale_kernel_f16(__half* c, int rows, long long count, long long ld, float beta) {
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<long long>(gridDim.x) * blockDim.x) {
    __half& x = c[e % rows + (e / rows) * ld];
    x = __float2half_rn(beta * __half2float(x));
  }
}

__global__ void scale_kernel_bf16(__nv_bfloat16* c, int rows, long long count, long long ld,
                                  float beta) {
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<long long>(gridDim.x) * blockDim.x) {
    __nv_bfloat16& x = c[e % rows + (e / rows) * ld];
    x = __float2bfloat16_rn(beta * __bfloat162float(x));
  }
}

/// rows x cols block at p (leading dimension ld elements): zero when beta == 0, else
/// scaled by beta.
void device_fill(ScalarKind kind, void* p, int rows, int cols, long long ld, double beta,
                 cudaStream_t stream) {
  if (beta == 1 || rows == 0 || cols == 0) return;
  const std::size_t es = element_bytes(kind);
  if (beta == 0) {
    check(cudaMemset2DAsync(p, static_cast<std::size_t>(ld) * es, 0,
                            static_cast<std::size_t>(rows) * es, static_cast<std::size_t>(cols),
                            stream),
          "cudaMemset2DAsync");
    return;
  }
  const long long count = static_cast<long long>(rows) * cols;
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<long long>((count + threads - 1) / threads, 4096));
  switch (kind) {
    case ScalarKind::f64:
      scale_kernel_f64<<<blocks, threads, 0, stream>>>(static_cast<double*>(p), rows, count, ld,
                                                       beta);
      break;
    case ScalarKind::f32:
      scale_kernel_f32<<<blocks, threads, 0, stream>>>(static_cast<float*>(p), rows, count, ld,
                                                       static_cast<float>(beta));
      break;
    case ScalarKind::f16:
      scale_kernel_f16<<<blocks, threads, 0, stream>>>(static_cast<__half*>(p), rows, count, ld,
                                                       static_cast<float>(beta));
      break;
    default:
      scale_kernel_bf16<<<blocks, threads, 0, stream>>>(static_cast<__nv_bfloat16*>(p), rows, count,
                                                        ld, static_cast<float>(beta));
      break;
  }
  check(cudaGetLastError(), "scale kernel launch");
}

/// The host-side arguments of one grouped call (one stage of one rectangle); its pointer
/// arrays live at ptr_offset (A), + count (B), + 2 count (C) of the device pointer array.
struct GroupedCall {
  std::vector<cublasOperation_t> trans_a, trans_b;
  std::vector<int> m, n, k, lda, ldb, ldc, size;
  std::vector<float> alpha_f, beta_f;
  std::vector<double> alpha_d, beta_d;
  std::size_t ptr_offset = 0;
  int count = 0;
};

class CublasRuntime : public TlrRuntime {
 public:
  CublasRuntime() {
    for (auto& h : handle) check(cublasCreate(&h), "cublasCreate");
    check(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaEventCreateWithFlags(&entry, cudaEventDisableTiming), "cudaEventCreate");
    for (int a = 0; a < 2; ++a) {
      check(cudaEventCreateWithFlags(&s12_done[a], cudaEventDisableTiming), "cudaEventCreate");
      check(cudaEventCreateWithFlags(&s3_done[a], cudaEventDisableTiming), "cudaEventCreate");
    }
  }
  ~CublasRuntime() override {
    // Work that reads the arenas or pointer arrays may still be queued.
    if (last_stream) cudaStreamSynchronize(last_stream);
    cudaStreamSynchronize(side);
    for (auto& h : handle) cublasDestroy(h);
    cudaEventDestroy(entry);
    for (int a = 0; a < 2; ++a) {
      cudaEventDestroy(s12_done[a]);
      cudaEventDestroy(s3_done[a]);
    }
    cudaStreamDestroy(side);
    if (arena) cudaFree(arena);
    if (device_ptrs) cudaFree(device_ptrs);
    if (host_ptrs) cudaFreeHost(host_ptrs);
  }
  CublasRuntime(const CublasRuntime&) = delete;
  CublasRuntime& operator=(const CublasRuntime&) = delete;

  void reserve_arena(std::size_t want) {
    if (want <= arena_bytes) return;
    if (arena) {
      check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      cudaFree(arena);
      arena = nullptr;
      arena_bytes = 0;
    }
    check(cudaMalloc(&arena, want), "cudaMalloc(TLR workspace)");
    arena_bytes = want;
  }

  void reserve_pointers(std::size_t want) {
    if (want <= ptr_capacity) return;
    if (device_ptrs) cudaFree(device_ptrs);
    if (host_ptrs) cudaFreeHost(host_ptrs);
    device_ptrs = nullptr;
    host_ptrs = nullptr;
    ptr_capacity = 0;
    check(cudaMalloc(reinterpret_cast<void**>(&device_ptrs), want * sizeof(void*)),
          "cudaMalloc(pointer arrays)");
    check(cudaMallocHost(reinterpret_cast<void**>(&host_ptrs), want * sizeof(void*)),
          "cudaMallocHost(pointer arrays)");
    ptr_capacity = want;
  }

  bool same_key(const TlrBuffers& b) const {
    return resolved_valid && std::memcmp(&b, &key, sizeof key) == 0 && key_arena == arena;
  }

  cublasHandle_t handle[2] = {nullptr, nullptr};
  cudaStream_t side = nullptr;
  cudaEvent_t entry = nullptr, s12_done[2] = {nullptr, nullptr}, s3_done[2] = {nullptr, nullptr};
  void* arena = nullptr;
  std::size_t arena_bytes = 0;
  void** device_ptrs = nullptr;
  void** host_ptrs = nullptr;
  std::size_t ptr_capacity = 0;
  std::vector<GroupedCall> calls;  // [2 * rectangle + stage - 1]
  TlrBuffers key;
  void* key_arena = nullptr;
  bool resolved_valid = false;
  cudaStream_t last_stream = nullptr;
};

GroupedCall describe(const TlrStage& stage, const TlrBuffers& buf, std::size_t es, void** host_ptrs,
                     std::size_t offset) {
  GroupedCall call;
  call.ptr_offset = offset;
  call.count = static_cast<int>(stage.tasks.size());
  const std::size_t count = stage.tasks.size();
  for (const auto& g : stage.groups) {
    call.trans_a.push_back(g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N);
    call.trans_b.push_back(g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N);
    call.m.push_back(g.m);
    call.n.push_back(g.n);
    call.k.push_back(g.k);
    call.lda.push_back(buf.leading_dim(g.a, g.lda));
    call.ldb.push_back(buf.leading_dim(g.b, g.ldb));
    call.ldc.push_back(buf.leading_dim(g.c, g.ldc));
    call.size.push_back(g.count);
    call.alpha_f.push_back(1.0f);
    call.beta_f.push_back(0.0f);
    call.alpha_d.push_back(1.0);
    call.beta_d.push_back(0.0);
    for (int t = g.first; t < g.first + g.count; ++t) {
      const auto& task = stage.tasks[t];
      host_ptrs[offset + t] = buf.at(g.a, task.a_off, task.a_col, es);
      host_ptrs[offset + count + t] = buf.at(g.b, task.b_off, task.b_col, es);
      host_ptrs[offset + 2 * count + t] = buf.at(g.c, task.c_off, task.c_col, es);
    }
  }
  return call;
}

void run_grouped(cublasHandle_t h, const GroupedCall& call, void** device_ptrs,
                 const CublasTypes& types) {
  if (call.count == 0) return;
  void** p = device_ptrs + call.ptr_offset;
  const void* alpha = types.double_scale ? static_cast<const void*>(call.alpha_d.data())
                                         : static_cast<const void*>(call.alpha_f.data());
  const void* beta = types.double_scale ? static_cast<const void*>(call.beta_d.data())
                                        : static_cast<const void*>(call.beta_f.data());
  check(cublasGemmGroupedBatchedEx(
            h, call.trans_a.data(), call.trans_b.data(), call.m.data(), call.n.data(),
            call.k.data(), alpha, const_cast<const void* const*>(p), types.data, call.lda.data(),
            const_cast<const void* const*>(p + call.count), types.data, call.ldb.data(), beta,
            p + 2 * call.count, types.data, call.ldc.data(), static_cast<int>(call.size.size()),
            call.size.data(), types.compute),
        "cublasGemmGroupedBatchedEx");
}

}  // namespace

void tlr_execute_cublas(const TlrGemmPlan& plan, const TlrBuffers& in, double alpha, double beta,
                        void* stream_handle) {
  auto& d = plan.mutable_data();
  auto* rt = dynamic_cast<CublasRuntime*>(d.runtime.get());
  if (!rt) {
    d.runtime = std::make_shared<CublasRuntime>();
    rt = static_cast<CublasRuntime*>(d.runtime.get());
  }
  const auto main = static_cast<cudaStream_t>(stream_handle);
  const std::size_t es = d.element_bytes;
  const CublasTypes types = types_for(d.scalar, d.options.math);
  const bool pipelined = d.num_arenas == 2;
  rt->reserve_arena(d.arena_bytes * static_cast<std::size_t>(d.num_arenas));
  auto arena_base = [&](int a) {
    return static_cast<void*>(static_cast<char*>(rt->arena) +
                              d.arena_bytes * static_cast<std::size_t>(a));
  };

  // Pointer arrays for the grouped calls: resolved once per set of buffer addresses and
  // uploaded in one copy; repeated products on the same data skip this.
  TlrBuffers buffers = in;
  buffers.set(TlrBuffer::workspace, nullptr);
  if (!rt->same_key(buffers)) {
    if (rt->resolved_valid && rt->last_stream)
      check(cudaStreamSynchronize(rt->last_stream), "cudaStreamSynchronize");
    std::size_t total = 0;
    for (const auto& r : d.rectangles) total += 3 * (r.stage1.tasks.size() + r.stage2.tasks.size());
    rt->reserve_pointers(std::max<std::size_t>(total, 1));
    rt->calls.clear();
    std::size_t offset = 0;
    for (const auto& r : d.rectangles) {
      TlrBuffers rb = buffers;
      rb.set(TlrBuffer::workspace, arena_base(r.arena));
      rt->calls.push_back(describe(r.stage1, rb, es, rt->host_ptrs, offset));
      offset += 3 * r.stage1.tasks.size();
      rt->calls.push_back(describe(r.stage2, rb, es, rt->host_ptrs, offset));
      offset += 3 * r.stage2.tasks.size();
    }
    if (total > 0)
      check(cudaMemcpyAsync(rt->device_ptrs, rt->host_ptrs, total * sizeof(void*),
                            cudaMemcpyHostToDevice, main),
            "cudaMemcpyAsync(pointer arrays)");
    rt->key = buffers;
    rt->key_arena = rt->arena;
    rt->resolved_valid = true;
  }
  rt->last_stream = main;

  cudaStream_t s12 = pipelined ? rt->side : main;
  check(cublasSetStream(rt->handle[0], main), "cublasSetStream");
  check(cublasSetStream(rt->handle[1], s12), "cublasSetStream");
  if (pipelined) {
    // The side stream starts after everything queued on the caller's stream (inputs,
    // pointer arrays, the previous product).
    check(cudaEventRecord(rt->entry, main), "cudaEventRecord");
    check(cudaStreamWaitEvent(rt->side, rt->entry, 0), "cudaStreamWaitEvent");
  }
  const float alpha_f = static_cast<float>(alpha), beta_f = static_cast<float>(beta);
  const void* alpha_p = types.double_scale ? static_cast<const void*>(&alpha) : &alpha_f;
  const void* beta_p = types.double_scale ? static_cast<const void*>(&beta) : &beta_f;

  for (std::size_t n = 0; n < d.rectangles.size(); ++n) {
    const auto& rect = d.rectangles[n];
    const int a = rect.arena;
    TlrBuffers rb = buffers;
    rb.set(TlrBuffer::workspace, arena_base(a));
    // Stages 1-2 may overwrite this arena only after stage 3 of the rectangle that used it
    // last (two rectangles back) has read it.
    if (pipelined && n >= 2)
      check(cudaStreamWaitEvent(rt->side, rt->s3_done[a], 0), "cudaStreamWaitEvent");
    run_grouped(rt->handle[1], rt->calls[2 * n], rt->device_ptrs, types);
    for (const auto& f : rect.stage2.fills)
      device_fill(d.scalar, rb.at(f.buffer, f.off, f.col, es), f.rows, f.cols,
                  rb.leading_dim(f.buffer, f.ld), 0.0, s12);
    run_grouped(rt->handle[1], rt->calls[2 * n + 1], rt->device_ptrs, types);
    if (pipelined) {
      check(cudaEventRecord(rt->s12_done[a], rt->side), "cudaEventRecord");
      check(cudaStreamWaitEvent(main, rt->s12_done[a], 0), "cudaStreamWaitEvent");
    }
    for (const auto& f : rect.stage3.fills)
      device_fill(d.scalar, rb.at(f.buffer, f.off, f.col, es), f.rows, f.cols,
                  rb.leading_dim(f.buffer, f.ld), beta, main);
    for (const auto& g : rect.stage3.groups)
      for (int t = g.first; t < g.first + g.count; ++t) {
        const auto& task = rect.stage3.tasks[t];
        check(cublasGemmEx(rt->handle[0], g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                           g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, g.m, g.n, g.k, alpha_p,
                           rb.at(g.a, task.a_off, task.a_col, es), types.data,
                           rb.leading_dim(g.a, g.lda), rb.at(g.b, task.b_off, task.b_col, es),
                           types.data, rb.leading_dim(g.b, g.ldb), beta_p,
                           rb.at(g.c, task.c_off, task.c_col, es), types.data,
                           rb.leading_dim(g.c, g.ldc), types.compute, CUBLAS_GEMM_DEFAULT),
              "cublasGemmEx");
      }
    if (pipelined) check(cudaEventRecord(rt->s3_done[a], main), "cudaEventRecord");
  }
}

}  // namespace kcla::detail

#endif  // KCLA_HAVE_CUDA
