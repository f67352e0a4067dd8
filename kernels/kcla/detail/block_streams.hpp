// Execution space instances that block sweeps spread over (BlockMatrixOptions::streams):
// on CUDA, streams of their own ordered against the caller's instance by events (fork
// before the first sweep, join after the last); elsewhere the caller's instance alone.
#pragma once

#include <kcla/config.hpp>

#include <Kokkos_Core.hpp>

#include <memory>
#include <vector>

namespace kcla::detail {

#if KCLA_HAVE_CUDA
/// The CUDA side (kernels/src/block_streams_cuda.cpp): non-blocking streams and their
/// events. Streams are passed as cudaStream_t values.
class CudaStreamSet {
 public:
  explicit CudaStreamSet(int count);
  ~CudaStreamSet();
  CudaStreamSet(const CudaStreamSet&) = delete;
  CudaStreamSet& operator=(const CudaStreamSet&) = delete;
  int count() const;
  void* stream(int i) const;
  /// Work issued to every stream from now on waits for the work issued to `main` so far.
  void fork(void* main);
  /// Work issued to `main` from now on waits for the work issued to every stream so far.
  void join(void* main);

 private:
  struct State;
  std::unique_ptr<State> state_;
};
#endif

/// Any execution space: `count` names for the caller's instance (the blocks' work runs
/// in order, through the same per-instance buffers as on CUDA).
template <class ExecutionSpace>
class BlockStreams {
 public:
  /// Whether the instances run concurrently (what an automatic choice asks).
  static constexpr bool concurrent = false;
  BlockStreams(const ExecutionSpace&, int count) : count_(count) {}
  int count() const { return count_; }
  /// The i-th instance of a product the caller runs on `caller`.
  ExecutionSpace instance(const ExecutionSpace& caller, int) const { return caller; }
  void fork(const ExecutionSpace&) {}
  void join(const ExecutionSpace&) {}

 private:
  int count_;
};

#if KCLA_HAVE_CUDA
template <>
class BlockStreams<Kokkos::Cuda> {
 public:
  static constexpr bool concurrent = true;
  BlockStreams(const Kokkos::Cuda&, int count) : set_(count) {
    for (int i = 0; i < count; ++i)
      instances_.push_back(Kokkos::Cuda(static_cast<cudaStream_t>(set_.stream(i))));
  }
  int count() const { return set_.count(); }
  Kokkos::Cuda instance(const Kokkos::Cuda&, int i) const { return instances_[i]; }
  void fork(const Kokkos::Cuda& main) { set_.fork(main.cuda_stream()); }
  void join(const Kokkos::Cuda& main) { set_.join(main.cuda_stream()); }

 private:
  CudaStreamSet set_;  // outlives the instances (declared first, destroyed last)
  std::vector<Kokkos::Cuda> instances_;
};
#endif

}  // namespace kcla::detail
