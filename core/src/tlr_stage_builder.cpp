// The stage builder of the TLR product planner: for one rectangle of C and one association
// order, the GEMMs of stages 1-3 grouped by shape (one grouped or batched call per group),
// the fills of the workspace and their FLOPs.
#include "tlr_planner.hpp"

namespace kcla::detail::tlr_planning {

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

}  // namespace kcla::detail::tlr_planning
