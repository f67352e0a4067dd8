// RePair, written from Larsson & Moffat (1999): a sequence array with holes, the
// occurrences of every pair, a hash table of pairs and a frequency-bucket priority queue
// (buckets 2 .. sqrt(n)-1 exact, one unsorted list above), giving expected linear time.
// Matrix-specific simplification: inside a CSRV row every column is distinct, so no symbol
// ever repeats inside a row; pairs (a, a) and overlapping occurrences cannot arise, a pair
// occurs at most once per row, and replacing one pair never disturbs another occurrence
// of it.
//
// Every occurrence of a pair is created in one go: by the initial pass when both symbols
// are terminals, else by the replacement that created the newer symbol (only that pass
// makes pairs with it). Two consequences shape the bookkeeping:
// - A pair left with fewer than two occurrences can never be replaced, so it is dropped
//   at once: the table, the records and the queue hold only pairs that can still win, and
//   a neighbour pair not found on replacement has nothing to update.
// - A pair's occurrences can be stored as one contiguous segment, written when the pass
//   that made them ends, instead of a linked list through the sequence (whose walk is a
//   chain of cache misses). An occurrence destroyed later is not removed: the walk skips
//   positions that no longer hold the pair (a position never holds the same pair again,
//   since replaced symbols never come back). The segment is walked newest first, the
//   order of the textbook's head-inserted list, so the grammar is the same.
#include <kcla/repair.hpp>
#include "hash_map.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <new>
#include <thread>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace kcla {

namespace {

using index_t = std::int32_t;
constexpr index_t kNone = -1;
constexpr symbol_t kDelimiter = -1;  // row end: never part of a pair
constexpr symbol_t kHole = -2;       // a position emptied by a replacement

inline void prefetch(const void* p) {
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p);
#else
  (void)p;
#endif
}

// The big arrays are read at random (the sequence, the pair table, the records): on 4 KiB
// pages nearly every such read is also a TLB miss. Large ones are mapped on their own and marked
// for transparent huge pages, which the kernel honours where it allows them (madvise mode).
template <class T>
struct BigAllocator {
  using value_type = T;
  static constexpr std::size_t kMapBytes = std::size_t{4} << 20;
  BigAllocator() = default;
  template <class U>
  BigAllocator(const BigAllocator<U>&) {}
  T* allocate(std::size_t n) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const std::size_t bytes = n * sizeof(T);
    if (bytes >= kMapBytes) {
      void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      madvise(p, bytes, MADV_HUGEPAGE);
      return static_cast<T*>(p);
    }
#endif
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (n * sizeof(T) >= kMapBytes) {
      munmap(p, n * sizeof(T));
      return;
    }
#endif
    std::allocator<T>().deallocate(p, n);
  }
  template <class U>
  bool operator==(const BigAllocator<U>&) const {
    return true;
  }
  template <class U>
  bool operator!=(const BigAllocator<U>&) const {
    return false;
  }
};
template <class T>
using BigVector = std::vector<T, BigAllocator<T>>;

inline std::uint64_t pair_key(symbol_t a, symbol_t b) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) |
         static_cast<std::uint32_t>(b);
}
// 32 bits of a strong 64-bit mix: the table's home slot is its top bits, and the rest
// filters probes without touching the record.
inline std::uint32_t pair_hash(symbol_t a, symbol_t b) {
  return static_cast<std::uint32_t>(detail::mix64(pair_key(a, b)) >> 32);
}

struct PairRecord {
  symbol_t left, right;
  index_t count;                   // live occurrences
  index_t length;                  // entries of its segment (live or stale); 0: none yet
  std::int64_t offset;             // of its segment in the occurrence pool
  index_t queue_prev, queue_next;  // queue_next also links free records
};

// Open addressing (linear probing, load <= 1/2) from a pair to its record id. A slot
// keeps the pair's hash next to the id: probing compares hashes only, growing and
// backward-shift deletion never read a record.
struct Slot {
  std::uint32_t hash;
  index_t id;  // kNone: empty
};

// Looks ahead of the occurrence being replaced: the neighbours of an occurrence a few
// steps ahead are known (other rows are not touched meanwhile), so their table slots and
// records are prefetched while earlier occurrences are replaced.
struct Ahead {
  index_t p, j, k;           // left neighbour, right symbol of the pair, right neighbour
  std::uint32_t hash_left;   // of (symbols[p], a) when p is a symbol
  std::uint32_t hash_right;  // of (b, symbols[k]) when k is a symbol
  std::uint32_t hash_new_left, hash_new_right;  // of (symbols[p], x) and (x, symbols[k])
  bool has_left, has_right;
};

// A made occurrence, filed into its pair's segment when the pass ends.
struct NewOccurrence {
  index_t id, pos;
};

// Holes: a run of holes [s, e] of length >= 2 stores encode(e) at s and encode(s) at e,
// a single hole kHole; inner holes are never read (a run is entered from its ends only).
constexpr symbol_t encode_run_end(index_t other_end) {
  return -3 - other_end;
}
constexpr index_t decode_run_end(symbol_t s) {
  return -3 - s;
}

// The compressor of one row block. Symbols: terminals keep their global ids; rules are
// numbered first_rule_symbol + i.
class BlockCompressor {
 public:
  BlockCompressor(const CsrvEncoding& e, std::int64_t row_begin, std::int64_t row_end,
                  symbol_t first_rule_symbol)
      : first_rule_symbol_(first_rule_symbol) {
    const std::int64_t rows = row_end - row_begin;
    const std::int64_t nnz = e.row_offsets[row_end] - e.row_offsets[row_begin];
    const std::int64_t n = nnz + rows;
    if (n >= std::numeric_limits<index_t>::max())
      throw InvalidArgument("repair: a row block holds 2^31-1 or more symbols; set block_rows");
    symbols_.resize(static_cast<std::size_t>(n));
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
  }

  template <class Progress>
  void run(Progress&& progress) {
    count_initial_pairs();
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
      if (s == kDelimiter) {
        row_lengths.push_back(length);
        length = 0;
      } else if (s >= 0) {
        sequence.push_back(s);
        ++length;
      }
    }
  }

 private:
  // --- initial pairs ---------------------------------------------------------------------
  // Two passes. The first counts every adjacent pair in a table of its own (slots hold
  // key, count and an id in order of first occurrence); the pairs seen at least twice get
  // records in that order (the queue's FIFO order), and the second pass files their
  // positions, ascending, into their segments.
  void count_initial_pairs() {
    struct CountSlot {
      std::uint64_t key;
      index_t id;  // kNone: empty
      index_t count;
    };
    std::size_t capacity = 1024;
    while (capacity < static_cast<std::size_t>(n_) / 16) capacity *= 2;
    BigVector<CountSlot> slots(capacity, CountSlot{0, kNone, 0});
    std::size_t mask = capacity - 1;
    index_t distinct = 0;
    auto count_home = [&](std::uint64_t key) { return detail::mix64(key) & mask; };
    auto is_pair = [&](index_t i) { return symbols_[i] >= 0 && symbols_[i + 1] >= 0; };
    auto grow = [&]() {
      BigVector<CountSlot> old(slots.size() * 2, CountSlot{0, kNone, 0});
      old.swap(slots);
      mask = slots.size() - 1;
      for (const auto& s : old) {
        if (s.id == kNone) continue;
        std::size_t i = count_home(s.key);
        while (slots[i].id != kNone) i = (i + 1) & mask;
        slots[i] = s;
      }
    };
    constexpr index_t kAheadCount = 32;
    for (index_t i = 0; i + 1 < n_; ++i) {
      const std::int64_t ahead = std::int64_t{i} + kAheadCount;
      if (ahead + 1 < n_ && is_pair(static_cast<index_t>(ahead)))
        prefetch(&slots[count_home(pair_key(symbols_[ahead], symbols_[ahead + 1]))]);
      if (!is_pair(i)) continue;
      const std::uint64_t key = pair_key(symbols_[i], symbols_[i + 1]);
      std::size_t s = count_home(key);
      while (slots[s].id != kNone && slots[s].key != key) s = (s + 1) & mask;
      if (slots[s].id == kNone) {
        if (2 * (static_cast<std::size_t>(distinct) + 1) > slots.size()) {
          grow();
          s = count_home(key);
          while (slots[s].id != kNone) s = (s + 1) & mask;
        }
        slots[s] = {key, distinct++, 0};
      }
      ++slots[s].count;
    }
    // remap[id]: the record of a pair seen twice or more, in first-occurrence order.
    BigVector<index_t> remap(static_cast<std::size_t>(distinct));
    BigVector<std::uint64_t> keys(static_cast<std::size_t>(distinct));
    for (const auto& s : slots)
      if (s.id != kNone) {
        remap[s.id] = s.count;
        keys[s.id] = s.key;
      }
    const auto extra = [&]() {
      return static_cast<std::int64_t>(slots.capacity() * sizeof(CountSlot) +
                                       remap.capacity() * sizeof(index_t) +
                                       keys.capacity() * sizeof(std::uint64_t));
    };
    peak_bytes_ = std::max(peak_bytes_, bytes_now() + extra());
    BigVector<CountSlot>().swap(slots);
    index_t kept = 0;
    std::int64_t entries = 0;
    for (index_t id = 0; id < distinct; ++id)
      if (remap[id] >= 2) {
        ++kept;
        entries += remap[id];
      }
    init_table(2 * static_cast<std::size_t>(kept));
    records_.reserve(static_cast<std::size_t>(kept));
    // Room for the first passes' new segments before the first compaction.
    pool_.reserve(static_cast<std::size_t>(entries + entries / 4 + 1024));
    pool_.resize(static_cast<std::size_t>(entries));
    std::int64_t offset = 0;
    for (index_t id = 0; id < distinct; ++id) {
      if (remap[id] < 2) {
        remap[id] = kNone;
        continue;
      }
      const auto a = static_cast<symbol_t>(keys[id] >> 32);
      const auto b = static_cast<symbol_t>(keys[id] & 0xffffffffu);
      const index_t count = remap[id];
      remap[id] = static_cast<index_t>(records_.size());
      records_.push_back({a, b, count, 0, offset, kNone, kNone});
      insert_slot(pair_hash(a, b), remap[id]);
      offset += count;
    }
    live_records_ = static_cast<std::size_t>(kept);
    peak_bytes_ = std::max(peak_bytes_, bytes_now() + extra());
    BigVector<std::uint64_t>().swap(keys);
    BigVector<index_t>().swap(remap);
    // Hashing again costs less than keeping every position's pair id (4 bytes a symbol).
    for (index_t i = 0; i + 1 < n_; ++i) {
      const std::int64_t ahead = std::int64_t{i} + kAheadCount;
      if (ahead + 1 < n_ && is_pair(static_cast<index_t>(ahead)))
        prefetch(&table_[home(pair_hash(symbols_[ahead], symbols_[ahead + 1]))]);
      const index_t near = i + kAheadCount / 2;
      if (ahead + 1 < n_ && is_pair(near)) {
        const Slot slot = table_[home(pair_hash(symbols_[near], symbols_[near + 1]))];
        if (slot.id != kNone) prefetch(&records_[slot.id]);
      }
      if (!is_pair(i)) continue;
      const index_t id =
          find(symbols_[i], symbols_[i + 1], pair_hash(symbols_[i], symbols_[i + 1]));
      if (id == kNone) continue;
      auto& r = records_[id];
      pool_[static_cast<std::size_t>(r.offset + r.length++)] = i;
    }
    for (index_t id = 0; id < kept; ++id) enqueue(id, bucket_of(records_[id].count));
  }

  // --- the sequence with holes -----------------------------------------------------
  index_t next_live(index_t i) const {
    const index_t j = i + 1;
    const symbol_t s = symbols_[j];
    if (s == kHole) return j + 1;
    if (s < kHole) return decode_run_end(s) + 1;
    return j;
  }
  index_t prev_live(index_t i) const {
    const index_t j = i - 1;
    if (j < 0) return j;
    const symbol_t s = symbols_[j];
    if (s == kHole) return j - 1;
    if (s < kHole) return decode_run_end(s) - 1;
    return j;
  }

  // --- pair table ----------------------------------------------------------------------
  void init_table(std::size_t expected) {
    std::size_t capacity = 1024;
    unsigned bits = 10;
    while (capacity < expected) {
      capacity *= 2;
      ++bits;
    }
    table_.assign(capacity, Slot{0, kNone});
    table_mask_ = capacity - 1;
    table_shift_ = 32 - bits;
  }
  std::size_t home(std::uint32_t hash) const { return hash >> table_shift_; }
  index_t find(symbol_t a, symbol_t b, std::uint32_t hash) const {
    for (std::size_t i = home(hash);; i = (i + 1) & table_mask_) {
      const Slot s = table_[i];
      if (s.id == kNone) return kNone;
      if (s.hash == hash && records_[s.id].left == a && records_[s.id].right == b) return s.id;
    }
  }
  void insert_slot(std::uint32_t hash, index_t id) {
    std::size_t i = home(hash);
    while (table_[i].id != kNone) i = (i + 1) & table_mask_;
    table_[i] = {hash, id};
  }
  index_t find_or_create(symbol_t a, symbol_t b, std::uint32_t hash) {
    index_t id = find(a, b, hash);
    if (id != kNone) return id;
    if (2 * (live_records_ + 1) > table_.size()) {
      BigVector<Slot> old(table_.size() * 2, Slot{0, kNone});
      old.swap(table_);
      table_mask_ = table_.size() - 1;
      --table_shift_;
      for (const auto& s : old)
        if (s.id != kNone) insert_slot(s.hash, s.id);
    }
    const PairRecord fresh{a, b, 0, 0, 0, kNone, kNone};
    if (free_record_ != kNone) {
      id = free_record_;
      free_record_ = records_[id].queue_next;
      if (free_record_ != kNone) prefetch(&records_[free_record_]);  // the next one taken
      records_[id] = fresh;
    } else {
      id = static_cast<index_t>(records_.size());
      records_.push_back(fresh);
    }
    insert_slot(hash, id);
    ++live_records_;
    created_.push_back(id);
    return id;
  }
  void erase(index_t id) {
    auto& r = records_[id];
    // Backward-shift deletion keeps probe sequences intact without tombstones.
    std::size_t i = home(pair_hash(r.left, r.right));
    while (table_[i].id != id) i = (i + 1) & table_mask_;
    for (std::size_t j = i;;) {
      j = (j + 1) & table_mask_;
      if (table_[j].id == kNone) break;
      const std::size_t h = home(table_[j].hash);
      // Move j back to i when i lies cyclically in [h, j).
      if (((j - h) & table_mask_) >= ((j - i) & table_mask_)) {
        table_[i] = table_[j];
        i = j;
      }
    }
    table_[i] = {0, kNone};
    r.left = r.right = kHole;
    r.length = 0;
    r.queue_next = free_record_;
    free_record_ = id;
    --live_records_;
  }

  // --- priority queue ------------------------------------------------------------------
  // A record sits in the bucket of its count (none below 2); the pair being replaced is
  // out of the queue and nothing else touches its record meanwhile.
  index_t bucket_of(index_t count) const {
    return count >= 2 ? std::min(count, bucket_limit_) : kNone;
  }
  // Buckets are FIFO: a pair created by a replacement waits behind the pairs of equal
  // frequency already queued. LIFO order would replace (X, c) right after creating X and
  // grow left-deep chains along every repeated segment; FIFO pairs up neighbours first and
  // keeps the grammar shallow (depth is the sweep's critical path).
  void enqueue(index_t id, index_t b) {
    auto& r = records_[id];
    r.queue_next = kNone;
    r.queue_prev = bucket_tails_[b];
    if (bucket_tails_[b] != kNone)
      records_[bucket_tails_[b]].queue_next = id;
    else
      buckets_[b] = id;
    bucket_tails_[b] = id;
    if (b < bucket_limit_ && b > top_bucket_) top_bucket_ = b;
  }
  void dequeue(index_t id, index_t b) {
    auto& r = records_[id];
    if (r.queue_prev != kNone)
      records_[r.queue_prev].queue_next = r.queue_next;
    else
      buckets_[b] = r.queue_next;
    if (r.queue_next != kNone)
      records_[r.queue_next].queue_prev = r.queue_prev;
    else
      bucket_tails_[b] = r.queue_prev;
  }
  void requeue(index_t id, index_t old_count) {
    const index_t from = bucket_of(old_count), to = bucket_of(records_[id].count);
    if (from == to) return;
    if (from != kNone) dequeue(id, from);
    if (to != kNone) enqueue(id, to);
  }
  index_t pop_max() {
    index_t best = kNone;
    // The top list holds at most sqrt(n) pairs (each has >= sqrt(n) occurrences).
    for (index_t id = buckets_[bucket_limit_]; id != kNone; id = records_[id].queue_next)
      if (best == kNone || records_[id].count > records_[best].count) best = id;
    if (best != kNone) {
      dequeue(best, bucket_limit_);
      return best;
    }
    while (top_bucket_ >= 2 && buckets_[top_bucket_] == kNone) --top_bucket_;
    if (top_bucket_ < 2) return kNone;
    best = buckets_[top_bucket_];
    dequeue(best, top_bucket_);
    return best;
  }

  // --- occurrences -----------------------------------------------------------------------
  // An occurrence of a tracked pair was destroyed (its position stays in the segment).
  void lose_occurrence(index_t id) {
    auto& r = records_[id];
    if (--r.count < 2) {
      // Below two it can never win again (no new occurrence can appear): drop it.
      if (r.count == 1) dequeue(id, 2);
      erase(id);
    } else {
      requeue(id, r.count + 1);
    }
  }
  void add_new_occurrence(index_t pos, symbol_t a, symbol_t b, std::uint32_t hash) {
    const index_t id = find_or_create(a, b, hash);
    ++records_[id].count;
    requeue(id, records_[id].count - 1);
    made_.push_back({id, pos});
  }
  bool holds(index_t pos, symbol_t a, symbol_t b) const {
    return symbols_[pos] == a && symbols_[next_live(pos)] == b;
  }

  Ahead look(index_t i, symbol_t a, symbol_t b, symbol_t x) const {
    Ahead h;
    h.j = next_live(i);
    h.p = prev_live(i);
    h.k = next_live(h.j);
    h.has_left = h.p >= 0 && symbols_[h.p] >= 0;
    h.has_right = symbols_[h.k] >= 0;  // a row ends with a delimiter: k < n
    h.hash_left = h.has_left ? pair_hash(symbols_[h.p], a) : 0;
    h.hash_right = h.has_right ? pair_hash(b, symbols_[h.k]) : 0;
    h.hash_new_left = h.has_left ? pair_hash(symbols_[h.p], x) : 0;
    h.hash_new_right = h.has_right ? pair_hash(x, symbols_[h.k]) : 0;
    return h;
  }
  void prefetch_slots(const Ahead& h) const {
    if (h.has_left) {
      prefetch(&table_[home(h.hash_left)]);
      prefetch(&table_[home(h.hash_new_left)]);
    }
    if (h.has_right) {
      prefetch(&table_[home(h.hash_right)]);
      prefetch(&table_[home(h.hash_new_right)]);
    }
  }
  void prefetch_record_of(std::uint32_t hash) const {
    const Slot s = table_[home(hash)];
    if (s.id != kNone) prefetch(&records_[s.id]);
  }

  // The pair pop_max will most likely return after this pass: the head of the highest
  // non-empty bucket (a pass only adds pairs behind it and rarely lowers it).
  index_t likely_next() const {
    if (buckets_[bucket_limit_] != kNone) return kNone;
    for (index_t b = top_bucket_, tries = 0; b >= 2 && tries < 8; --b, ++tries)
      if (buckets_[b] != kNone) return buckets_[b];
    return kNone;
  }
  // Warms the next pass's occurrences in three steps spread over this pass (record, then
  // segment, then the sequence there), each step's load having had time to arrive.
  void warm_record(index_t id) const {
    if (id != kNone) prefetch(&records_[id]);
  }
  void warm_segment(index_t id) const {
    if (id == kNone) return;
    const auto& r = records_[id];
    for (index_t e = std::max<index_t>(0, r.length - kWarm); e < r.length; e += 16)
      prefetch(&pool_[static_cast<std::size_t>(r.offset + e)]);
  }
  void warm_sequence(index_t id) const {
    if (id == kNone) return;
    const auto& r = records_[id];
    for (index_t e = std::max<index_t>(0, r.length - kWarm); e < r.length; ++e)
      prefetch(&symbols_[pool_[static_cast<std::size_t>(r.offset + e)]]);
  }
  static constexpr index_t kWarm = 64;  // newest entries of the next segment warmed

  std::int64_t replace_all(index_t pair_id) {
    const symbol_t a = records_[pair_id].left, b = records_[pair_id].right;
    const index_t next = likely_next();
    warm_record(next);
    const symbol_t x = first_rule_symbol_ + static_cast<symbol_t>(rule_left_.size());
    rule_left_.push_back(a);
    rule_right_.push_back(b);
    // The live occurrences, newest first; the sequence around each is prefetched
    // kPrefetch entries ahead of the check that it still holds the pair.
    occurrences_.clear();
    {
      const index_t* segment = pool_.data() + records_[pair_id].offset;
      constexpr index_t kPrefetch = 48;
      const index_t length = records_[pair_id].length;
      for (index_t e = length - 1; e >= 0; --e) {
        if (e >= kPrefetch) prefetch(&symbols_[segment[e - kPrefetch]]);
        const index_t pos = segment[e];
        if (holds(pos, a, b)) occurrences_.push_back(pos);
      }
    }
    const auto m = static_cast<index_t>(occurrences_.size());
    warm_segment(next);
    created_.clear();
    made_.clear();
    constexpr index_t kDepth = 8;  // a power of two; prefetch distance of the table slots
    Ahead ring[kDepth];
    for (index_t t = 0; t < std::min(m, kDepth / 2); ++t) {
      ring[t] = look(occurrences_[t], a, b, x);
      prefetch_slots(ring[t]);
    }
    for (index_t t = 0; t < m; ++t) {
      if (t + kDepth / 2 < m) {
        auto& h = ring[(t + kDepth / 2) % kDepth];
        h = look(occurrences_[t + kDepth / 2], a, b, x);
        prefetch_slots(h);
      }
      if (t + kDepth / 4 < m) {
        const auto& h = ring[(t + kDepth / 4) % kDepth];
        if (h.has_left) {
          prefetch_record_of(h.hash_left);
          prefetch_record_of(h.hash_new_left);
        }
        if (h.has_right) {
          prefetch_record_of(h.hash_right);
          prefetch_record_of(h.hash_new_right);
        }
      }
      const Ahead& h = ring[t % kDepth];
      const index_t i = occurrences_[t], j = h.j, p = h.p, k = h.k;
      if (h.has_left) {
        const index_t id = find(symbols_[p], a, h.hash_left);
        if (id != kNone) lose_occurrence(id);
      }
      if (h.has_right) {
        const index_t id = find(b, symbols_[k], h.hash_right);
        if (id != kNone) lose_occurrence(id);
      }
      // Replace: i holds x, j joins the hole run [i+1, k-1].
      symbols_[i] = x;
      symbols_[j] = kHole;
      if (k - 1 > i + 1) {
        symbols_[i + 1] = encode_run_end(k - 1);
        symbols_[k - 1] = encode_run_end(i + 1);
      }
      if (h.has_left) add_new_occurrence(p, symbols_[p], x, h.hash_new_left);
      if (h.has_right) add_new_occurrence(i, x, symbols_[k], h.hash_new_right);
    }
    warm_sequence(next);
    erase(pair_id);
    file_new_segments();
    return m;
  }

  // Gives each pair made by this pass (seen twice or more) its segment, in the order its
  // occurrences were made; drops those seen once.
  void file_new_segments() {
    std::int64_t need = 0;
    for (const index_t id : created_) {
      auto& r = records_[id];
      if (r.count < 2) {
        erase(id);
        r.count = 0;  // marks it for the filing below
      } else {
        need += r.count;
      }
    }
    if (need == 0) return;
    make_room(need);
    std::int64_t offset = static_cast<std::int64_t>(pool_.size());
    for (const index_t id : created_) {
      auto& r = records_[id];
      if (r.count < 2) continue;
      r.offset = offset;
      offset += r.count;
    }
    pool_.resize(static_cast<std::size_t>(offset));
    for (const auto& o : made_) {
      auto& r = records_[o.id];
      if (r.count >= 2) pool_[static_cast<std::size_t>(r.offset + r.length++)] = o.pos;
    }
  }

  // Ensures `need` more entries fit: first compacts the pool in place (dropping the
  // segments of replaced and dropped pairs and the positions that lost their pair), then
  // grows it when that frees too little.
  void make_room(std::int64_t need) {
    const auto size = static_cast<std::int64_t>(pool_.size());
    if (size + need <= static_cast<std::int64_t>(pool_.capacity())) return;
    order_.clear();
    for (index_t id = 0; id < static_cast<index_t>(records_.size()); ++id)
      if (records_[id].left != kHole && records_[id].length > 0) order_.push_back(id);
    std::sort(order_.begin(), order_.end(),
              [&](index_t u, index_t v) { return records_[u].offset < records_[v].offset; });
    std::int64_t out = 0;
    for (const index_t id : order_) {
      auto& r = records_[id];
      const std::int64_t from = r.offset;
      index_t kept = 0;
      for (index_t e = 0; e < r.length; ++e) {
        // Segments are mostly short: look ahead across them (what lies ahead is a
        // position either way).
        constexpr index_t kPrefetch = 32;
        if (from + e + kPrefetch < size)
          prefetch(&symbols_[pool_[static_cast<std::size_t>(from + e + kPrefetch)]]);
        const index_t pos = pool_[static_cast<std::size_t>(from + e)];
        if (holds(pos, r.left, r.right)) pool_[static_cast<std::size_t>(out + kept++)] = pos;
      }
      r.offset = out;
      r.length = kept;
      out += kept;
    }
    pool_.resize(static_cast<std::size_t>(out));
    const auto room = static_cast<std::int64_t>(pool_.capacity());
    if (out + need > room - room / 4) {
      peak_bytes_ = std::max(peak_bytes_, bytes_now());  // the old pool lives until the copy
      pool_.reserve(static_cast<std::size_t>(std::max(room + room / 2, out + need + room / 4)));
    }
    peak_bytes_ = std::max(peak_bytes_, bytes_now());
  }

  std::int64_t bytes_now() const {
    return static_cast<std::int64_t>(
        symbols_.capacity() * sizeof(symbol_t) + pool_.capacity() * sizeof(index_t) +
        table_.capacity() * sizeof(Slot) + records_.capacity() * sizeof(PairRecord) +
        2 * buckets_.capacity() * sizeof(index_t) +
        (occurrences_.capacity() + created_.capacity() + order_.capacity()) * sizeof(index_t) +
        made_.capacity() * sizeof(NewOccurrence) +
        (rule_left_.capacity() + rule_right_.capacity()) * sizeof(symbol_t));
  }

  symbol_t first_rule_symbol_;
  index_t n_ = 0;
  BigVector<symbol_t> symbols_;
  BigVector<index_t> pool_;  // the pairs' occurrence segments
  BigVector<Slot> table_;
  std::size_t table_mask_ = 0;
  unsigned table_shift_ = 22;
  BigVector<PairRecord> records_;
  std::size_t live_records_ = 0;
  index_t free_record_ = kNone;
  std::vector<index_t> buckets_, bucket_tails_;
  index_t bucket_limit_ = 3;
  index_t top_bucket_ = 0;
  // Scratch of one pass: its occurrences, the pairs and occurrences it made.
  std::vector<index_t> occurrences_, created_, order_;
  std::vector<NewOccurrence> made_;
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
