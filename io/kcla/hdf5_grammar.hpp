// HDF5 storage of grammar-compressed matrices (layout: docs/format.md). Files are written
// atomically (temporary file in the same folder, then rename) and validated completely on
// read: a corrupt or hostile file gives a kcla::FormatError naming the file and dataset.
#pragma once

#include <kcla/config.hpp>
#include <kcla/grammar.hpp>

#include <string>

namespace kcla {

/// The format name and current version written into every grammar file.
constexpr const char* kGrammarFormatName = "kcla-grammar";
constexpr int kGrammarFormatVersion = 2;  // 2: checksummed HDF5 metadata (docs/format.md)

/// Writes `g` (validated first) to `path`, replacing any file there.
void write_grammar_hdf5(const std::string& path, const Grammar& g);

/// Reads and validates a grammar written by write_grammar_hdf5 (any supported version).
Grammar read_grammar_hdf5(const std::string& path);

/// True when `path` is an HDF5 file (by its signature), whatever it holds.
bool is_hdf5_file(const std::string& path);

}  // namespace kcla
