// The TLR product planner: operand views (transposes swap the factor families), workspace
// and cost model per rectangle, the rectangle schedule, and the three stages' GEMM
// descriptors.
#include <kcla/error.hpp>
#include <kcla/tlr_plan.hpp>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>

namespace kcla {

namespace detail {

namespace {

constexpr std::int64_t kArenaAlignBytes = 256;

std::int64_t round_up(std::int64_t v, std::int64_t m) {
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

OperandView make_view(Op op, const TlrOperandShape& s, bool is_a, int tile_size) {
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

TlrRectangle Planner::build(const Range& r, TlrAssociation order) const {
  constexpr TlrBuffer ws = TlrBuffer::workspace;
  constexpr TlrBuffer cbuf = TlrBuffer::c;
  const WorkspaceLayout w = workspace(r, order);
  TlrRectangle rect;
  rect.row_begin = r.i0;
  rect.row_end = r.i1;
  rect.col_begin = r.j0;
  rect.col_end = r.j1;
  rect.order = order;
  rect.workspace_bytes = static_cast<std::size_t>(w.total * es_);
  const std::int64_t bt = a_.tlr ? a_.b : b_.b;
  const std::int64_t row0 = static_cast<std::int64_t>(r.i0) * bt;  // first row of C
  const std::int64_t col0 = static_cast<std::int64_t>(r.j0) * bt;  // first column of C
  // Column offset of tile column j inside the rectangle, and row offset of tile row i.
  auto col_in = [&](int j) { return static_cast<std::int64_t>(j - r.j0) * bt; };
  auto row_in = [&](int i) { return static_cast<std::int64_t>(i - r.i0) * bt; };
  const std::int64_t width = width_of(r);
  const std::int64_t height = height_of(r);

  // Stage 1: per contraction index k, S_k = V[I, k]^T W[k, J], one fused GEMM over the
  // packed panels (tiles i in I are adjacent in inner panel k of op(A); tiles j in J are
  // adjacent in outer panel k of op(B)).
  StageBuilder s1;
  std::vector<std::int64_t> s_col0(static_cast<std::size_t>(q_), 0);
  if (both_tlr()) {
    for (int k = 0; k < q_; ++k) {
      const std::int64_t mk = w.s_rows[k];
      const std::int64_t nk = b_.outer_prefix(k, r.j1) - b_.outer_prefix(k, r.j0);
      if (w.s_off[k] < 0) continue;
      TlrGemmTask t;
      t.a_off = a_.inner_panel(k) + a_.ld * a_.inner_prefix(k, r.i0);
      t.b_off = b_.outer_panel(k) + b_.ld * b_.outer_prefix(k, r.j0);
      t.c_off = w.s_off[k];
      s1.add(a_.inner_buf, b_.outer_buf, ws, true, false, mk, nk, a_.col_width(k), a_.ld, b_.ld, mk,
             t);
    }
  }
  // S_ikj: rows of tile i, columns of tile j inside S_k.
  auto s_block = [&](int i, int k, int j) {
    return w.s_off[k] + (a_.inner_prefix(k, i) - a_.inner_prefix(k, r.i0)) +
           (b_.outer_prefix(k, j) - b_.outer_prefix(k, r.j0)) * w.s_rows[k];
  };

  StageBuilder s2, s3;
  if (order == TlrAssociation::right) {
    // Terminal matrices T_i (rho_i x width) stacked vertically, leading dimension term_ld;
    // row block k of T_i matches column block k of the outer panel U_i.
    std::vector<std::int64_t> t_row(static_cast<std::size_t>(r.i1 - r.i0), 0);
    for (int i = r.i0 + 1; i < r.i1; ++i)
      t_row[i - r.i0] = t_row[i - r.i0 - 1] + a_.outer_width(i - 1);
    const std::int64_t ldt = w.term_ld;
    for (int i = r.i0; i < r.i1; ++i)
      for (int k = 0; k < q_; ++k) {
        const int ra = a_.rank(i, k);
        if (ra == 0) continue;
        const std::int64_t t_base = w.term_off + t_row[i - r.i0] + a_.outer_prefix(i, k);
        if (b_.tlr) {
          // T_i[k, j] = S_ikj Z_kj^T
          for (int j = r.j0; j < r.j1; ++j) {
            const int rb = b_.rank(k, j);
            const int nj = b_.col_width(j);
            if (rb == 0) {
              s2.fill(ws, t_base + col_in(j) * ldt, 0, ra, nj, ldt);
              continue;
            }
            TlrGemmTask t;
            t.a_off = s_block(i, k, j);
            t.b_off = b_.inner_elem(k, j);
            t.c_off = t_base + col_in(j) * ldt;
            s2.add(ws, b_.inner_buf, ws, false, true, ra, nj, rb, w.s_rows[k], b_.ld, ldt, t);
          }
        } else {
          // T_i[k, :] = V_ik^T op(B)[k, J]
          TlrGemmTask t;
          t.a_off = a_.inner_elem(i, k);
          b_.dense_at(static_cast<std::int64_t>(k) * bt, col0, t.b_off, t.b_col);
          t.c_off = t_base;
          s2.add(a_.inner_buf, b_.dense_buf, ws, true, b_.t, ra, width, a_.col_width(k), a_.ld, -1,
                 ldt, t);
        }
      }
    // Stage 3: C[i, J] = alpha U_i T_i + beta C[i, J]: the sum over k is the reduction.
    for (int i = r.i0; i < r.i1; ++i) {
      const std::int64_t rho = a_.outer_width(i);
      const std::int64_t crow = static_cast<std::int64_t>(i) * bt;
      if (rho == 0) {
        s3.fill(cbuf, crow, col0, a_.row_height(i), width, -1);
        continue;
      }
      TlrGemmTask t;
      t.a_off = a_.outer_panel(i);
      t.b_off = w.term_off + t_row[i - r.i0];
      t.c_off = crow;
      t.c_col = col0;
      s3.add(a_.outer_buf, ws, cbuf, false, false, a_.row_height(i), width, rho, a_.ld, ldt, -1, t);
    }
  } else {
    // Terminal matrices L_j (height x gamma_j) side by side, leading dimension term_ld;
    // column block k of L_j matches column block k of the inner panel Z_j.
    std::vector<std::int64_t> l_col(static_cast<std::size_t>(r.j1 - r.j0), 0);
    for (int j = r.j0 + 1; j < r.j1; ++j)
      l_col[j - r.j0] = l_col[j - r.j0 - 1] + b_.inner_width(j - 1);
    const std::int64_t ldl = w.term_ld;
    for (int k = 0; k < q_; ++k)
      for (int j = r.j0; j < r.j1; ++j) {
        const int rb = b_.rank(k, j);
        if (rb == 0) continue;
        const std::int64_t l_base = w.term_off + (l_col[j - r.j0] + b_.inner_prefix(j, k)) * ldl;
        if (a_.tlr) {
          // L_j[i, k] = U_ik S_ikj
          for (int i = r.i0; i < r.i1; ++i) {
            const int ra = a_.rank(i, k);
            const int hi = a_.row_height(i);
            if (ra == 0) {
              s2.fill(ws, l_base + row_in(i), 0, hi, rb, ldl);
              continue;
            }
            TlrGemmTask t;
            t.a_off = a_.outer_elem(i, k);
            t.b_off = s_block(i, k, j);
            t.c_off = l_base + row_in(i);
            s2.add(a_.outer_buf, ws, ws, false, false, hi, rb, ra, a_.ld, w.s_rows[k], ldl, t);
          }
        } else {
          // L_j[:, k] = op(A)[I, k] W_kj
          TlrGemmTask t;
          a_.dense_at(row0, static_cast<std::int64_t>(k) * bt, t.a_off, t.a_col);
          t.b_off = b_.outer_elem(k, j);
          t.c_off = l_base;
          s2.add(a_.dense_buf, b_.outer_buf, ws, a_.t, false, height, rb, b_.row_height(k), -1,
                 b_.ld, ldl, t);
        }
      }
    // Stage 3: C[I, j] = alpha L_j Z_j^T + beta C[I, j].
    for (int j = r.j0; j < r.j1; ++j) {
      const std::int64_t gamma = b_.inner_width(j);
      const std::int64_t ccol = static_cast<std::int64_t>(j) * bt;
      if (gamma == 0) {
        s3.fill(cbuf, row0, ccol, height, b_.col_width(j), -1);
        continue;
      }
      TlrGemmTask t;
      t.a_off = w.term_off + l_col[j - r.j0] * ldl;
      t.b_off = b_.inner_panel(j);
      t.c_off = row0;
      t.c_col = ccol;
      s3.add(ws, b_.inner_buf, cbuf, false, true, height, b_.col_width(j), gamma, ldl, b_.ld, -1,
             t);
    }
  }
  rect.stage1 = s1.finish();
  rect.stage2 = s2.finish();
  rect.stage3 = s3.finish();
  return rect;
}

struct Setup {
  OperandView a, b;
  std::size_t es = 8;
  int ld_align = 1;
};

Setup validate(Op op_a, const TlrOperandShape& a, Op op_b, const TlrOperandShape& b,
               ScalarKind scalar, const TlrGemmOptions& options) {
  auto fail = [](const std::string& msg) { throw InvalidArgument("TLR gemm: " + msg); };
  if (a.dense() && b.dense()) fail("at least one operand must be a TLR matrix");
  if (a.rows < 0 || a.cols < 0 || b.rows < 0 || b.cols < 0) fail("negative dimension");
  const std::int64_t ka = op_a == Op::N ? a.cols : a.rows;
  const std::int64_t kb = op_b == Op::N ? b.rows : b.cols;
  if (ka != kb)
    fail("inner dimensions differ: op(A) has " + std::to_string(ka) + " columns, op(B) has " +
         std::to_string(kb) + " rows");
  if (!a.dense() && !b.dense() && a.layout->tile_size() != b.layout->tile_size())
    fail("the two TLR operands have different tile sizes (" +
         std::to_string(a.layout->tile_size()) + " and " + std::to_string(b.layout->tile_size()) +
         ")");
  if (options.tuning.rectangles < 0)
    fail("the target number of rectangles must be >= 0 (0: automatic), not " +
         std::to_string(options.tuning.rectangles));
  if (options.math == TlrMath::tf32 && scalar != ScalarKind::f32)
    fail("tf32 math needs fp32 (float) storage");
  if (options.association == TlrAssociation::left && a.dense())
    fail("the left-associative order needs a TLR A (use right or automatic)");
  if (options.association == TlrAssociation::right && b.dense())
    fail("the right-associative order needs a TLR B (use left or automatic)");
  // 16-bit types and tf32 math: cuBLAS' grouped GEMM wants 16-byte aligned operands.
  int align = 1;
  if (scalar == ScalarKind::f16 || scalar == ScalarKind::bf16) align = 8;
  if (options.math == TlrMath::tf32) align = 4;
  for (const TlrOperandShape* s : {&a, &b}) {
    if (s->dense()) continue;
    if (s->layout->rank_multiple() % align != 0 || s->layout->tile_size() % align != 0 ||
        s->layout->leading_dim() % align != 0)
      fail(std::string(to_string(scalar)) + (options.math == TlrMath::tf32 ? "/tf32" : "") +
           " products need tile sizes, leading dimensions and rank multiples that are multiples "
           "of " +
           std::to_string(align));
  }
  const int tile = a.dense() ? b.layout->tile_size() : a.layout->tile_size();
  Setup s;
  s.a = make_view(op_a, a, true, tile);
  s.b = make_view(op_b, b, false, tile);
  s.es = element_bytes(scalar);
  s.ld_align = std::max(1, static_cast<int>(16 / s.es));
  return s;
}

/// The smallest total workspace (all arenas) whose schedule has at most `runs` rectangles.
std::size_t budget_for_runs(const Planner& planner, const Setup& s, int runs,
                            const TlrGemmOptions& options) {
  const int pi = s.a.tiles_r, pj = s.b.tiles_c;
  if (pi == 0 || pj == 0) return 0;
  const std::size_t hi = planner.min_need(Range{0, pi, 0, pj}, options.association);
  if (runs <= 1) return hi;
  std::size_t lo = planner.smallest_rectangle_need(options.association);
  if (lo >= hi) return hi;
  std::vector<Range> ranges;
  std::vector<TlrAssociation> orders;
  auto count = [&](std::size_t budget) {
    planner.schedule(budget, options.association, ranges, orders);
    return static_cast<int>(ranges.size());
  };
  // Smallest per-arena budget with at most `runs` rectangles.
  std::size_t best = hi;
  while (lo < best) {
    const std::size_t mid = lo + (best - lo) / 2;
    if (count(mid) <= runs)
      best = mid;
    else
      lo = mid + 1;
  }
  if (count(best) <= 1) return hi;
  return options.tuning.pipelined ? 2 * best : best;
}

/// Rectangles an automatic plan aims for: one. Splitting C so that stages 1-2 of one
/// rectangle overlap stage 3 of the previous one gained 1-6% with one-GEMM-per-task stage 3
/// launches, but with batched launches it only adds launches and shrinks the GEMMs (H200,
/// fp32: 4 or 8 rectangles 0-9% slower than one, run 5 of docs/gpu-notes-tlr.md). A budget
/// (workspace_bytes) or an explicit target still splits, and then pipelines.
int automatic_rectangles(const TlrGemmOptions& options) {
  return options.tuning.rectangles > 0 ? options.tuning.rectangles : 1;
}

}  // namespace

TlrGemmPlan plan_tlr_gemm(Op op_a, const TlrOperandShape& a, Op op_b, const TlrOperandShape& b,
                          ScalarKind scalar, const TlrGemmOptions& options) {
  const Setup s = validate(op_a, a, op_b, b, scalar, options);
  Planner planner(s.a, s.b, s.es, s.ld_align);
  auto data = std::make_shared<TlrPlanData>();
  data->op_a = op_a;
  data->op_b = op_b;
  data->a = a;
  data->b = b;
  data->m = s.a.rows;
  data->n = s.b.cols;
  data->k = s.a.cols;
  data->scalar = scalar;
  data->element_bytes = s.es;
  data->options = options;

  std::vector<Range> ranges;
  std::vector<TlrAssociation> orders;
  std::size_t total = options.workspace_bytes;
  if (total == 0) {
    const int runs = automatic_rectangles(options);
    total = runs <= 1 ? std::numeric_limits<std::size_t>::max()
                      : budget_for_runs(planner, s, runs, options);
  }
  // The whole of C in one rectangle needs one arena; otherwise a pipelined product splits
  // the budget between two.
  bool ok = planner.schedule(total, options.association, ranges, orders);
  if (ok && ranges.size() > 1 && options.tuning.pipelined)
    ok = planner.schedule(total / 2, options.association, ranges, orders);
  if (!ok)
    throw InvalidArgument("TLR gemm: a workspace budget of " + std::to_string(total) +
                          " bytes is below the " +
                          std::to_string(planner.smallest_rectangle_need(options.association) *
                                         (options.tuning.pipelined ? 2 : 1)) +
                          " bytes that single tiles need");
  data->num_arenas = (ranges.size() > 1 && options.tuning.pipelined) ? 2 : 1;
  for (std::size_t n = 0; n < ranges.size(); ++n) {
    TlrRectangle rect = planner.build(ranges[n], orders[n]);
    rect.arena = data->num_arenas == 2 ? static_cast<int>(n % 2) : 0;
    data->arena_bytes = std::max(data->arena_bytes, rect.workspace_bytes);
    data->stage_flops[0] += rect.stage1.flops;
    data->stage_flops[1] += rect.stage2.flops;
    data->stage_flops[2] += rect.stage3.flops;
    data->rectangles.push_back(std::move(rect));
  }
  return TlrGemmPlan(std::move(data));
}

std::size_t tlr_workspace_bytes(Op op_a, const TlrOperandShape& a, Op op_b,
                                const TlrOperandShape& b, ScalarKind scalar, int runs,
                                const TlrGemmOptions& options) {
  const Setup s = validate(op_a, a, op_b, b, scalar, options);
  return budget_for_runs(Planner(s.a, s.b, s.es, s.ld_align), s, runs, options);
}

void check_plan_operands(const TlrGemmPlan& plan, const TlrOperandShape& a,
                         const TlrOperandShape& b, ScalarKind scalar) {
  const auto& d = plan.data();
  if (scalar != d.scalar)
    throw InvalidArgument(std::string("TLR gemm: the plan is for ") + to_string(d.scalar) +
                          " operands, these are " + to_string(scalar));
  auto same = [](const TlrOperandShape& x, const TlrOperandShape& y) {
    if (x.dense() != y.dense() || x.rows != y.rows || x.cols != y.cols) return false;
    return x.dense() || x.layout == y.layout || x.layout->same_structure(*y.layout);
  };
  if (!same(a, d.a))
    throw InvalidArgument("TLR gemm: A does not have the shape and rank structure of the plan");
  if (!same(b, d.b))
    throw InvalidArgument("TLR gemm: B does not have the shape and rank structure of the plan");
}

}  // namespace detail

int TlrGemmPlan::num_right_rectangles() const {
  int n = 0;
  for (const auto& r : data_->rectangles) n += r.order == TlrAssociation::right;
  return n;
}

std::string TlrGemmPlan::describe() const {
  std::ostringstream os;
  const auto& d = *data_;
  os << "TLR gemm plan: C " << d.m << " x " << d.n << ", k " << d.k << ", " << to_string(d.scalar)
     << (d.options.math == TlrMath::tf32 ? "/tf32" : "") << ", " << d.rectangles.size()
     << " rectangle(s), " << d.num_arenas << " arena(s) of " << d.arena_bytes << " bytes, "
     << flops() << " flops (" << d.stage_flops[0] << " + " << d.stage_flops[1] << " + "
     << d.stage_flops[2] << ")\n";
  for (const auto& r : d.rectangles) {
    os << "  tiles [" << r.row_begin << ", " << r.row_end << ") x [" << r.col_begin << ", "
       << r.col_end << ") " << (r.order == TlrAssociation::right ? "right" : "left") << ", arena "
       << r.arena << ", " << r.workspace_bytes << " bytes; stage 1: " << r.stage1.tasks.size()
       << " GEMMs in " << r.stage1.groups.size() << " groups; stage 2: " << r.stage2.tasks.size()
       << " GEMMs in " << r.stage2.groups.size() << " groups, " << r.stage2.fills.size()
       << " zero blocks; stage 3: " << r.stage3.tasks.size() << " GEMMs\n";
  }
  return os.str();
}

}  // namespace kcla
