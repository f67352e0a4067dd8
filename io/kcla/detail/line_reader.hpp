// Streaming line-by-line reading of text files: a fixed buffer instead of the whole file
// in memory, line numbers for error messages, and the byte count left (so readers can
// bound what a declared size could possibly hold before reserving memory).
#pragma once

#include <kcla/error.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace kcla::detail {

class LineReader {
 public:
  /// Opens `path`; throws FormatError when it cannot be opened.
  explicit LineReader(const std::string& path);
  /// Reads the lines of `text` (a file's content kept elsewhere, e.g. inside an HDF5
  /// file); errors name `name`.
  static LineReader over_text(const std::string& name, std::string_view text);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;
  LineReader(LineReader&& other) noexcept;
  LineReader& operator=(LineReader&&) = delete;

  /// The next line without its line ending ("\n" or "\r\n"); false at the end of the file.
  /// The view stays valid until the next call.
  bool next(std::string_view& line);

  /// 1-based number of the line `next` returned last (0 before the first).
  std::int64_t line_number() const { return line_number_; }
  /// Bytes not yet returned as lines; UINT64_MAX while the size is unknown (a pipe), as
  /// the readers test for (subtracting what was consumed made a pipe look like a file of
  /// 2^64 - 1 - consumed bytes, bounding nothing).
  std::uint64_t remaining_bytes() const {
    return file_size_ == UINT64_MAX ? UINT64_MAX : file_size_ - consumed_;
  }
  const std::string& path() const { return path_; }
  /// Byte offset in the file of the line the next call to `next` returns.
  std::uint64_t offset() const { return consumed_; }

  /// Throws FormatError naming the file and the current line.
  [[noreturn]] void fail(const std::string& what) const;

 private:
  LineReader() = default;
  std::string path_;
  std::FILE* file_ = nullptr;
  std::vector<char> buffer_;
  std::size_t begin_ = 0;  ///< first unread byte in buffer_
  std::size_t end_ = 0;    ///< one past the last valid byte in buffer_
  bool at_eof_ = false;
  std::int64_t line_number_ = 0;
  std::uint64_t file_size_ = 0;
  std::uint64_t consumed_ = 0;
};

}  // namespace kcla::detail
