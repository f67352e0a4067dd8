// Files written by all ranks of a communicator together, atomically: rank 0 picks a
// temporary name next to the target, every rank writes into it, and rank 0 renames it into
// place only when every rank succeeded (else removes it); every rank then throws alike.
#pragma once

#include <kcla/config.hpp>

#if KCLA_HAVE_MPI
#include <kcla/error.hpp>

#include <mpi.h>

#include <cstdio>
#include <filesystem>
#include <random>
#include <string>

namespace kcla::detail {

/// The same decision on every rank: true when any rank passes true.
inline bool any_rank(MPI_Comm comm, bool mine) {
  int in = mine ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MAX, comm);
  return out != 0;
}

/// Collective: rank 0's temporary name for `path`, on every rank.
inline std::string collective_temp_path(MPI_Comm comm, const std::string& path) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string temp;
  if (rank == 0) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::random_device rd;
    temp =
        (folder / ("." + target.filename().string() + ".tmp.mpi." + std::to_string(rd() % 1000000)))
            .string();
  }
  int length = static_cast<int>(temp.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, comm);
  temp.resize(static_cast<std::size_t>(length));
  MPI_Bcast(temp.data(), length, MPI_CHAR, 0, comm);
  return temp;
}

/// Collective, after the file is closed: `failed` / `error` are this rank's outcome.
/// Renames the temporary file into place or removes it; throws on every rank if any failed.
inline void commit_collective_file(MPI_Comm comm, const std::string& path, const std::string& temp,
                                   bool failed, std::string error) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const bool any_failed = any_rank(comm, failed);
  if (rank == 0) {
    if (any_failed || std::rename(temp.c_str(), path.c_str()) != 0) {
      std::remove(temp.c_str());
      if (!any_failed) failed = true, error = "cannot rename the temporary file into place";
    }
  }
  if (any_rank(comm, failed))
    throw FormatError(path, error.empty() ? "another rank failed to write its part" : error);
}

}  // namespace kcla::detail
#endif
