// The plan of a TLR product C <- alpha op(A) op(B) + beta C (C dense, one or both of A and
// B in TLR form): output rectangles under a workspace budget, the association order of
// each, and for each rectangle the three stages as GEMM descriptors with offsets (not
// pointers), so that one plan serves every product with the same rank structure.
#pragma once

#include <kcla/tlr_layout.hpp>
#include <kcla/tlr_scalar.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kcla {

/// op(X): X itself or its transpose.
enum class Op { N, T };

/// Arithmetic of a product: `standard` computes in the storage precision (fp32 for
/// 16-bit types); `tf32` runs fp32 storage on tensor cores (TF32 inputs, fp32 sums).
enum class TlrMath { standard, tf32 };

/// Right: C_iJ = U_i (S Z^T)_i, one final GEMM per tile row. Left: C_Ij = ((U S) Z^T)_j,
/// one final GEMM per tile column. Automatic: the cheaper one per rectangle, from ranks.
enum class TlrAssociation { automatic, right, left };

/// Automatic: cuBLAS for Kokkos::Cuda, BLAS for host spaces. Reference: the plain serial
/// loops of every stage (host-accessible data only), which the fast paths are tested
/// against.
enum class TlrBackend { automatic, reference };

/// How the cuBLAS backend issues the GEMMs of a stage (host backends ignore it).
/// grouped: one cublasGemmGroupedBatchedEx call for the whole stage; batched: one call per
/// group of equal shapes (cublasGemmStridedBatchedEx when the addresses are equally
/// spaced, else cublasGemmBatchedEx; cublasGemmEx for a group of one); per_task: one
/// cublasGemmEx per GEMM; automatic: the measured default (docs/gpu-notes-tlr.md).
enum class TlrLaunch { automatic, grouped, batched, per_task };

/// Experimental tuning of the TLR product: knobs measured on one GPU (docs/gpu-notes-tlr.md);
/// names and defaults may change between versions. The defaults are what kcla chooses.
struct TlrGemmTuning {
  /// With TlrGemmOptions::workspace_bytes == 0: the number of output rectangles to aim for
  /// (less workspace; with `pipelined`, stages 1-2 of one rectangle overlap stage 3 of the
  /// previous one); 0: automatic (one rectangle, all of C at once: fastest on the H200).
  int rectangles = 0;
  /// Two arenas and two streams: stages 1-2 of the next rectangle overlap stage 3 of the
  /// current one (CUDA; the host runs rectangles in order either way).
  bool pipelined = true;
  /// Launch form of stages 1-2 and of stage 3 on CUDA.
  TlrLaunch coupling_launch = TlrLaunch::automatic;
  TlrLaunch final_launch = TlrLaunch::automatic;
};

struct TlrGemmOptions {
  /// Total workspace the product may use, all arenas together (bytes); 0: automatic
  /// (`tuning.rectangles` decides).
  std::size_t workspace_bytes = 0;
  TlrMath math = TlrMath::standard;
  TlrAssociation association = TlrAssociation::automatic;
  TlrBackend backend = TlrBackend::automatic;
  TlrGemmTuning tuning;
};

namespace detail {

/// The arrays a plan addresses. Factor arrays and the workspace are addressed by
/// element offset; dense operands and C by (row, column) with their own leading dimension.
enum class TlrBuffer : std::uint8_t {
  a_outer,
  a_inner,
  b_outer,
  b_inner,
  a_dense,
  b_dense,
  c,
  workspace,
  count
};

/// One GEMM's operand addresses: element `off + col * ld(buffer)` of each buffer (col is
/// zero for factor arrays and the workspace).
struct TlrGemmTask {
  std::int64_t a_off = 0, a_col = 0, b_off = 0, b_col = 0, c_off = 0, c_col = 0;
};

/// Tasks [first, first + count) of a stage share everything but their addresses: one group
/// of a grouped GEMM. A leading dimension < 0 means "the buffer's own" (dense operands, C).
struct TlrGemmGroup {
  TlrBuffer a = TlrBuffer::workspace, b = TlrBuffer::workspace, c = TlrBuffer::workspace;
  bool trans_a = false, trans_b = false;
  int m = 0, n = 0, k = 0;
  int lda = 0, ldb = 0, ldc = 0;
  int first = 0, count = 0;
};

/// A block that a GEMM with an empty reduction would produce: rows x cols at (off, col) of
/// `buffer`, set to zero (stages 1-2) or scaled by beta (stage 3).
struct TlrFill {
  TlrBuffer buffer = TlrBuffer::workspace;
  std::int64_t off = 0, col = 0;
  int rows = 0, cols = 0, ld = 0;
};

struct TlrStage {
  std::vector<TlrGemmGroup> groups;
  std::vector<TlrGemmTask> tasks;
  std::vector<TlrFill> fills;
  double flops = 0;
};

/// Output tiles [row_begin, row_end) x [col_begin, col_end) of C, computed completely
/// (the whole sum over k) in one arena.
struct TlrRectangle {
  int row_begin = 0, row_end = 0, col_begin = 0, col_end = 0;
  TlrAssociation order = TlrAssociation::right;
  int arena = 0;
  std::size_t workspace_bytes = 0;
  TlrStage stage1, stage2, stage3;
};

/// What the planner needs of an operand: a TLR layout, or a dense shape.
struct TlrOperandShape {
  std::shared_ptr<const TlrLayout> layout;  // null: dense
  std::int64_t rows = 0, cols = 0;          // of the stored matrix (before op)
  bool dense() const { return layout == nullptr; }
};

/// State a backend keeps between products of one plan (handles, streams, arenas, pointer
/// arrays). Created by the backend on first use.
class TlrRuntime {
 public:
  virtual ~TlrRuntime() = default;
};

struct TlrPlanData {
  Op op_a = Op::N, op_b = Op::N;
  TlrOperandShape a, b;
  std::int64_t m = 0, n = 0, k = 0;
  ScalarKind scalar = ScalarKind::f64;
  std::size_t element_bytes = 8;
  TlrGemmOptions options;
  std::vector<TlrRectangle> rectangles;
  std::size_t arena_bytes = 0;
  int num_arenas = 1;
  double stage_flops[3] = {0, 0, 0};
  // A cache, not part of the plan's value: created by the first product (the backend's
  // handles, streams, workspace), shared by copies of the plan, so mutable.
  mutable std::shared_ptr<TlrRuntime> runtime;
};

}  // namespace detail

/// A product plan (see analyze() in tlr_gemm.hpp). Copies share the plan and its runtime
/// state; a plan serves one product at a time.
class TlrGemmPlan {
 public:
  TlrGemmPlan() = default;
  explicit TlrGemmPlan(std::shared_ptr<detail::TlrPlanData> data) : data_(std::move(data)) {}

  bool valid() const { return data_ != nullptr; }
  Op op_a() const { return data_->op_a; }
  Op op_b() const { return data_->op_b; }
  /// C is m x n; the contraction has length k.
  std::int64_t m() const { return data_->m; }
  std::int64_t n() const { return data_->n; }
  std::int64_t k() const { return data_->k; }
  ScalarKind scalar() const { return data_->scalar; }
  const TlrGemmOptions& options() const { return data_->options; }
  int num_rectangles() const { return static_cast<int>(data_->rectangles.size()); }
  /// Workspace the product allocates, all arenas together.
  std::size_t workspace_bytes() const { return data_->arena_bytes * data_->num_arenas; }
  int num_arenas() const { return data_->num_arenas; }
  /// Floating-point operations the product executes (stored ranks, padding included).
  double flops() const {
    return data_->stage_flops[0] + data_->stage_flops[1] + data_->stage_flops[2];
  }
  double stage_flops(int stage) const { return data_->stage_flops[stage - 1]; }
  /// Rectangles that use the right- (resp. left-) associative order.
  int num_right_rectangles() const;
  /// One line per rectangle: tile ranges, order, workspace, flops per stage.
  std::string describe() const;

  const detail::TlrPlanData& data() const { return *data_; }

 private:
  std::shared_ptr<detail::TlrPlanData> data_;
};

namespace detail {

/// Plans C (m x n) <- alpha op(A) op(B) + beta C. Throws InvalidArgument on shape or
/// tiling mismatches, two dense operands, or a budget below what one tile needs.
TlrGemmPlan plan_tlr_gemm(Op op_a, const TlrOperandShape& a, Op op_b, const TlrOperandShape& b,
                          ScalarKind scalar, const TlrGemmOptions& options);

/// The smallest total workspace (all arenas) for which the schedule has at most `runs`
/// rectangles (runs <= 1: everything in one rectangle).
std::size_t tlr_workspace_bytes(Op op_a, const TlrOperandShape& a, Op op_b,
                                const TlrOperandShape& b, ScalarKind scalar, int runs,
                                const TlrGemmOptions& options);

/// Throws InvalidArgument unless the operands have the structure the plan was made for.
void check_plan_operands(const TlrGemmPlan& plan, const TlrOperandShape& a,
                         const TlrOperandShape& b, ScalarKind scalar);

}  // namespace detail

}  // namespace kcla
