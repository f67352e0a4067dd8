// The TLR product planner's internals, shared by tlr_plan.cpp (validation, the rectangle
// schedule, the plan) and tlr_stage_builder.cpp (the three stages' GEMM descriptors of one
// rectangle): operand views (transposes swap the factor families), workspace layout and
// cost model per rectangle. Private to the library (not installed).
#pragma once

#include <kcla/error.hpp>
#include <kcla/tlr_plan.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

namespace kcla::detail::tlr_planning {

inline constexpr std::int64_t kArenaAlignBytes = 256;

inline std::int64_t round_up(std::int64_t v, std::int64_t m) {
  return (v + m - 1) / m * m;
}

/// op(X) as the product sees it. For a TLR X, tile (i, k) of op(X) is
/// outer(i, k) inner(i, k)^T; with op = T the families swap: outer factors of X^T are X's
/// inner factors (packed by X's tile column = X^T's tile row) and vice versa.
struct OperandView {
  bool tlr = false;
  bool t = false;
  const TlrLayout* l = nullptr;
  TlrBuffer outer_buf{}, inner_buf{}, dense_buf{};
  int b = 1;                        // tile size
  std::int64_t rows = 0, cols = 0;  // of op(X)
  int tiles_r = 0, tiles_c = 0;
  std::int64_t ld = 0;  // factor leading dimension

  int row_height(int i) const {
    return static_cast<int>(std::min<std::int64_t>(b, rows - static_cast<std::int64_t>(i) * b));
  }
  int col_width(int k) const {
    return static_cast<int>(std::min<std::int64_t>(b, cols - static_cast<std::int64_t>(k) * b));
  }
  int rank(int i, int k) const { return t ? l->stored_rank(k, i) : l->stored_rank(i, k); }
  // Outer panel i of op(X): tiles k = 0 .. tiles_c - 1.
  int outer_prefix(int i, int k) const { return t ? l->inner_prefix(i, k) : l->outer_prefix(i, k); }
  int outer_width(int i) const { return outer_prefix(i, tiles_c); }
  std::int64_t outer_panel(int i) const {
    return ld * (t ? l->inner_panel_start(i) : l->outer_panel_start(i));
  }
  std::int64_t outer_elem(int i, int k) const { return outer_panel(i) + ld * outer_prefix(i, k); }
  // Inner panel k of op(X): tiles i = 0 .. tiles_r - 1.
  int inner_prefix(int k, int i) const { return t ? l->outer_prefix(k, i) : l->inner_prefix(k, i); }
  int inner_width(int k) const { return inner_prefix(k, tiles_r); }
  std::int64_t inner_panel(int k) const {
    return ld * (t ? l->outer_panel_start(k) : l->inner_panel_start(k));
  }
  std::int64_t inner_elem(int i, int k) const { return inner_panel(k) + ld * inner_prefix(k, i); }
  /// (off, col) of element (r, c) of op(X) for a dense X.
  void dense_at(std::int64_t r, std::int64_t c, std::int64_t& off, std::int64_t& col) const {
    off = t ? c : r;
    col = t ? r : c;
  }
};

inline OperandView make_view(Op op, const TlrOperandShape& s, bool is_a, int tile_size) {
  OperandView v;
  v.t = op == Op::T;
  v.tlr = !s.dense();
  v.l = s.layout.get();
  v.outer_buf = is_a ? (v.t ? TlrBuffer::a_inner : TlrBuffer::a_outer)
                     : (v.t ? TlrBuffer::b_inner : TlrBuffer::b_outer);
  v.inner_buf = is_a ? (v.t ? TlrBuffer::a_outer : TlrBuffer::a_inner)
                     : (v.t ? TlrBuffer::b_outer : TlrBuffer::b_inner);
  v.dense_buf = is_a ? TlrBuffer::a_dense : TlrBuffer::b_dense;
  v.b = tile_size;
  v.rows = v.t ? s.cols : s.rows;
  v.cols = v.t ? s.rows : s.cols;
  v.tiles_r = static_cast<int>((v.rows + tile_size - 1) / tile_size);
  v.tiles_c = static_cast<int>((v.cols + tile_size - 1) / tile_size);
  v.ld = v.tlr ? s.layout->leading_dim() : 0;
  return v;
}

struct Range {
  int i0, i1, j0, j1;
};

/// Workspace offsets (elements) of one rectangle in one order; `total` is the arena size.
struct WorkspaceLayout {
  std::vector<std::int64_t> s_off;  // per k; -1: empty block
  std::vector<std::int64_t> s_rows;
  std::int64_t term_off = -1;  // T (right) or L (left)
  std::int64_t term_ld = 1;
  std::int64_t total = 0;
};

class Planner {
 public:
  Planner(const OperandView& a, const OperandView& b, std::size_t es, int ld_align)
      : a_(a), b_(b), es_(static_cast<std::int64_t>(es)), ld_align_(ld_align) {
    q_ = a_.tiles_c;
    align_elems_ = std::max<std::int64_t>(1, kArenaAlignBytes / es_);
  }

  bool both_tlr() const { return a_.tlr && b_.tlr; }
  bool order_possible(TlrAssociation o) const {
    if (both_tlr()) return true;
    return o == (a_.tlr ? TlrAssociation::right : TlrAssociation::left);
  }

  std::int64_t width_of(const Range& r) const {
    std::int64_t w = 0;
    for (int j = r.j0; j < r.j1; ++j) w += b_.col_width(j);
    return w;
  }
  std::int64_t height_of(const Range& r) const {
    std::int64_t h = 0;
    for (int i = r.i0; i < r.i1; ++i) h += a_.row_height(i);
    return h;
  }

  WorkspaceLayout workspace(const Range& r, TlrAssociation order) const {
    WorkspaceLayout w;
    std::int64_t cursor = 0;
    auto take = [&](std::int64_t elems) {
      const std::int64_t at = cursor;
      cursor = round_up(cursor + elems, align_elems_);
      return at;
    };
    if (both_tlr()) {
      w.s_off.assign(static_cast<std::size_t>(q_), -1);
      w.s_rows.assign(static_cast<std::size_t>(q_), 0);
      for (int k = 0; k < q_; ++k) {
        const std::int64_t mk = a_.inner_prefix(k, r.i1) - a_.inner_prefix(k, r.i0);
        const std::int64_t nk = b_.outer_prefix(k, r.j1) - b_.outer_prefix(k, r.j0);
        w.s_rows[k] = mk;
        if (mk > 0 && nk > 0) w.s_off[k] = take(mk * nk);
      }
    }
    if (order == TlrAssociation::right) {
      std::int64_t rho = 0;
      for (int i = r.i0; i < r.i1; ++i) rho += a_.outer_width(i);
      const std::int64_t cols = width_of(r);
      w.term_ld = std::max<std::int64_t>(1, rho);
      if (rho > 0 && cols > 0) w.term_off = take(rho * cols);
    } else {
      std::int64_t gamma = 0;
      for (int j = r.j0; j < r.j1; ++j) gamma += b_.inner_width(j);
      w.term_ld = std::max<std::int64_t>(1, round_up(height_of(r), ld_align_));
      if (gamma > 0) w.term_off = take(w.term_ld * gamma);
    }
    w.total = cursor;
    return w;
  }

  std::size_t need_bytes(const Range& r, TlrAssociation order) const {
    return static_cast<std::size_t>(workspace(r, order).total * es_);
  }

  /// FLOPs of stages 2 and 3 (stage 1 is the same in both orders).
  double cost(const Range& r, TlrAssociation order) const {
    double s2 = 0, s3 = 0;
    const double width = static_cast<double>(width_of(r));
    const double height = static_cast<double>(height_of(r));
    if (order == TlrAssociation::right) {
      for (int k = 0; k < q_; ++k) {
        double ra = 0, rb = 0;
        for (int i = r.i0; i < r.i1; ++i) ra += a_.rank(i, k);
        if (b_.tlr)
          for (int j = r.j0; j < r.j1; ++j) rb += 2.0 * b_.rank(k, j) * b_.col_width(j);
        else
          rb = 2.0 * a_.col_width(k) * width;
        s2 += ra * rb;
      }
      for (int i = r.i0; i < r.i1; ++i) s3 += 2.0 * a_.row_height(i) * width * a_.outer_width(i);
    } else {
      for (int k = 0; k < q_; ++k) {
        double ra = 0, rb = 0;
        if (a_.tlr)
          for (int i = r.i0; i < r.i1; ++i) ra += 2.0 * a_.row_height(i) * a_.rank(i, k);
        else
          ra = 2.0 * height * b_.row_height(k);
        for (int j = r.j0; j < r.j1; ++j) rb += b_.rank(k, j);
        s2 += ra * rb;
      }
      for (int j = r.j0; j < r.j1; ++j) s3 += 2.0 * height * b_.col_width(j) * b_.inner_width(j);
    }
    return s2 + s3;
  }

  /// The order to use for r under `budget`, or false when no possible order fits.
  bool choose(const Range& r, std::size_t budget, TlrAssociation forced,
              TlrAssociation& order) const {
    bool found = false;
    double best = 0;
    for (TlrAssociation o : {TlrAssociation::right, TlrAssociation::left}) {
      if (!order_possible(o)) continue;
      if (forced != TlrAssociation::automatic && o != forced) continue;
      if (need_bytes(r, o) > budget) continue;
      const double c = cost(r, o);
      if (!found || c < best) {
        found = true;
        best = c;
        order = o;
      }
    }
    return found;
  }

  std::size_t min_need(const Range& r, TlrAssociation forced) const {
    std::size_t best = std::numeric_limits<std::size_t>::max();
    for (TlrAssociation o : {TlrAssociation::right, TlrAssociation::left}) {
      if (!order_possible(o)) continue;
      if (forced != TlrAssociation::automatic && o != forced) continue;
      best = std::min(best, need_bytes(r, o));
    }
    return best;
  }

  /// The widest block of tile columns for which every single tile row fits, then the
  /// longest runs of tile rows that fit. Returns false when not even one tile fits.
  bool schedule(std::size_t budget, TlrAssociation forced, std::vector<Range>& out,
                std::vector<TlrAssociation>& orders) const {
    out.clear();
    orders.clear();
    const int pi = a_.tiles_r, pj = b_.tiles_c;
    if (pi == 0 || pj == 0) return true;
    const Range all{0, pi, 0, pj};
    TlrAssociation o{};
    if (choose(all, budget, forced, o)) {
      out.push_back(all);
      orders.push_back(o);
      return true;
    }
    int width = 0;
    for (int w = pj; w >= 1 && width == 0; --w) {
      bool ok = true;
      for (int j0 = 0; j0 < pj && ok; j0 += w)
        for (int i = 0; i < pi && ok; ++i)
          ok = min_need(Range{i, i + 1, j0, std::min(pj, j0 + w)}, forced) <= budget;
      if (ok) width = w;
    }
    if (width == 0) return false;
    for (int j0 = 0; j0 < pj; j0 += width) {
      const int j1 = std::min(pj, j0 + width);
      int i0 = 0;
      while (i0 < pi) {
        int i1 = i0 + 1;
        while (i1 < pi && min_need(Range{i0, i1 + 1, j0, j1}, forced) <= budget) ++i1;
        const Range r{i0, i1, j0, j1};
        choose(r, budget, forced, o);
        out.push_back(r);
        orders.push_back(o);
        i0 = i1;
      }
    }
    return true;
  }

  std::size_t smallest_rectangle_need(TlrAssociation forced) const {
    std::size_t worst = 0;
    for (int i = 0; i < a_.tiles_r; ++i)
      for (int j = 0; j < b_.tiles_c; ++j)
        worst = std::max(worst, min_need(Range{i, i + 1, j, j + 1}, forced));
    return worst;
  }

  TlrRectangle build(const Range& r, TlrAssociation order) const;

 private:
  using GroupKey = std::tuple<int, int, int, bool, bool, int, int, int, int, int, int>;
  struct StageBuilder {
    std::map<GroupKey, std::vector<TlrGemmTask>> groups;
    std::vector<TlrFill> fills;
    double flops = 0;
    void add(TlrBuffer a, TlrBuffer b, TlrBuffer c, bool ta, bool tb, std::int64_t m,
             std::int64_t n, std::int64_t k, std::int64_t lda, std::int64_t ldb, std::int64_t ldc,
             const TlrGemmTask& task) {
      const GroupKey key{static_cast<int>(a),
                         static_cast<int>(b),
                         static_cast<int>(c),
                         ta,
                         tb,
                         static_cast<int>(m),
                         static_cast<int>(n),
                         static_cast<int>(k),
                         static_cast<int>(lda),
                         static_cast<int>(ldb),
                         static_cast<int>(ldc)};
      groups[key].push_back(task);
      flops += 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
    }
    void fill(TlrBuffer buf, std::int64_t off, std::int64_t col, std::int64_t rows,
              std::int64_t cols, std::int64_t ld) {
      fills.push_back(TlrFill{buf, off, col, static_cast<int>(rows), static_cast<int>(cols),
                              static_cast<int>(ld)});
    }
    TlrStage finish() {
      TlrStage s;
      for (auto& [key, tasks] : groups) {
        TlrGemmGroup g;
        g.a = static_cast<TlrBuffer>(std::get<0>(key));
        g.b = static_cast<TlrBuffer>(std::get<1>(key));
        g.c = static_cast<TlrBuffer>(std::get<2>(key));
        g.trans_a = std::get<3>(key);
        g.trans_b = std::get<4>(key);
        g.m = std::get<5>(key);
        g.n = std::get<6>(key);
        g.k = std::get<7>(key);
        g.lda = std::get<8>(key);
        g.ldb = std::get<9>(key);
        g.ldc = std::get<10>(key);
        g.first = static_cast<int>(s.tasks.size());
        g.count = static_cast<int>(tasks.size());
        s.tasks.insert(s.tasks.end(), tasks.begin(), tasks.end());
        s.groups.push_back(g);
      }
      s.fills = std::move(fills);
      s.flops = flops;
      return s;
    }
  };

  OperandView a_, b_;
  std::int64_t es_;
  int ld_align_;
  int q_ = 0;
  std::int64_t align_elems_ = 1;
};

}  // namespace kcla::detail::tlr_planning
