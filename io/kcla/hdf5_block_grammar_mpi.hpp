// Block grammar files shared by MPI ranks (parallel HDF5): the ranks create one file
// collectively and each writes its own blocks; each rank reads only its own blocks. The
// file is an ordinary block grammar file (<kcla/hdf5_block_grammar.hpp> reads it in one
// process). Needs a kcla built with MPI (KCLA_HAVE_MPI).
#pragma once

#include <kcla/block_grammar.hpp>
#include <kcla/config.hpp>

#include <string>

#if KCLA_HAVE_MPI
#include <mpi.h>

namespace kcla {

/// Collective over `comm`: every rank passes its share of one block grammar (the same
/// layout everywhere; together the shares hold every block exactly once). Written to a
/// temporary file renamed into place once every rank has written: an error on any rank
/// leaves no file, and every rank throws. The datasets are contiguous and unfiltered (no
/// Fletcher32: parallel HDF5 1.10 writes filtered datasets only collectively, which would
/// make every rank take part in every block's write). Needs parallel HDF5
/// (KCLA_HAVE_PARALLEL_HDF5); otherwise every rank throws FormatError saying so.
void write_block_grammar_hdf5(MPI_Comm comm, const std::string& path, const BlockGrammar& share);

/// Collective over `comm`: each rank reads the blocks rank_blocks() gives it.
BlockGrammar read_block_grammar_hdf5(MPI_Comm comm, const std::string& path);

}  // namespace kcla
#endif
