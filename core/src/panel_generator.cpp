#include <kcla/panel_generator.hpp>

#include <kcla/detail/parallel_tasks.hpp>
#include <kcla/error.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace kcla {

namespace {

// --- counter-based randomness: every draw is a hash of (seed, domain, index, counter) ----

constexpr std::uint64_t golden = 0x9e3779b97f4a7c15ULL;

constexpr std::uint64_t mix(std::uint64_t z) {  // splitmix64's finaliser
  z += golden;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// What a stream is for; part of every key so that the streams are independent.
enum Domain : std::uint64_t { tree_domain = 1, variant_domain, switch_domain, mutation_domain };

constexpr std::uint64_t hash_key(std::uint64_t seed, Domain domain, std::uint64_t a,
                                 std::uint64_t b = 0) {
  return mix(mix(mix(seed ^ (domain * golden)) ^ a) + b);
}

/// The draws of one key, in order.
struct Stream {
  std::uint64_t key;
  std::uint64_t count = 0;
  std::uint64_t bits() { return mix(key + (++count) * golden); }
  /// Uniform in [0, 1).
  double uniform() { return static_cast<double>(bits() >> 11) * 0x1.0p-53; }
  /// Uniform in [0, n) (Lemire's multiply-shift; the bias is below 2^-32 for n < 2^32).
  std::uint32_t below(std::uint32_t n) {
    return static_cast<std::uint32_t>(((bits() >> 32) * static_cast<std::uint64_t>(n)) >> 32);
  }
  /// Geometric run length >= 1 with mean 1 / rate (exponential, discretised).
  std::int64_t run_length(double log_stay) {
    if (log_stay == 0) return std::numeric_limits<std::int64_t>::max() / 4;  // never switches
    const double u = 1.0 - uniform();                                        // (0, 1]
    const double length = 1.0 + std::floor(std::log(u) / log_stay);
    return length >= 1e15 ? static_cast<std::int64_t>(1e15) : static_cast<std::int64_t>(length);
  }
};

/// Integral of f^-a over [lo, hi].
double power_integral(double lo, double hi, double a) {
  if (hi <= lo) return 0;
  if (std::abs(1.0 - a) < 1e-9) return std::log(hi / lo);
  return (std::pow(hi, 1.0 - a) - std::pow(lo, 1.0 - a)) / (1.0 - a);
}

/// A draw from density ~ q^-a on [lo, hi], by inverting its distribution function.
double power_draw(double lo, double hi, double a, double u) {
  if (lo >= hi) return hi;
  if (std::abs(1.0 - a) < 1e-9) return lo * std::pow(hi / lo, u);
  const double l = std::pow(lo, 1.0 - a), h = std::pow(hi, 1.0 - a);
  return std::pow(l + u * (h - l), 1.0 / (1.0 - a));
}

void check(bool ok, const std::string& what) {
  if (!ok) throw InvalidArgument("MosaicPanelOptions: " + what);
}

/// Copies bits [a, b) of `src` into `dst` (the other bits of dst are kept).
inline void copy_bits(const std::uint64_t* src, std::uint64_t* dst, std::int64_t a,
                      std::int64_t b) {
  if (a >= b) return;
  const std::int64_t wa = a >> 6, wb = (b - 1) >> 6;
  const std::uint64_t first = ~0ULL << (a & 63), last = ~0ULL >> (63 - ((b - 1) & 63));
  if (wa == wb) {
    const std::uint64_t m = first & last;
    dst[wa] = (dst[wa] & ~m) | (src[wa] & m);
    return;
  }
  dst[wa] = (dst[wa] & ~first) | (src[wa] & first);
  for (std::int64_t w = wa + 1; w < wb; ++w) dst[w] = src[w];
  dst[wb] = (dst[wb] & ~last) | (src[wb] & last);
}

/// The local genealogy of the founders: a Kingman coalescent tree. Leaves are numbered in
/// depth-first order (`leaf_order`), so the founders below any node are a contiguous range.
struct FounderTree {
  std::vector<std::int32_t> leaf_order;  ///< founder at each depth-first leaf position
  std::vector<std::int32_t> lo, hi;      ///< per non-root node: leaf positions [lo, hi)
  std::vector<double> cumulative;        ///< per non-root node: running sum of branch weights

  void build(int founders, double exponent, Stream& s) {
    const int nodes = 2 * founders - 1;
    std::vector<double> time(static_cast<std::size_t>(nodes), 0.0);
    std::vector<std::int32_t> left(static_cast<std::size_t>(nodes), -1), right(left), parent(left);
    std::vector<std::int32_t> lineages(static_cast<std::size_t>(founders));
    std::iota(lineages.begin(), lineages.end(), 0);
    double t = 0;
    for (int next = founders; next < nodes; ++next) {
      const auto i = static_cast<std::uint32_t>(lineages.size());
      t += -std::log(1.0 - s.uniform()) / (0.5 * i * (i - 1.0));  // Exp(i choose 2)
      const std::uint32_t x = s.below(i), y0 = s.below(i - 1), y = y0 >= x ? y0 + 1 : y0;
      left[next] = lineages[x];
      right[next] = lineages[y];
      parent[lineages[x]] = parent[lineages[y]] = next;
      time[next] = t;
      lineages[std::max(x, y)] = lineages.back();  // remove both, the larger index first
      lineages.pop_back();
      lineages[std::min(x, y)] = lineages.back();
      lineages.pop_back();
      lineages.push_back(next);
    }
    // Depth-first numbering of the leaves, so every node's leaves form one range.
    lo.assign(static_cast<std::size_t>(nodes), 0);
    hi = lo;
    leaf_order.clear();
    std::vector<std::int32_t> stack{nodes - 1};
    std::vector<char> expanded(static_cast<std::size_t>(nodes), 0);
    while (!stack.empty()) {
      const std::int32_t v = stack.back();
      if (v < founders) {
        lo[v] = static_cast<std::int32_t>(leaf_order.size());
        leaf_order.push_back(v);
        hi[v] = lo[v] + 1;
        stack.pop_back();
      } else if (!expanded[v]) {
        expanded[v] = 1;
        stack.push_back(right[v]);
        stack.push_back(left[v]);
      } else {
        lo[v] = lo[left[v]];
        hi[v] = hi[right[v]];
        stack.pop_back();
      }
    }
    // Branch weights: length (infinite sites), tilted by (carriers / K)^(1 - exponent).
    cumulative.resize(static_cast<std::size_t>(nodes - 1));
    double sum = 0;
    for (int v = 0; v < nodes - 1; ++v) {
      const double share = static_cast<double>(hi[v] - lo[v]) / founders;
      sum += (time[parent[v]] - time[v]) * std::pow(share, 1.0 - exponent);
      cumulative[v] = sum;
    }
  }

  /// The node a variant falls on, for u uniform in [0, 1).
  std::int32_t pick(double u) const {
    const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u * cumulative.back());
    return static_cast<std::int32_t>(
        std::min<std::ptrdiff_t>(it - cumulative.begin(), cumulative.size() - 1));
  }
};

}  // namespace

struct MosaicPanelSource::Impl {
  MosaicPanelOptions options;
  std::int64_t haplotypes = 0;
  double rare_fraction = 0;
  double rare_q_min = 0.5;  ///< q's range is [rare_q_min, rare_q_max]
  double rare_q_max = 0.5;
  double log_stay = 0;  ///< log(1 - switch_rate)
  double log_tree_stay = 0;

  // Stream position and the state carried from block to block.
  std::int64_t position = 0;
  std::int64_t tree_index = -1;
  std::int64_t tree_end = 0;  ///< first variant after the current tree's span
  FounderTree tree;
  bool tree_built = false;                  ///< false after skip_columns moved past the built tree
  std::vector<std::int32_t> founder;        ///< per haplotype: founder copied now
  std::vector<std::int64_t> next_switch;    ///< per haplotype: first variant of the next run
  std::vector<std::uint64_t> switch_count;  ///< per haplotype: runs started so far

  // Per-block scratch, reused.
  std::vector<std::uint64_t> founder_bits;  ///< founders x words
  std::vector<std::int64_t> rare_offsets;   ///< per founder: its recent mutations' range
  std::vector<std::int32_t> rare_column;    ///< recent mutations, by founder, then column
  std::vector<std::uint64_t> rare_threshold;
  std::vector<std::uint64_t> haplotype_bits;  ///< haplotypes x words

  void start_run(std::int64_t h, std::int64_t from) {
    Stream s{
        hash_key(options.seed, switch_domain, static_cast<std::uint64_t>(h), switch_count[h]++)};
    const auto k = static_cast<std::uint32_t>(options.founders);
    if (from == 0) {
      founder[h] = static_cast<std::int32_t>(s.below(k));
    } else {  // switch to another founder
      const auto other = s.below(k - 1);
      founder[h] = static_cast<std::int32_t>(
          other >= static_cast<std::uint32_t>(founder[h]) ? other + 1 : other);
    }
    next_switch[h] = from + s.run_length(log_stay);
  }

  void rewind() {
    position = 0;
    tree_index = -1;
    tree_end = 0;
    tree_built = false;
    founder.assign(static_cast<std::size_t>(haplotypes), 0);
    next_switch.assign(static_cast<std::size_t>(haplotypes), 0);
    switch_count.assign(static_cast<std::size_t>(haplotypes), 0);
    for (std::int64_t h = 0; h < haplotypes; ++h) start_run(h, 0);
  }

  Stream tree_stream() const {
    return Stream{hash_key(options.seed, tree_domain, static_cast<std::uint64_t>(tree_index))};
  }

  /// Moves to the founder tree whose span holds variant j (its shape is not built).
  void advance_trees(std::int64_t j) {
    while (j >= tree_end) {
      ++tree_index;
      tree_end += tree_stream().run_length(log_tree_stay);
    }
  }

  /// Founder alleles and recent mutations of variants [position, position + width).
  void make_founder_block(std::int64_t width, std::int64_t words) {
    const int k = options.founders;
    founder_bits.assign(static_cast<std::size_t>(k * words), 0);
    std::vector<std::int32_t> mutation_founder;
    std::vector<std::int32_t> mutation_column;
    std::vector<std::uint64_t> mutation_threshold;
    if (!tree_built && position < tree_end) {  // skip_columns ended inside this tree
      Stream s = tree_stream();
      s.run_length(log_tree_stay);
      tree.build(k, options.sfs_exponent, s);
    }
    tree_built = true;
    for (std::int64_t c = 0; c < width; ++c) {
      const std::int64_t j = position + c;
      if (j >= tree_end) {  // the next founder genealogy
        advance_trees(j);
        Stream s = tree_stream();
        s.run_length(log_tree_stay);  // its span, drawn by advance_trees
        tree.build(k, options.sfs_exponent, s);
      }
      Stream s{hash_key(options.seed, variant_domain, static_cast<std::uint64_t>(j))};
      if (s.uniform() < rare_fraction) {
        mutation_founder.push_back(
            static_cast<std::int32_t>(s.below(static_cast<std::uint32_t>(k))));
        mutation_column.push_back(static_cast<std::int32_t>(c));
        const double q = power_draw(rare_q_min, rare_q_max, options.sfs_exponent, s.uniform());
        mutation_threshold.push_back(static_cast<std::uint64_t>(std::ldexp(q, 64)));
        continue;
      }
      const auto node = tree.pick(s.uniform());
      const std::uint64_t bit = 1ULL << (c & 63);
      for (auto i = tree.lo[node]; i < tree.hi[node]; ++i)
        founder_bits[static_cast<std::size_t>(tree.leaf_order[i] * words + (c >> 6))] |= bit;
    }
    // Group the recent mutations by founder (a counting sort keeps columns ascending).
    rare_offsets.assign(static_cast<std::size_t>(k) + 1, 0);
    for (auto f : mutation_founder) ++rare_offsets[static_cast<std::size_t>(f) + 1];
    std::partial_sum(rare_offsets.begin(), rare_offsets.end(), rare_offsets.begin());
    rare_column.resize(mutation_founder.size());
    rare_threshold.resize(mutation_founder.size());
    std::vector<std::int64_t> next(rare_offsets.begin(), rare_offsets.end() - 1);
    for (std::size_t m = 0; m < mutation_founder.size(); ++m) {
      const auto at = next[static_cast<std::size_t>(mutation_founder[m])]++;
      rare_column[at] = mutation_column[m];
      rare_threshold[at] = mutation_threshold[m];
    }
  }

  /// Haplotype h's alleles over the block: founder runs, then recent mutations on them.
  void make_haplotype(std::int64_t h, std::int64_t width, std::int64_t words) {
    std::uint64_t* bits = haplotype_bits.data() + h * words;
    std::fill(bits, bits + words, 0);
    const std::int64_t end = position + width;
    for (std::int64_t c = position; c < end;) {
      const std::int64_t f = founder[h];
      const std::int64_t run_end = std::min(next_switch[h], end);
      const std::int64_t a = c - position, b = run_end - position;
      copy_bits(founder_bits.data() + f * words, bits, a, b);
      const auto* first = rare_column.data() + rare_offsets[f];
      const auto* last = rare_column.data() + rare_offsets[f + 1];
      for (const auto* m = std::lower_bound(first, last, a); m != last && *m < b; ++m) {
        const auto at = m - rare_column.data();
        const auto key =
            hash_key(options.seed, mutation_domain, static_cast<std::uint64_t>(position + *m),
                     static_cast<std::uint64_t>(h));
        if (key < rare_threshold[at]) bits[*m >> 6] |= 1ULL << (*m & 63);
      }
      if (run_end == next_switch[h]) start_run(h, run_end);
      c = run_end;
    }
  }
};

MosaicPanelSource::MosaicPanelSource(const MosaicPanelOptions& o)
    : impl_(std::make_unique<Impl>()) {
  check(o.samples >= 1, "samples must be at least 1 (got " + std::to_string(o.samples) + ")");
  check(o.variants >= 1 && o.variants <= std::numeric_limits<std::int32_t>::max(),
        "variants must be in [1, 2^31 - 1] (got " + std::to_string(o.variants) + ")");
  check(o.ploidy == 1 || o.ploidy == 2,
        "ploidy must be 1 or 2 (got " + std::to_string(o.ploidy) + ")");
  check(o.samples <= std::numeric_limits<std::int64_t>::max() / 4,
        "samples is too large (" + std::to_string(o.samples) + ")");
  check(o.founders >= 2 && o.founders <= 65536,
        "founders must be in [2, 65536] (got " + std::to_string(o.founders) + ")");
  check(o.switch_rate >= 0 && o.switch_rate <= 1,
        "switch_rate must be in [0, 1] (got " + std::to_string(o.switch_rate) + ")");
  check(o.tree_span >= 1 && std::isfinite(o.tree_span),
        "tree_span must be at least 1 variant (got " + std::to_string(o.tree_span) + ")");
  check(!std::isnan(o.rare_fraction) && o.rare_fraction <= 1,
        "rare_fraction must be in [0, 1], or negative for automatic (got " +
            std::to_string(o.rare_fraction) + ")");
  check(o.sfs_exponent >= 0 && o.sfs_exponent <= 3,
        "sfs_exponent must be in [0, 3] (got " + std::to_string(o.sfs_exponent) + ")");
  check(o.threads >= 0, "threads must be >= 0 (got " + std::to_string(o.threads) + ")");
  auto& m = *impl_;
  m.options = o;
  m.haplotypes = o.samples * o.ploidy;
  const double h = static_cast<double>(m.haplotypes), k = o.founders;
  // Founder variants with c carriers stand for frequencies [(c - 1/2) / K, (c + 1/2) / K];
  // recent mutations cover the rest, [1/H, 1/(2K)].
  m.rare_q_min = std::min(m.rare_q_max, k / h);
  if (o.rare_fraction >= 0) {
    m.rare_fraction = o.rare_fraction;
  } else {  // the share that continues f^-a below 1/K: its integral over [1/H, 1/K]
    double founder_weight = 0;
    for (int c = 1; c < o.founders; ++c) founder_weight += std::pow(c / k, -o.sfs_exponent) / k;
    const double rare_weight = power_integral(1.0 / h, m.rare_q_max / k, o.sfs_exponent);
    m.rare_fraction = rare_weight / (rare_weight + founder_weight);
  }
  m.log_stay =
      o.switch_rate >= 1 ? -std::numeric_limits<double>::infinity() : std::log1p(-o.switch_rate);
  m.log_tree_stay = std::log1p(-1.0 / o.tree_span);
  if (o.tree_span == 1) m.log_tree_stay = -std::numeric_limits<double>::infinity();
  m.rewind();
}

MosaicPanelSource::~MosaicPanelSource() = default;

std::int64_t MosaicPanelSource::num_rows() const {
  return impl_->options.samples;
}
std::int64_t MosaicPanelSource::num_cols() const {
  return impl_->options.variants;
}
std::string MosaicPanelSource::name() const {
  const auto& o = impl_->options;
  return "mosaic generator (" + std::to_string(o.samples) + " samples x " +
         std::to_string(o.variants) + " variants, seed " + std::to_string(o.seed) + ")";
}
void MosaicPanelSource::rewind() {
  impl_->rewind();
}
std::int64_t MosaicPanelSource::position() const {
  return impl_->position;
}
const MosaicPanelOptions& MosaicPanelSource::options() const {
  return impl_->options;
}
double MosaicPanelSource::rare_fraction() const {
  return impl_->rare_fraction;
}

bool MosaicPanelSource::next_block(std::int64_t max_cols, CsrMatrix<double>& block) {
  if (max_cols < 1)
    throw InvalidArgument(name() + ": next_block needs max_cols >= 1 (got " +
                          std::to_string(max_cols) + ")");
  auto& m = *impl_;
  const auto& o = m.options;
  const std::int64_t width = std::min(max_cols, o.variants - m.position);
  if (width <= 0) {
    block = CsrMatrix<double>{};
    return false;
  }
  const std::int64_t words = (width + 63) / 64;
  m.make_founder_block(width, words);
  m.haplotype_bits.resize(static_cast<std::size_t>(m.haplotypes * words));

  // Rows in fixed tiles; each tile's haplotypes, then its row lengths.
  constexpr std::int64_t tile = 256;
  const std::int64_t rows = o.samples, tiles = (rows + tile - 1) / tile;
  block.num_rows = rows;
  block.num_cols = width;
  block.row_offsets.resize(static_cast<std::size_t>(rows) + 1);
  block.row_offsets[0] = 0;
  const int ploidy = o.ploidy;
  const std::uint64_t* const hb = m.haplotype_bits.data();
  detail::run_tasks(o.threads, tiles, [&](std::int64_t t) {
    for (std::int64_t r = t * tile; r < std::min(rows, (t + 1) * tile); ++r) {
      std::int64_t count = 0;
      for (int p = 0; p < ploidy; ++p) m.make_haplotype(r * ploidy + p, width, words);
      const std::uint64_t* a = hb + r * ploidy * words;
      const std::uint64_t* b = ploidy == 2 ? a + words : a;
      for (std::int64_t w = 0; w < words; ++w) count += __builtin_popcountll(a[w] | b[w]);
      block.row_offsets[static_cast<std::size_t>(r) + 1] = count;
    }
  });
  std::partial_sum(block.row_offsets.begin(), block.row_offsets.end(), block.row_offsets.begin());
  const auto nnz = static_cast<std::size_t>(block.row_offsets.back());
  block.column_indices.resize(nnz);
  block.values.resize(nnz);
  detail::run_tasks(o.threads, tiles, [&](std::int64_t t) {
    for (std::int64_t r = t * tile; r < std::min(rows, (t + 1) * tile); ++r) {
      std::int32_t* col = block.column_indices.data() + block.row_offsets[r];
      double* val = block.values.data() + block.row_offsets[r];
      const std::uint64_t* a = hb + r * ploidy * words;
      const std::uint64_t* b = ploidy == 2 ? a + words : nullptr;
      for (std::int64_t w = 0; w < words; ++w) {
        const std::uint64_t x = a[w], y = b ? b[w] : 0;
        for (std::uint64_t any = x | y; any; any &= any - 1) {
          const int bit = __builtin_ctzll(any);
          *col++ = static_cast<std::int32_t>(w * 64 + bit);
          *val++ = static_cast<double>(((x >> bit) & 1) + ((y >> bit) & 1));
        }
      }
    }
  });
  m.position += width;
  return true;
}

void MosaicPanelSource::skip_columns(std::int64_t count) {
  auto& m = *impl_;
  const std::int64_t target =
      m.position + std::clamp<std::int64_t>(count, 0, m.options.variants - m.position);
  if (target == m.position) return;
  // The state next_block would leave: every switch at or before the last skipped column
  // taken (a run ending there starts the next one), the tree of that column current.
  const std::int64_t last = target - 1;
  if (last >= m.tree_end) {
    m.advance_trees(last);
    m.tree_built = false;
  }
  constexpr std::int64_t tile = 4096;
  detail::run_tasks(m.options.threads, (m.haplotypes + tile - 1) / tile, [&](std::int64_t t) {
    for (std::int64_t h = t * tile; h < std::min(m.haplotypes, (t + 1) * tile); ++h)
      while (m.next_switch[h] <= target) m.start_run(h, m.next_switch[h]);
  });
  m.position = target;
}

CsrMatrix<double> generate_mosaic_panel(const MosaicPanelOptions& options) {
  MosaicPanelSource source(options);
  CsrMatrix<double> panel;
  source.next_block(options.variants, panel);
  return panel;
}

}  // namespace kcla
