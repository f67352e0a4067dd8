// Scalar types of the TLR engine: double (fp64), float (fp32, and tf32 math on fp32
// storage), Kokkos::Experimental::half_t (fp16) and kcla::bhalf_t (bf16), with the
// conversions and alignment rules the engine derives from them.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace kcla {

/// bfloat16 storage: the upper 16 bits of an IEEE binary32. Kokkos 3.4 has no bhalf_t, so
/// kcla brings this 16-bit type; it only stores values (convert to float to compute). On
/// CUDA its bits are what cuBLAS reads as CUDA_R_16BF.
struct bhalf_t {
  std::uint16_t bits;

  bhalf_t() = default;
  /// Rounds to nearest, ties to even; NaN stays NaN.
  KOKKOS_INLINE_FUNCTION explicit bhalf_t(float value) : bits(round(value)) {}
  KOKKOS_INLINE_FUNCTION explicit operator float() const {
    const std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
  }
  KOKKOS_INLINE_FUNCTION static bhalf_t from_bits(std::uint16_t b) {
    bhalf_t h;
    h.bits = b;
    return h;
  }

 private:
  KOKKOS_INLINE_FUNCTION static std::uint16_t round(float value) {
    std::uint32_t u;
    std::memcpy(&u, &value, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<std::uint16_t>(u >> 16);
  }
};
static_assert(sizeof(bhalf_t) == 2, "bhalf_t must be 16 bits");

/// Storage precision of a TLR product's operands (what cuBLAS calls the data type).
enum class ScalarKind { f64, f32, f16, bf16 };

inline const char* to_string(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::f64:
      return "fp64";
    case ScalarKind::f32:
      return "fp32";
    case ScalarKind::f16:
      return "fp16";
    default:
      return "bf16";
  }
}

/// Per-type facts: the type arithmetic runs in (double for fp64, float otherwise: 16-bit
/// types accumulate in fp32), conversions, and the default rank multiple (stored ranks
/// are rounded up to it so that every factor offset stays 16-byte aligned: 8 for 16-bit
/// types, 4 for float so that tf32 math can use the same storage, 1 for double).
template <class Scalar>
struct TlrScalarTraits;

template <>
struct TlrScalarTraits<double> {
  using compute_type = double;
  static constexpr ScalarKind kind = ScalarKind::f64;
  static constexpr int rank_multiple = 1;
  KOKKOS_INLINE_FUNCTION static double widen(double x) { return x; }
  KOKKOS_INLINE_FUNCTION static double narrow(double x) { return x; }
};

template <>
struct TlrScalarTraits<float> {
  using compute_type = float;
  static constexpr ScalarKind kind = ScalarKind::f32;
  static constexpr int rank_multiple = 4;
  KOKKOS_INLINE_FUNCTION static float widen(float x) { return x; }
  KOKKOS_INLINE_FUNCTION static float narrow(double x) { return static_cast<float>(x); }
};

template <>
struct TlrScalarTraits<bhalf_t> {
  using compute_type = float;
  static constexpr ScalarKind kind = ScalarKind::bf16;
  static constexpr int rank_multiple = 8;
  KOKKOS_INLINE_FUNCTION static float widen(bhalf_t x) { return static_cast<float>(x); }
  KOKKOS_INLINE_FUNCTION static bhalf_t narrow(double x) { return bhalf_t(static_cast<float>(x)); }
};

// Kokkos' half_t is a real 16-bit type only where a backend provides one (CUDA); on host
// builds it is float, and the float traits above apply.
#if !KOKKOS_HALF_T_IS_FLOAT
template <>
struct TlrScalarTraits<Kokkos::Experimental::half_t> {
  using compute_type = float;
  static constexpr ScalarKind kind = ScalarKind::f16;
  static constexpr int rank_multiple = 8;
  KOKKOS_INLINE_FUNCTION static float widen(Kokkos::Experimental::half_t x) {
    return Kokkos::Experimental::cast_from_half<float>(x);
  }
  KOKKOS_INLINE_FUNCTION static Kokkos::Experimental::half_t narrow(double x) {
    return Kokkos::Experimental::cast_to_half(static_cast<float>(x));
  }
};
#endif

/// Leading dimension multiple of factor panels: 16 bytes.
template <class Scalar>
constexpr int tlr_leading_dim_multiple() {
  return sizeof(Scalar) >= 16 ? 1 : static_cast<int>(16 / sizeof(Scalar));
}

/// Bytes of one element of `kind`.
inline std::size_t element_bytes(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::f64:
      return 8;
    case ScalarKind::f32:
      return 4;
    default:
      return 2;
  }
}

}  // namespace kcla
