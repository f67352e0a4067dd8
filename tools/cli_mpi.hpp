// MPI for the kcla tool: initialised only when the process was started by an MPI launcher
// (mpirun / mpiexec / srun set these variables), so that a plain `kcla` never needs an MPI
// runtime; then compress and multiply split their work over the ranks.
#pragma once

#include <kcla/config.hpp>

#include <cstdlib>

#if KCLA_HAVE_MPI
#include <mpi.h>
#endif

namespace kcla::cli {

inline bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

/// MPI_Init/Finalize around the tool's run when launched by MPI.
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv) {
#if KCLA_HAVE_MPI
    if (launched_by_mpi()) {
      int provided = 0;
      MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
      active_ = true;
    }
#else
    (void)argc, (void)argv;
#endif
  }
  ~MpiSession() {
#if KCLA_HAVE_MPI
    if (active_) MPI_Finalize();
#endif
  }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  /// Whether this session initialized MPI (and will finalize it).
  bool active() const {
    return active_;
  }

 private:
  bool active_ = false;
};

/// This process's rank and the number of ranks (0 and 1 without MPI).
inline int mpi_rank() {
#if KCLA_HAVE_MPI
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
  }
#endif
  return 0;
}
inline int mpi_ranks() {
#if KCLA_HAVE_MPI
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) {
    int s = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &s);
    return s;
  }
#endif
  return 1;
}

}  // namespace kcla::cli
