// kcla tlr compress | gemm under mpirun (more than one rank): the ranks form a process grid,
// hold the matrix 2D block-cyclically, compress their own tiles and write one file
// together, or read their tiles and compute a SUMMA product.
#pragma once

#include "cli_tlr_support.hpp"

#include <kcla/tlr_compress.hpp>

#include <string>

namespace kcla::cli {

/// Collective: compresses `src` over the grid and writes `output` (parallel HDF5); prints
/// on rank 0. `check`: rank 0 measures the stored matrix's error.
void compress_on_grid(const Source& src, const std::string& description, int tile,
                      const TlrCompressOptions& options, ScalarKind kind, const std::string& output,
                      bool check, const std::string& grid_shape, bool randomized);

/// Collective: kcla tlr gemm with the product distributed over the grid.
int gemm_on_grid(const Arguments& args, ScalarKind kind, const std::string& backend);

}  // namespace kcla::cli
