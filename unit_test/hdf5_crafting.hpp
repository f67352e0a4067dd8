// Writing deliberately wrong HDF5 files in tests: one group, attributes and contiguous
// datasets through the raw C API, so a test can put exactly one defect into a file that
// kcla's writers would never produce.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>

namespace kcla::test {

class CraftedHdf5 {
 public:
  CraftedHdf5(const std::string& path, const char* group_name)
      : file_(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)),
        group_(H5Gcreate2(file_, group_name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) {}
  ~CraftedHdf5() {
    H5Gclose(group_);
    H5Fclose(file_);
  }
  CraftedHdf5(const CraftedHdf5&) = delete;
  CraftedHdf5& operator=(const CraftedHdf5&) = delete;

  hid_t group() const { return group_; }

  void str_attr(const char* name, const std::string& value) const {
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, value.size());
    hid_t s = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(group_, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, t, value.data());
    H5Aclose(a), H5Sclose(s), H5Tclose(t);
  }
  void int_attr(const char* name, std::int64_t value) const {
    hid_t s = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(group_, name, H5T_NATIVE_INT64, s, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_INT64, &value);
    H5Aclose(a), H5Sclose(s);
  }
  void dataset(const char* name, hid_t type, const void* data, hsize_t n) const {
    hid_t s = H5Screate_simple(1, &n, nullptr);
    hid_t d = H5Dcreate2(group_, name, type, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (n) H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    H5Dclose(d), H5Sclose(s);
  }

 private:
  hid_t file_;
  hid_t group_;
};

}  // namespace kcla::test
