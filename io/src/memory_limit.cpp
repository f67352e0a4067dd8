#include <kcla/detail/memory_limit.hpp>

#include <kcla/error.hpp>

#include <unistd.h>

namespace kcla::detail {

std::uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return std::uint64_t(1) << 46;  // 64 TiB
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size);
}

void check_allocation(const std::string& file, const std::string& what, std::uint64_t count,
                      std::uint64_t element_bytes) {
  const std::uint64_t limit = physical_memory_bytes();
  if (element_bytes != 0 && count > limit / element_bytes)
    throw FormatError(file, what + " would need " + std::to_string(count) + " x " +
                                std::to_string(element_bytes) + " bytes, more than the " +
                                std::to_string(limit >> 20) +
                                " MiB of memory this machine has (corrupt size?)");
}

}  // namespace kcla::detail
