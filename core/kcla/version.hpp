// Version and build configuration of kcla.
#pragma once

#include <kcla/config.hpp>

#include <iosfwd>
#include <string>

namespace kcla {

/// "MAJOR.MINOR.PATCH" of the kcla library that is linked.
std::string version();

/// One line per feature: Kokkos version and devices, CUDA, HDF5, MPI, htslib.
void print_configuration(std::ostream& out);

}  // namespace kcla
