#include <kcla/version.hpp>

#include <Kokkos_Core.hpp>

#include <ostream>

// One macro answers "built with CUDA" in kcla's code (KCLA_HAVE_CUDA); it must agree with
// the Kokkos it was configured against.
#if KCLA_HAVE_CUDA != defined(KOKKOS_ENABLE_CUDA)
#error "KCLA_HAVE_CUDA disagrees with Kokkos' KOKKOS_ENABLE_CUDA: reconfigure kcla"
#endif

namespace kcla {

std::string version() {
  return KCLA_VERSION_STRING;
}

void print_configuration(std::ostream& out) {
  out << "kcla " << version() << "\n";
  out << "  Kokkos " << KOKKOS_VERSION / 10000 << "." << (KOKKOS_VERSION / 100) % 100 << "."
      << KOKKOS_VERSION % 100 << ", default execution space "
      << Kokkos::DefaultExecutionSpace::name() << "\n";
  out << "  CUDA " << (KCLA_HAVE_CUDA ? "yes" : "no") << ", OpenMP "
      << (KCLA_HAVE_OPENMP ? "yes" : "no") << ", HDF5 " << (KCLA_HAVE_HDF5 ? "yes" : "no")
      << ", MPI " << (KCLA_HAVE_MPI ? "yes" : "no") << ", htslib "
      << (KCLA_HAVE_HTSLIB ? "yes" : "no") << "\n";
}

}  // namespace kcla
