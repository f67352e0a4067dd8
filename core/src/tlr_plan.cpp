// The TLR product planner: argument checks, the rectangle schedule (workspace budget or
// rectangles aimed for), and the plan; the planner's internals are in tlr_planner.hpp, the
// stages' GEMM descriptors in tlr_stage_builder.cpp.
#include "tlr_planner.hpp"

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

using namespace tlr_planning;
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
