// Private: what the two host backends (reference loops, BLAS) share: element access by
// ScalarKind, the workspace arena, and the walk over a plan's rectangles and stages.
#pragma once

#include <kcla/detail/tlr_gemm_backend.hpp>
#include <kcla/tlr_plan.hpp>
#include <kcla/tlr_scalar.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace kcla::detail {

/// IEEE binary16 <-> binary32 on the host (round to nearest even), so that the host
/// backends read fp16 whatever Kokkos' half_t is on this build.
inline float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exponent = (h >> 10) & 0x1fu;
  std::uint32_t mantissa = h & 0x3ffu;
  std::uint32_t u;
  if (exponent == 0) {
    if (mantissa == 0) {
      u = sign;
    } else {  // subnormal: normalise
      exponent = 127 - 15 + 1;
      while ((mantissa & 0x400u) == 0) {
        mantissa <<= 1;
        --exponent;
      }
      u = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
    }
  } else if (exponent == 31) {
    u = sign | 0x7f800000u | (mantissa << 13);
  } else {
    u = sign | ((exponent + 112) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline std::uint16_t float_to_half_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  const std::uint32_t sign = u & 0x80000000u;
  u ^= sign;
  std::uint32_t out;
  if (u >= (127u + 16u) << 23) {  // overflow, inf, nan
    out = u > 0x7f800000u ? 0x7e00u : 0x7c00u;
  } else if (u < (113u << 23)) {  // result is subnormal or zero: let the FPU round
    const std::uint32_t magic_bits = ((127u - 15u) + (23u - 10u) + 1u) << 23;
    float magic, value;
    std::memcpy(&magic, &magic_bits, sizeof magic);
    std::memcpy(&value, &u, sizeof value);
    value += magic;
    std::uint32_t v;
    std::memcpy(&v, &value, sizeof v);
    out = v - magic_bits;
  } else {
    const std::uint32_t odd = (u >> 13) & 1u;
    u += (static_cast<std::uint32_t>(15 - 127) << 23) + 0xfffu + odd;
    out = u >> 13;
  }
  return static_cast<std::uint16_t>(out | (sign >> 16));
}

inline double load(ScalarKind kind, const void* p, std::int64_t i) {
  switch (kind) {
    case ScalarKind::f64:
      return static_cast<const double*>(p)[i];
    case ScalarKind::f32:
      return static_cast<const float*>(p)[i];
    case ScalarKind::f16:
      return half_bits_to_float(static_cast<const std::uint16_t*>(p)[i]);
    default:
      return static_cast<float>(bhalf_t::from_bits(static_cast<const std::uint16_t*>(p)[i]));
  }
}

inline void store(ScalarKind kind, void* p, std::int64_t i, double v) {
  switch (kind) {
    case ScalarKind::f64:
      static_cast<double*>(p)[i] = v;
      break;
    case ScalarKind::f32:
      static_cast<float*>(p)[i] = static_cast<float>(v);
      break;
    case ScalarKind::f16:
      static_cast<std::uint16_t*>(p)[i] = float_to_half_bits(static_cast<float>(v));
      break;
    default:
      static_cast<std::uint16_t*>(p)[i] = bhalf_t(static_cast<float>(v)).bits;
      break;
  }
}

/// rows x cols block at p (leading dimension ld): zero (beta == 0) or scaled by beta.
inline void host_fill(ScalarKind kind, void* p, int rows, int cols, std::int64_t ld, double beta) {
  if (beta == 1) return;
  for (int c = 0; c < cols; ++c)
    for (int r = 0; r < rows; ++r) {
      const std::int64_t e = r + c * ld;
      store(kind, p, e, beta == 0 ? 0.0 : beta * load(kind, p, e));
    }
}

/// The host backends' state: one workspace allocation holding every arena.
class HostRuntime : public TlrRuntime {
 public:
  void* arena(std::size_t total_bytes) {
    if (total_bytes > bytes_) {
      const std::size_t rounded = (total_bytes + 255) / 256 * 256;
      data_.reset(static_cast<unsigned char*>(std::aligned_alloc(256, rounded)));
      if (!data_) throw std::bad_alloc();
      bytes_ = rounded;
    }
    return data_.get();
  }

 private:
  struct Free {
    void operator()(unsigned char* p) const { std::free(p); }
  };
  std::unique_ptr<unsigned char[], Free> data_;
  std::size_t bytes_ = 0;
};

inline HostRuntime& host_runtime(const TlrGemmPlan& plan) {
  const auto& d = plan.data();
  auto* rt = dynamic_cast<HostRuntime*>(d.runtime.get());
  if (!rt) {
    d.runtime = std::make_shared<HostRuntime>();
    rt = static_cast<HostRuntime*>(d.runtime.get());
  }
  return *rt;
}

/// Walks the plan: for every rectangle, stage 1 (alpha 1, beta 0), stage 2 (zero blocks,
/// then GEMMs), stage 3 (C blocks scaled by beta where the reduction is empty, then the
/// GEMMs with alpha, beta). `run_stage(stage, buffers, alpha, beta)` executes a stage's
/// GEMMs.
template <class RunStage>
void walk_host_plan(const TlrGemmPlan& plan, const TlrBuffers& in, double beta,
                    RunStage&& run_stage) {
  const auto& d = plan.data();
  TlrBuffers buffers = in;
  unsigned char* arenas = static_cast<unsigned char*>(
      host_runtime(plan).arena(d.arena_bytes * static_cast<std::size_t>(d.num_arenas)));
  const std::size_t es = d.element_bytes;
  for (const auto& rect : d.rectangles) {
    buffers.set(TlrBuffer::workspace,
                arenas + d.arena_bytes * static_cast<std::size_t>(rect.arena));
    run_stage(rect.stage1, buffers, false);
    for (const auto& f : rect.stage2.fills)
      host_fill(d.scalar, buffers.at(f.buffer, f.off, f.col, es), f.rows, f.cols,
                buffers.leading_dim(f.buffer, f.ld), 0.0);
    run_stage(rect.stage2, buffers, false);
    for (const auto& f : rect.stage3.fills)
      host_fill(d.scalar, buffers.at(f.buffer, f.off, f.col, es), f.rows, f.cols,
                buffers.leading_dim(f.buffer, f.ld), beta);
    run_stage(rect.stage3, buffers, true);
  }
}

}  // namespace kcla::detail
