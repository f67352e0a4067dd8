#include "binary_file.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace kcla::detail {

std::uint64_t file_size(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0)
    throw FormatError(path, std::string("cannot open: ") + std::strerror(errno));
  if (!S_ISREG(info.st_mode)) throw FormatError(path, "is not a regular file");
  return static_cast<std::uint64_t>(info.st_size);
}

void read_file_bytes(const std::string& path, void* data, std::uint64_t bytes) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw FormatError(path, std::string("cannot open: ") + std::strerror(errno));
  const std::size_t got = bytes == 0 ? 0 : std::fread(data, 1, static_cast<std::size_t>(bytes), f);
  std::fclose(f);
  if (got != bytes)
    throw FormatError(path, "read " + std::to_string(got) + " of " + std::to_string(bytes) +
                                " bytes (was the file changed while being read?)");
}

}  // namespace kcla::detail
