// Whole-file reads of little-endian arrays (the mm-repair files), with the size checked
// against the element type.
#pragma once

#include <kcla/detail/memory_limit.hpp>
#include <kcla/error.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "kcla's binary readers assume a little-endian host"
#endif

namespace kcla::detail {

/// Size of the regular file `path` in bytes; throws FormatError if it cannot be read.
std::uint64_t file_size(const std::string& path);

/// Reads `bytes` bytes of `path` into `data`; throws FormatError on failure.
void read_file_bytes(const std::string& path, void* data, std::uint64_t bytes);

/// The whole file as an array of T; its size must be a multiple of sizeof(T).
template <class T>
std::vector<T> read_array_file(const std::string& path) {
  static_assert(std::is_trivially_copyable_v<T>);
  const std::uint64_t bytes = file_size(path);
  if (bytes % sizeof(T) != 0)
    throw FormatError(path, "size " + std::to_string(bytes) + " bytes is not a multiple of " +
                                std::to_string(sizeof(T)) + " (truncated file?)");
  // The file's size is trusted only as far as memory goes: a sparse file of 2^40 bytes
  // must give an error naming it, not std::bad_alloc or an OOM kill.
  check_allocation(path, "the file's content", bytes / sizeof(T), sizeof(T));
  std::vector<T> data(static_cast<std::size_t>(bytes / sizeof(T)));
  read_file_bytes(path, data.data(), bytes);
  return data;
}

}  // namespace kcla::detail
