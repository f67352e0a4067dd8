// kcla tlr: the subcommand dispatcher and kcla tlr info (compress and gemm have files of
// their own).
#include "cli_common.hpp"
#include "cli_mpi.hpp"
#include "cli_tlr_grid.hpp"
#include "cli_tlr_support.hpp"

#include <kcla/config.hpp>
#include <kcla/dense_matrix_market.hpp>
#include <kcla/hdf5_tlr.hpp>
#include <kcla/tlr_compress.hpp>
#include <kcla/tlr_compress_randomized.hpp>
#include <kcla/tlr_gemm.hpp>
#include <kcla/tlr_random.hpp>
#include <kcla/tlr_to_dense.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <numeric>
#include <random>
#include <type_traits>

namespace kcla::cli {

namespace {

const char* kTlrHelp =
    R"(usage: kcla tlr SUBCOMMAND [options]      (kcla tlr SUBCOMMAND --help for details)

Tile-low-rank (TLR) matrices: a dense matrix stored as a grid of low-rank tiles, in kcla
TLR files (HDF5; docs/format.md, "TLR matrix").

subcommands:
  compress -o OUT.h5      compress a kernel matrix on random points, or a dense matrix
                          (Matrix Market), tile by tile at a tolerance
  info FILE.h5            shape, tiling, precision, rank statistics, bytes vs dense
  gemm A.h5 [B.h5]        C = alpha op(A) op(B) + beta C (B TLR or dense), timed;
                          --verify checks it against a dense product
)";

Command tlr_info_command() {
  Command c("kcla tlr info FILE.h5",
            "Reads a kcla TLR file completely (every check of the format, checksums included) "
            "and prints its shape, tiling, precision, rank statistics (logical and stored) and "
            "its size next to the dense matrix's in the same precision.");
  c.positional("FILE.h5", "a kcla TLR file");
  return c;
}

int run_tlr_info(int argc, char** argv) {
  auto command = tlr_info_command();
  const auto args = command.parse(argc, argv, 3);
  if (args.has("help")) {
    std::cout << command.help();
    return ok;
  }
  const auto path = args.positional()[0];
  const auto info = read_tlr_hdf5_info(path);
  // Everything else the reader checks (checksums, padding) needs the factors.
  with_scalar(info.value_type, [&](auto tag) {
    using Scalar = typename decltype(tag)::type;
    (void)read_tlr_hdf5<Scalar, Kokkos::HostSpace>(path);
  });
  std::printf("%s: kcla TLR matrix (%s, version %d)\n", path.c_str(), kTlrFormatName,
              kTlrFormatVersion);
  print_summary(*info.layout, info.value_type);
  return ok;
}

// ------------------------------------------------------------------------------------
// gemm

}  // namespace

int run_tlr(int argc, char** argv) {
  if (argc < 3 || std::string(argv[2]) == "--help" || std::string(argv[2]) == "-h" ||
      std::string(argv[2]) == "help") {
    std::cout << kTlrHelp;
    return argc < 3 ? usage : ok;
  }
  const std::string sub = argv[2];
  if (sub == "compress") return run_tlr_compress(argc, argv);
  if (sub == "info") return run_tlr_info(argc, argv);
  if (sub == "gemm") return run_tlr_gemm(argc, argv);
  throw UsageError("unknown subcommand '" + sub +
                   "' (compress, info or gemm; see kcla tlr --help)");
}

}  // namespace kcla::cli
