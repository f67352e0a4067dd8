// The cuBLAS backend of the TLR product. Per rectangle: stage 1 (fused coupling GEMMs, one
// per k), stage 2 (tasks writing in place into the terminal matrices) and stage 3 (one GEMM
// per tile row (right) or tile column (left)), each stage as one grouped call or one
// (strided) batched call per shape (TlrLaunch). Pipelined plans run stages 1-2 on a second stream
// into the other workspace arena, so that they overlap stage 3 of the previous rectangle.
#include <kcla/config.hpp>

#if KCLA_HAVE_CUDA

#include <kcla/detail/tlr_gemm_backend.hpp>
#include <kcla/error.hpp>

#include "../cuda/vendor_status.hpp"

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

/// Stages with at most this many groups (shapes) run as one batched call per group under
/// TlrLaunch::automatic; more groups go to one grouped call.
constexpr std::size_t kMaxBatchedGroups = 4;

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

// Element conversions of the scale kernel: 16-bit values are scaled in float.
__device__ inline double widen(double v) {
  return v;
}
__device__ inline float widen(float v) {
  return v;
}
__device__ inline float widen(__half v) {
  return __half2float(v);
}
__device__ inline float widen(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
__device__ inline void store(double& x, double v) {
  x = v;
}
__device__ inline void store(float& x, float v) {
  x = v;
}
__device__ inline void store(__half& x, float v) {
  x = __float2half_rn(v);
}
__device__ inline void store(__nv_bfloat16& x, float v) {
  x = __float2bfloat16_rn(v);
}

/// x <- beta x over a rows x (count / rows) block with leading dimension ld.
template <class T, class Compute>
__global__ void scale_kernel(T* c, int rows, long long count, long long ld, Compute beta) {
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<long long>(gridDim.x) * blockDim.x) {
    T& x = c[e % rows + (e / rows) * ld];
    store(x, beta * widen(x));
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
  const float beta_f = static_cast<float>(beta);
  switch (kind) {
    case ScalarKind::f64:
      scale_kernel<<<blocks, threads, 0, stream>>>(static_cast<double*>(p), rows, count, ld, beta);
      break;
    case ScalarKind::f32:
      scale_kernel<<<blocks, threads, 0, stream>>>(static_cast<float*>(p), rows, count, ld, beta_f);
      break;
    case ScalarKind::f16:
      scale_kernel<<<blocks, threads, 0, stream>>>(static_cast<__half*>(p), rows, count, ld,
                                                   beta_f);
      break;
    default:
      scale_kernel<<<blocks, threads, 0, stream>>>(static_cast<__nv_bfloat16*>(p), rows, count, ld,
                                                   beta_f);
      break;
  }
  check(cudaGetLastError(), "scale kernel launch");
}

/// One group of a stage as the backend launches it: shape, the tasks' slice of the
/// pointer arrays, and the constant address steps between consecutive tasks when they exist
/// (a strided batch).
struct GroupLaunch {
  cublasOperation_t trans_a = CUBLAS_OP_N, trans_b = CUBLAS_OP_N;
  int m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  int first = 0, count = 0;
  bool strided = false;
  long long stride_a = 0, stride_b = 0, stride_c = 0;  // elements
};

/// The host-side arguments of one stage of one rectangle; its pointer arrays live at
/// ptr_offset (A), + count (B), + 2 count (C) of the device (and pinned host) pointer array.
struct StageCall {
  std::vector<GroupLaunch> groups;
  // The same groups as the arrays cublasGemmGroupedBatchedEx takes.
  std::vector<cublasOperation_t> trans_a, trans_b;
  std::vector<int> m, n, k, lda, ldb, ldc, size;
  // alpha and beta per group, refilled by each product (no allocation on the hot path).
  std::vector<float> alpha_f, beta_f;
  std::vector<double> alpha_d, beta_d;
  std::size_t ptr_offset = 0;
  int count = 0;
};

class CublasRuntime : public TlrRuntime {
 public:
  CublasRuntime() {
    use_default_cache_preference();
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

  /// Pointer arrays resolved for this plan and these buffers are still valid (plans that
  /// share a runtime resolve their own).
  bool same_key(const TlrBuffers& b, const void* plan) const {
    return resolved_valid && key_plan == plan && std::memcmp(&b, &key, sizeof key) == 0 &&
           key_arena == arena;
  }

  cublasHandle_t handle[2] = {nullptr, nullptr};
  cudaStream_t side = nullptr;
  cudaEvent_t entry = nullptr, s12_done[2] = {nullptr, nullptr}, s3_done[2] = {nullptr, nullptr};
  void* arena = nullptr;
  std::size_t arena_bytes = 0;
  void** device_ptrs = nullptr;
  void** host_ptrs = nullptr;
  std::size_t ptr_capacity = 0;
  std::vector<StageCall> calls;  // [3 * rectangle + stage - 1]
  TlrBuffers key;
  void* key_arena = nullptr;
  const void* key_plan = nullptr;
  bool resolved_valid = false;
  cudaStream_t last_stream = nullptr;
};

/// Element step between consecutive pointers p[first .. first + count), or false when the
/// steps differ (or are not whole elements).
bool constant_step(void* const* p, int first, int count, std::size_t es, long long& step) {
  step = 0;
  if (count < 2) return true;
  const auto at = [&](int t) { return reinterpret_cast<std::intptr_t>(p[first + t]); };
  const std::intptr_t bytes = at(1) - at(0);
  if (bytes % static_cast<std::intptr_t>(es) != 0) return false;
  for (int t = 2; t < count; ++t)
    if (at(t) - at(t - 1) != bytes) return false;
  step = static_cast<long long>(bytes / static_cast<std::intptr_t>(es));
  return true;
}

StageCall describe(const TlrStage& stage, const TlrBuffers& buf, std::size_t es, void** host_ptrs,
                   std::size_t offset) {
  StageCall call;
  call.ptr_offset = offset;
  call.count = static_cast<int>(stage.tasks.size());
  const std::size_t count = stage.tasks.size();
  void** pa = host_ptrs + offset;
  void** pb = pa + count;
  void** pc = pb + count;
  for (const auto& g : stage.groups) {
    GroupLaunch l;
    l.trans_a = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    l.trans_b = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    l.m = g.m;
    l.n = g.n;
    l.k = g.k;
    l.lda = buf.leading_dim(g.a, g.lda);
    l.ldb = buf.leading_dim(g.b, g.ldb);
    l.ldc = buf.leading_dim(g.c, g.ldc);
    l.first = g.first;
    l.count = g.count;
    for (int t = g.first; t < g.first + g.count; ++t) {
      const auto& task = stage.tasks[t];
      pa[t] = buf.at(g.a, task.a_off, task.a_col, es);
      pb[t] = buf.at(g.b, task.b_off, task.b_col, es);
      pc[t] = buf.at(g.c, task.c_off, task.c_col, es);
    }
    // Only increasing addresses: cuBLAS 13's sm_90 strided kernels read out of bounds with
    // a negative step (seen under compute-sanitizer on the H200, docs/gpu-notes-tlr.md run 6).
    l.strided = constant_step(pa, g.first, g.count, es, l.stride_a) &&
                constant_step(pb, g.first, g.count, es, l.stride_b) &&
                constant_step(pc, g.first, g.count, es, l.stride_c) &&
                (g.count < 2 || (l.stride_a > 0 && l.stride_b > 0 && l.stride_c > 0));
    call.groups.push_back(l);
    call.trans_a.push_back(l.trans_a);
    call.trans_b.push_back(l.trans_b);
    call.m.push_back(l.m);
    call.n.push_back(l.n);
    call.k.push_back(l.k);
    call.lda.push_back(l.lda);
    call.ldb.push_back(l.ldb);
    call.ldc.push_back(l.ldc);
    call.size.push_back(l.count);
  }
  const std::size_t groups = call.groups.size();
  call.alpha_f.resize(groups);
  call.beta_f.resize(groups);
  call.alpha_d.resize(groups);
  call.beta_d.resize(groups);
  return call;
}

/// alpha and beta as the compute type wants them (host pointer mode).
struct Scales {
  float alpha_f, beta_f;
  double alpha_d, beta_d;
  bool use_double;
  Scales(double alpha, double beta, bool d)
      : alpha_f(static_cast<float>(alpha)),
        beta_f(static_cast<float>(beta)),
        alpha_d(alpha),
        beta_d(beta),
        use_double(d) {}
  const void* alpha() const {
    return use_double ? static_cast<const void*>(&alpha_d) : static_cast<const void*>(&alpha_f);
  }
  const void* beta() const {
    return use_double ? static_cast<const void*>(&beta_d) : static_cast<const void*>(&beta_f);
  }
};

/// Resolves TlrLaunch::automatic for stages 1-2: few groups run as one (strided) batched
/// call each; many groups (ranks that vary from tile to tile) as one grouped call. On the
/// H200 the batched forms beat one grouped call by 1.01-1.9x wherever both apply (run 5 of
/// docs/gpu-notes-tlr.md).
TlrLaunch resolve_coupling_launch(TlrLaunch wanted, const StageCall& call) {
  if (wanted != TlrLaunch::automatic) return wanted;
  return call.groups.size() <= kMaxBatchedGroups ? TlrLaunch::batched : TlrLaunch::grouped;
}

/// Stage 3 has one group per distinct panel width (at most one per tile row or column), and
/// its GEMMs are large: batched per group always (a grouped call was the slowest form).
TlrLaunch resolve_final_launch(TlrLaunch wanted) {
  return wanted == TlrLaunch::automatic ? TlrLaunch::batched : wanted;
}

void run_stage(cublasHandle_t h, StageCall& call, TlrLaunch launch, const Scales& scales,
               void** device_ptrs, void* const* host_ptrs, const CublasTypes& types) {
  if (call.count == 0) return;
  void** dev = device_ptrs + call.ptr_offset;
  void* const* host = host_ptrs + call.ptr_offset;
  const int count = call.count;
  if (launch == TlrLaunch::grouped) {
    const std::size_t groups = call.groups.size();
    const void *alpha = nullptr, *beta = nullptr;
    if (types.double_scale) {
      std::fill(call.alpha_d.begin(), call.alpha_d.end(), scales.alpha_d);
      std::fill(call.beta_d.begin(), call.beta_d.end(), scales.beta_d);
      alpha = call.alpha_d.data();
      beta = call.beta_d.data();
    } else {
      std::fill(call.alpha_f.begin(), call.alpha_f.end(), scales.alpha_f);
      std::fill(call.beta_f.begin(), call.beta_f.end(), scales.beta_f);
      alpha = call.alpha_f.data();
      beta = call.beta_f.data();
    }
    check(cublasGemmGroupedBatchedEx(
              h, call.trans_a.data(), call.trans_b.data(), call.m.data(), call.n.data(),
              call.k.data(), alpha, const_cast<const void* const*>(dev), types.data,
              call.lda.data(), const_cast<const void* const*>(dev + count), types.data,
              call.ldb.data(), beta, dev + 2 * count, types.data, call.ldc.data(),
              static_cast<int>(groups), call.size.data(), types.compute),
          "cublasGemmGroupedBatchedEx");
    return;
  }
  for (const auto& g : call.groups) {
    if (g.count == 1 || launch == TlrLaunch::per_task) {
      for (int t = g.first; t < g.first + g.count; ++t)
        check(cublasGemmEx(h, g.trans_a, g.trans_b, g.m, g.n, g.k, scales.alpha(), host[t],
                           types.data, g.lda, host[count + t], types.data, g.ldb, scales.beta(),
                           host[2 * count + t], types.data, g.ldc, types.compute,
                           CUBLAS_GEMM_DEFAULT),
              "cublasGemmEx");
    } else if (g.strided) {
      check(cublasGemmStridedBatchedEx(h, g.trans_a, g.trans_b, g.m, g.n, g.k, scales.alpha(),
                                       host[g.first], types.data, g.lda, g.stride_a,
                                       host[count + g.first], types.data, g.ldb, g.stride_b,
                                       scales.beta(), host[2 * count + g.first], types.data, g.ldc,
                                       g.stride_c, g.count, types.compute, CUBLAS_GEMM_DEFAULT),
            "cublasGemmStridedBatchedEx");
    } else {
      check(cublasGemmBatchedEx(h, g.trans_a, g.trans_b, g.m, g.n, g.k, scales.alpha(),
                                const_cast<const void* const*>(dev + g.first), types.data, g.lda,
                                const_cast<const void* const*>(dev + count + g.first), types.data,
                                g.ldb, scales.beta(), dev + 2 * count + g.first, types.data, g.ldc,
                                g.count, types.compute, CUBLAS_GEMM_DEFAULT),
            "cublasGemmBatchedEx");
    }
  }
}

}  // namespace

void tlr_execute_cublas(const TlrGemmPlan& plan, const TlrBuffers& in, double alpha, double beta,
                        void* stream_handle) {
  const auto& d = plan.data();
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

  // Pointer arrays of every stage: resolved once per set of buffer addresses and uploaded
  // in one copy; repeated products on the same data skip this.
  TlrBuffers buffers = in;
  buffers.set(TlrBuffer::workspace, nullptr);
  if (!rt->same_key(buffers, &d)) {
    if (rt->resolved_valid && rt->last_stream)
      check(cudaStreamSynchronize(rt->last_stream), "cudaStreamSynchronize");
    std::size_t total = 0;
    for (const auto& r : d.rectangles)
      total += 3 * (r.stage1.tasks.size() + r.stage2.tasks.size() + r.stage3.tasks.size());
    rt->reserve_pointers(std::max<std::size_t>(total, 1));
    rt->calls.clear();
    std::size_t offset = 0;
    for (const auto& r : d.rectangles) {
      TlrBuffers rb = buffers;
      rb.set(TlrBuffer::workspace, arena_base(r.arena));
      for (const TlrStage* stage : {&r.stage1, &r.stage2, &r.stage3}) {
        rt->calls.push_back(describe(*stage, rb, es, rt->host_ptrs, offset));
        offset += 3 * stage->tasks.size();
      }
    }
    if (total > 0)
      check(cudaMemcpyAsync(rt->device_ptrs, rt->host_ptrs, total * sizeof(void*),
                            cudaMemcpyHostToDevice, main),
            "cudaMemcpyAsync(pointer arrays)");
    rt->key = buffers;
    rt->key_arena = rt->arena;
    rt->key_plan = &d;
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
  const Scales coupling(1.0, 0.0, types.double_scale),
      final_scales(alpha, beta, types.double_scale);

  for (std::size_t n = 0; n < d.rectangles.size(); ++n) {
    const auto& rect = d.rectangles[n];
    const int a = rect.arena;
    TlrBuffers rb = buffers;
    rb.set(TlrBuffer::workspace, arena_base(a));
    StageCall* calls = &rt->calls[3 * n];
    // Stages 1-2 may overwrite this arena only after stage 3 of the rectangle that used it
    // last (two rectangles back) has read it.
    if (pipelined && n >= 2)
      check(cudaStreamWaitEvent(rt->side, rt->s3_done[a], 0), "cudaStreamWaitEvent");
    for (int stage = 0; stage < 2; ++stage) {
      if (stage == 1)
        for (const auto& f : rect.stage2.fills)
          device_fill(d.scalar, rb.at(f.buffer, f.off, f.col, es), f.rows, f.cols,
                      rb.leading_dim(f.buffer, f.ld), 0.0, s12);
      run_stage(rt->handle[1], calls[stage],
                resolve_coupling_launch(d.options.tuning.coupling_launch, calls[stage]), coupling,
                rt->device_ptrs, rt->host_ptrs, types);
    }
    if (pipelined) {
      check(cudaEventRecord(rt->s12_done[a], rt->side), "cudaEventRecord");
      check(cudaStreamWaitEvent(main, rt->s12_done[a], 0), "cudaStreamWaitEvent");
    }
    for (const auto& f : rect.stage3.fills)
      device_fill(d.scalar, rb.at(f.buffer, f.off, f.col, es), f.rows, f.cols,
                  rb.leading_dim(f.buffer, f.ld), beta, main);
    run_stage(rt->handle[0], calls[2], resolve_final_launch(d.options.tuning.final_launch),
              final_scales, rt->device_ptrs, rt->host_ptrs, types);
    if (pipelined) check(cudaEventRecord(rt->s3_done[a], main), "cudaEventRecord");
  }
}

}  // namespace kcla::detail

#endif  // KCLA_HAVE_CUDA
