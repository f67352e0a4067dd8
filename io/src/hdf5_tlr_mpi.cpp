#include <kcla/config.hpp>

#if KCLA_HAVE_MPI
#include <kcla/hdf5_tlr.hpp>
#include <kcla/hdf5_tlr_mpi.hpp>
#include <kcla/tlr_block_cyclic.hpp>

#include <cstdint>
#include <utility>
#include <vector>

#include "mpi_collective_file.hpp"

#if KCLA_HAVE_PARALLEL_HDF5
#include "hdf5_handle.hpp"
#endif

namespace kcla::detail {

#if KCLA_HAVE_PARALLEL_HDF5
namespace {

hid_t native_type(ScalarKind kind) {
  return kind == ScalarKind::f64   ? H5T_NATIVE_DOUBLE
         : kind == ScalarKind::f32 ? H5T_NATIVE_FLOAT
                                   : H5T_NATIVE_UINT16;
}

Hdf5Handle create_contiguous(const Hdf5File& file, hid_t group, const std::string& name, hid_t type,
                             std::int64_t length) {
  const hsize_t n = static_cast<hsize_t>(length);
  Hdf5Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  Hdf5Handle set(
      H5Dcreate2(group, name.c_str(), type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
      H5Dclose);
  if (!set.valid()) file.fail(name, "cannot create dataset");
  return set;
}

using Ranges = std::vector<std::pair<std::int64_t, std::int64_t>>;

/// Collective: every rank writes its ranges (increasing, disjoint) from contiguous memory.
bool write_ranges(hid_t set, hid_t type, const Ranges& ranges, const void* data) {
  Hdf5Handle file_space(H5Dget_space(set), H5Sclose);
  H5Sselect_none(file_space.get());
  hsize_t total = 0;
  for (const auto& r : ranges) {
    const hsize_t start = static_cast<hsize_t>(r.first), count = static_cast<hsize_t>(r.second);
    H5Sselect_hyperslab(file_space.get(), H5S_SELECT_OR, &start, nullptr, &count, nullptr);
    total += count;
  }
  const hsize_t extent = total > 0 ? total : 1;
  Hdf5Handle memory_space(H5Screate_simple(1, &extent, nullptr), H5Sclose);
  if (total == 0) H5Sselect_none(memory_space.get());
  Hdf5Handle transfer(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
  H5Pset_dxpl_mpio(transfer.get(), H5FD_MPIO_COLLECTIVE);
  return H5Dwrite(set, type, memory_space.get(), file_space.get(), transfer.get(), data) >= 0;
}

}  // namespace
#endif

void write_tlr_hdf5_grid(MPI_Comm comm, const std::string& path, const TlrLayout& global, int P,
                         int Q, ScalarKind kind, const void* outer, const void* inner) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (P < 1 || Q < 1 || P * Q != size)
    throw InvalidArgument(path + ": a " + std::to_string(P) + " x " + std::to_string(Q) +
                          " grid for " + std::to_string(size) + " ranks");
#if !KCLA_HAVE_PARALLEL_HDF5
  (void)rank, (void)global, (void)kind, (void)outer, (void)inner;
  throw FormatError(path,
                    "this kcla's HDF5 is not parallel HDF5 (Debian: libhdf5-openmpi-dev); "
                    "ranks cannot write one file together");
#else
  const int p = rank / Q, q = rank % Q;
  const auto local = local_tlr_layout(global, p, P, q, Q);
  std::string problem;
  if (global.tile_size() > (1 << 30) || global.rank_multiple() > 256 ||
      global.leading_dim() > (1 << 30))
    problem =
        "tile size, rank multiple or leading dimension beyond what the format allows (2^30, "
        "256, 2^30)";
  try {
    if (problem.empty()) check_tlr_padding(*local, kind, outer, inner);
  } catch (const Error& e) {
    problem = "rank " + std::to_string(rank) + ": " + e.what();
  }
  // Every rank must hold the same structure: compare a digest of it with rank 0's.
  std::uint64_t digest = 1469598103934665603ULL;
  auto mix = [&digest](std::int64_t v) {
    digest = (digest ^ static_cast<std::uint64_t>(v)) * 1099511628211ULL;
  };
  for (std::int64_t v : {global.num_rows(), global.num_cols(), std::int64_t{global.tile_size()},
                         std::int64_t{global.rank_multiple()}, std::int64_t{global.leading_dim()},
                         std::int64_t{static_cast<int>(kind)}})
    mix(v);
  for (int r : global.ranks()) mix(r);
  std::uint64_t first = digest;
  MPI_Bcast(&first, 1, MPI_UINT64_T, 0, comm);
  if (problem.empty() && first != digest)
    problem = "rank " + std::to_string(rank) + " holds another matrix structure than rank 0";
  if (any_rank(comm, !problem.empty()))
    throw InvalidArgument(path + ": " +
                          (problem.empty() ? "another rank's tiles are invalid" : problem));

  const std::string temp = collective_temp_path(comm, path);
  bool failed = false;
  std::string error;
  {
    Hdf5Quiet quiet;
    Hdf5Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
    H5Pset_fapl_mpio(access.get(), comm, MPI_INFO_NULL);
    use_checksummed_metadata(access.get());
    const hid_t id = H5Fcreate(temp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get());
    if (any_rank(comm, id < 0)) {
      if (id >= 0) H5Fclose(id);
      throw FormatError(path, "cannot create the file (parallel HDF5)");
    }
    auto file = Hdf5File::adopt(id, path);
    // Collective: the group, attributes and datasets are created by every rank. A failure
    // (on every rank alike, as metadata operations are collective) still reaches the commit
    // below, which removes the temporary file.
    try {
      auto group = file.create_group("/kcla_tlr");
      const hid_t g = group.get();
      file.write_attribute(g, "format", std::string(kTlrFormatName));
      file.write_attribute(g, "version", std::int64_t{kTlrFormatVersion});
      file.write_attribute(g, "rows", global.num_rows());
      file.write_attribute(g, "cols", global.num_cols());
      file.write_attribute(g, "tile_size", std::int64_t{global.tile_size()});
      file.write_attribute(g, "rank_multiple", std::int64_t{global.rank_multiple()});
      file.write_attribute(g, "leading_dim", std::int64_t{global.leading_dim()});
      file.write_attribute(g, "value_type", std::string(tlr_value_type_name(kind)));
      auto ranks = create_contiguous(file, g, "ranks", H5T_NATIVE_INT32,
                                     static_cast<std::int64_t>(global.ranks().size()));
      auto outer_set =
          create_contiguous(file, g, "outer_factors", native_type(kind), global.outer_size());
      auto inner_set =
          create_contiguous(file, g, "inner_factors", native_type(kind), global.inner_size());
      // Local tiles come in global order in both arrays: one selection per array.
      const TlrLocalRanges ranges = tlr_local_ranges(global, p, P, q, Q);
      if (rank == 0 && !global.ranks().empty()) {
        const std::vector<std::int32_t> values(global.ranks().begin(), global.ranks().end());
        if (H5Dwrite(ranks.get(), H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) <
            0)
          failed = true, error = "'ranks': write failed";
      }
      if (!write_ranges(outer_set.get(), native_type(kind), ranges.outer, outer))
        failed = true, error = "'outer_factors': write failed";
      if (!write_ranges(inner_set.get(), native_type(kind), ranges.inner, inner))
        failed = true, error = "'inner_factors': write failed";
      // The metadata is written when the file is flushed: a failure there must not commit.
      if (H5Fflush(file.id(), H5F_SCOPE_GLOBAL) < 0)
        failed = true, error = "flushing the file failed (disk full?)";
    } catch (const Error& e) {
      failed = true;
      error = e.what();
    }
    // Datasets, group and file close collectively as they leave this scope.
  }
  commit_collective_file(comm, path, temp, failed, error);
#endif
}

}  // namespace kcla::detail
#endif
