#include <kcla/config.hpp>

#if KCLA_HAVE_CUDA

#include <kcla/detail/block_streams.hpp>

#include "vendor_status.hpp"

#include <cuda_runtime_api.h>

#include <vector>

namespace kcla::detail {

struct CudaStreamSet::State {
  std::vector<cudaStream_t> streams;
  std::vector<cudaEvent_t> done;  // per stream: its work so far
  cudaEvent_t forked = nullptr;   // the caller's work before the fork
};

CudaStreamSet::CudaStreamSet(int count) : state_(std::make_unique<State>()) {
  auto event = [] {
    cudaEvent_t e = nullptr;
    check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
    return e;
  };
  state_->forked = event();
  for (int i = 0; i < count; ++i) {
    cudaStream_t s = nullptr;
    // Non-blocking: the streams must not serialise with the legacy default stream.
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    state_->streams.push_back(s);
    state_->done.push_back(event());
  }
}

CudaStreamSet::~CudaStreamSet() {
  for (auto s : state_->streams) cudaStreamSynchronize(s);
  for (auto e : state_->done) cudaEventDestroy(e);
  cudaEventDestroy(state_->forked);
  for (auto s : state_->streams) cudaStreamDestroy(s);
}

int CudaStreamSet::count() const {
  return static_cast<int>(state_->streams.size());
}

void* CudaStreamSet::stream(int i) const {
  return state_->streams[i];
}

void CudaStreamSet::fork(void* main) {
  check(cudaEventRecord(state_->forked, static_cast<cudaStream_t>(main)), "cudaEventRecord");
  for (auto s : state_->streams)
    check(cudaStreamWaitEvent(s, state_->forked, 0), "cudaStreamWaitEvent");
}

void CudaStreamSet::join(void* main) {
  for (std::size_t i = 0; i < state_->streams.size(); ++i) {
    check(cudaEventRecord(state_->done[i], state_->streams[i]), "cudaEventRecord");
    check(cudaStreamWaitEvent(static_cast<cudaStream_t>(main), state_->done[i], 0),
          "cudaStreamWaitEvent");
  }
}

}  // namespace kcla::detail

#endif  // KCLA_HAVE_CUDA
