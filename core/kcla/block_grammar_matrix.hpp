// A block grammar matrix resident in a Kokkos memory space: one GrammarMatrix per held
// block (each with its own schedule, chosen by the cost model for that block), sharing one
// sweep workspace and one partial-result buffer, since the blocks' products run one after
// another on the same execution space instance.
#pragma once

#include <kcla/block_grammar.hpp>
#include <kcla/grammar_matrix.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <memory>
#include <vector>

namespace kcla {

namespace detail {
/// Buffers the blocks of one matrix share (grown on demand, never shrunk).
template <class MemorySpace>
struct BlockProductBuffers {
  Kokkos::View<std::uint64_t*, MemorySpace> workspace;         // value slots of any block's sweep
  Kokkos::View<std::uint64_t*, MemorySpace> partial;           // one block's rows x vectors result
  Kokkos::View<std::uint64_t*, MemorySpace> chunk_x, chunk_y;  // products in vector chunks
  Kokkos::View<std::uint64_t*, MemorySpace> transpose_workspace;  // node values, left products
};
}  // namespace detail

template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class BlockGrammarMatrix {
 public:
  using scalar_type = Scalar;
  using memory_space = MemorySpace;

  BlockGrammarMatrix() = default;
  /// Uploads every block `g` holds; `options` applies to each block (its cost model, its
  /// workspace budget).
  explicit BlockGrammarMatrix(const BlockGrammar& g, const GrammarMatrixOptions& options = {})
      : layout_(g.layout), block_ids_(g.block_ids) {
    g.validate("BlockGrammarMatrix");
    blocks_.reserve(g.grammars.size());
    for (const auto& grammar : g.grammars) blocks_.emplace_back(grammar, options);
  }

  std::int64_t num_rows() const { return layout_.num_rows; }
  std::int64_t num_cols() const { return layout_.num_cols; }
  const BlockLayout& layout() const { return layout_; }
  /// The held blocks: block(i) is layout().blocks[block_id(i)].
  std::size_t num_held_blocks() const { return blocks_.size(); }
  std::int64_t block_id(std::size_t i) const { return block_ids_[i]; }
  const BlockExtent& extent(std::size_t i) const { return layout_.blocks[block_ids_[i]]; }
  const GrammarMatrix<Scalar, MemorySpace>& block(std::size_t i) const { return blocks_[i]; }

  /// Device bytes of every block's schedule arrays (no workspace).
  std::int64_t static_bytes() const {
    std::int64_t b = 0;
    for (const auto& m : blocks_) b += m.static_bytes();
    return b;
  }
  /// Device bytes of the shared buffers and the blocks' plans (ticket tables).
  std::int64_t plan_bytes() const {
    std::int64_t b = 0;
    if (buffers_)
      b += 8 * static_cast<std::int64_t>(buffers_->workspace.span() + buffers_->partial.span());
    for (const auto& m : blocks_) {
      const auto& p = m.plan();
      b += m.plan_bytes() - 8 * static_cast<std::int64_t>(p.workspace.span());  // shared
    }
    return b;
  }
  std::int64_t device_bytes() const { return static_bytes() + plan_bytes(); }

  detail::BlockProductBuffers<MemorySpace>& buffers() const {
    if (!buffers_) buffers_ = std::make_shared<detail::BlockProductBuffers<MemorySpace>>();
    return *buffers_;
  }

 private:
  BlockLayout layout_;
  std::vector<std::int64_t> block_ids_;
  std::vector<GrammarMatrix<Scalar, MemorySpace>> blocks_;
  mutable std::shared_ptr<detail::BlockProductBuffers<MemorySpace>> buffers_;
};

}  // namespace kcla
