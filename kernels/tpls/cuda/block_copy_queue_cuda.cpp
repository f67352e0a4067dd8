#include <kcla/config.hpp>

#if KCLA_HAVE_CUDA

#include <kcla/detail/block_copy_queue.hpp>

#include "vendor_status.hpp"

#include <cuda_runtime_api.h>

#include <vector>

namespace kcla::detail {

struct CudaBlockCopies::State {
  cudaStream_t stream = nullptr;
  std::vector<cudaEvent_t> copied, released;
};

CudaBlockCopies::CudaBlockCopies(int slots) : state_(std::make_unique<State>()) {
  // Non-blocking: the copy stream must not serialise with the legacy default stream the
  // sweeps may run on.
  check(cudaStreamCreateWithFlags(&state_->stream, cudaStreamNonBlocking), "cudaStreamCreate");
  for (int s = 0; s < slots; ++s)
    for (auto* events : {&state_->copied, &state_->released}) {
      cudaEvent_t e = nullptr;
      check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
      events->push_back(e);
    }
}

CudaBlockCopies::~CudaBlockCopies() {
  // Copies in flight read staging memory the matrix is about to free.
  cudaStreamSynchronize(state_->stream);
  for (auto* events : {&state_->copied, &state_->released})
    for (auto e : *events) cudaEventDestroy(e);
  cudaStreamDestroy(state_->stream);
}

void CudaBlockCopies::copy(int slot, void* slot_memory, const void* source, std::size_t bytes) {
  // An event never recorded is complete: a slot's first copy does not wait.
  check(cudaStreamWaitEvent(state_->stream, state_->released[slot], 0), "cudaStreamWaitEvent");
  check(cudaMemcpyAsync(slot_memory, source, bytes, cudaMemcpyDefault, state_->stream),
        "cudaMemcpyAsync");
  check(cudaEventRecord(state_->copied[slot], state_->stream), "cudaEventRecord");
}

void CudaBlockCopies::wait_copied(int slot, void* stream) {
  check(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), state_->copied[slot], 0),
        "cudaStreamWaitEvent");
}

void CudaBlockCopies::release(int slot, void* stream) {
  check(cudaEventRecord(state_->released[slot], static_cast<cudaStream_t>(stream)),
        "cudaEventRecord");
}

}  // namespace kcla::detail

#endif  // KCLA_HAVE_CUDA
