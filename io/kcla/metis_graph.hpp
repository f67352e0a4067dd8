// METIS graph files (.graph): the adjacency format of METIS' manual, section 4.1.1.
#pragma once

#include <kcla/csr_matrix.hpp>

#include <string>

namespace kcla {

/// Reads a METIS graph file into its square n x n adjacency matrix: header "n m [fmt
/// [ncon]]", then one line per vertex (blank for an isolated vertex) listing 1-based
/// neighbours, preceded by a vertex size and ncon vertex weights when fmt says so
/// (these are skipped) and each followed by an edge weight when fmt's last digit is 1.
/// Values are the edge weights, or 1. '%' lines are comments. Columns are sorted within
/// rows; repeated neighbours are summed. The neighbour lists must hold 2m entries in all
/// (each undirected edge appears twice); symmetry itself is not checked.
/// Throws FormatError naming the file and line on malformed input.
CsrMatrix<double> read_metis_graph(const std::string& path);

}  // namespace kcla
