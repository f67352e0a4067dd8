// Timing of one product enqueued on the default execution space instance, the way a user
// would see it: per-call medians with device events (hot L2 and, with a 256 MB buffer
// written in between, cold L2), the mean of back-to-back calls, and energy per product.
#pragma once

#include "energy_meter.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#if KCLA_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace kcla::bench {

struct Timing {
  double call_median_s = 0;        // events around each product, L2 as the last product left it
  double b2b_mean_s = 0;           // products back to back, total / count
  double cold_median_s = 0;        // events around each product after a 256 MB write
  double joules_per_product = -1;  // idle draw subtracted; -1 when not measured
  double watts_above_idle = 0;
};

class Timer {
 public:
  using exec_space = Kokkos::DefaultExecutionSpace;

  explicit Timer(const EnergyMeter& meter) : meter_(meter) {
    // Larger than the last-level cache (H200 L2: 60 MB; host L3: tens of MB): writing it
    // evicts the product's data.
    flush_ = Kokkos::View<int*, exec_space::memory_space>("kcla::bench::cache_flush", 64 << 20);
    if (meter_.available()) idle_watts_ = meter_.idle_watts(2.0);
  }
  ~Timer() {
#if KCLA_HAVE_CUDA
    for (auto e : events_)
      if (e) cudaEventDestroy(e);
#endif
  }
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  double idle_watts() const {
    return idle_watts_;
  }

  Timing measure(const std::function<void()>& product, int repeat, double energy_seconds) {
    exec_space exec;
    for (int w = 0; w < 3; ++w) product();  // warm-up: plans, graphs, vendor workspaces
    exec.fence();
    Timing t;
    std::vector<double> calls, cold;
    for (int r = 0; r < repeat; ++r) calls.push_back(time_one(product));
    for (int r = 0; r < repeat; ++r) {
      Kokkos::deep_copy(flush_, r);
      exec.fence();
      cold.push_back(time_one(product));
    }
    t.call_median_s = median(calls);
    t.cold_median_s = median(cold);
    const int b2b = std::max(20, repeat);
    const auto start = now();
    for (int r = 0; r < b2b; ++r) product();
    exec.fence();
    t.b2b_mean_s = (now() - start) / b2b;
    if (meter_.available() && energy_seconds > 0) {
      const int count =
          std::max(20, static_cast<int>(energy_seconds / std::max(t.b2b_mean_s, 1e-7)));
      const double e0 = meter_.joules();
      const auto t0 = now();
      for (int r = 0; r < count; ++r) product();
      exec.fence();
      const double seconds = now() - t0;
      const double joules = meter_.joules() - e0 - idle_watts_ * seconds;
      t.joules_per_product = joules / count;
      t.watts_above_idle = seconds > 0 ? joules / seconds : 0;
    }
    return t;
  }

 private:
  static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
  }
  double time_one(const std::function<void()>& product) {
    exec_space exec;
#if KCLA_HAVE_CUDA
    if (!events_[0]) {
      cudaEventCreate(&events_[0]);
      cudaEventCreate(&events_[1]);
    }
    cudaEventRecord(events_[0], exec.cuda_stream());
    product();
    cudaEventRecord(events_[1], exec.cuda_stream());
    cudaEventSynchronize(events_[1]);
    float ms = 0;
    cudaEventElapsedTime(&ms, events_[0], events_[1]);
    return ms * 1e-3;
#else
    const auto start = now();
    product();
    exec.fence();
    return now() - start;
#endif
  }

  const EnergyMeter& meter_;
  double idle_watts_ = 0;
  Kokkos::View<int*, exec_space::memory_space> flush_;
#if KCLA_HAVE_CUDA
  cudaEvent_t events_[2] = {nullptr, nullptr};
#endif
};

}  // namespace kcla::bench
