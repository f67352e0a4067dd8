#include <kcla/detail/line_reader.hpp>

#include <kcla/detail/memory_limit.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace kcla::detail {

namespace {
constexpr std::size_t initial_buffer_bytes = std::size_t(1) << 20;
constexpr std::size_t min_buffer_bytes = std::size_t(1) << 12;
}  // namespace

LineReader::LineReader(const std::string& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_) throw FormatError(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat info {};
  if (fstat(fileno(file_), &info) != 0) info.st_mode = 0;
  // A pipe or device has no size: treat it as unbounded.
  file_size_ = S_ISREG(info.st_mode) ? static_cast<std::uint64_t>(info.st_size) : UINT64_MAX;
  if (S_ISDIR(info.st_mode)) {
    std::fclose(file_);
    throw FormatError(path, "is a directory, not a file");
  }
  // A small file gets a buffer of its size (plus the byte that finds the end): the fuzz
  // targets read thousands of tiny files a second, and zeroing 1 MiB each time dominated.
  buffer_.resize(file_size_ == UINT64_MAX
                     ? initial_buffer_bytes
                     : static_cast<std::size_t>(std::clamp<std::uint64_t>(
                           file_size_ + 1, min_buffer_bytes, initial_buffer_bytes)));
}

LineReader LineReader::over_text(const std::string& name, std::string_view text) {
  LineReader r;
  r.path_ = name;
  r.buffer_.assign(text.begin(), text.end());
  r.buffer_.push_back('\0');  // so data() + begin_ is valid even for an empty text
  r.end_ = text.size();
  r.at_eof_ = true;
  r.file_size_ = text.size();
  return r;
}

LineReader::LineReader(LineReader&& other) noexcept
    : path_(std::move(other.path_)),
      file_(other.file_),
      buffer_(std::move(other.buffer_)),
      begin_(other.begin_),
      end_(other.end_),
      at_eof_(other.at_eof_),
      line_number_(other.line_number_),
      file_size_(other.file_size_),
      consumed_(other.consumed_) {
  other.file_ = nullptr;
}

LineReader::~LineReader() {
  if (file_) std::fclose(file_);
}

bool LineReader::next(std::string_view& line) {
  while (true) {
    const char* start = buffer_.data() + begin_;
    if (const void* nl = std::memchr(start, '\n', end_ - begin_)) {
      const auto length = static_cast<std::size_t>(static_cast<const char*>(nl) - start);
      begin_ += length + 1;
      consumed_ += length + 1;
      line = std::string_view(start, length);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      ++line_number_;
      return true;
    }
    if (at_eof_) {
      if (begin_ == end_) return false;
      // Last line without a line ending.
      const auto length = end_ - begin_;
      line = std::string_view(start, length);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      begin_ = end_;
      consumed_ += length;
      ++line_number_;
      return true;
    }
    // Keep the partial line, make room (grow only for lines longer than the buffer).
    if (begin_ > 0) {
      std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (end_ == buffer_.size()) {
      // A line as long as memory (a sparse file of 2^40 bytes without a newline) is an
      // error naming the file, not std::bad_alloc after reading gigabytes.
      check_allocation(path_, "line " + std::to_string(line_number_ + 1),
                       std::uint64_t(buffer_.size()) * 2, 1);
      buffer_.resize(buffer_.size() * 2);
    }
    const std::size_t got = std::fread(buffer_.data() + end_, 1, buffer_.size() - end_, file_);
    if (got == 0) {
      if (std::ferror(file_)) fail(std::string("read error: ") + std::strerror(errno));
      at_eof_ = true;
    }
    end_ += got;
  }
}

void LineReader::fail(const std::string& what) const {
  throw FormatError(path_, "line " + std::to_string(line_number_) + ": " + what);
}

}  // namespace kcla::detail
