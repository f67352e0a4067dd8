// Runs independent tasks 0..n-1 on a few std::threads, taken in order from a shared
// counter. Tasks must not depend on which thread runs them: callers get results that do
// not depend on the thread count.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace kcla::detail {

/// `threads` <= 0 means all cores. The first exception a task throws is rethrown here
/// (the remaining tasks are skipped).
template <class Task>
void run_tasks(int threads, std::int64_t n, Task&& task) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = static_cast<int>(std::min<std::int64_t>(threads, std::max<std::int64_t>(n, 1)));
  if (threads <= 1) {
    for (std::int64_t i = 0; i < n; ++i) task(i);
    return;
  }
  std::atomic<std::int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto worker = [&] {
    try {
      for (std::int64_t i; (i = next.fetch_add(1)) < n;) task(i);
    } catch (...) {
      next.store(n);  // stop the others early
      const std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace kcla::detail
