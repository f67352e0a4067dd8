// Breadth-first search and single-source shortest paths on a grammar-compressed graph,
// by repeated products in the Boolean and tropical (min-plus) semirings until nothing
// changes (a fixpoint), checked against a plain queue BFS and Dijkstra on the CSR graph.
//
//   graph_reachability [GRAPH] [--source V] [--direction out|in] [--communities C]
//                      [--community-size S] [--no-sssp] [--write-graph FILE.mtx]
//
// GRAPH   a Matrix Market (.mtx) or METIS (.graph) file, read by kcla::read_sparse_matrix:
//         A_ij != 0 is an edge i -> j with weight A_ij. Without GRAPH: a generated directed
//         graph of --communities C (default 64) communities of --community-size S
//         (default 32) vertices, 4 of them hubs, chained hub to hub.
// --source V        the start vertex (0-based, default 0)
// --direction out   (default) levels/distances *from* V, following edges forwards
// --direction in    levels/distances *to* V, following edges backwards
// --write-graph F   writes the graph used as Matrix Market (e.g. the generated one)
//
// Which product is which. kcla compresses a matrix by rows, and its product
// y = M x gives y_i = OR_j (M_ij AND x_j): row i *pulls* from the columns it has. With
// M = A, y_i is true when i has an edge into the frontier x, which walks edges backwards
// (--direction in). To walk edges forwards (i -> j puts j in the next frontier) the
// product needs the transpose, y_j = OR_i (A_ij AND x_i) = (A^T x)_j, so for
// --direction out the program compresses A^T. For an undirected (symmetric) graph both
// directions give the same levels.
//
// Exit status: 0 when the levels (and distances) match the references, 1 otherwise or on
// an error, 2 for a usage error.
#include <kcla/grammar_matrix.hpp>    // kcla::GrammarMatrix
#include <kcla/grammar_metrics.hpp>   // kcla::compute_metrics
#include <kcla/grammar_multiply.hpp>  // kcla::multiply
#include <kcla/matrix_market.hpp>     // kcla::write_matrix_market
#include <kcla/repair.hpp>            // kcla::compress
#include <kcla/semiring.hpp>          // kcla::Boolean, kcla::MinPlus
#include <kcla/sparse_matrix_file.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <numeric>
#include <queue>
#include <string>
#include <utility>
#include <vector>

namespace {

using Graph = kcla::CsrMatrix<double>;
using execution_space = Kokkos::DefaultExecutionSpace;
using memory_space = execution_space::memory_space;

struct Options {
  std::string graph;  // empty: generated
  std::int64_t source = 0;
  bool forwards = true;  // --direction out
  int communities = 64;
  int community_size = 32;
  bool sssp = true;
  std::string write_graph;
};

struct UsageError {
  std::string what;
};

const char* kUsage =
    "usage: graph_reachability [GRAPH.mtx|GRAPH.graph] [--source V] [--direction out|in]\n"
    "                          [--communities C] [--community-size S] [--no-sssp]\n"
    "                          [--write-graph FILE.mtx]\n";

constexpr int kHubs = 4;  // hubs per community of the generated graph

Options parse_arguments(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError{a + " needs a value"};
      return argv[++i];
    };
    if (a == "--source") {
      o.source = std::strtoll(value().c_str(), nullptr, 10);
    } else if (a == "--direction") {
      const std::string d = value();
      if (d != "out" && d != "in") throw UsageError{"--direction is 'out' or 'in'"};
      o.forwards = d == "out";
    } else if (a == "--communities") {
      o.communities = std::atoi(value().c_str());
      if (o.communities < 1) throw UsageError{"--communities must be positive"};
    } else if (a == "--community-size") {
      o.community_size = std::atoi(value().c_str());
      if (o.community_size < kHubs + 1)
        throw UsageError{"--community-size must be at least " + std::to_string(kHubs + 1)};
    } else if (a == "--no-sssp") {
      o.sssp = false;
    } else if (a == "--write-graph") {
      o.write_graph = value();
    } else if (a == "-h" || a == "--help") {
      throw UsageError{""};
    } else if (!a.empty() && a[0] == '-') {
      throw UsageError{"unknown option " + a};
    } else if (o.graph.empty()) {
      o.graph = a;
    } else {
      throw UsageError{"more than one GRAPH"};
    }
  }
  return o;
}

/// Communities chained in a row: community k has `hubs` hub vertices and `size - hubs`
/// members. Every member has edges to all hubs of its community (weight 1 + hub index),
/// every hub to all members of its community (weight 2) and to the same hub of community
/// k + 1 (weight 5 + hub index). Vertex k * size + t is hub t (t < hubs) or a member.
/// The members of a community have identical adjacency rows, and so do its hubs apart
/// from the chain edge: the repetition grammar compression feeds on (web and social
/// graphs have it where many vertices link to the same pages or people).
Graph generated_communities(int communities, int size, int hubs) {
  Graph a;
  a.num_rows = a.num_cols = static_cast<std::int64_t>(communities) * size;
  for (int k = 0; k < communities; ++k)
    for (int t = 0; t < size; ++t) {
      const std::int64_t first = static_cast<std::int64_t>(k) * size;  // of community k
      auto edge = [&](std::int64_t to, double w) {
        a.column_indices.push_back(static_cast<std::int32_t>(to));
        a.values.push_back(w);
      };
      // In increasing column order, as CSR wants.
      if (t < hubs) {
        for (int m = hubs; m < size; ++m) edge(first + m, 2);
        if (k + 1 < communities) edge(first + size + t, 5 + t);
      } else {
        for (int h = 0; h < hubs; ++h) edge(first + h, 1 + h);
      }
      a.row_offsets.push_back(a.nnz());
    }
  return a;
}

}  // namespace

// The functions with device lambdas live in a named namespace: CUDA's extended lambdas
// may not sit in a function of an unnamed namespace.
namespace graph_example {

using execution_space = Kokkos::DefaultExecutionSpace;
using memory_space = execution_space::memory_space;

// --- the compressed computations ------------------------------------------------------

/// BFS levels by Boolean products: next = M (x) frontier, keep what is new, repeat until
/// no vertex is added. Returns the level of every vertex (-1: unreachable) and the count
/// of vertices per level.
std::vector<int> bfs_levels(const kcla::GrammarMatrix<double, memory_space>& M, std::int64_t source,
                            std::vector<std::int64_t>& per_level) {
  const execution_space exec;
  const std::int64_t n = M.num_rows();
  Kokkos::View<bool*, memory_space> frontier("frontier", n), reached("reached", n),
      visited("visited", n);
  Kokkos::View<int*, memory_space> level("level", n);
  Kokkos::deep_copy(level, -1);
  // The source alone is level 0.
  Kokkos::parallel_for(
      "bfs::start", Kokkos::RangePolicy<execution_space>(exec, 0, 1), KOKKOS_LAMBDA(int) {
        frontier(source) = true;
        visited(source) = true;
        level(source) = 0;
      });
  per_level.assign(1, 1);
  for (int k = 1;; ++k) {
    // reached_i = OR_j (M_ij AND frontier_j): one sweep over the grammar.
    kcla::multiply<kcla::Boolean>(exec, M, frontier, reached);
    // visited |= reached; the vertices that are new form the next frontier.
    std::int64_t added = 0;
    Kokkos::parallel_reduce(
        "bfs::advance", Kokkos::RangePolicy<execution_space>(exec, 0, n),
        KOKKOS_LAMBDA(std::int64_t i, std::int64_t & count) {
          const bool fresh = reached(i) && !visited(i);
          frontier(i) = fresh;
          if (fresh) {
            visited(i) = true;
            level(i) = k;
            ++count;
          }
        },
        added);             // a scalar result: the reduction fences
    if (added == 0) break;  // the fixpoint: nothing new is reachable
    per_level.push_back(added);
  }
  std::vector<int> out(static_cast<std::size_t>(n));
  Kokkos::deep_copy(Kokkos::View<int*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(out.data(), n),
                    level);
  return out;
}

/// Bellman-Ford by min-plus products: d <- min(d, M (x) d) until no distance shrinks, where
/// (M (x) d)_i = min_j (M_ij + d_j). At most n - 1 rounds without negative cycles.
std::vector<double> shortest_paths(const kcla::GrammarMatrix<double, memory_space>& M,
                                   std::int64_t source, int& rounds) {
  const execution_space exec;
  const std::int64_t n = M.num_rows();
  const double infinity = std::numeric_limits<double>::infinity();
  Kokkos::View<double*, memory_space> distance("distance", n), relaxed("relaxed", n);
  Kokkos::deep_copy(distance, infinity);
  Kokkos::deep_copy(Kokkos::subview(distance, source), 0.0);
  rounds = 0;
  while (true) {
    kcla::multiply<kcla::MinPlus<double>>(exec, M, distance, relaxed);
    ++rounds;
    std::int64_t shorter = 0;
    Kokkos::parallel_reduce(
        "sssp::relax", Kokkos::RangePolicy<execution_space>(exec, 0, n),
        KOKKOS_LAMBDA(std::int64_t i, std::int64_t & count) {
          if (relaxed(i) < distance(i)) {
            distance(i) = relaxed(i);
            ++count;
          }
        },
        shorter);
    if (shorter == 0) break;
    if (rounds > n)
      throw std::runtime_error("min-plus iteration does not converge: a negative cycle");
  }
  std::vector<double> out(static_cast<std::size_t>(n));
  Kokkos::deep_copy(
      Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(out.data(), n), distance);
  return out;
}

}  // namespace graph_example

namespace {

using graph_example::bfs_levels;
using graph_example::shortest_paths;

// --- the plain references ---------------------------------------------------------------

/// Queue BFS following the rows of `adjacency` (u -> every column of row u).
std::vector<int> queue_bfs(const Graph& adjacency, std::int64_t source) {
  std::vector<int> level(static_cast<std::size_t>(adjacency.num_rows), -1);
  std::queue<std::int64_t> queue;
  level[source] = 0;
  queue.push(source);
  while (!queue.empty()) {
    const auto u = queue.front();
    queue.pop();
    for (auto k = adjacency.row_offsets[u]; k < adjacency.row_offsets[u + 1]; ++k) {
      const auto v = adjacency.column_indices[k];
      if (level[v] < 0) {
        level[v] = level[u] + 1;
        queue.push(v);
      }
    }
  }
  return level;
}

/// Dijkstra following the rows of `adjacency` (weights must be non-negative).
std::vector<double> dijkstra(const Graph& adjacency, std::int64_t source) {
  std::vector<double> d(static_cast<std::size_t>(adjacency.num_rows),
                        std::numeric_limits<double>::infinity());
  using Item = std::pair<double, std::int64_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
  d[source] = 0;
  heap.push({0.0, source});
  while (!heap.empty()) {
    const auto [du, u] = heap.top();
    heap.pop();
    if (du > d[u]) continue;
    for (auto k = adjacency.row_offsets[u]; k < adjacency.row_offsets[u + 1]; ++k) {
      const auto v = adjacency.column_indices[k];
      const double dv = du + adjacency.values[k];
      if (dv < d[v]) {
        d[v] = dv;
        heap.push({dv, v});
      }
    }
  }
  return d;
}

int run(const Options& options) {
  // 1. The graph: A_ij != 0 is an edge i -> j.
  Graph a;
  if (options.graph.empty()) {
    a = generated_communities(options.communities, options.community_size, kHubs);
    std::printf("graph: generated, %d chained communities of %d vertices (%d hubs)\n",
                options.communities, options.community_size, kHubs);
  } else {
    a = kcla::read_sparse_matrix(options.graph);
    std::printf("graph: %s\n", options.graph.c_str());
  }
  if (a.num_rows != a.num_cols)
    throw std::runtime_error("the adjacency matrix must be square, not " +
                             std::to_string(a.num_rows) + " x " + std::to_string(a.num_cols));
  const std::int64_t n = a.num_rows;
  std::printf("       %lld vertices, %lld edges\n", static_cast<long long>(n),
              static_cast<long long>(a.nnz()));
  if (options.source < 0 || options.source >= n)
    throw std::runtime_error("--source " + std::to_string(options.source) + " is not a vertex");
  if (!options.write_graph.empty()) {
    kcla::write_matrix_market(options.write_graph, a);
    std::printf("wrote %s\n", options.write_graph.c_str());
  }

  // 2. M = A^T walks edges forwards, M = A backwards (see the top of this file). The
  //    reference searches follow the rows of the other one.
  const Graph at = kcla::transposed(a);
  const Graph& m = options.forwards ? at : a;
  const Graph& adjacency = options.forwards ? a : at;
  const kcla::Grammar grammar = kcla::compress(m);
  const auto metrics = kcla::compute_metrics(grammar);
  std::printf("grammar of %s: %lld rules, sequence %lld, depth %d\n",
              options.forwards ? "A^T" : "A", static_cast<long long>(metrics.rules),
              static_cast<long long>(metrics.sequence), metrics.depth);
  const kcla::GrammarMatrix<double, memory_space> M(grammar);

  // 3. BFS.
  std::printf("\nBFS %s vertex %lld (%s)\n", options.forwards ? "from" : "to",
              static_cast<long long>(options.source),
              options.forwards ? "edges forwards: y = A^T x" : "edges backwards: y = A x");
  std::vector<std::int64_t> per_level;
  Kokkos::Timer timer;
  const auto level = bfs_levels(M, options.source, per_level);
  const double bfs_ms = 1e3 * timer.seconds();
  std::printf("vertices per level (level:count):");
  for (std::size_t l = 0; l < per_level.size(); ++l)
    std::printf("%s%zu:%lld", l % 10 == 0 ? "\n  " : "  ", l, static_cast<long long>(per_level[l]));
  const std::int64_t reached = std::accumulate(per_level.begin(), per_level.end(), std::int64_t{0});
  std::printf("\nreached %lld of %lld vertices in %zu levels (%zu Boolean products, %.2f ms)\n",
              static_cast<long long>(reached), static_cast<long long>(n), per_level.size() - 1,
              per_level.size(), bfs_ms);
  const bool bfs_ok = level == queue_bfs(adjacency, options.source);
  std::printf("levels match a queue BFS: %s\n", bfs_ok ? "yes" : "NO");

  // 4. Shortest paths (the edge weights are the matrix values).
  bool sssp_ok = true;
  const bool negative =
      std::any_of(a.values.begin(), a.values.end(), [](double w) { return w < 0; });
  if (!options.sssp) {
    std::printf("\nshortest paths: skipped (--no-sssp)\n");
  } else if (negative) {
    std::printf("\nshortest paths: skipped (negative edge weights; Dijkstra needs >= 0)\n");
  } else {
    int rounds = 0;
    timer.reset();
    const auto distance = shortest_paths(M, options.source, rounds);
    const double sssp_ms = 1e3 * timer.seconds();
    const auto reference = dijkstra(adjacency, options.source);
    double worst = 0, farthest = 0;
    for (std::int64_t v = 0; v < n; ++v) {
      if (std::isinf(reference[v]) || std::isinf(distance[v])) {
        sssp_ok &= std::isinf(reference[v]) && std::isinf(distance[v]);
        continue;
      }
      farthest = std::max(farthest, reference[v]);
      worst = std::max(worst, std::abs(distance[v] - reference[v]) / std::max(1.0, reference[v]));
    }
    sssp_ok &= worst <= 1e-12;
    std::printf("\nshortest paths %s vertex %lld: %d min-plus products to the fixpoint (%.2f ms)\n",
                options.forwards ? "from" : "to", static_cast<long long>(options.source), rounds,
                sssp_ms);
    std::printf("largest finite distance %g; max relative difference to Dijkstra %.2e: %s\n",
                farthest, worst, sssp_ok ? "match" : "MISMATCH");
  }

  const bool ok = bfs_ok && sssp_ok;
  std::printf("graph_reachability: %s\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  try {
    return run(parse_arguments(argc, argv));
  } catch (const UsageError& e) {
    if (!e.what.empty()) std::fprintf(stderr, "graph_reachability: %s\n", e.what.c_str());
    std::fprintf(stderr, "%s", kUsage);
    return e.what.empty() ? 0 : 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "graph_reachability: %s\n", e.what());
    return 1;
  }
}
