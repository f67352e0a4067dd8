#include <kcla/detail/memory_limit.hpp>

#include <kcla/error.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace kcla::detail {

std::uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return std::uint64_t(1) << 46;  // 64 TiB
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size);
}

std::uint64_t allocation_limit_bytes() {
  std::uint64_t limit = physical_memory_bytes();
  if (const char* env = std::getenv("KCLA_MEMORY_LIMIT_MB")) {
    char* end = nullptr;
    const unsigned long long mib = std::strtoull(env, &end, 10);
    // Ignored unless a whole positive number that does not overflow in bytes.
    if (end != env && *end == '\0' && mib > 0 && mib < (std::uint64_t(1) << 44))
      limit = std::min<std::uint64_t>(limit, static_cast<std::uint64_t>(mib) << 20);
  }
  return limit;
}

void check_allocation(const std::string& file, const std::string& what, std::uint64_t count,
                      std::uint64_t element_bytes) {
  const std::uint64_t limit = allocation_limit_bytes();
  if (element_bytes != 0 && count > limit / element_bytes)
    throw FormatError(
        file,
        what + " would need " + std::to_string(count) + " x " + std::to_string(element_bytes) +
            " bytes, more than the " + std::to_string(limit >> 20) + " MiB of memory " +
            (limit < physical_memory_bytes() ? "KCLA_MEMORY_LIMIT_MB allows" : "this machine has") +
            " (corrupt size?)");
}

void throw_out_of_memory(const std::string& file) {
  throw FormatError(file, "out of memory while reading (is the file larger than this machine's " +
                              std::to_string(physical_memory_bytes() >> 20) + " MiB of memory?)");
}

}  // namespace kcla::detail
