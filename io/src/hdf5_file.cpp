#include <kcla/config.hpp>

#if KCLA_HAVE_HDF5

#include <kcla/detail/memory_limit.hpp>
#include "hdf5_handle.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <new>
#include <type_traits>

namespace kcla::detail {

namespace {
// libhdf5 1.10 leaves an object header whose checksum failed pinned in its metadata cache:
// at exit its own clean-up then loops and prints "HDF5: infinite loop closing library"
// after kcla has already reported the corrupt file. kcla closes every file it opens, so
// the library's exit-time clean-up has nothing to flush: skip it (it must be requested
// before the first HDF5 call, hence a static initializer).
// A C function: it cannot throw. NOLINTNEXTLINE(cert-err58-cpp)
[[maybe_unused]] const bool kSkipHdf5ExitCleanUp = H5dont_atexit() >= 0;

constexpr std::int64_t kMaxElements = std::int64_t(1) << 40;  // 1 Ti elements: beyond = hostile

/// Whether every element of a one-dimensional dataset of n elements has storage (a
/// chunked dataset: every chunk, each in its place).
bool fully_stored(hid_t set, hsize_t n, std::size_t element_size) {
  Hdf5Handle plist(H5Dget_create_plist(set), H5Pclose);
  if (!plist.valid()) return false;
  switch (H5Pget_layout(plist.get())) {
    case H5D_COMPACT:
      return true;
    case H5D_CONTIGUOUS:
      return H5Dget_storage_size(set) >= n * element_size;
    case H5D_CHUNKED: {
#if H5_VERSION_GE(1, 10, 5)
      hsize_t chunk = 0, chunks = 0;
      if (H5Pget_chunk(plist.get(), 1, &chunk) != 1 || chunk == 0) return false;
      Hdf5Handle space(H5Dget_space(set), H5Sclose);
      if (!space.valid() || H5Dget_num_chunks(set, space.get(), &chunks) < 0) return false;
      if (chunks != (n + chunk - 1) / chunk) return false;
      // The index must hold exactly the chunks at 0, chunk, 2 chunk, ...: a corrupt key
      // can move a chunk outside the extent, and its place would read as fill values.
      for (hsize_t k = 0; k < chunks; ++k) {
        hsize_t offset = k * chunk, size = 0;
        unsigned mask = 0;
        haddr_t address = HADDR_UNDEF;
        if (H5Dget_chunk_info_by_coord(set, &offset, &mask, &address, &size) < 0 ||
            address == HADDR_UNDEF || size == 0)
          return false;
      }
      return true;
#else
      return H5Dget_storage_size(set) > 0;
#endif
    }
    default:
      return false;
  }
}

}  // namespace

bool hdf5_type_matches(hid_t type, hid_t native) {
  Hdf5Quiet quiet;
  if (type < 0) return false;
  if (H5Tequal(type, native) > 0) return true;
  Hdf5Handle swapped(H5Tcopy(native), H5Tclose);
  if (!swapped.valid()) return false;
  const H5T_order_t order = H5Tget_order(native);
  if (H5Tset_order(swapped.get(), order == H5T_ORDER_LE ? H5T_ORDER_BE : H5T_ORDER_LE) < 0)
    return false;
  return H5Tequal(type, swapped.get()) > 0;
}

bool use_checksummed_metadata(hid_t file_access) {
  // 1.10 is the oldest format with checksummed chunk indexes (fixed and extensible
  // arrays); the upper bound keeps files readable by 1.10 libraries when written by newer.
  return H5Pset_libver_bounds(file_access, H5F_LIBVER_V110, H5F_LIBVER_V110) >= 0;
}

Hdf5File Hdf5File::create(const std::string& path, const std::string& display_name) {
  Hdf5Quiet quiet;
  Hdf5File f;
  f.name_ = display_name;
  Hdf5Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!access.valid() || !use_checksummed_metadata(access.get()))
    f.fail("", "the HDF5 library refuses the 1.10 file format (checksummed metadata)");
  f.file_ = Hdf5Handle(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get()), H5Fclose);
  if (!f.file_.valid()) f.fail("", "cannot create the file");
  return f;
}

Hdf5File Hdf5File::open(const std::string& path) {
  Hdf5Quiet quiet;
  Hdf5File f;
  f.name_ = path;
  // The error_code overload: the throwing one lets std::filesystem_error escape for a
  // path it cannot stat (a name too long, a folder without permission).
  std::error_code error;
  if (!std::filesystem::exists(path, error)) f.fail("", error ? error.message() : "no such file");
  if (H5Fis_hdf5(path.c_str()) <= 0) f.fail("", "not an HDF5 file");
  // Strong close: closing the file also closes anything a failed read left open inside
  // it (corrupt files can otherwise keep HDF5 objects alive until exit).
  Hdf5Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  H5Pset_fclose_degree(access.get(), H5F_CLOSE_STRONG);
  f.file_ = Hdf5Handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, access.get()), H5Fclose);
  if (!f.file_.valid()) f.fail("", "cannot open as HDF5 (truncated or corrupt?)");
  return f;
}

Hdf5Handle Hdf5File::create_group(const std::string& path) const {
  Hdf5Quiet quiet;
  Hdf5Handle g(H5Gcreate2(id(), path.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (!g.valid()) fail(path, "cannot create group");
  return g;
}

Hdf5Handle Hdf5File::open_group(const std::string& path) const {
  Hdf5Quiet quiet;
  if (H5Lexists(id(), path.c_str(), H5P_DEFAULT) <= 0) fail(path, "group missing");
  Hdf5Handle g(H5Gopen2(id(), path.c_str(), H5P_DEFAULT), H5Gclose);
  if (!g.valid()) fail(path, "cannot open group");
  return g;
}

template <class T>
void Hdf5File::write_dataset(hid_t group, const std::string& name, const T* data,
                             std::int64_t length) const {
  Hdf5Quiet quiet;
  const hsize_t n = static_cast<hsize_t>(length);
  Hdf5Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  Hdf5Handle props(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  if (n > 0) {
    // Chunked, shuffled, deflated and checksummed: Fletcher32 catches flipped bytes.
    const hsize_t chunk = std::min<hsize_t>(n, hsize_t(1) << 16);
    H5Pset_chunk(props.get(), 1, &chunk);
    H5Pset_fletcher32(props.get());
    H5Pset_shuffle(props.get());
    H5Pset_deflate(props.get(), 4);
  }
  Hdf5Handle set(H5Dcreate2(group, name.c_str(), hdf5_native_type<T>(), space.get(), H5P_DEFAULT,
                            props.get(), H5P_DEFAULT),
                 H5Dclose);
  if (!set.valid()) fail(name, "cannot create dataset");
  if (n > 0 && H5Dwrite(set.get(), hdf5_native_type<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    fail(name, "write failed");
}

std::int64_t Hdf5File::dataset_length(hid_t group, const std::string& name) const {
  Hdf5Quiet quiet;
  if (H5Lexists(group, name.c_str(), H5P_DEFAULT) <= 0) fail(name, "dataset missing");
  Hdf5Handle set(H5Dopen2(group, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!set.valid()) fail(name, "cannot open dataset");
  Hdf5Handle space(H5Dget_space(set.get()), H5Sclose);
  if (!space.valid() || H5Sget_simple_extent_ndims(space.get()) != 1)
    fail(name, "expected a one-dimensional dataset");
  hsize_t n = 0;
  H5Sget_simple_extent_dims(space.get(), &n, nullptr);
  if (n > static_cast<hsize_t>(kMaxElements))
    fail(name, "absurd length " + std::to_string(n) + " (refusing to allocate)");
  return static_cast<std::int64_t>(n);
}

/// Opens a rank-1 dataset of exactly `length` elements of T whose every element is stored
/// (element type and storage checked).
template <class T>
Hdf5Handle open_complete_dataset(const Hdf5File& file, hid_t group, const std::string& name,
                                 std::int64_t length) {
  const std::int64_t n = file.dataset_length(group, name);
  if (n != length)
    file.fail(name, "has " + std::to_string(n) + " elements, expected " + std::to_string(length));
  Hdf5Handle set(H5Dopen2(group, name.c_str(), H5P_DEFAULT), H5Dclose);
  Hdf5Handle type(H5Dget_type(set.get()), H5Tclose);
  if (!hdf5_type_matches(type.get(), hdf5_native_type<T>()))
    file.fail(name, std::string("wrong element type (expected ") +
                        (std::is_floating_point<T>::value ? "float" : "integer") + " of " +
                        std::to_string(sizeof(T)) + " bytes)");
  // kcla writes every element; chunks missing from the index (a corrupt index, a dataset
  // declared but never written) would silently read as fill values.
  if (n > 0 && !fully_stored(set.get(), static_cast<hsize_t>(n), sizeof(T)))
    file.fail(name, "data missing (unwritten or unindexed chunks: corrupt or truncated file)");
  return set;
}

template <class T>
void Hdf5File::read_dataset_into(hid_t group, const std::string& name, T* out,
                                 std::int64_t length) const {
  Hdf5Quiet quiet;
  const Hdf5Handle set = open_complete_dataset<T>(*this, group, name, length);
  if (length > 0 &&
      H5Dread(set.get(), hdf5_native_type<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0)
    fail(name, "read failed (checksum mismatch or corrupt data)");
}

template <class T>
void Hdf5File::read_dataset_ranges(hid_t group, const std::string& name, std::int64_t length,
                                   const std::vector<std::pair<std::int64_t, std::int64_t>>& ranges,
                                   T* out) const {
  Hdf5Quiet quiet;
  const Hdf5Handle set = open_complete_dataset<T>(*this, group, name, length);
  const std::int64_t n = length;
  Hdf5Handle file_space(H5Dget_space(set.get()), H5Sclose);
  H5Sselect_none(file_space.get());
  std::int64_t total = 0, end = 0;
  for (const auto& r : ranges) {
    if (r.second == 0) continue;
    if (r.first < end || r.second < 0 || r.first + r.second > n)
      throw InvalidArgument("read_dataset_ranges: ranges must be increasing, disjoint and inside");
    const hsize_t start = static_cast<hsize_t>(r.first), count = static_cast<hsize_t>(r.second);
    H5Sselect_hyperslab(file_space.get(), H5S_SELECT_OR, &start, nullptr, &count, nullptr);
    total += r.second;
    end = r.first + r.second;
  }
  if (total == 0) return;
  const hsize_t m = static_cast<hsize_t>(total);
  Hdf5Handle memory_space(H5Screate_simple(1, &m, nullptr), H5Sclose);
  if (H5Dread(set.get(), hdf5_native_type<T>(), memory_space.get(), file_space.get(), H5P_DEFAULT,
              out) < 0)
    fail(name, "read failed (checksum mismatch or corrupt data)");
}

template <class T>
std::vector<T> Hdf5File::read_dataset(hid_t group, const std::string& name,
                                      std::int64_t expected_length) const {
  const std::int64_t n = dataset_length(group, name);
  if (expected_length >= 0 && n != expected_length)
    fail(name,
         "has " + std::to_string(n) + " elements, expected " + std::to_string(expected_length));
  // A dataset without stored chunks reads as fill values, so a file of a few KiB can
  // declare billions of elements: bound n by memory before allocating (below 2^40, an
  // overcommitting kernel grants the vector and then kills the process filling it).
  check_allocation(name_, "'" + name + "'", static_cast<std::uint64_t>(n), sizeof(T));
  std::vector<T> data;
  try {
    data.resize(static_cast<std::size_t>(n));
  } catch (const std::bad_alloc&) {
    fail(name, "cannot allocate " + std::to_string(n) + " elements");
  }
  read_dataset_into(group, name, data.data(), n);
  return data;
}

void Hdf5File::write_attribute(hid_t object, const std::string& name,
                               const std::string& value) const {
  Hdf5Quiet quiet;
  Hdf5Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), std::max<std::size_t>(1, value.size()));
  Hdf5Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Hdf5Handle attr(
      H5Acreate2(object, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
      H5Aclose);
  if (!attr.valid() || H5Awrite(attr.get(), type.get(), value.data()) < 0)
    fail(name, "cannot write attribute");
}

void Hdf5File::write_attribute(hid_t object, const std::string& name, std::int64_t value) const {
  Hdf5Quiet quiet;
  Hdf5Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Hdf5Handle attr(
      H5Acreate2(object, name.c_str(), H5T_NATIVE_INT64, space.get(), H5P_DEFAULT, H5P_DEFAULT),
      H5Aclose);
  if (!attr.valid() || H5Awrite(attr.get(), H5T_NATIVE_INT64, &value) < 0)
    fail(name, "cannot write attribute");
}

void Hdf5File::require_one_element(hid_t attribute, const std::string& name) const {
  // H5Aread writes every element of the attribute's dataspace: an array attribute read
  // into one value would overflow the buffer.
  Hdf5Handle space(H5Aget_space(attribute), H5Sclose);
  if (!space.valid() || H5Sget_simple_extent_npoints(space.get()) != 1)
    fail(name, "attribute is not a single value");
}

std::string Hdf5File::read_string_attribute(hid_t object, const std::string& name) const {
  Hdf5Quiet quiet;
  if (H5Aexists(object, name.c_str()) <= 0) fail(name, "attribute missing");
  Hdf5Handle attr(H5Aopen(object, name.c_str(), H5P_DEFAULT), H5Aclose);
  Hdf5Handle type(H5Aget_type(attr.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) > 0)
    fail(name, "attribute is not a fixed-length string");
  require_one_element(attr.get(), name);
  const std::size_t size = H5Tget_size(type.get());
  if (size == 0 || size > 4096) fail(name, "attribute string of absurd size");
  std::string value(size, '\0');
  Hdf5Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(mem.get(), size);
  if (H5Aread(attr.get(), mem.get(), value.data()) < 0) fail(name, "cannot read attribute");
  while (!value.empty() && value.back() == '\0') value.pop_back();
  return value;
}

std::int64_t Hdf5File::read_int_attribute(hid_t object, const std::string& name) const {
  Hdf5Quiet quiet;
  if (H5Aexists(object, name.c_str()) <= 0) fail(name, "attribute missing");
  Hdf5Handle attr(H5Aopen(object, name.c_str(), H5P_DEFAULT), H5Aclose);
  Hdf5Handle type(H5Aget_type(attr.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_INTEGER) fail(name, "attribute is not an integer");
  require_one_element(attr.get(), name);
  std::int64_t value = 0;
  if (H5Aread(attr.get(), H5T_NATIVE_INT64, &value) < 0) fail(name, "cannot read attribute");
  return value;
}

#define KCLA_HDF5_INSTANTIATE(T)                                                                  \
  template void Hdf5File::write_dataset(hid_t, const std::string&, const T*, std::int64_t) const; \
  template void Hdf5File::read_dataset_into(hid_t, const std::string&, T*, std::int64_t) const;   \
  template void Hdf5File::read_dataset_ranges(                                                    \
      hid_t, const std::string&, std::int64_t,                                                    \
      const std::vector<std::pair<std::int64_t, std::int64_t>>&, T*) const;                       \
  template std::vector<T> Hdf5File::read_dataset(hid_t, const std::string&, std::int64_t) const;
KCLA_HDF5_INSTANTIATE(double)
KCLA_HDF5_INSTANTIATE(float)
KCLA_HDF5_INSTANTIATE(std::int32_t)
KCLA_HDF5_INSTANTIATE(std::int64_t)
KCLA_HDF5_INSTANTIATE(std::uint16_t)
KCLA_HDF5_INSTANTIATE(std::uint8_t)
#undef KCLA_HDF5_INSTANTIATE

}  // namespace kcla::detail

#endif  // KCLA_HAVE_HDF5
