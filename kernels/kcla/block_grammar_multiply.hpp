// y = A x and Y = A X for a block grammar matrix, in any semiring: every held block's
// sweep, one after another on `exec`, each combined into y at its rows. Streamed blocks
// (BlockMatrixOptions) are copied into their slots on a copy stream while earlier blocks sweep.
//
//   kcla::BlockGrammarMatrix<float> A(kcla::read_block_grammar_hdf5("panel.h5"));
//   kcla::multiply(exec, A, x, y);
//
// Operands as for kcla::multiply with a GrammarMatrix (x: num_cols [x B], y: num_rows
// [x B], LayoutRight). A matrix holding only some blocks (a rank's share) gives the sum
// over those blocks: kcla::DistributedGrammarMatrix adds up the ranks' results.
//
// kcla::multiply_transpose(exec, A, y, z): z = A^T y over the held blocks, for a matrix
// built with GrammarMatrixOptions::products = GrammarProducts::transpose or ::both.
#pragma once

#include <kcla/block_grammar_matrix.hpp>
#include <kcla/detail/block_copy_queue.hpp>
#include <kcla/detail/block_streams.hpp>
#include <kcla/detail/grammar_sweep.hpp>
#include <kcla/detail/product_operands.hpp>
#include <kcla/detail/transpose_sweep.hpp>
#include <kcla/detail/vector_chunks.hpp>
#include <kcla/semiring.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

namespace kcla {

namespace detail {

/// The order a product sweeps the held blocks in: resident blocks (the first one spanning
/// every row in front), then the streamed ones in their staging order, whose first copies
/// the resident sweeps cover.
template <class Scalar, class MemorySpace>
std::vector<std::size_t> block_order(const BlockGrammarMatrix<Scalar, MemorySpace>& A) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < A.num_held_blocks(); ++i)
    if (A.resident(i)) order.push_back(i);
  const auto spanning = std::find_if(order.begin(), order.end(), [&](std::size_t i) {
    return A.extent(i).rows() == A.num_rows();
  });
  if (spanning != order.end()) std::rotate(order.begin(), spanning, spanning + 1);
  if (A.staging())
    order.insert(order.end(), A.staging()->streamed.begin(), A.staging()->streamed.end());
  return order;
}

/// Products of at most this many vectors spread their block sweeps over
/// kConcurrentBlockStreams instances when BlockMatrixOptions::streams is 0 and the back end
/// has instances of its own (CUDA): a block's sweep at few vectors is a chain of short
/// launches that leaves most of the GPU idle.
constexpr std::int64_t kConcurrentMaxVectors = 16;
constexpr int kConcurrentBlockStreams = 8;

/// How many instances the blocks of a product over `vectors` vectors run on. The automatic
/// choice keeps the instances' workspaces within the blocks' workspace budget.
template <class ExecutionSpace, class Scalar, class MemorySpace>
int block_stream_count(const BlockGrammarMatrix<Scalar, MemorySpace>& A, std::int64_t vectors,
                       std::size_t value_bytes) {
  if (A.num_held_blocks() < 2) return 1;
  int wanted = A.block_options().streams;
  if (wanted == 0) {
    wanted = BlockStreams<ExecutionSpace>::concurrent && vectors <= kConcurrentMaxVectors
                 ? kConcurrentBlockStreams
                 : 1;
    const std::int64_t budget = A.block(0).options().workspace_budget_bytes;
    if (budget > 0 && wanted > 1) {
      std::int64_t words = 0;
      for (std::size_t i = 0; i < A.num_held_blocks(); ++i)
        words = std::max(words, workspace_words<ExecutionSpace>(A.block(i), vectors, value_bytes));
      wanted = static_cast<int>(
          std::clamp<std::int64_t>(budget / std::max<std::int64_t>(1, 8 * words), 1, wanted));
    }
  }
  return static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(wanted),
                                                std::max<std::size_t>(1, A.num_held_blocks())));
}

/// The product spread over `count` instances: the block at position p of block_order runs
/// on instance p mod count with that instance's workspace and partial buffer, accumulating
/// into the instance's own copy of y (the first instance's is y itself); the copies are
/// combined on `exec` once every instance is done. Streamed blocks wait for their copies on
/// the instance that sweeps them.
template <class Semiring, class ExecutionSpace, class Scalar, class MemorySpace>
void concurrent_block_sweep(const ExecutionSpace& exec,
                            const BlockGrammarMatrix<Scalar, MemorySpace>& A,
                            const typename Semiring::value_type* x,
                            typename Semiring::value_type* y, std::int64_t vectors,
                            SweepLaunch launch, int count) {
  using T = typename Semiring::value_type;
  using policy = Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>;
  using streams_type = BlockStreams<ExecutionSpace>;
  auto& buffers = A.buffers();
  if (buffers.streams_type != std::type_index(typeid(streams_type)) ||
      buffers.streams_count != count) {
    // Graphs captured on the old instances wait on their streams when destroyed: drop
    // them while the streams live, then the old instances before the new ones are made
    // (forgotten first, so a failure to make them leaves no stale record).
    for (std::size_t i = 0; i < A.num_held_blocks(); ++i) A.block(i).plan().graph.reset();
    buffers.streams.reset();
    buffers.streams_type = std::type_index(typeid(void));
    buffers.streams_count = 0;
    buffers.streams = std::make_shared<streams_type>(exec, count);
    buffers.streams_type = std::type_index(typeid(streams_type));
    buffers.streams_count = count;
  }
  auto& streams = *static_cast<streams_type*>(buffers.streams.get());
  const std::size_t n = A.num_held_blocks();
  const std::int64_t rows = A.num_rows();
  std::int64_t words = 0, partial_rows = 0;
  for (std::size_t i = 0; i < n; ++i) {
    words = std::max(words, workspace_words<ExecutionSpace>(A.block(i), vectors, sizeof(T)));
    partial_rows = std::max(partial_rows, A.extent(i).rows());
  }
  buffers.stream_workspace.resize(count);
  buffers.stream_partial.resize(count);
  buffers.stream_y.resize(count);
  std::vector<T*> accumulator(count, y), partial(count);
  for (int s = 0; s < count; ++s) {
    chunk_buffer<std::uint64_t>(buffers.stream_workspace[s], words,
                                "kcla::block_grammar::stream_workspace");
    partial[s] = chunk_buffer<T>(buffers.stream_partial[s], partial_rows * vectors,
                                 "kcla::block_grammar::stream_partial");
    if (s > 0)
      accumulator[s] =
          chunk_buffer<T>(buffers.stream_y[s], rows * vectors, "kcla::block_grammar::stream_y");
  }
  const std::vector<std::size_t> order = block_order(A);
  for (std::size_t position = 0; position < n; ++position) {
    auto& plan = A.block(order[position]).plan();
    const auto& workspace = buffers.stream_workspace[position % count];
    if (plan.workspace.data() != workspace.data()) {
      plan.workspace = workspace;
      plan.graph.reset();  // a captured graph names the old workspace
    }
  }
  std::vector<bool> started(count, false);
  BlockStreamWalk<ExecutionSpace, MemorySpace> walk(exec, A.staging());
  streams.fork(exec);
  for (std::size_t position = 0; position < n; ++position) {
    const std::size_t i = order[position];
    const int s = static_cast<int>(position % count);
    const auto instance = streams.instance(exec, s);
    const auto& e = A.extent(i);
    const T* xb = x + e.col_begin * vectors;
    T* target = accumulator[s];
    if (!started[s] && e.rows() == rows) {
      walk.before(instance, i);
      sweep<Semiring>(instance, A.block(i), xb, target, vectors, launch);
      walk.after(instance, i);
      started[s] = true;
      continue;
    }
    if (!started[s]) {
      Kokkos::parallel_for(
          "kcla::block_grammar::fill", policy(instance, 0, rows * vectors),
          KOKKOS_LAMBDA(std::int64_t k) { target[k] = Semiring::zero(); });
      started[s] = true;
    }
    T* out = partial[s];
    walk.before(instance, i);
    sweep<Semiring>(instance, A.block(i), xb, out, vectors, launch);
    walk.after(instance, i);
    T* rows_of_block = target + e.row_begin * vectors;
    Kokkos::parallel_for(
        "kcla::block_grammar::combine", policy(instance, 0, e.rows() * vectors),
        KOKKOS_LAMBDA(std::int64_t k) {
          rows_of_block[k] = Semiring::combine(rows_of_block[k], out[k]);
        });
  }
  streams.join(exec);
  for (int s = 1; s < count; ++s) {
    const T* other = accumulator[s];
    Kokkos::parallel_for(
        "kcla::block_grammar::combine_streams", policy(exec, 0, rows * vectors),
        KOKKOS_LAMBDA(std::int64_t k) { y[k] = Semiring::combine(y[k], other[k]); });
  }
}

/// The product over the held blocks on raw vector-innermost arrays (x: num_cols x B, y:
/// num_rows x B), the blocks spread over `streams` instances (block_stream_count).
template <class Semiring, class ExecutionSpace, class Scalar, class MemorySpace>
void block_sweep(const ExecutionSpace& exec, const BlockGrammarMatrix<Scalar, MemorySpace>& A,
                 const typename Semiring::value_type* x, typename Semiring::value_type* y,
                 std::int64_t vectors, SweepLaunch launch, int streams) {
  using T = typename Semiring::value_type;
  using policy = Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>;
  if (streams > 1) {
    concurrent_block_sweep<Semiring>(exec, A, x, y, vectors, launch, streams);
    return;
  }
  auto& buffers = A.buffers();
  // One workspace for every block: the largest any block needs.
  std::int64_t words = 0, partial_rows = 0;
  for (std::size_t i = 0; i < A.num_held_blocks(); ++i) {
    words = std::max(words, workspace_words<ExecutionSpace>(A.block(i), vectors, sizeof(T)));
    partial_rows = std::max(partial_rows, A.extent(i).rows());
  }
  if (static_cast<std::int64_t>(buffers.workspace.extent(0)) < words)
    buffers.workspace = Kokkos::View<std::uint64_t*, MemorySpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::block_grammar::workspace"), words);
  for (std::size_t i = 0; i < A.num_held_blocks(); ++i) {
    auto& plan = A.block(i).plan();
    if (plan.workspace.data() != buffers.workspace.data()) {
      plan.workspace = buffers.workspace;
      plan.graph.reset();  // a captured graph names the old workspace
    }
  }
  const std::size_t n = A.num_held_blocks();
  const std::vector<std::size_t> order = block_order(A);
  // The first block, when it spans every row, writes y directly; y starts as zero otherwise.
  const bool direct = n > 0 && A.extent(order[0]).rows() == A.num_rows();
  BlockStreamWalk<ExecutionSpace, MemorySpace> walk(exec, A.staging());
  auto sweep_block = [&](std::size_t i, T* out) {
    walk.before(exec, i);
    sweep<Semiring>(exec, A.block(i), x + A.extent(i).col_begin * vectors, out, vectors, launch);
    walk.after(exec, i);
  };
  if (direct) {
    sweep_block(order[0], y);
  } else {
    Kokkos::parallel_for(
        "kcla::block_grammar::fill", policy(exec, 0, A.num_rows() * vectors),
        KOKKOS_LAMBDA(std::int64_t k) { y[k] = Semiring::zero(); });
  }
  T* partial = n > 1 || !direct ? chunk_buffer<T>(buffers.partial, partial_rows * vectors,
                                                  "kcla::block_grammar::partial")
                                : nullptr;
  for (std::size_t position = direct ? 1 : 0; position < n; ++position) {
    const std::size_t i = order[position];
    sweep_block(i, partial);
    T* target = y + A.extent(i).row_begin * vectors;
    Kokkos::parallel_for(
        "kcla::block_grammar::combine", policy(exec, 0, A.extent(i).rows() * vectors),
        KOKKOS_LAMBDA(std::int64_t k) { target[k] = Semiring::combine(target[k], partial[k]); });
  }
}

/// The left product over the held blocks (y: num_rows x B, z: num_cols x B): a block whose
/// columns no other held block shares writes its slice of z directly; the others combine
/// through a partial buffer; columns no block covers get the semiring zero.
template <class Semiring, class ExecutionSpace, class Scalar, class MemorySpace>
void block_transpose_sweep(const ExecutionSpace& exec,
                           const BlockGrammarMatrix<Scalar, MemorySpace>& A,
                           const typename Semiring::value_type* y, typename Semiring::value_type* z,
                           std::int64_t vectors, SweepLaunch launch) {
  using T = typename Semiring::value_type;
  using policy = Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>;
  const std::size_t n = A.num_held_blocks();
  auto& buffers = A.buffers();
  std::int64_t words = 0, partial_cols = 0;
  for (std::size_t i = 0; i < n; ++i) {
    words = std::max(words, (A.block(i).transpose_views().num_nodes * vectors *
                                 static_cast<std::int64_t>(sizeof(T)) +
                             7) /
                                8);
    partial_cols = std::max(partial_cols, A.extent(i).cols());
  }
  if (static_cast<std::int64_t>(buffers.transpose_workspace.extent(0)) < words)
    buffers.transpose_workspace = Kokkos::View<std::uint64_t*, MemorySpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::block_grammar::transpose_workspace"),
        words);
  for (std::size_t i = 0; i < n; ++i) {
    auto& t = A.block(i).transpose_views();
    if (t.workspace.data() != buffers.transpose_workspace.data()) {
      t.workspace = buffers.transpose_workspace;
      t.graph.reset();  // a captured graph names the old workspace
    }
  }
  Kokkos::parallel_for(
      "kcla::block_grammar::fill_z", policy(exec, 0, A.num_cols() * vectors),
      KOKKOS_LAMBDA(std::int64_t k) { z[k] = Semiring::zero(); });
  auto shares_columns = [&](std::size_t i) {
    for (std::size_t j = 0; j < n; ++j)
      if (j != i && A.extent(j).col_begin < A.extent(i).col_end &&
          A.extent(i).col_begin < A.extent(j).col_end)
        return true;
    return false;
  };
  T* partial = nullptr;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& e = A.extent(i);
    const T* yb = y + e.row_begin * vectors;
    T* target = z + e.col_begin * vectors;
    if (!shares_columns(i)) {
      transpose_sweep<Semiring>(exec, A.block(i), yb, target, vectors, launch);
      continue;
    }
    if (!partial)
      partial =
          chunk_buffer<T>(buffers.partial, partial_cols * vectors, "kcla::block_grammar::partial");
    transpose_sweep<Semiring>(exec, A.block(i), yb, partial, vectors, launch);
    T* out = partial;
    Kokkos::parallel_for(
        "kcla::block_grammar::combine_z", policy(exec, 0, e.cols() * vectors),
        KOKKOS_LAMBDA(std::int64_t k) { target[k] = Semiring::combine(target[k], out[k]); });
  }
}

}  // namespace detail

/// z = A^T y over the held blocks (operands as kcla::multiply_transpose for a GrammarMatrix).
template <class Semiring = void, class ExecutionSpace, class Scalar, class MemorySpace, class YView,
          class ZView>
void multiply_transpose(const ExecutionSpace& exec,
                        const BlockGrammarMatrix<Scalar, MemorySpace>& A, const YView& y,
                        const ZView& z, SweepLaunch launch = SweepLaunch::automatic) {
  using value_type = typename ZView::non_const_value_type;
  using semiring =
      std::conditional_t<std::is_void<Semiring>::value, PlusTimes<value_type>, Semiring>;
  const std::int64_t vectors =
      detail::check_transpose_operands<semiring, ExecutionSpace, MemorySpace>(
          y, z, A.num_rows(), A.num_cols(), "block matrix");
  for (std::size_t i = 0; i < A.num_held_blocks(); ++i) A.block(i).transpose_views();  // throws
  if (vectors == 0) return;
  std::int64_t chunk = vectors;
  for (std::size_t i = 0; i < A.num_held_blocks(); ++i)
    chunk = std::min(chunk,
                     detail::transpose_vectors_per_chunk(A.block(i), vectors, sizeof(value_type)));
  if (chunk >= vectors) {
    detail::block_transpose_sweep<semiring>(exec, A, y.data(), z.data(), vectors, launch);
    return;
  }
  auto& buffers = A.buffers();
  detail::in_vector_chunks<value_type>(
      exec, y.data(), z.data(), A.num_rows(), A.num_cols(), vectors, chunk, buffers.chunk_x,
      buffers.chunk_y, [&](const value_type* yc, value_type* zc, std::int64_t width) {
        detail::block_transpose_sweep<semiring>(exec, A, yc, zc, width, launch);
      });
}

template <class Semiring = void, class ExecutionSpace, class Scalar, class MemorySpace, class XView,
          class YView>
void multiply(const ExecutionSpace& exec, const BlockGrammarMatrix<Scalar, MemorySpace>& A,
              const XView& x, const YView& y, SweepLaunch launch = SweepLaunch::automatic) {
  using value_type = typename YView::non_const_value_type;
  using semiring =
      std::conditional_t<std::is_void<Semiring>::value, PlusTimes<value_type>, Semiring>;
  const std::int64_t vectors =
      detail::check_multiply_operands<semiring, ExecutionSpace, MemorySpace>(
          x, y, A.num_rows(), A.num_cols(), "block matrix");
  if (vectors == 0) return;
  // The smallest chunk any block's budget allows.
  std::int64_t chunk = vectors;
  for (std::size_t i = 0; i < A.num_held_blocks(); ++i)
    chunk = std::min(
        chunk, detail::vectors_per_chunk<ExecutionSpace>(A.block(i), vectors, sizeof(value_type)));
  // Decided once for every chunk: a narrower last chunk keeps the instances (and the
  // graphs captured on them).
  const int streams =
      detail::block_stream_count<ExecutionSpace>(A, std::min(chunk, vectors), sizeof(value_type));
  if (chunk >= vectors) {
    detail::block_sweep<semiring>(exec, A, x.data(), y.data(), vectors, launch, streams);
    return;
  }
  auto& buffers = A.buffers();
  detail::in_vector_chunks<value_type>(
      exec, x.data(), y.data(), A.num_cols(), A.num_rows(), vectors, chunk, buffers.chunk_x,
      buffers.chunk_y, [&](const value_type* xc, value_type* yc, std::int64_t width) {
        detail::block_sweep<semiring>(exec, A, xc, yc, width, launch, streams);
      });
}

}  // namespace kcla
