// Guards against allocating what a declared size in a file asks for when that is more
// than the machine has: a corrupt or hostile header must give an error, not an OOM kill.
#pragma once

#include <cstdint>
#include <string>

namespace kcla::detail {

/// Physical memory of this machine in bytes (a large fallback when it cannot be read).
std::uint64_t physical_memory_bytes();

/// The most one array may take: physical memory, or less when the environment variable
/// KCLA_MEMORY_LIMIT_MB holds a smaller positive number of MiB (the fuzz targets set it to
/// stay inside their sanitizer's memory limit; a container can set it to its own limit).
std::uint64_t allocation_limit_bytes();

/// Throws FormatError(file, ...) when `count` elements of `element_bytes` each are more
/// than allocation_limit_bytes(); `what` names the array ("row offsets").
void check_allocation(const std::string& file, const std::string& what, std::uint64_t count,
                      std::uint64_t element_bytes);

/// Throws FormatError(file, ...) for a read that ran out of memory (std::bad_alloc), so
/// that even a file too large for this machine gives an error naming it.
[[noreturn]] void throw_out_of_memory(const std::string& file);

}  // namespace kcla::detail
