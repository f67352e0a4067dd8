// Products with more right-hand sides than a workspace budget allows, run in chunks of
// vectors: each chunk's columns of X gathered into a contiguous buffer, multiplied, and
// its Y scattered back. Keeps the sweep's value slots (|R| x B for the full array) within
// GrammarMatrixOptions::workspace_budget_bytes whatever B a caller passes.
#pragma once

#include <kcla/detail/grammar_sweep_plan.hpp>
#include <kcla/grammar_matrix.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <string>

namespace kcla::detail {

/// Vectors one sweep of `A` may take under its workspace budget (at least 1; `vectors`
/// when there is no budget or all fit).
template <class ExecutionSpace, class Scalar, class MemorySpace>
std::int64_t vectors_per_chunk(const GrammarMatrix<Scalar, MemorySpace>& A, std::int64_t vectors,
                               std::int64_t value_bytes) {
  const std::int64_t budget = A.options().workspace_budget_bytes;
  if (budget <= 0) return vectors;
  // The slots a product on ExecutionSpace takes, its terminal table included.
  const std::int64_t per_vector =
      std::max<std::int64_t>(1, sweep_slots<ExecutionSpace>(A) * value_bytes);
  return std::max<std::int64_t>(1, std::min(vectors, budget / per_vector));
}

/// `buffer` as room for `elements` values of T, grown (never shrunk) when smaller.
template <class T, class MemorySpace>
T* chunk_buffer(Kokkos::View<std::uint64_t*, MemorySpace>& buffer, std::int64_t elements,
                const char* label) {
  const std::int64_t words = (elements * static_cast<std::int64_t>(sizeof(T)) + 7) / 8;
  if (static_cast<std::int64_t>(buffer.extent(0)) < words)
    buffer = Kokkos::View<std::uint64_t*, MemorySpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), words);
  return reinterpret_cast<T*>(buffer.data());
}

/// xc (cols x width) = columns [first, first + width) of x (cols x vectors).
template <class T, class ExecutionSpace>
void gather_vectors(const ExecutionSpace& exec, const T* x, T* xc, std::int64_t cols,
                    std::int64_t vectors, std::int64_t first, std::int64_t width) {
  using policy = Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>;
  Kokkos::parallel_for(
      "kcla::vector_chunks::gather", policy(exec, 0, cols * width),
      KOKKOS_LAMBDA(std::int64_t k) { xc[k] = x[(k / width) * vectors + first + k % width]; });
}

/// Columns [first, first + width) of y (rows x vectors) = yc (rows x width).
template <class T, class ExecutionSpace>
void scatter_vectors(const ExecutionSpace& exec, const T* yc, T* y, std::int64_t rows,
                     std::int64_t vectors, std::int64_t first, std::int64_t width) {
  using policy = Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>;
  Kokkos::parallel_for(
      "kcla::vector_chunks::scatter", policy(exec, 0, rows * width),
      KOKKOS_LAMBDA(std::int64_t k) { y[(k / width) * vectors + first + k % width] = yc[k]; });
}

/// Runs product(x_chunk, y_chunk, width) over chunks of `chunk` vectors of x (cols x
/// vectors) and y (rows x vectors), both vector-innermost.
template <class T, class ExecutionSpace, class MemorySpace, class Product>
void in_vector_chunks(const ExecutionSpace& exec, const T* x, T* y, std::int64_t cols,
                      std::int64_t rows, std::int64_t vectors, std::int64_t chunk,
                      Kokkos::View<std::uint64_t*, MemorySpace>& x_buffer,
                      Kokkos::View<std::uint64_t*, MemorySpace>& y_buffer, Product&& product) {
  T* xc = chunk_buffer<T>(x_buffer, cols * chunk, "kcla::vector_chunks::x");
  T* yc = chunk_buffer<T>(y_buffer, rows * chunk, "kcla::vector_chunks::y");
  for (std::int64_t first = 0; first < vectors; first += chunk) {
    const std::int64_t width = std::min(chunk, vectors - first);
    gather_vectors(exec, x, xc, cols, vectors, first, width);
    product(static_cast<const T*>(xc), yc, width);
    scatter_vectors(exec, static_cast<const T*>(yc), y, rows, vectors, first, width);
  }
}

}  // namespace kcla::detail
