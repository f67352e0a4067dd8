// Writing a file atomically: the content goes to a temporary file in the same directory,
// which is renamed over the target only once everything was written. A reader never sees
// a half-written file, and a failed write leaves the old file untouched.
#pragma once

#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>

namespace kcla::detail {

class AtomicFile {
 public:
  /// Creates the temporary file next to `path`; throws FormatError(path, ...) on failure.
  explicit AtomicFile(const std::string& path);
  /// Removes the temporary file unless commit() succeeded.
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  /// Buffered stream to write to (errors are detected at commit()).
  std::FILE* stream() { return stream_; }
  void write(const void* data, std::size_t bytes);
  void write(const std::string& text) { write(text.data(), text.size()); }

  /// Flushes, syncs, closes and renames onto the target; throws FormatError on failure.
  void commit();

 private:
  std::string path_;
  std::string temp_path_;
  std::FILE* stream_ = nullptr;
  bool committed_ = false;
};

/// For writers that need a path, not a stream (HDF5): `write(tmp_path)` fills a temporary
/// file next to `path`, which is then renamed over `path`; on any exception the temporary
/// file is removed and the target is untouched.
void write_atomically(const std::string& path,
                      const std::function<void(const std::string&)>& write);

}  // namespace kcla::detail
