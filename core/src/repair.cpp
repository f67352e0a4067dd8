// RePair, written from Larsson & Moffat (1999): a sequence array with holes, one doubly
// linked occurrence list per distinct pair, a hash table of pairs and a frequency-bucket
// priority queue (buckets 2 .. sqrt(n)-1 exact, one unsorted list above), giving expected
// linear time. Matrix-specific simplification: inside a CSRV row every column is distinct,
// so no symbol ever repeats inside a row; pairs (a, a) and overlapping occurrences cannot
// arise, and replacing one pair never disturbs the occurrence list being walked.
#include <kcla/detail/hash_map.hpp>
#include <kcla/repair.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <thread>

namespace kcla {

namespace {

using index_t = std::int32_t;
constexpr index_t kNone = -1;
constexpr symbol_t kDelimiter = -1;  // row end: never part of a pair
constexpr symbol_t kHole = -2;       // a position emptied by a replacement

struct PairRecord {
  symbol_t left, right;
  index_t count;
  index_t first;  // head of the occurrence list (position of the left symbol)
  index_t queue_prev, queue_next;
  index_t bucket;  // queue bucket it sits in, or kNone
};

// The compressor of one row block. Symbols: terminals keep their global ids; rules are
// numbered first_rule_symbol + i.
class BlockCompressor {
 public:
  BlockCompressor(const CsrvEncoding& e, std::int64_t row_begin, std::int64_t row_end,
                  symbol_t first_rule_symbol)
      : first_rule_symbol_(first_rule_symbol), rows_(row_end - row_begin) {
    const std::int64_t nnz = e.row_offsets[row_end] - e.row_offsets[row_begin];
    const std::int64_t n = nnz + rows_;
    if (n >= std::numeric_limits<index_t>::max())
      throw InvalidArgument("repair: a row block holds 2^31-1 or more symbols; set block_rows");
    symbols_.resize(n);
    next_.assign(n, kNone);
    prev_.assign(n, kNone);
    std::int64_t pos = 0;
    for (auto r = row_begin; r < row_end; ++r) {
      for (auto k = e.row_offsets[r]; k < e.row_offsets[r + 1]; ++k) {
        if (k > e.row_offsets[r] && e.terminals[k] == e.terminals[k - 1])
          throw InvalidArgument("repair: row " + std::to_string(r) +
                                " repeats a terminal (columns must be strictly increasing)");
        symbols_[pos++] = e.terminals[k];
      }
      symbols_[pos++] = kDelimiter;
    }
    n_ = static_cast<index_t>(n);
    bucket_limit_ = std::max<index_t>(3, static_cast<index_t>(std::sqrt(static_cast<double>(n))));
    buckets_.assign(static_cast<std::size_t>(bucket_limit_) + 1, kNone);
    bucket_tails_.assign(buckets_.size(), kNone);
    std::size_t capacity = 1024;
    while (capacity < static_cast<std::size_t>(n) / 2) capacity *= 2;
    table_.assign(capacity, kNone);
    table_mask_ = capacity - 1;
  }

  template <class Progress>
  void run(Progress&& progress) {
    // Initial pair counts: one pass, occurrences linked at the head of their list.
    for (index_t i = 0; i + 1 < n_; ++i)
      if (symbols_[i] >= 0 && symbols_[i + 1] >= 0) add_occurrence(i, symbols_[i], symbols_[i + 1]);
    for (index_t r = 0; r < static_cast<index_t>(records_.size()); ++r)
      if (records_[r].count >= 2) enqueue(r);
    peak_bytes_ = std::max(peak_bytes_, bytes_now());

    std::int64_t since_report = 0;
    for (;;) {
      const index_t best = pop_max();
      if (best == kNone) break;
      const std::int64_t replaced = replace_all(best);
      since_report += replaced;
      replaced_ += replaced;
      if (since_report >= (1 << 20)) {
        progress(replaced_, static_cast<std::int64_t>(rule_left_.size()));
        since_report = 0;
      }
    }
    peak_bytes_ = std::max(peak_bytes_, bytes_now());
  }

  // Results.
  std::vector<symbol_t> rule_left_, rule_right_;
  std::int64_t replaced_ = 0;
  std::int64_t peak_bytes_ = 0;

  /// Appends the final sequence (delimiters dropped) and per-row lengths.
  void final_sequence(std::vector<symbol_t>& sequence,
                      std::vector<std::int64_t>& row_lengths) const {
    std::int64_t length = 0;
    for (index_t i = 0; i < n_; ++i) {
      const symbol_t s = symbols_[i];
      if (s == kHole) continue;
      if (s == kDelimiter) {
        row_lengths.push_back(length);
        length = 0;
      } else {
        sequence.push_back(s);
        ++length;
      }
    }
  }

 private:
  // --- the sequence with holes -----------------------------------------------------
  // A hole run [s, e] stores next_[s] = first live position after it and prev_[e] = last
  // live position before it; live positions use next_/prev_ for their occurrence list.
  index_t next_live(index_t i) const {
    index_t j = i + 1;
    if (j < n_ && symbols_[j] == kHole) j = next_[j];
    return j;
  }
  index_t prev_live(index_t i) const {
    index_t j = i - 1;
    if (j >= 0 && symbols_[j] == kHole) j = prev_[j];
    return j;
  }

  // --- pair table: open addressing over record ids, key read from the record -------
  static std::uint64_t key(symbol_t a, symbol_t b) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) |
           static_cast<std::uint32_t>(b);
  }
  std::size_t slot_of(symbol_t a, symbol_t b) const {
    std::size_t i = detail::mix64(key(a, b)) & table_mask_;
    while (table_[i] != kNone) {
      const auto& r = records_[table_[i]];
      if (r.left == a && r.right == b) return i;
      i = (i + 1) & table_mask_;
    }
    return i;  // empty slot where (a, b) would go
  }
  index_t find(symbol_t a, symbol_t b) const { return table_[slot_of(a, b)]; }

  index_t find_or_create(symbol_t a, symbol_t b) {
    std::size_t slot = slot_of(a, b);
    if (table_[slot] != kNone) return table_[slot];
    if (2 * (live_records_ + 1) > table_.size()) {
      grow_table();
      slot = slot_of(a, b);
    }
    index_t id;
    if (free_record_ != kNone) {
      id = free_record_;
      free_record_ = records_[id].queue_next;
    } else {
      id = static_cast<index_t>(records_.size());
      records_.push_back({});
    }
    records_[id] = {a, b, 0, kNone, kNone, kNone, kNone};
    table_[slot] = id;
    ++live_records_;
    return id;
  }

  void erase(index_t id) {
    // Backward-shift deletion keeps probe sequences intact without tombstones.
    std::size_t i = slot_of(records_[id].left, records_[id].right);
    std::size_t j = i;
    for (;;) {
      j = (j + 1) & table_mask_;
      if (table_[j] == kNone) break;
      const auto& r = records_[table_[j]];
      const std::size_t home = detail::mix64(key(r.left, r.right)) & table_mask_;
      // Move j back to i when i lies cyclically in [home, j).
      if (((j - home) & table_mask_) >= ((j - i) & table_mask_)) {
        table_[i] = table_[j];
        i = j;
      }
    }
    table_[i] = kNone;
    records_[id].queue_next = free_record_;
    free_record_ = id;
    --live_records_;
  }

  void grow_table() {
    table_.assign(table_.size() * 2, kNone);
    table_mask_ = table_.size() - 1;
    for (index_t id = 0; id < static_cast<index_t>(records_.size()); ++id) {
      const auto& r = records_[id];
      if (r.left == kHole) continue;  // freed record
      std::size_t i = detail::mix64(key(r.left, r.right)) & table_mask_;
      while (table_[i] != kNone) i = (i + 1) & table_mask_;
      table_[i] = id;
    }
  }

  // --- priority queue ------------------------------------------------------------------
  index_t bucket_for(index_t count) const { return std::min(count, bucket_limit_); }
  // Buckets are FIFO: a pair created by a replacement waits behind the pairs of equal
  // frequency already queued. LIFO order would replace (X, c) right after creating X and
  // grow left-deep chains along every repeated segment; FIFO pairs up neighbours first and
  // keeps the grammar shallow (depth is the sweep's critical path).
  void enqueue(index_t id) {
    auto& r = records_[id];
    const index_t b = bucket_for(r.count);
    r.bucket = b;
    r.queue_next = kNone;
    r.queue_prev = bucket_tails_[b];
    if (bucket_tails_[b] != kNone)
      records_[bucket_tails_[b]].queue_next = id;
    else
      buckets_[b] = id;
    bucket_tails_[b] = id;
    if (b < bucket_limit_ && b > top_bucket_) top_bucket_ = b;
  }
  void dequeue(index_t id) {
    auto& r = records_[id];
    if (r.bucket == kNone) return;
    if (r.queue_prev != kNone)
      records_[r.queue_prev].queue_next = r.queue_next;
    else
      buckets_[r.bucket] = r.queue_next;
    if (r.queue_next != kNone)
      records_[r.queue_next].queue_prev = r.queue_prev;
    else
      bucket_tails_[r.bucket] = r.queue_prev;
    r.bucket = kNone;
  }
  void requeue(index_t id) {
    const auto& r = records_[id];
    const index_t want = r.count >= 2 ? bucket_for(r.count) : kNone;
    if (want == r.bucket && want != bucket_limit_) return;
    if (want == bucket_limit_ && r.bucket == bucket_limit_) return;  // unsorted list
    dequeue(id);
    if (want != kNone) enqueue(id);
  }
  index_t pop_max() {
    index_t best = kNone;
    // The top list holds at most sqrt(n) pairs (each has >= sqrt(n) occurrences).
    for (index_t id = buckets_[bucket_limit_]; id != kNone; id = records_[id].queue_next)
      if (best == kNone || records_[id].count > records_[best].count) best = id;
    if (best == kNone) {
      while (top_bucket_ >= 2 && buckets_[top_bucket_] == kNone) --top_bucket_;
      if (top_bucket_ < 2) return kNone;
      best = buckets_[top_bucket_];
    }
    dequeue(best);
    return best;
  }

  // --- occurrences -----------------------------------------------------------------------
  void add_occurrence(index_t pos, symbol_t a, symbol_t b) {
    const index_t id = find_or_create(a, b);
    auto& r = records_[id];
    next_[pos] = r.first;
    prev_[pos] = kNone;
    if (r.first != kNone) prev_[r.first] = pos;
    r.first = pos;
    ++r.count;
  }
  void remove_occurrence(index_t id, index_t pos) {
    auto& r = records_[id];
    if (prev_[pos] != kNone)
      next_[prev_[pos]] = next_[pos];
    else
      r.first = next_[pos];
    if (next_[pos] != kNone) prev_[next_[pos]] = prev_[pos];
    next_[pos] = prev_[pos] = kNone;
    if (--r.count == 0) {
      dequeue(id);
      erase(id);
      r.left = r.right = kHole;  // marks the record free for grow_table
    } else {
      requeue(id);
    }
  }
  void add_new_occurrence(index_t pos, symbol_t a, symbol_t b) {
    add_occurrence(pos, a, b);
    requeue(find(a, b));
  }

  std::int64_t replace_all(index_t pair_id) {
    const symbol_t a = records_[pair_id].left, b = records_[pair_id].right;
    const symbol_t x = first_rule_symbol_ + static_cast<symbol_t>(rule_left_.size());
    rule_left_.push_back(a);
    rule_right_.push_back(b);
    std::int64_t replaced = 0;
    index_t pos = records_[pair_id].first;
    while (pos != kNone) {
      const index_t following = next_[pos];
      const index_t i = pos, j = next_live(i);
      const index_t p = prev_live(i), k = next_live(j);
      const bool has_left = p >= 0 && symbols_[p] >= 0;
      const bool has_right = k < n_ && symbols_[k] >= 0;
      if (has_left) remove_occurrence(find(symbols_[p], a), p);
      if (has_right) remove_occurrence(find(b, symbols_[k]), j);
      // Replace: i holds x, j joins the hole run [i+1, k-1].
      symbols_[i] = x;
      symbols_[j] = kHole;
      next_[i + 1] = k;
      prev_[k - 1] = i;
      if (has_left) add_new_occurrence(p, symbols_[p], x);
      if (has_right) add_new_occurrence(i, x, symbols_[k]);
      ++replaced;
      pos = following;
    }
    auto& r = records_[pair_id];
    r.count = 0;
    erase(pair_id);
    r.left = r.right = kHole;
    return replaced;
  }

  std::int64_t bytes_now() const {
    return static_cast<std::int64_t>(
        symbols_.capacity() * sizeof(symbol_t) +
        (next_.capacity() + prev_.capacity()) * sizeof(index_t) +
        table_.capacity() * sizeof(index_t) + records_.capacity() * sizeof(PairRecord) +
        2 * buckets_.capacity() * sizeof(index_t) +
        (rule_left_.capacity() + rule_right_.capacity()) * sizeof(symbol_t));
  }

  symbol_t first_rule_symbol_;
  std::int64_t rows_;
  index_t n_ = 0;
  std::vector<symbol_t> symbols_;
  std::vector<index_t> next_, prev_;
  std::vector<index_t> table_;
  std::size_t table_mask_ = 0;
  std::vector<PairRecord> records_;
  std::size_t live_records_ = 0;
  index_t free_record_ = kNone;
  std::vector<index_t> buckets_, bucket_tails_;
  index_t bucket_limit_ = 3;
  index_t top_bucket_ = 0;
};

struct BlockResult {
  std::vector<symbol_t> rule_left, rule_right;
  std::vector<symbol_t> sequence;
  std::vector<std::int64_t> row_lengths;
  std::int64_t peak_bytes = 0;
};

}  // namespace

Grammar repair(const CsrvEncoding& e, const RepairOptions& options, RepairStats* stats) {
  const auto start = std::chrono::steady_clock::now();
  if (static_cast<std::int64_t>(e.row_offsets.size()) != e.num_rows + 1)
    throw InvalidArgument("repair: encoding has inconsistent row offsets");
  const symbol_t num_terminals = static_cast<symbol_t>(e.num_terminals());

  // Row blocks: as asked, or as few as keep every block under 2^31 symbols.
  std::int64_t block_rows = options.block_rows > 0 ? options.block_rows : e.num_rows;
  std::vector<std::int64_t> block_starts{0};
  {
    std::int64_t r = 0;
    const std::int64_t max_symbols = std::numeric_limits<index_t>::max() / 2;
    while (r < e.num_rows) {
      std::int64_t end = std::min(e.num_rows, r + std::max<std::int64_t>(1, block_rows));
      while (end > r + 1 && (e.row_offsets[end] - e.row_offsets[r]) + (end - r) > max_symbols)
        end = r + (end - r) / 2;
      block_starts.push_back(end);
      r = end;
    }
  }
  const std::int64_t num_blocks = static_cast<std::int64_t>(block_starts.size()) - 1;

  std::vector<BlockResult> results(static_cast<std::size_t>(std::max<std::int64_t>(num_blocks, 0)));
  std::mutex progress_mutex;
  RepairProgress progress_state;
  progress_state.blocks_total = num_blocks;
  progress_state.input_symbols = static_cast<std::int64_t>(e.terminals.size());
  auto report = [&](std::int64_t replaced_delta, std::int64_t rules_delta, bool block_done) {
    std::lock_guard<std::mutex> lock(progress_mutex);
    progress_state.symbols_replaced += replaced_delta;
    progress_state.rules += rules_delta;
    if (block_done) ++progress_state.blocks_done;
    if (options.progress) options.progress(progress_state);
  };

  std::atomic<std::int64_t> next_block{0};
  std::atomic<std::int64_t> in_flight_bytes{0}, peak_bytes{0};
  auto worker = [&]() {
    for (;;) {
      const std::int64_t b = next_block.fetch_add(1);
      if (b >= num_blocks) return;
      BlockCompressor block(e, block_starts[b], block_starts[b + 1], num_terminals);
      std::int64_t reported_replaced = 0, reported_rules = 0;
      block.run([&](std::int64_t replaced, std::int64_t rules) {
        report(replaced - reported_replaced, rules - reported_rules, false);
        reported_replaced = replaced;
        reported_rules = rules;
      });
      const auto now = in_flight_bytes.fetch_add(block.peak_bytes_) + block.peak_bytes_;
      std::int64_t seen = peak_bytes.load();
      while (now > seen && !peak_bytes.compare_exchange_weak(seen, now)) {
      }
      auto& out = results[b];
      out.rule_left = std::move(block.rule_left_);
      out.rule_right = std::move(block.rule_right_);
      block.final_sequence(out.sequence, out.row_lengths);
      out.peak_bytes = block.peak_bytes_;
      report(block.replaced_ - reported_replaced,
             static_cast<std::int64_t>(out.rule_left.size()) - reported_rules, true);
      in_flight_bytes.fetch_sub(block.peak_bytes_);
    }
  };
  int threads = options.threads > 0
                    ? options.threads
                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads =
      static_cast<int>(std::min<std::int64_t>(threads, std::max<std::int64_t>(num_blocks, 1)));
  if (threads <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }

  // Merge the blocks' rules into one forest; a rule identical (after renaming) to one
  // already merged is shared.
  Grammar g;
  g.num_rows = e.num_rows;
  g.num_cols = e.num_cols;
  g.values = e.values;
  g.terminal_values = e.terminal_values;
  g.terminal_columns = e.terminal_columns;
  g.row_offsets.assign(1, 0);
  detail::HashMap64 merged;
  std::int64_t rules_before_merge = 0;
  for (auto& block : results) {
    rules_before_merge += static_cast<std::int64_t>(block.rule_left.size());
    std::vector<symbol_t> global(block.rule_left.size());
    auto rename = [&](symbol_t s) { return s < num_terminals ? s : global[s - num_terminals]; };
    for (std::size_t i = 0; i < block.rule_left.size(); ++i) {
      const symbol_t l = rename(block.rule_left[i]), r = rename(block.rule_right[i]);
      const std::uint64_t k = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(l)) << 32) |
                              static_cast<std::uint32_t>(r);
      const auto candidate = num_terminals + static_cast<std::int64_t>(g.rule_left.size());
      if (candidate >= std::numeric_limits<symbol_t>::max())
        throw InvalidArgument("repair: more than 2^31-1 symbols");
      auto [id, inserted] = merged.insert(k, candidate);
      if (inserted) {
        g.rule_left.push_back(l);
        g.rule_right.push_back(r);
      }
      global[i] = static_cast<symbol_t>(id);
    }
    for (auto s : block.sequence) g.sequence.push_back(rename(s));
    for (auto len : block.row_lengths) g.row_offsets.push_back(g.row_offsets.back() + len);
    block = BlockResult{};
  }
  if (stats) {
    stats->seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    stats->blocks = num_blocks;
    stats->rules_before_merge = rules_before_merge;
    stats->working_bytes = peak_bytes.load();
  }
  return g;
}

Grammar compress(const CsrMatrix<double>& matrix, const RepairOptions& options,
                 RepairStats* stats) {
  return repair(encode_csrv(matrix), options, stats);
}

}  // namespace kcla
