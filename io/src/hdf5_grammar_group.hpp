// One grammar's datasets inside an HDF5 group: shared by the single-grammar file and the
// block-grammar file (one group per block). Private to io/src.
#pragma once

#include <kcla/grammar.hpp>
#include "hdf5_handle.hpp"

#include <string>

namespace kcla::detail {

/// Writes shape attributes and the seven arrays of `g` into `group`.
void write_grammar_group(const Hdf5File& file, hid_t group, const Grammar& g);
/// Reads and validates what write_grammar_group wrote; `what` prefixes messages
/// ("block 3: "), empty for a plain grammar file.
Grammar read_grammar_group(const Hdf5File& file, hid_t group, const std::string& what);

/// The single grammar of a grammar file: its group, format attributes and arrays.
void write_grammar_file_group(const Hdf5File& file, const Grammar& g);
/// Checks the format attributes and reads the grammar (a block grammar file is named as
/// such in the error).
Grammar read_grammar_file_group(const Hdf5File& file);

}  // namespace kcla::detail
