// What kcla's libFuzzer targets share (docs/fuzzing.md). A target writes the fuzz input to
// files in a private scratch folder and runs one reader on them. Acceptable outcomes are a
// result that passes the reader's own promises (validate(), canonical rows) or a
// kcla::FormatError naming a file of the scratch folder. Anything else -- another
// exception, a FormatError naming something else, an invalid result -- is a finding: the
// target prints it and aborts, and libFuzzer saves the input as a crash artifact.
//
// Each target is one translation unit that includes this header once.
#pragma once

#include <kcla/csr_matrix.hpp>
#include <kcla/error.hpp>

#include <cxxabi.h>
#include <stdlib.h>  // mkdtemp, setenv

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <typeinfo>
#include <utility>

namespace kcla::fuzz {

/// Prints a finding and aborts (libFuzzer then saves the input).
[[noreturn]] inline void finding(const std::string& what, const std::string& detail) {
  std::fprintf(stderr, "\n==== kcla fuzz finding: %s\n     %s\n", what.c_str(), detail.c_str());
  std::fflush(stderr);
  std::abort();
}

/// The process's scratch folder: created on first use, removed with its files at exit.
class ScratchDir {
 public:
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/kcla-fuzz-XXXXXX";
    if (!mkdtemp(pattern.data())) finding("cannot create a scratch folder", pattern);
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline const std::string& scratch_dir() {
  static const ScratchDir dir;
  return dir.path();
}

/// Writes `size` bytes to the scratch file `name` and returns its path. The old file is
/// removed first, so each input is a new file (HDF5 recognises open files by inode).
inline std::string write_file(const std::string& name, const void* data, std::size_t size) {
  const std::string path = scratch_dir() + "/" + name;
  std::remove(path.c_str());
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || (size > 0 && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0)
    finding("cannot write the scratch file", path);
  return path;
}

inline std::string type_name(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  return status == 0 && name ? name.get() : type.name();
}

/// Runs `read`: its result, or nothing when it threw a FormatError naming a scratch file.
template <class Read>
auto read_or_reject(Read&& read) -> std::optional<decltype(read())> {
  try {
    return read();
  } catch (const kcla::FormatError& e) {
    if (e.file().rfind(scratch_dir() + "/", 0) != 0)
      finding("FormatError that names no input file", e.what());
    return std::nullopt;
  } catch (const std::exception& e) {
    finding("escaped exception " + type_name(typeid(e)), e.what());
  } catch (...) {
    finding("escaped exception of a type not derived from std::exception", "");
  }
}

/// A reader's CSR result must be valid and canonical: columns strictly ascending within
/// each row, no stored zeros.
inline void check_canonical(const kcla::CsrMatrix<double>& a, const char* reader) {
  try {
    a.validate(reader);
  } catch (const std::exception& e) {
    finding(std::string(reader) + " returned an invalid matrix", e.what());
  }
  for (std::int64_t r = 0; r < a.num_rows; ++r)
    for (auto k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k) {
      if (k > a.row_offsets[r] && a.column_indices[k - 1] >= a.column_indices[k])
        finding(std::string(reader) + " returned a row that is not strictly ascending",
                "row " + std::to_string(r));
      if (a.values[k] == 0)
        finding(std::string(reader) + " returned a stored zero", "row " + std::to_string(r));
    }
}

}  // namespace kcla::fuzz

/// Once per process, before the first input: bounds what a declared size may allocate
/// (kcla::detail::check_allocation) well inside libFuzzer's 2 GiB RSS limit, so a header
/// declaring a billion rows is the reader's FormatError rather than the fuzzer's
/// out-of-memory report. A value already in the environment wins.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("KCLA_MEMORY_LIMIT_MB", "64", 0);
  kcla::fuzz::scratch_dir();
  return 0;
}
