// Kernel functions on point sets: the matrices K_ij = k(|x_i - y_j|) that TLR compresses
// well (covariance matrices in spatial statistics, Gaussian kernels, 1/r interactions).
#pragma once

#include <kcla/error.hpp>

#include <Kokkos_Macros.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kcla {

/// Points in `dimension` dimensions; point p is coordinates[p * dimension + d].
struct PointSet {
  int dimension = 1;
  std::vector<double> coordinates;

  std::int64_t size() const {
    return dimension > 0 ? static_cast<std::int64_t>(coordinates.size()) / dimension : 0;
  }
  double distance(std::int64_t p, const PointSet& other, std::int64_t q) const {
    double s = 0;
    for (int d = 0; d < dimension; ++d) {
      const double t = coordinates[p * dimension + d] - other.coordinates[q * other.dimension + d];
      s += t * t;
    }
    return std::sqrt(s);
  }
};

/// n points uniform in [0, 1]^dim (dim 1, 2 or 3; seeded), sorted along a Z-order (Morton)
/// curve: points close in the order are close in space, so a tile of rows is a compact
/// cluster and tiles far from the diagonal couple distant clusters (low rank).
PointSet morton_points(std::int64_t n, int dim, std::uint64_t seed);

enum class KernelType {
  exponential,       // s exp(-r/l)  (= Matern nu = 1/2)
  matern12,          // s exp(-r/l)
  matern32,          // s (1 + sqrt3 r/l) exp(-sqrt3 r/l)
  matern52,          // s (1 + sqrt5 r/l + 5 r^2 / (3 l^2)) exp(-sqrt5 r/l)
  gaussian,          // s exp(-r^2 / (2 l^2))
  inverse_distance,  // s l / r, and `self_value` at r = 0
};

/// k(r) for a kernel of the given type, variance and length scale; callable on the device
/// (the device compression evaluates tiles there). An unknown type gives NaN.
KOKKOS_INLINE_FUNCTION double covariance_value(KernelType type, double length_scale,
                                               double variance, double self_value, double r) {
  const double x = r / length_scale;
  switch (type) {
    case KernelType::exponential:
    case KernelType::matern12:
      return variance * std::exp(-x);
    case KernelType::matern32: {
      const double t = 1.7320508075688772 * x;  // sqrt(3)
      return variance * (1 + t) * std::exp(-t);
    }
    case KernelType::matern52: {
      const double t = 2.2360679774997896 * x;  // sqrt(5)
      return variance * (1 + t + t * t / 3.0) * std::exp(-t);
    }
    case KernelType::gaussian:
      return variance * std::exp(-0.5 * x * x);
    case KernelType::inverse_distance:
      return r == 0 ? self_value : variance / x;
  }
  const double zero = 0.0;  // NaN without numeric_limits, which is host-only under CUDA
  return zero / zero;
}

/// k(r) with variance s and length scale l.
struct CovarianceKernel {
  KernelType type = KernelType::exponential;
  double length_scale = 1.0;
  double variance = 1.0;
  double self_value = 0.0;  // inverse_distance only: the value at r = 0

  double operator()(double r) const {
    switch (type) {
      case KernelType::exponential:
      case KernelType::matern12:
      case KernelType::matern32:
      case KernelType::matern52:
      case KernelType::gaussian:
      case KernelType::inverse_distance:
        return covariance_value(type, length_scale, variance, self_value, r);
    }
    throw InvalidArgument("CovarianceKernel: unknown kernel type");
  }

  /// The matrix entry for row point p of `rows` and column point q of `cols`.
  double operator()(const PointSet& rows, std::int64_t p, const PointSet& cols,
                    std::int64_t q) const {
    return (*this)(rows.distance(p, cols, q));
  }
};

inline const char* to_string(KernelType type) {
  switch (type) {
    case KernelType::exponential:
      return "exponential";
    case KernelType::matern12:
      return "matern12";
    case KernelType::matern32:
      return "matern32";
    case KernelType::matern52:
      return "matern52";
    case KernelType::gaussian:
      return "gaussian";
    default:
      return "inverse_distance";
  }
}

/// The kernel type to_string names, or nothing for another name.
inline std::optional<KernelType> kernel_type_from_string(const std::string& name) {
  for (KernelType t : {KernelType::exponential, KernelType::matern12, KernelType::matern32,
                       KernelType::matern52, KernelType::gaussian, KernelType::inverse_distance})
    if (name == to_string(t)) return t;
  return std::nullopt;
}

}  // namespace kcla
