// Exceptions thrown by kcla. Every message names what was wrong and, for files, which
// file (and dataset or line) it came from.
#pragma once

#include <stdexcept>
#include <string>

namespace kcla {

/// Base class of every error kcla reports.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A caller passed an argument that violates a documented precondition.
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

/// A file could not be read or written, or its content is malformed.
class FormatError : public Error {
 public:
  FormatError(const std::string& file, const std::string& what)
      : Error(file + ": " + what), file_(file) {}
  const std::string& file() const noexcept { return file_; }

 private:
  std::string file_;
};

/// A backend library (cuSPARSE, cuBLAS, HDF5, LAPACK, ...) returned an error.
class BackendError : public Error {
 public:
  using Error::Error;
};

}  // namespace kcla
