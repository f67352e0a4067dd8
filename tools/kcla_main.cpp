// The kcla command-line tool.
#include <kcla/version.hpp>

#include <Kokkos_Core.hpp>

#include <cstring>
#include <iostream>

int main(int argc, char** argv) {
  if (argc >= 2 &&
      (std::strcmp(argv[1], "--version") == 0 || std::strcmp(argv[1], "version") == 0)) {
    Kokkos::ScopeGuard kokkos(argc, argv);
    kcla::print_configuration(std::cout);
    return 0;
  }
  std::cerr << "usage: kcla --version\n";
  return 2;
}
