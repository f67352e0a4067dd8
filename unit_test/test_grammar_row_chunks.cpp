// The device form of the full array's row phase (row_chunk_team: C in chunks, short whole
// rows on warps (one thread each here), long ones on sub-teams, rows cut by chunk bounds combined
// by their last chunk, rows without symbols) and the terminal table, run on host teams against a
// serial sum of each row. On a GPU the same functor runs inside every typed kcla::multiply test;
// here its index logic is checked where it can run everywhere, over many chunk lengths and repeated
// products.
#include <kcla/detail/grammar_sweep.hpp>
#include <kcla/semiring.hpp>

#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using exec = Kokkos::DefaultHostExecutionSpace;
using Semiring = kcla::PlusTimes<double>;
using Args = kcla::detail::SweepArgs<Semiring, double>;

struct RowPhase {
  std::vector<std::int64_t> offsets{0};
  std::vector<std::int32_t> symbols;  // >= 0: a slot, < 0: terminal -(t+1)
  std::int64_t slots = 0, terminals = 0, cols = 0;
};

// Rows of random lengths (some empty, at the start, the end and in runs), symbols drawn
// from `slots` slots and `terminals` terminals.
RowPhase random_rows(std::mt19937_64& gen, std::int64_t rows, std::int64_t max_len) {
  RowPhase p;
  p.slots = 50;
  p.terminals = 30;
  p.cols = 20;
  std::uniform_int_distribution<std::int64_t> len(0, max_len);
  std::uniform_int_distribution<std::int32_t> code(-static_cast<std::int32_t>(p.terminals),
                                                   static_cast<std::int32_t>(p.slots) - 1);
  for (std::int64_t r = 0; r < rows; ++r) {
    const bool empty = r == 0 || r == rows - 1 || r % 5 == 2 || r % 5 == 3;
    const std::int64_t n = empty ? 0 : len(gen);
    for (std::int64_t k = 0; k < n; ++k) {
      const std::int32_t c = code(gen);
      p.symbols.push_back(c);  // c < 0 is terminal -c - 1
    }
    p.offsets.push_back(static_cast<std::int64_t>(p.symbols.size()));
  }
  return p;
}

// Runs the row phase `products` times with chunks of `chunk` symbols on teams of
// `team_size` threads (whole rows of at most `warp_items` symbols x vectors on single
// threads, the longer ones on sub-teams of `group`), the terminal table on or off, and
// compares every product's y with the serial row sums (integer values: exact).
void check(const RowPhase& p, std::int64_t B, std::int64_t chunk, int team_size, std::int64_t group,
           std::int64_t warp_items, bool table, int products) {
  const std::int64_t rows = static_cast<std::int64_t>(p.offsets.size()) - 1;
  const std::int64_t total = p.offsets.back();
  std::mt19937_64 gen(static_cast<std::uint64_t>(rows * 131 + B * 17 + chunk));
  std::uniform_int_distribution<int> small(-3, 3);
  std::vector<double> slots((p.slots + p.terminals) * B), x(p.cols * B), coefficients(p.terminals);
  std::vector<std::int32_t> columns(p.terminals);
  for (auto& v : slots) v = small(gen);
  for (auto& v : x) v = small(gen);
  for (std::int64_t t = 0; t < p.terminals; ++t) {
    coefficients[t] = 1 + (t % 2);
    columns[t] = static_cast<std::int32_t>(t % p.cols);
  }
  std::vector<std::int64_t> first_row, empty_rows;
  for (std::int64_t c0 = 0; c0 < total; c0 += chunk)
    first_row.push_back(std::upper_bound(p.offsets.begin(), p.offsets.end(), c0) -
                        p.offsets.begin() - 1);
  std::vector<std::int64_t> long_rows;
  for (std::int64_t r = 0; r < rows; ++r) {
    if (p.offsets[r] == p.offsets[r + 1]) empty_rows.push_back(r);
    if ((p.offsets[r + 1] - p.offsets[r]) * B > warp_items) long_rows.push_back(r);
  }
  const std::int64_t chunks = static_cast<std::int64_t>(first_row.size());
  std::vector<double> partials(2 * chunks * B), y(rows * B);
  std::vector<kcla::detail::SweepCounter> arrivals(rows, 0);

  Args a;
  a.coefficients = coefficients.data();
  a.columns = columns.data();
  a.row_offsets = p.offsets.data();
  a.row_symbols = p.symbols.data();
  a.x = x.data();
  a.y = y.data();
  a.slots = slots.data();
  a.vectors = B;
  a.num_rows = rows;
  a.chunk_first_row = first_row.data();
  a.chunk_symbols = chunk;
  a.num_chunks = chunks;
  a.row_partials = partials.data();
  a.row_arrivals = arrivals.data();
  a.empty_rows = empty_rows.data();
  a.num_empty_rows = static_cast<std::int64_t>(empty_rows.size());
  a.row_group = group;
  a.row_warp = kcla::detail::row_warp_lanes<exec>();
  a.warp_row_items = warp_items;
  a.long_rows = long_rows.data();
  a.num_long_rows = static_cast<std::int64_t>(long_rows.size());
  if (table) {
    a.leaf_base = p.slots;
    for (std::int64_t t = 0; t < p.terminals; ++t)
      for (std::int64_t b = 0; b < B; ++b) a.store_leaf<kcla::detail::kReadPlain>(p.slots, t, b);
  }
  for (int product = 0; product < products; ++product) {
    std::fill(y.begin(), y.end(), 1e9);  // poison: every row must be written
    Kokkos::parallel_for("test::row_chunks",
                         Kokkos::TeamPolicy<exec>(static_cast<int>(chunks), team_size)
                             .set_scratch_size(0, Kokkos::PerTeam(sizeof(double) * team_size)),
                         kcla::detail::RowsChunkFunctor<Semiring, double, exec>{a});
    Kokkos::fence();
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t b = 0; b < B; ++b) {
        double want = 0;
        for (auto k = p.offsets[r]; k < p.offsets[r + 1]; ++k) {
          const std::int32_t c = p.symbols[k];
          want += c >= 0 ? slots[c * B + b] : coefficients[-c - 1] * x[columns[-c - 1] * B + b];
        }
        ASSERT_EQ(y[r * B + b], want)
            << "row " << r << " vector " << b << " chunk " << chunk << " team " << team_size
            << " group " << group << " warp items " << warp_items << " table " << table
            << " product " << product;
      }
  }
}

TEST(GrammarRowChunks, MatchSerialRowSums) {
  std::mt19937_64 gen(7);
  const int teams[] = {1, std::min(2, Kokkos::TeamPolicy<exec>(1, 1).team_size_max(
                                          kcla::detail::RowsChunkFunctor<Semiring, double, exec>{},
                                          Kokkos::ParallelForTag()))};
  for (std::int64_t max_len : {3, 40, 700}) {
    const auto p = random_rows(gen, 60, max_len);
    for (std::int64_t B : {1, 3})
      for (std::int64_t chunk : {1, 7, 64, 1000, 100000})
        for (int team : teams)
          for (std::int64_t group : {std::int64_t{1}, static_cast<std::int64_t>(team)})
            // Every whole row long, a mix, every whole row short.
            for (std::int64_t warp_items : {std::int64_t{0}, 20 * B, std::int64_t{1} << 40})
              for (bool table : {false, true})
                check(p, B, chunk, team, group, warp_items, table, 3);
  }
}

TEST(GrammarRowChunks, OneRowOverManyChunks) {
  RowPhase p;
  p.slots = 4;
  p.terminals = 2;
  p.cols = 2;
  for (int k = 0; k < 5000; ++k) p.symbols.push_back(k % 3 == 0 ? -1 - (k % 2) : k % 4);
  p.offsets.push_back(5000);
  for (std::int64_t chunk : {1, 64, 4999, 5000})
    for (std::int64_t warp_items : {std::int64_t{0}, std::int64_t{1} << 40})
      check(p, 2, chunk, 1, 1, warp_items, true, 4);
}

}  // namespace
