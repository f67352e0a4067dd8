// Byte transfers of any size over MPI: counts are ints, so transfers are cut into chunks
// below 2^31 bytes (the same cut on every rank, from the same byte count).
#pragma once

#include <kcla/error.hpp>

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace kcla::detail {

constexpr std::int64_t mpi_chunk_bytes = std::int64_t{1} << 30;

inline void check_mpi(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(std::string(what) + ": " + std::string(text, static_cast<std::size_t>(length)));
}

/// Collective: throws on every rank when `error` is not empty on any rank (the rank's own
/// message where it has one), so that no rank is left waiting in a later collective.
inline void raise_if_any(MPI_Comm comm, const std::string& error) {
  int mine = error.empty() ? 0 : 1, any = 0;
  check_mpi(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
  if (any == 0) return;
  if (!error.empty()) throw Error(error);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  throw Error("rank " + std::to_string(rank) + ": another rank failed (see its message)");
}

/// Runs f (which makes no collective call); errors are agreed with raise_if_any.
template <class F>
void on_every_rank(MPI_Comm comm, F&& f) {
  std::string error;
  try {
    f();
  } catch (const std::exception& e) {
    error = e.what();
    if (error.empty()) error = "unknown error";
  }
  raise_if_any(comm, error);
}

/// Posts a nonblocking broadcast of `bytes` bytes at `data` from `root` of `comm`;
/// the requests are appended to `requests`.
inline void ibcast_bytes(void* data, std::int64_t bytes, int root, MPI_Comm comm,
                         std::vector<MPI_Request>& requests) {
  auto* p = static_cast<char*>(data);
  for (std::int64_t done = 0; done < bytes; done += mpi_chunk_bytes) {
    const int n = static_cast<int>(std::min(mpi_chunk_bytes, bytes - done));
    requests.emplace_back();
    check_mpi(MPI_Ibcast(p + done, n, MPI_BYTE, root, comm, &requests.back()), "MPI_Ibcast");
  }
}

inline void wait_all(std::vector<MPI_Request>& requests) {
  if (requests.empty()) return;
  check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
            "MPI_Waitall");
  requests.clear();
}

/// Every rank sends send[r] to rank r and receives recv[r] from it; recv[r] must already
/// have the size rank r sends (both sides compute it from shared metadata). Point to point,
/// so the counts per pair may be of any size.
template <class T>
void exchange(MPI_Comm comm, const std::vector<std::vector<T>>& send,
              std::vector<std::vector<T>>& recv) {
  int size = 0, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  if (static_cast<int>(send.size()) != size || static_cast<int>(recv.size()) != size)
    throw InvalidArgument("exchange: one buffer per rank expected");
  recv[rank] = send[rank];
  std::vector<MPI_Request> requests;
  constexpr int tag = 0x6b63;
  for (int r = 0; r < size; ++r) {
    if (r == rank) continue;
    auto* in = reinterpret_cast<char*>(recv[r].data());
    const std::int64_t bytes = static_cast<std::int64_t>(recv[r].size() * sizeof(T));
    for (std::int64_t done = 0; done < bytes; done += mpi_chunk_bytes) {
      requests.emplace_back();
      check_mpi(MPI_Irecv(in + done, static_cast<int>(std::min(mpi_chunk_bytes, bytes - done)),
                          MPI_BYTE, r, tag, comm, &requests.back()),
                "MPI_Irecv");
    }
  }
  for (int r = 0; r < size; ++r) {
    if (r == rank) continue;
    const auto* out = reinterpret_cast<const char*>(send[r].data());
    const std::int64_t bytes = static_cast<std::int64_t>(send[r].size() * sizeof(T));
    for (std::int64_t done = 0; done < bytes; done += mpi_chunk_bytes) {
      requests.emplace_back();
      check_mpi(MPI_Isend(out + done, static_cast<int>(std::min(mpi_chunk_bytes, bytes - done)),
                          MPI_BYTE, r, tag, comm, &requests.back()),
                "MPI_Isend");
    }
  }
  wait_all(requests);
}

}  // namespace kcla::detail
