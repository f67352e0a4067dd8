// OpenBLAS's thread control, found at run time (weak symbols: null with other BLAS).
#include <kcla/detail/single_threaded_blas.hpp>

extern "C" {
void openblas_set_num_threads(int) __attribute__((weak));
int openblas_get_num_threads(void) __attribute__((weak));
}

namespace kcla::detail {

SingleThreadedBlas::SingleThreadedBlas() {
  if (openblas_set_num_threads && openblas_get_num_threads) {
    saved_ = openblas_get_num_threads();
    if (saved_ > 1) openblas_set_num_threads(1);
  }
}

SingleThreadedBlas::~SingleThreadedBlas() {
  if (saved_ > 1) openblas_set_num_threads(saved_);
}

}  // namespace kcla::detail
