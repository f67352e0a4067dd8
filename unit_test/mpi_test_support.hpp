// Helpers for the MPI tests: this rank and the world's size, one random seed shared by
// every rank, and a folder every rank sees.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>

#include "test_support.hpp"

namespace kcla::test {

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
inline int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

/// The same random seed on every rank (rank 0's).
inline std::mt19937_64 shared_rng() {
  auto gen = rng();
  std::uint64_t seed = gen();
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return std::mt19937_64(seed);
}

/// A folder every rank sees (rank 0 makes it).
inline std::string shared_dir() {
  std::string dir;
  if (world_rank() == 0) {
    std::string pattern = (std::filesystem::temp_directory_path() / "kcla-mpi-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    dir = pattern;
  }
  int n = static_cast<int>(dir.size());
  MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
  dir.resize(static_cast<std::size_t>(n));
  MPI_Bcast(dir.data(), n, MPI_CHAR, 0, MPI_COMM_WORLD);
  return dir;
}

}  // namespace kcla::test
