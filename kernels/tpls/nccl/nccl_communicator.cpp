#include <kcla/config.hpp>

#if KCLA_HAVE_MPI && KCLA_HAVE_CUDA

#include <kcla/detail/mpi_transfer.hpp>
#include <kcla/detail/nccl_communicator.hpp>
#include <kcla/error.hpp>

#include <cuda_runtime_api.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#if KCLA_HAVE_NCCL
#include <dlfcn.h>
#include <nccl.h>
#endif

namespace kcla::detail {

namespace {

/// Collective: the first rank's non-empty reason, or "" when no rank has one.
std::string agreed_reason(MPI_Comm comm, const std::string& mine) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int failed = mine.empty() ? size : rank;
  int first = size;
  check_mpi(MPI_Allreduce(&failed, &first, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (first == size) return "";
  std::array<char, 512> text{};
  if (rank == first) std::strncpy(text.data(), mine.c_str(), text.size() - 1);
  check_mpi(MPI_Bcast(text.data(), static_cast<int>(text.size()), MPI_CHAR, first, comm),
            "MPI_Bcast");
  return "rank " + std::to_string(first) + ": " + std::string(text.data());
}

/// Collective: the first pair of ranks that sit on the same GPU of the same host (NCCL
/// refuses them), as a reason; "" when every rank has a GPU of its own.
std::string shared_gpu(MPI_Comm comm) {
  constexpr int kName = MPI_MAX_PROCESSOR_NAME + 32;
  std::array<char, kName> mine{};
  int length = 0;
  MPI_Get_processor_name(mine.data(), &length);
  int device = 0;
  std::array<char, 32> bus{};
  if (cudaGetDevice(&device) == cudaSuccess)
    cudaDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), device);
  const std::string id = std::string(mine.data()) + "/" + bus.data();
  std::strncpy(mine.data(), id.c_str(), mine.size() - 1);
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<char> all(static_cast<std::size_t>(size) * kName);
  check_mpi(MPI_Allgather(mine.data(), kName, MPI_CHAR, all.data(), kName, MPI_CHAR, comm),
            "MPI_Allgather");
  for (int a = 0; a < size; ++a)
    for (int b = a + 1; b < size; ++b)
      if (std::strncmp(&all[a * kName], &all[b * kName], kName) == 0)
        return "ranks " + std::to_string(a) + " and " + std::to_string(b) + " share the GPU " +
               std::string(&all[a * kName]) + " (NCCL needs a GPU per rank)";
  return "";
}

}  // namespace

#if KCLA_HAVE_NCCL

struct NcclCommunicator::State {
  void* library = nullptr;
  decltype(&ncclGetVersion) get_version = nullptr;
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRank) init_rank = nullptr;
  decltype(&ncclCommDestroy) destroy = nullptr;
  decltype(&ncclCommAbort) abort = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  ncclComm_t comm = nullptr;

  ~State() {
    if (comm && destroy) destroy(comm);
    if (library) dlclose(library);
  }

  std::string error(ncclResult_t r) const {
    return error_string ? error_string(r) : ("NCCL error " + std::to_string(static_cast<int>(r)));
  }

  /// Loads libnccl and its entry points; returns "" or why not.
  std::string load() {
    const char* named = std::getenv("KCLA_NCCL_LIBRARY");
    const std::string file = named && *named ? named : "libnccl.so.2";
    library = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char* e = dlerror();
      return "cannot load " + file + " (" + (e ? e : "unknown") +
             "; KCLA_NCCL_LIBRARY names the file)";
    }
    std::string missing;
    auto find = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(library, name));
      if (!fn) missing += std::string(missing.empty() ? "" : ", ") + name;
    };
    find(get_version, "ncclGetVersion");
    find(get_unique_id, "ncclGetUniqueId");
    find(init_rank, "ncclCommInitRank");
    find(destroy, "ncclCommDestroy");
    find(abort, "ncclCommAbort");
    find(all_reduce, "ncclAllReduce");
    find(error_string, "ncclGetErrorString");
    if (!missing.empty()) return file + " lacks " + missing;
    int v = 0;
    if (get_version(&v) != ncclSuccess || v / 10000 < 2)
      return file + " is not NCCL 2 (version " + std::to_string(v) + ")";
    return "";
  }
};

std::unique_ptr<NcclCommunicator> NcclCommunicator::create(MPI_Comm comm, std::string& why) {
  auto state = std::make_unique<State>();
  why = agreed_reason(comm, state->load());
  if (why.empty()) why = shared_gpu(comm);
  if (!why.empty()) return nullptr;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  ncclUniqueId id;
  std::memset(&id, 0, sizeof id);
  std::string mine;
  if (rank == 0) {
    const auto r = state->get_unique_id(&id);
    if (r != ncclSuccess) mine = "ncclGetUniqueId: " + state->error(r);
  }
  why = agreed_reason(comm, mine);
  if (!why.empty()) return nullptr;
  check_mpi(MPI_Bcast(&id, static_cast<int>(sizeof id), MPI_BYTE, 0, comm), "MPI_Bcast");
  const auto r = state->init_rank(&state->comm, size, id, rank);
  if (r != ncclSuccess) {
    mine = "ncclCommInitRank: " + state->error(r);
    state->comm = nullptr;
  }
  why = agreed_reason(comm, mine);
  if (!why.empty()) {
    // Ranks whose part succeeded drop it without waiting for the others.
    if (state->comm) state->abort(state->comm);
    state->comm = nullptr;
    return nullptr;
  }
  return std::unique_ptr<NcclCommunicator>(new NcclCommunicator(std::move(state)));
}

void NcclCommunicator::allreduce(void* data, std::size_t count, NcclValue type, NcclSum op,
                                 void* cuda_stream) const {
  const ncclDataType_t t = type == NcclValue::f32   ? ncclFloat32
                           : type == NcclValue::f64 ? ncclFloat64
                                                    : ncclUint8;
  const ncclRedOp_t o = op == NcclSum::sum ? ncclSum : op == NcclSum::max ? ncclMax : ncclMin;
  const auto r = state_->all_reduce(data, data, count, t, o, state_->comm,
                                    static_cast<cudaStream_t>(cuda_stream));
  if (r != ncclSuccess) throw BackendError("NCCL: ncclAllReduce failed: " + state_->error(r));
}

std::string NcclCommunicator::version() const {
  int v = 0;
  state_->get_version(&v);
  return "NCCL " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

#else  // built without nccl.h

struct NcclCommunicator::State {};

std::unique_ptr<NcclCommunicator> NcclCommunicator::create(MPI_Comm comm, std::string& why) {
  (void)shared_gpu;
  why = agreed_reason(comm, "this kcla was built without NCCL's header (see docs/scale-out.md)");
  return nullptr;
}

void NcclCommunicator::allreduce(void*, std::size_t, NcclValue, NcclSum, void*) const {
  throw BackendError("NCCL: this kcla was built without NCCL");
}

std::string NcclCommunicator::version() const {
  return "none";
}

#endif

NcclCommunicator::NcclCommunicator(std::unique_ptr<State> state) : state_(std::move(state)) {}
NcclCommunicator::~NcclCommunicator() = default;

}  // namespace kcla::detail

#endif  // KCLA_HAVE_MPI && KCLA_HAVE_CUDA
