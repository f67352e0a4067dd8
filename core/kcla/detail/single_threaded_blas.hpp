// While host threads each run their own BLAS or LAPACK call, the BLAS must not start
// threads of its own: OpenBLAS's would spin against the callers (measured 15x slower on 2
// cores). No effect with a BLAS other than OpenBLAS.
#pragma once

namespace kcla::detail {

/// Sets OpenBLAS to one thread for the object's lifetime, then restores its count.
class SingleThreadedBlas {
 public:
  SingleThreadedBlas();
  ~SingleThreadedBlas();
  SingleThreadedBlas(const SingleThreadedBlas&) = delete;
  SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;

 private:
  int saved_ = 0;
};

}  // namespace kcla::detail
