// Copies of streamed blocks from staging memory into device slots, ordered against the
// product's execution space instance. On CUDA the copies run on a stream of their own and
// events order them (a slot is refilled once the sweep reading it is done; a sweep starts
// once its block has arrived), so copies overlap the sweeps; elsewhere a copy waits for the
// instance and runs synchronously.
#pragma once

#include <kcla/config.hpp>
#include <kcla/detail/block_staging.hpp>
#include <kcla/detail/staging_space.hpp>
#include <kcla/error.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <typeindex>

namespace kcla::detail {

#if KCLA_HAVE_CUDA
/// The CUDA side (kernels/src/block_copy_queue_cuda.cpp): a non-blocking copy stream and,
/// per slot, a "copied" and a "released" event. Streams are passed as cudaStream_t values.
class CudaBlockCopies {
 public:
  explicit CudaBlockCopies(int slots);
  ~CudaBlockCopies();
  CudaBlockCopies(const CudaBlockCopies&) = delete;
  CudaBlockCopies& operator=(const CudaBlockCopies&) = delete;
  /// Copies `bytes` from `source` to `slot_memory` after the slot's last release.
  void copy(int slot, void* slot_memory, const void* source, std::size_t bytes);
  /// Work issued to `stream` from now on waits for the slot's last copy.
  void wait_copied(int slot, void* stream);
  /// The slot may be refilled once the work issued to `stream` so far is done.
  void release(int slot, void* stream);

 private:
  struct State;
  std::unique_ptr<State> state_;
};
#endif

/// Any execution space: a copy into a slot waits for everything issued to the instance.
template <class ExecutionSpace, class MemorySpace>
class BlockCopyQueue {
 public:
  explicit BlockCopyQueue(int /*slots*/) {}
  void copy(const ExecutionSpace& exec, int /*slot*/, void* slot_memory, const void* source,
            std::size_t bytes) {
    using bytes_in = Kokkos::View<char*, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    using bytes_from = Kokkos::View<const char*, typename StagingSpace<MemorySpace>::type,
                                    Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    exec.fence();  // the sweep that read the slot's previous block
    Kokkos::deep_copy(bytes_in(static_cast<char*>(slot_memory), bytes),
                      bytes_from(static_cast<const char*>(source), bytes));
  }
  void wait_copied(const ExecutionSpace&, int) {}
  void release(const ExecutionSpace&, int) {}
};

#if KCLA_HAVE_CUDA
template <class MemorySpace>
class BlockCopyQueue<Kokkos::Cuda, MemorySpace> {
 public:
  explicit BlockCopyQueue(int slots) : copies_(slots) {}
  void copy(const Kokkos::Cuda&, int slot, void* slot_memory, const void* source,
            std::size_t bytes) {
    copies_.copy(slot, slot_memory, source, bytes);
  }
  void wait_copied(const Kokkos::Cuda& exec, int slot) {
    copies_.wait_copied(slot, exec.cuda_stream());
  }
  void release(const Kokkos::Cuda& exec, int slot) { copies_.release(slot, exec.cuda_stream()); }

 private:
  CudaBlockCopies copies_;
};
#endif

/// One product's walk over the streamed blocks of a staged matrix (no-op for anything else):
/// the first `slots` copies are issued at the start; once the sweep of the j-th streamed
/// block is issued, its slot is refilled with block j + slots. Streamed blocks must be
/// swept in staging->streamed order (issued in that order; the sweeps may run on several
/// instances: events order each against its copy and its slot's next copy).
template <class ExecutionSpace, class MemorySpace>
class BlockStreamWalk {
 public:
  using queue_type = BlockCopyQueue<ExecutionSpace, MemorySpace>;

  BlockStreamWalk(const ExecutionSpace& exec, const BlockStaging<MemorySpace>* staging)
      : exec_(exec), staging_(staging) {
    if (!staging_ || staging_->streamed.empty()) return;
    if (staging_->copy_queue_type != std::type_index(typeid(queue_type))) {
      staging_->copy_queue = std::make_shared<queue_type>(staging_->slots);
      staging_->copy_queue_type = std::type_index(typeid(queue_type));
    }
    queue_ = static_cast<queue_type*>(staging_->copy_queue.get());
    const std::size_t first = std::min<std::size_t>(staging_->slots, staging_->streamed.size());
    for (std::size_t j = 0; j < first; ++j) issue(j);
  }

  /// Before block i's sweep on `on` (the product's instance, or one of the instances the
  /// blocks spread over): the sweep waits for its copy.
  void before(const ExecutionSpace& on, std::size_t i) {
    if (!streamed(i)) return;
    if (next_ >= staging_->streamed.size() || staging_->streamed[next_] != i)
      throw BackendError("kcla::multiply: streamed blocks swept out of their staging order");
    queue_->wait_copied(on, staging_->slot_of[i]);
  }
  /// After block i's sweep was issued to `on`: its slot takes the block `slots` places later.
  void after(const ExecutionSpace& on, std::size_t i) {
    if (!streamed(i)) return;
    queue_->release(on, staging_->slot_of[i]);
    const std::size_t refill = next_++ + static_cast<std::size_t>(staging_->slots);
    if (refill < staging_->streamed.size()) issue(refill);
  }

 private:
  bool streamed(std::size_t i) const { return staging_ && staging_->slot_of[i] >= 0; }
  void issue(std::size_t j) {
    const std::size_t i = staging_->streamed[j];
    const int slot = staging_->slot_of[i];
    queue_->copy(exec_, slot, staging_->slot_address(slot), staging_->staged_images[i].data(),
                 static_cast<std::size_t>(staging_->image_bytes[i]));
  }

  ExecutionSpace exec_;
  const BlockStaging<MemorySpace>* staging_;
  queue_type* queue_ = nullptr;
  std::size_t next_ = 0;
};

}  // namespace kcla::detail
