// TLR files written by the ranks of a 2D block-cyclic grid together (parallel HDF5): every
// rank writes its own tiles into the two global factor arrays of one ordinary TLR file
// (docs/format.md), which any grid shape, or one process, reads back
// (TlrHdf5Reader::read_local_factors, read_tlr_hdf5). The factor datasets are contiguous
// and unfiltered (parallel HDF5 1.10 writes filtered datasets only when every rank writes
// every chunk); the metadata keeps its checksums. Typed wrappers: distributed_tlr_matrix.hpp.
#pragma once

#include <kcla/config.hpp>
#include <kcla/tlr_layout.hpp>
#include <kcla/tlr_scalar.hpp>

#include <string>

#if KCLA_HAVE_MPI
#include <mpi.h>

namespace kcla::detail {

/// Collective over `comm` (a P x Q grid, rank = p Q + q): writes the matrix of structure
/// `global` whose tiles of this rank are in host memory, laid out as
/// local_tlr_layout(global, p, P, q, Q) with elements of `kind`. Atomic: an error on any
/// rank leaves no file, and every rank throws. Needs parallel HDF5
/// (KCLA_HAVE_PARALLEL_HDF5); otherwise every rank throws FormatError saying so.
void write_tlr_hdf5_grid(MPI_Comm comm, const std::string& path, const TlrLayout& global, int P,
                         int Q, ScalarKind kind, const void* outer, const void* inner);

}  // namespace kcla::detail
#endif
