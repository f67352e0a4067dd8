// Private: parallel_for over index ranges that may exceed 2^32.
//
// Kokkos 3.4's CUDA ParallelFor<RangePolicy> strides its grid loop by
// blockDim.y * gridDim.x computed in 32-bit unsigned arithmetic: at 2^32 or more
// iterations (a 65536 x 65536 matrix) the stride wraps to 0 and the kernel never ends.
// kcla launches long ranges in chunks of at most 2^30 iterations instead; the functor
// sees absolute indices.
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <string>

namespace kcla::detail {

constexpr std::int64_t max_launch_iterations = std::int64_t(1) << 30;

template <class ExecutionSpace, class Functor>
void parallel_for_large(const std::string& label, const ExecutionSpace& exec, std::int64_t count,
                        const Functor& functor, std::int64_t chunk = max_launch_iterations) {
  using policy = Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>;
  for (std::int64_t begin = 0; begin < count; begin += chunk)
    Kokkos::parallel_for(label, policy(exec, begin, std::min(count, begin + chunk)), functor);
}

template <class T, class MemorySpace>
struct FillValue {
  Kokkos::View<T*, MemorySpace> v;
  T value;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const { v(i) = value; }
};

/// v(i) = value for every i (in chunks; see above).
template <class T, class MemorySpace>
void fill_large(const Kokkos::View<T*, MemorySpace>& v, const T& value,
                std::int64_t chunk = max_launch_iterations) {
  using exec = typename MemorySpace::execution_space;
  parallel_for_large("kcla::fill", exec(), static_cast<std::int64_t>(v.extent(0)),
                     FillValue<T, MemorySpace>{v, value}, chunk);
}

}  // namespace kcla::detail
