// Semiring policies for products with compressed matrices. A policy supplies:
//   value_type                 what x, y and the sweep's slots hold
//   zero()                     identity of combine (a row with no entries gets it)
//   leaf(coefficient, x_j)     one matrix entry applied to one input value
//   combine(a, b)              the sum: associative and commutative (the sweeps combine a
//                              row's partial results in whatever order threads finish)
//   atomic_combine(&y, v)      combine into shared memory from many threads
//   coefficient(c)             a stored matrix value as the policy sees it
// The same sweep serves every policy.
#pragma once

#include <Kokkos_Core.hpp>

#include <cmath>

namespace kcla {

/// Ordinary arithmetic: y = A x.
template <class T>
struct PlusTimes {
  using value_type = T;
  static constexpr const char* name() { return "plus_times"; }
  KOKKOS_INLINE_FUNCTION static T zero() { return T(0); }
  KOKKOS_INLINE_FUNCTION static T leaf(T weight, T x) { return weight * x; }
  KOKKOS_INLINE_FUNCTION static T combine(T a, T b) { return a + b; }
  KOKKOS_INLINE_FUNCTION static void atomic_combine(T* target, T v) {
    Kokkos::atomic_add(target, v);
  }
  template <class C>
  KOKKOS_INLINE_FUNCTION static T coefficient(C v) {
    return static_cast<T>(v);
  }
};

/// Boolean (or, and): y_i = OR_j (A_ij != 0 AND x_j). Reachability, BFS frontiers.
struct Boolean {
  using value_type = bool;
  static constexpr const char* name() { return "boolean"; }
  KOKKOS_INLINE_FUNCTION static bool zero() { return false; }
  KOKKOS_INLINE_FUNCTION static bool leaf(bool weight, bool x) { return weight && x; }
  KOKKOS_INLINE_FUNCTION static bool combine(bool a, bool b) { return a || b; }
  // Every writer stores the same value, so a plain store is race-free in effect.
  KOKKOS_INLINE_FUNCTION static void atomic_combine(bool* target, bool v) {
    if (v) *static_cast<volatile bool*>(target) = true;
  }
  template <class C>
  KOKKOS_INLINE_FUNCTION static bool coefficient(C v) {
    return v != C(0);
  }
};

/// Tropical (min, +): y_i = min_j (A_ij + x_j), +inf where nothing reaches. Shortest
/// paths by repeated products.
template <class T>
struct MinPlus {
  using value_type = T;
  static constexpr const char* name() { return "min_plus"; }
  KOKKOS_INLINE_FUNCTION static T zero() { return static_cast<T>(INFINITY); }
  KOKKOS_INLINE_FUNCTION static T leaf(T weight, T x) { return weight + x; }
  KOKKOS_INLINE_FUNCTION static T combine(T a, T b) { return b < a ? b : a; }
  KOKKOS_INLINE_FUNCTION static void atomic_combine(T* target, T v) {
    Kokkos::atomic_fetch_min(target, v);
  }
  template <class C>
  KOKKOS_INLINE_FUNCTION static T coefficient(C v) {
    return static_cast<T>(v);
  }
};

}  // namespace kcla
