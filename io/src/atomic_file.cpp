#include <kcla/detail/atomic_file.hpp>

#include <kcla/error.hpp>

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

namespace kcla::detail {

namespace {

std::string system_error_text() {
  return std::strerror(errno);
}

/// The mode a plain fopen would give a new file: 0666 less the umask. umask() cannot be
/// read without setting it (racy in a library), so it comes from /proc; 0644 otherwise.
mode_t new_file_mode() {
  if (std::FILE* status = std::fopen("/proc/self/status", "r")) {
    char line[256];
    unsigned mask = 0;
    bool found = false;
    while (!found && std::fgets(line, sizeof line, status))
      found = std::sscanf(line, "Umask: %o", &mask) == 1;
    std::fclose(status);
    if (found) return static_cast<mode_t>(0666 & ~mask);
  }
  return 0644;
}

}  // namespace

AtomicFile::AtomicFile(const std::string& path) : path_(path) {
  temp_path_ = path + ".tmp.XXXXXX";
  std::vector<char> name(temp_path_.begin(), temp_path_.end());
  name.push_back('\0');
  const int fd = mkstemp(name.data());
  if (fd < 0) throw FormatError(path, "cannot create a temporary file: " + system_error_text());
  temp_path_ = name.data();
  // mkstemp creates mode 0600: keep the mode of the file being replaced, or give a new
  // file the one a plain create would.
  struct stat existing {};
  const mode_t mode =
      stat(path.c_str(), &existing) == 0 ? (existing.st_mode & 07777) : new_file_mode();
  if (fchmod(fd, mode) != 0) errno = 0;  // not fatal: the file just stays private
  stream_ = fdopen(fd, "wb");
  if (!stream_) {
    close(fd);
    std::remove(temp_path_.c_str());
    throw FormatError(path, "cannot open a temporary file: " + system_error_text());
  }
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  if (stream_) std::fclose(stream_);
  std::remove(temp_path_.c_str());
}

void AtomicFile::write(const void* data, std::size_t bytes) {
  if (bytes > 0 && std::fwrite(data, 1, bytes, stream_) != bytes)
    throw FormatError(path_, "write failed: " + system_error_text());
}

void AtomicFile::commit() {
  const bool flushed = std::fflush(stream_) == 0 && !std::ferror(stream_);
  const bool synced = flushed && fsync(fileno(stream_)) == 0;
  const bool closed = std::fclose(stream_) == 0;
  stream_ = nullptr;
  if (!flushed || !synced || !closed)
    throw FormatError(path_, "write failed: " + system_error_text());
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0)
    throw FormatError(path_, "cannot rename the temporary file into place: " + system_error_text());
  committed_ = true;
}

void write_atomically(const std::string& path,
                      const std::function<void(const std::string&)>& write) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::random_device rd;
  const fs::path tmp = folder / ("." + target.filename().string() + ".tmp." +
                                 std::to_string(::getpid()) + "." + std::to_string(rd() % 100000));
  try {
    write(tmp.string());
    fs::rename(tmp, target);
  } catch (...) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw;
  }
}

}  // namespace kcla::detail
