// The kcla command-line tool: compress, inspect and multiply compressed matrices.
#include "cli_common.hpp"
#include "cli_mpi.hpp"

#include <kcla/version.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <new>

namespace {

const char* kUsage = R"(usage: kcla COMMAND [options]      (kcla COMMAND --help for details)

commands:
  compress IN -o OUT.h5   compress a sparse matrix (Matrix Market, PLINK, ms, METIS,
                          mm-repair) into a kcla grammar file; --block-cols N streams it
                          in column blocks (bounded memory, threads, MPI ranks)
  info FILE               structure of a grammar: |R|, |C|, depth, widths, bytes vs CSR
  multiply FILE           y = M x (or Y = M X) on the grammar, timed; --verify checks it;
                          --transpose for z = M^T y
  score FILESET           polygenic scores of a PLINK fileset as plink2 --score computes
                          them (center, variance-standardize, missing calls imputed or not)
  pca FILESET             top principal components of a PLINK fileset (GRM eigenpairs,
                          randomized subspace iteration on the grammar)
  assoc FILESET           per-variant linear regression on quantitative phenotypes with
                          covariates, as plink2 --glm (left products on the grammar)
  tlr SUBCOMMAND          tile-low-rank matrices: `tlr compress` (a kernel on points or a
                          dense matrix, at a tolerance), `tlr info`, `tlr gemm` (timed
                          C = alpha op(A) op(B) + beta C, --verify)
  generate -o BASE        a synthetic genotype panel of any size (haplotype mosaic),
                          streamed to a PLINK fileset
  demo                    the main job on an embedded genotype panel: compress,
                          multiply on the best back end, verify against CSR, report
  version                 version and build configuration

Under mpirun, compress --block-cols and multiply split their work over the ranks.

exit codes: 0 success, 1 failure (bad input, failed verification), 2 usage error
)";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    std::cout << kUsage;
    return argc < 2 ? kcla::cli::usage : kcla::cli::ok;
  }
  const std::string command = argv[1];
  // Unbound OpenMP threads unless the user chose otherwise (also silences Kokkos' warning).
  setenv("OMP_PROC_BIND", "false", 0);
  kcla::cli::MpiSession mpi(argc, argv);
  // Kokkos reads KOKKOS_NUM_THREADS; the command line is ours.
  int kokkos_argc = 1;
  char* kokkos_argv[] = {argv[0], nullptr};
  Kokkos::ScopeGuard kokkos(kokkos_argc, kokkos_argv);
  try {
    if (command == "compress") return kcla::cli::run_compress(argc, argv);
    if (command == "info") return kcla::cli::run_info(argc, argv);
    if (command == "multiply") return kcla::cli::run_multiply(argc, argv);
    if (command == "generate") return kcla::cli::run_generate(argc, argv);
    if (command == "score") return kcla::cli::run_score(argc, argv);
    if (command == "pca") return kcla::cli::run_pca(argc, argv);
    if (command == "assoc") return kcla::cli::run_assoc(argc, argv);
    if (command == "demo") return kcla::cli::run_demo(argc, argv);
    if (command == "tlr") return kcla::cli::run_tlr(argc, argv);
    if (command == "version" || command == "--version") {
      kcla::print_configuration(std::cout);
      return kcla::cli::ok;
    }
    std::fprintf(stderr, "kcla: unknown command '%s'\n%s", command.c_str(), kUsage);
    return kcla::cli::usage;
  } catch (const kcla::cli::UsageError& e) {
    std::fprintf(stderr, "kcla %s: %s\n", command.c_str(), e.what());
    return kcla::cli::usage;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "kcla %s: out of memory\n", command.c_str());
    return kcla::cli::failure;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kcla %s: error: %s\n", command.c_str(), e.what());
    return kcla::cli::failure;
  }
}
