// Small RAII and checked-call helpers over the HDF5 C API, shared by kcla's HDF5 readers
// and writers. Every failure becomes a FormatError naming the file and the object.
#pragma once

#include <kcla/error.hpp>

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kcla::detail {

/// Owns one HDF5 identifier and closes it with the matching H5*close.
class Hdf5Handle {
 public:
  using closer = herr_t (*)(hid_t);
  Hdf5Handle() = default;
  Hdf5Handle(hid_t id, closer close) : id_(id), close_(close) {}
  Hdf5Handle(const Hdf5Handle&) = delete;
  Hdf5Handle& operator=(const Hdf5Handle&) = delete;
  Hdf5Handle(Hdf5Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  Hdf5Handle& operator=(Hdf5Handle&& o) noexcept {
    reset();
    id_ = o.id_;
    close_ = o.close_;
    o.id_ = -1;
    return *this;
  }
  ~Hdf5Handle() { reset(); }
  void reset() {
    if (id_ >= 0 && close_) close_(id_);
    id_ = -1;
  }
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }

 private:
  hid_t id_ = -1;
  closer close_ = nullptr;
};

/// Turns HDF5's own error printing off for the lifetime of the object (kcla reports).
class Hdf5Quiet {
 public:
  Hdf5Quiet() {
    H5Eget_auto2(H5E_DEFAULT, &old_func_, &old_data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~Hdf5Quiet() { H5Eset_auto2(H5E_DEFAULT, old_func_, old_data_); }
  Hdf5Quiet(const Hdf5Quiet&) = delete;
  Hdf5Quiet& operator=(const Hdf5Quiet&) = delete;

 private:
  H5E_auto2_t old_func_ = nullptr;
  void* old_data_ = nullptr;
};

template <class T>
hid_t hdf5_native_type();
template <>
inline hid_t hdf5_native_type<double>() {
  return H5T_NATIVE_DOUBLE;
}
template <>
inline hid_t hdf5_native_type<float>() {
  return H5T_NATIVE_FLOAT;
}
template <>
inline hid_t hdf5_native_type<std::int32_t>() {
  return H5T_NATIVE_INT32;
}
template <>
inline hid_t hdf5_native_type<std::int64_t>() {
  return H5T_NATIVE_INT64;
}
template <>
inline hid_t hdf5_native_type<std::uint16_t>() {
  return H5T_NATIVE_UINT16;
}
template <>
inline hid_t hdf5_native_type<std::uint8_t>() {
  return H5T_NATIVE_UINT8;
}

/// True when the file datatype `type` is the native type `native` in either byte order
/// (same class, size, sign and bit layout: a float type with other exponent or mantissa
/// fields, as a corrupt file may declare, does not match).
bool hdf5_type_matches(hid_t type, hid_t native);

/// A writer/reader context bound to one file path (for error messages).
/// Sets the file-format bounds kcla writes with (format version 2 of its files): the HDF5
/// 1.10 format, whose superblock, object headers and chunk indexes carry checksums, so a
/// flipped metadata byte is an error instead of a misread. Returns false when the library
/// refuses (then the access list is unchanged).
bool use_checksummed_metadata(hid_t file_access);

class Hdf5File {
 public:
  /// Creates (truncating) `path` for writing.
  static Hdf5File create(const std::string& path, const std::string& display_name);
  /// Opens `path` read-only.
  static Hdf5File open(const std::string& path);
  /// Takes ownership of a file opened elsewhere (a parallel file access list).
  static Hdf5File adopt(hid_t file, const std::string& display_name) {
    Hdf5File f;
    f.file_ = Hdf5Handle(file, H5Fclose);
    f.name_ = display_name;
    if (!f.file_.valid()) f.fail("", "cannot create the file");
    return f;
  }

  hid_t id() const { return file_.get(); }
  const std::string& name() const { return name_; }
  [[noreturn]] void fail(const std::string& object, const std::string& what) const {
    throw FormatError(name_, object.empty() ? what : "'" + object + "': " + what);
  }

  Hdf5Handle create_group(const std::string& path) const;
  Hdf5Handle open_group(const std::string& path) const;

  template <class T>
  void write_dataset(hid_t group, const std::string& name, const std::vector<T>& data) const {
    write_dataset(group, name, data.data(), static_cast<std::int64_t>(data.size()));
  }
  /// `length` elements at `data` (chunked, shuffled, deflated, Fletcher32).
  template <class T>
  void write_dataset(hid_t group, const std::string& name, const T* data,
                     std::int64_t length) const;
  template <class T>
  std::vector<T> read_dataset(hid_t group, const std::string& name,
                              std::int64_t expected_length = -1) const;
  /// Reads a dataset of exactly `length` elements into caller memory (type, length and
  /// checksums checked).
  template <class T>
  void read_dataset_into(hid_t group, const std::string& name, T* out, std::int64_t length) const;
  /// Reads the ranges (offset, count) of a dataset of exactly `length` elements, one after
  /// the other into `out` (ranges increasing and disjoint; type, length and the checksums
  /// of the chunks read are checked).
  template <class T>
  void read_dataset_ranges(hid_t group, const std::string& name, std::int64_t length,
                           const std::vector<std::pair<std::int64_t, std::int64_t>>& ranges,
                           T* out) const;
  /// Number of elements of a rank-1 dataset, without reading it.
  std::int64_t dataset_length(hid_t group, const std::string& name) const;

  void write_attribute(hid_t object, const std::string& name, const std::string& value) const;
  void write_attribute(hid_t object, const std::string& name, std::int64_t value) const;
  std::string read_string_attribute(hid_t object, const std::string& name) const;
  std::int64_t read_int_attribute(hid_t object, const std::string& name) const;

 private:
  /// Fails unless the attribute holds exactly one element (scalar or a 1-element array).
  void require_one_element(hid_t attribute, const std::string& name) const;

  Hdf5Handle file_;
  std::string name_;
};

}  // namespace kcla::detail
