// Guards against allocating what a declared size in a file asks for when that is more
// than the machine has: a corrupt or hostile header must give an error, not an OOM kill.
#pragma once

#include <cstdint>
#include <string>

namespace kcla::detail {

/// Physical memory of this machine in bytes (a large fallback when it cannot be read).
std::uint64_t physical_memory_bytes();

/// Throws FormatError(file, ...) when `count` elements of `element_bytes` each are more
/// than this machine's physical memory; `what` names the array ("row offsets").
void check_allocation(const std::string& file, const std::string& what, std::uint64_t count,
                      std::uint64_t element_bytes);

}  // namespace kcla::detail
