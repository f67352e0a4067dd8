// A block grammar matrix for a Kokkos memory space: one GrammarMatrix per held block (each
// with its own schedule, chosen by the cost model for that block), sharing one sweep
// workspace and one partial-result buffer, since the blocks' products run one after another
// on the same execution space instance.
//
// Out of core: with BlockMatrixOptions::device_budget_bytes set and blocks that need more, the
// blocks that fit stay resident and the others wait in pinned host memory; each product
// streams them through a few device slots, copies overlapped with the sweeps (CUDA).
#pragma once

#include <kcla/block_grammar.hpp>
#include <kcla/detail/block_staging.hpp>
#include <kcla/error.hpp>
#include <kcla/grammar_matrix.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <typeindex>
#include <typeinfo>
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
  // Concurrent block sweeps (BlockMatrixOptions::streams): per instance a workspace, a
  // partial result and an accumulator of y (the first instance accumulates into y).
  std::vector<Kokkos::View<std::uint64_t*, MemorySpace>> stream_workspace, stream_partial, stream_y;
  // The instances (type-erased: their type lives in kernels/, which core does not see).
  std::shared_ptr<void> streams;
  std::type_index streams_type = std::type_index(typeid(void));
  int streams_count = 0;
};
}  // namespace detail

/// How a block matrix holds and runs its blocks: device memory for their schedule arrays
/// (out-of-core products) and concurrent block sweeps.
struct BlockMatrixOptions {
  /// Bytes the blocks' schedule arrays may take in the matrix's memory space; 0: no bound,
  /// every block resident. When the blocks need more, the matrix keeps resident (in block
  /// order) those that fit beside `slots` slots of the largest block, and streams the rest
  /// from pinned host memory through the slots in every product (right products only).
  std::int64_t device_budget_bytes = 0;
  /// Slots of the streamed blocks: at least 2 (one being swept while the next arrives).
  int slots = 3;
  /// Execution space instances the blocks' sweeps spread over (each with its own workspace,
  /// partial result and copy of y, combined at the end): 0 chooses (several on CUDA for
  /// products of few vectors, whose block sweeps leave the GPU idle between launches, as
  /// many as the workspace budget allows; one elsewhere), 1 runs the blocks one after
  /// another. Streamed blocks (out of core) spread too, as far as the slots allow.
  int streams = 0;
};

template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class BlockGrammarMatrix {
 public:
  using scalar_type = Scalar;
  using memory_space = MemorySpace;

  BlockGrammarMatrix() = default;
  /// Uploads every block `g` holds; `options` applies to each block (its cost model, its
  /// workspace budget); `block_options` bounds the device memory of the blocks' arrays
  /// and says how their sweeps run.
  explicit BlockGrammarMatrix(const BlockGrammar& g, const GrammarMatrixOptions& options = {},
                              const BlockMatrixOptions& block_options = {})
      : layout_(g.layout), block_ids_(g.block_ids), block_options_(block_options) {
    g.validate("BlockGrammarMatrix");
    if (block_options.device_budget_bytes < 0)
      throw InvalidArgument("BlockGrammarMatrix: device_budget_bytes is negative");
    if (block_options.streams < 0) throw InvalidArgument("BlockGrammarMatrix: streams is negative");
    blocks_.reserve(g.grammars.size());
    if (block_options.device_budget_bytes == 0) {
      for (const auto& grammar : g.grammars) blocks_.emplace_back(grammar, options);
      return;
    }
    stage(g, options, block_options);
  }

  BlockGrammarMatrix(const BlockGrammarMatrix&) = default;
  BlockGrammarMatrix(BlockGrammarMatrix&&) = default;
  ~BlockGrammarMatrix() = default;
  /// Copy or move: this matrix's blocks go first, while the stream instances their captured
  /// launch graphs wait on (held by the buffers) still exist.
  BlockGrammarMatrix& operator=(BlockGrammarMatrix other) {
    blocks_.clear();
    layout_ = std::move(other.layout_);
    block_ids_ = std::move(other.block_ids_);
    block_options_ = other.block_options_;
    buffers_ = std::move(other.buffers_);
    staging_ = std::move(other.staging_);
    blocks_ = std::move(other.blocks_);
    return *this;
  }

  std::int64_t num_rows() const { return layout_.num_rows; }
  std::int64_t num_cols() const { return layout_.num_cols; }
  const BlockLayout& layout() const { return layout_; }
  const BlockMatrixOptions& block_options() const { return block_options_; }
  /// The held blocks: block(i) is layout().blocks[block_id(i)].
  std::size_t num_held_blocks() const { return blocks_.size(); }
  std::int64_t block_id(std::size_t i) const { return block_ids_[i]; }
  const BlockExtent& extent(std::size_t i) const { return layout_.blocks[block_ids_[i]]; }
  /// Block i's matrix, valid while this matrix lives (with a device budget its arrays are
  /// views into memory this matrix owns). For a streamed block (resident(i) false) they
  /// are a device slot that holds the block only during kcla::multiply on this matrix.
  const GrammarMatrix<Scalar, MemorySpace>& block(std::size_t i) const { return blocks_[i]; }

  /// Whether products stream some blocks from host memory (BlockMatrixOptions).
  bool streamed() const { return staging_ && !staging_->streamed.empty(); }
  /// Whether block i's arrays stay in the memory space between products.
  bool resident(std::size_t i) const { return !staging_ || staging_->slot_of[i] < 0; }
  std::size_t num_streamed_blocks() const { return staging_ ? staging_->streamed.size() : 0; }
  /// Bytes of the streamed blocks' arrays: what every product copies into the slots.
  std::int64_t streamed_bytes() const {
    std::int64_t b = 0;
    if (staging_)
      for (auto i : staging_->streamed) b += staging_->image_bytes[i];
    return b;
  }
  /// The staging of an out-of-core matrix (null when every block was uploaded whole).
  const detail::BlockStaging<MemorySpace>* staging() const { return staging_.get(); }

  /// Device bytes of every block's schedule arrays (no workspace): for an out-of-core
  /// matrix the resident blocks' images and the slots.
  std::int64_t static_bytes() const {
    std::int64_t b = 0;
    if (staging_) {
      for (const auto& image : staging_->resident_images)
        b += 8 * static_cast<std::int64_t>(image.span());
      return b + 8 * static_cast<std::int64_t>(staging_->slot_memory.span());
    }
    for (const auto& m : blocks_) b += m.static_bytes();
    return b;
  }
  /// Device bytes of the shared buffers (also the concurrent instances') and the blocks'
  /// plans (ticket tables).
  std::int64_t plan_bytes() const {
    std::int64_t b = 0;
    if (buffers_) {
      b += 8 * static_cast<std::int64_t>(buffers_->workspace.span() + buffers_->partial.span());
      for (const auto* views :
           {&buffers_->stream_workspace, &buffers_->stream_partial, &buffers_->stream_y})
        for (const auto& v : *views) b += 8 * static_cast<std::int64_t>(v.span());
    }
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
  using staging_space = typename detail::BlockStaging<MemorySpace>::staging_space;

  // Every block's arrays packed into one image in staging memory; the images that fit the
  // budget (beside the slots) move to the memory space, the rest stay for streaming.
  void stage(const BlockGrammar& g, const GrammarMatrixOptions& options,
             const BlockMatrixOptions& streaming) {
    if (options.products != GrammarProducts::right)
      throw InvalidArgument(
          "BlockGrammarMatrix: a device budget (BlockMatrixOptions) supports right products only "
          "(GrammarMatrixOptions::products = GrammarProducts::right)");
    if (streaming.slots < 2)
      throw InvalidArgument(
          "BlockGrammarMatrix: BlockMatrixOptions::slots must be at least 2, not " +
          std::to_string(streaming.slots));
    auto st = std::make_shared<detail::BlockStaging<MemorySpace>>();
    const std::size_t n = g.grammars.size();
    std::vector<GrammarMatrix<Scalar, staging_space>> staged;
    staged.reserve(n);
    std::int64_t total = 0, largest = 0;
    for (const auto& grammar : g.grammars) {
      const GrammarMatrix<Scalar, Kokkos::HostSpace> host(grammar, options);
      const std::int64_t bytes = host.packed_image_bytes();
      typename detail::BlockStaging<MemorySpace>::staged_image image(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::block_grammar::staged_image"),
          static_cast<std::size_t>(bytes / 8));
      host.write_packed_image(image.data());
      staged.push_back(host.template over_packed_image<staging_space>(image.data()));
      st->staged_images.push_back(image);
      st->image_bytes.push_back(bytes);
      total += bytes;
      largest = std::max(largest, bytes);
    }
    const std::int64_t budget = streaming.device_budget_bytes;
    std::vector<bool> resident(n, total <= budget);
    if (total > budget) {
      const std::int64_t slot_total = streaming.slots * largest;
      if (slot_total > budget)
        throw InvalidArgument("BlockGrammarMatrix: the device budget of " + std::to_string(budget) +
                              " bytes cannot hold " + std::to_string(streaming.slots) +
                              " slots of the largest block (" + std::to_string(largest) +
                              " bytes each); raise the budget or compress with narrower blocks");
      std::int64_t left = budget - slot_total;
      for (std::size_t i = 0; i < n; ++i)
        if (st->image_bytes[i] <= left) resident[i] = true, left -= st->image_bytes[i];
      for (std::size_t i = 0; i < n; ++i)
        if (!resident[i]) st->streamed.push_back(i);
      st->slots = static_cast<int>(
          std::min<std::size_t>(static_cast<std::size_t>(streaming.slots), st->streamed.size()));
      for (auto i : st->streamed) st->slot_bytes = std::max(st->slot_bytes, st->image_bytes[i]);
      st->slot_memory = typename detail::BlockStaging<MemorySpace>::device_image(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::block_grammar::slots"),
          static_cast<std::size_t>(st->slots * st->slot_bytes / 8));
    }
    st->resident_images.resize(n);
    st->slot_of.assign(n, -1);
    for (std::size_t j = 0; j < st->streamed.size(); ++j)
      st->slot_of[st->streamed[j]] = static_cast<int>(j % st->slots);
    for (std::size_t i = 0; i < n; ++i) {
      void* address = nullptr;
      if (resident[i]) {
        auto& image = st->resident_images[i];
        image = typename detail::BlockStaging<MemorySpace>::device_image(
            Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::block_grammar::image"),
            st->staged_images[i].extent(0));
        Kokkos::deep_copy(image, st->staged_images[i]);
        st->staged_images[i] = {};
        address = image.data();
      } else {
        address = st->slot_address(st->slot_of[i]);
      }
      blocks_.push_back(staged[i].template over_packed_image<MemorySpace>(address));
    }
    staging_ = std::move(st);
  }

  BlockLayout layout_;
  std::vector<std::int64_t> block_ids_;
  BlockMatrixOptions block_options_;
  // Declared before the blocks, so destroyed after them: the blocks' captured launch
  // graphs name the buffers' stream instances and wait on them when destroyed.
  mutable std::shared_ptr<detail::BlockProductBuffers<MemorySpace>> buffers_;
  std::shared_ptr<detail::BlockStaging<MemorySpace>> staging_;
  std::vector<GrammarMatrix<Scalar, MemorySpace>> blocks_;
};

}  // namespace kcla
