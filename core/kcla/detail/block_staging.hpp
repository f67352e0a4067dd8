// What an out-of-core block grammar matrix keeps besides its blocks' shells: the packed
// images (kcla::GrammarMatrix::write_packed_image) of the resident blocks in device memory,
// those of the streamed blocks in staging (pinned host) memory, and the device slots the
// streamed blocks pass through during a product. Built by BlockGrammarMatrix; read by
// kernels/kcla/block_grammar_multiply.hpp.
#pragma once

#include <kcla/detail/staging_space.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <memory>
#include <typeindex>
#include <typeinfo>
#include <vector>

namespace kcla::detail {

template <class MemorySpace>
struct BlockStaging {
  using staging_space = typename StagingSpace<MemorySpace>::type;
  using device_image = Kokkos::View<std::uint64_t*, MemorySpace>;
  using staged_image = Kokkos::View<std::uint64_t*, staging_space>;

  std::vector<device_image> resident_images;  // per held block; empty when streamed
  std::vector<staged_image> staged_images;    // per held block; empty when resident
  std::vector<std::int64_t> image_bytes;      // per held block
  // The streamed blocks in product order; the j-th passes through slot j % slots.
  std::vector<std::size_t> streamed;
  std::vector<int> slot_of;  // per held block: its slot, or -1 when resident
  int slots = 0;
  std::int64_t slot_bytes = 0;  // the largest streamed image
  device_image slot_memory;     // slots x slot_bytes
  // The copy queue of the execution space the last product ran on (type-erased: its type
  // lives in kernels/, which core does not see).
  mutable std::shared_ptr<void> copy_queue;
  mutable std::type_index copy_queue_type = std::type_index(typeid(void));

  void* slot_address(int slot) const {
    return reinterpret_cast<char*>(slot_memory.data()) + slot * slot_bytes;
  }
};

}  // namespace kcla::detail
