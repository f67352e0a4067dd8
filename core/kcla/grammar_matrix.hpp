// A grammar-compressed matrix resident in a Kokkos memory space, ready for products:
// one sweep schedule (chosen by the cost model or forced), its arrays in Views, and a
// reusable plan (workspace, level counters) for repeated products.
#pragma once

#include <kcla/detail/transpose_views.hpp>
#include <kcla/error.hpp>
#include <kcla/grammar.hpp>
#include <kcla/grammar_metrics.hpp>
#include <kcla/level_phases.hpp>
#include <kcla/schedule.hpp>
#include <kcla/sweep_cost_model.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <type_traits>
#include <typeindex>
#include <typeinfo>
#include <vector>

namespace kcla {

/// Which products a GrammarMatrix is built for: y = A x (right), z = A^T y (transpose,
/// kcla::multiply_transpose), or both. Each direction holds its own schedule on the device.
enum class GrammarProducts { right, transpose, both };

struct GrammarMatrixOptions {
  GrammarProducts products = GrammarProducts::right;
  SweepSchedule schedule = SweepSchedule::automatic;
  /// Right-hand sides the cost model plans for (the product itself takes any number).
  std::int64_t expected_vectors = 1;
  /// Upper bound on the sweep's value slots in bytes; 0 means no bound. The automatic
  /// choice prefers a schedule that fits; products with more vectors than fit run in
  /// chunks of vectors.
  std::int64_t workspace_budget_bytes = 0;
  SweepTuning tuning;
};

namespace detail {

/// What a ticket of the fused kernel does (SweepPlan::ticket_kind). Kinds 5-8 are the row
/// phase of the host form (kernels/kcla/detail/grammar_sweep_host.hpp).
enum TicketKind : std::int32_t {
  fill_y = 0,
  nodes = 1,
  emits = 2,
  rows_team = 3,  // device: whole rows, one team each (row_segment_team)
  rows_serial = 4,
  copies_fill = 5,
  rows_by_occurrence = 6,
  copies_reduce = 7,
  rows_by_chunk = 8,
  leaves = 9,      // device, full array: terminal table entries (with level 1)
  row_chunks = 10  // device: one chunk of C (row_chunk_team), where rows are fewer than chunks
};

/// Mutable per-matrix product state: value slots and the fused kernel's counters.
template <class MemorySpace>
struct SweepPlan {
  std::int64_t vectors = 0;
  Kokkos::View<std::uint64_t*, MemorySpace> workspace;  // value slots, 8-byte aligned
  // [0]: ticket, [1 + level]: done; unsigned long long for native atomic adds on CUDA.
  Kokkos::View<unsigned long long*, MemorySpace> counters;
  // Ticket table of the fused kernel: level and kind of each ticket and its item range.
  Kokkos::View<std::int32_t*, MemorySpace> ticket_level, ticket_kind;
  Kokkos::View<std::int64_t*, MemorySpace> ticket_begin, ticket_end;
  std::vector<std::int64_t> tickets_per_level;  // host, index = level (0 .. depth + 1)
  Kokkos::View<std::int64_t*, MemorySpace> tickets_per_level_device;
  Kokkos::View<std::int64_t*, MemorySpace> level_first;  // first node of each level
  // Row phase of per-level launches: C split into chunks of chunk_symbols symbols.
  std::int64_t chunk_symbols = 0;
  Kokkos::View<std::int64_t*, MemorySpace> chunk_first_row;
  // Host row phase by occurrence (kernels/kcla/detail/grammar_sweep_host.hpp): C's codes
  // grouped by code with the rows they occur in, units of work for occurrence_unit_vectors
  // vectors, and one copy of y per thread.
  Kokkos::View<std::int32_t*, MemorySpace> occurrence_codes, occurrence_rows;
  Kokkos::View<std::int64_t*, MemorySpace> occurrence_offsets, occurrence_units;
  std::int64_t occurrence_unit_vectors = 0;
  Kokkos::View<std::uint64_t*, MemorySpace> row_copies;
  // Products in chunks of vectors (workspace budget): gathered x and y columns.
  Kokkos::View<std::uint64_t*, MemorySpace> chunk_x, chunk_y;
  std::int64_t num_tickets = 0;
  std::int64_t epoch = 0;  // completed fused products since the counters were zeroed
  // Device, full array: the slot where the terminal table starts (filled with level 1,
  // read from level 2 on and by the rows), or -1 (leaves evaluated at every read).
  std::int64_t leaf_table = -1;
  // Device, team row phase (kernels/kcla/detail/grammar_sweep_args.hpp, row_chunk_team):
  // two partials per chunk and vector, per-row arrivals, the rows without symbols.
  Kokkos::View<std::uint64_t*, MemorySpace> row_partials;
  Kokkos::View<unsigned long long*, MemorySpace> row_arrivals;
  Kokkos::View<std::int64_t*, MemorySpace> empty_rows;
  std::int64_t row_group = 1;  // threads per long whole row of a chunk
  // Whole rows up to warp_row_items (symbols x vectors) go to one warp of row_warp lanes
  // each; long_rows lists the others (ascending).
  std::int64_t row_warp = 1, warp_row_items = 0;
  Kokkos::View<std::int64_t*, MemorySpace> long_rows;
  // SweepLaunch::dataflow: value slots tagged with their product (zeroed when made) and the
  // products run on them so far (never reset: a tag is never reused while a slot may
  // still hold it).
  Kokkos::View<std::uint64_t*, MemorySpace> tagged_workspace;
  std::int64_t dataflow_products = 0;
  // SweepLaunch::graph: the captured launch sequence and what it was captured for.
  std::shared_ptr<void> graph;
  const void* graph_x = nullptr;
  const void* graph_y = nullptr;
  std::int64_t graph_vectors = 0;
  std::uintptr_t graph_stream = 0;
  std::type_index graph_type = std::type_index(typeid(void));
};

}  // namespace detail

namespace detail {
/// Bytes one array takes in a packed image: rounded up so the next array starts 256-byte
/// aligned (what device loads and copies want).
inline std::int64_t packed_array_bytes(std::int64_t bytes) {
  return (bytes + 255) / 256 * 256;
}

/// A copy of v with every element squared (on v's memory space).
template <class Scalar, class MemorySpace>
Kokkos::View<Scalar*, MemorySpace> squared_copy(const Kokkos::View<Scalar*, MemorySpace>& v) {
  Kokkos::View<Scalar*, MemorySpace> out(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, v.label() + "^2"), v.extent(0));
  using exec = typename MemorySpace::execution_space;
  Kokkos::parallel_for(
      "kcla::grammar::square_coefficients", Kokkos::RangePolicy<exec>(0, v.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i) { out(i) = v(i) * v(i); });
  Kokkos::fence();
  return out;
}
}  // namespace detail

template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class GrammarMatrix {
 public:
  using scalar_type = Scalar;
  using memory_space = MemorySpace;
  template <class T>
  using view = Kokkos::View<T*, MemorySpace>;

  GrammarMatrix() = default;

  /// Builds the schedule on the host and copies it into MemorySpace.
  explicit GrammarMatrix(const Grammar& grammar, const GrammarMatrixOptions& options = {})
      : options_(options), num_rows_(grammar.num_rows), num_cols_(grammar.num_cols) {
    if (options.schedule == SweepSchedule::layered &&
        options.tuning.launch == SweepLaunch::dataflow)
      throw InvalidArgument(
          "GrammarMatrixOptions: the dataflow launch needs the full-array schedule (the layered "
          "one reuses its frontiers level by level)");
    grammar.validate();  // once: the analyses below take a valid grammar and its levels
    const GrammarLevels levels = compute_levels(grammar);
    metrics_ = detail::compute_metrics(grammar, levels);
    const SweepMachine machine = options.tuning.machine
                                     ? *options.tuning.machine
                                     : SweepMachine::for_memory_space<MemorySpace>();
    // The full array's level phases, planned where that schedule may run.
    const bool may_run_full_array = options.products != GrammarProducts::transpose &&
                                    options.schedule != SweepSchedule::layered;
    LevelPhases phases;
    if (may_run_full_array)
      phases = plan_level_phases(
          grammar, levels, options.expected_vectors, sizeof(Scalar), options.tuning.launch, machine,
          options.tuning.max_phase_levels > 0 ? options.tuning.max_phase_levels
                                              : machine.phase_levels_for(options.expected_vectors));
    const LevelPhases* planned = may_run_full_array ? &phases : nullptr;
    prediction_ =
        options.schedule == SweepSchedule::automatic
            ? choose_sweep(metrics_, options.expected_vectors, sizeof(Scalar),
                           options.tuning.launch, options.workspace_budget_bytes, machine, planned)
            : predict_sweep(metrics_, options.schedule, options.tuning.launch,
                            options.expected_vectors, sizeof(Scalar), machine, planned);
    // The left product's automatic launch: the machine's, or (automatic there) the launch the
    // cost model gives this grammar's full-array right product: the two directions walk the
    // same levels, and the dataflow form won or lost in both on the same panels (runs 59-64).
    transpose_launch_ = machine.transpose_launch;
    if (transpose_launch_ == SweepLaunch::automatic)
      transpose_launch_ = predict_sweep(metrics_, SweepSchedule::full_array, options.tuning.launch,
                                        options.expected_vectors, sizeof(Scalar), machine, planned)
                                      .launch == SweepLaunch::dataflow
                              ? SweepLaunch::dataflow
                              : SweepLaunch::graph;
    if (options.products != GrammarProducts::transpose) {
      if (prediction_.schedule == SweepSchedule::full_array)
        load(detail::build_full_array_schedule(grammar, levels, phases.tops,
                                               options.tuning.slot_order));
      else
        load(build_layered_schedule(grammar));
    }
    if (options.products != GrammarProducts::right)
      transpose_ = std::make_shared<detail::TransposeViews<Scalar, MemorySpace>>(
          build_transpose_schedule(grammar));
  }

  /// The same matrix with every stored value squared: its products sum squares (a
  /// genotype matrix's sums of squared dosages per sample or variant). Shares the schedule
  /// arrays with this matrix (no rebuild, no second copy of the structure); has its own
  /// coefficients, workspace and launch cache.
  GrammarMatrix squared_coefficients() const {
    GrammarMatrix s = *this;
    s.plan_.reset();
    if (terminal_coefficients.extent(0) > 0)
      s.terminal_coefficients = detail::squared_copy(terminal_coefficients);
    if (transpose_) {
      auto t = std::make_shared<detail::TransposeViews<Scalar, MemorySpace>>(
          detail::TransposeViews<Scalar, MemorySpace>::structure_of(*transpose_));
      t->terminal_coefficients = detail::squared_copy(transpose_->terminal_coefficients);
      s.transpose_ = std::move(t);
    }
    return s;
  }

  std::int64_t num_rows() const { return num_rows_; }
  std::int64_t num_cols() const { return num_cols_; }
  SweepSchedule schedule() const { return prediction_.schedule; }
  /// The cost model's prediction for options.expected_vectors (what decided the schedule).
  const SweepPrediction& prediction() const { return prediction_; }
  const GrammarMetrics& metrics() const { return metrics_; }
  const GrammarMatrixOptions& options() const { return options_; }
  /// Levels the sweep runs one after another: the grammar's depth, or for the full array
  /// its level phases (prediction().phases; metrics().depth stays the grammar's).
  std::int32_t depth() const { return depth_; }
  /// Whether the matrix was built for y = A x / z = A^T y (GrammarMatrixOptions::products).
  bool has_right_product() const { return options_.products != GrammarProducts::transpose; }
  bool has_transpose_product() const { return transpose_ != nullptr; }
  /// The launch form an automatic left product takes on a device (the machine's).
  SweepLaunch transpose_launch() const { return transpose_launch_; }

  /// Device bytes of the schedule arrays and terminal table (no workspace).
  std::int64_t static_bytes() const {
    std::int64_t b = 0;
    auto add = [&](const auto& v) {
      b += static_cast<std::int64_t>(v.span() *
                                     sizeof(typename std::decay_t<decltype(v)>::value_type));
    };
    add(left), add(right), add(terminal_coefficients), add(terminal_columns), add(row_offsets),
        add(row_symbols), add(emit_positions), add(emit_rows);
    if (transpose_) b += transpose_->static_bytes();
    return b;
  }
  /// Device bytes of the current plan (workspace, counters, ticket table).
  std::int64_t plan_bytes() const {
    const std::int64_t transpose_bytes = transpose_ ? transpose_->plan_bytes() : 0;
    if (!plan_) return transpose_bytes;
    const auto& p = *plan_;
    return transpose_bytes +
           static_cast<std::int64_t>(
               p.workspace.span() * 8 + p.tagged_workspace.span() * 8 + p.counters.span() * 8 +
               p.ticket_level.span() * 4 + p.ticket_kind.span() * 4 + p.ticket_begin.span() * 8 +
               p.ticket_end.span() * 8 + p.tickets_per_level_device.span() * 8 +
               p.level_first.span() * 8 + p.chunk_first_row.span() * 8 + p.row_partials.span() * 8 +
               p.row_arrivals.span() * 8 + p.empty_rows.span() * 8 + p.occurrence_codes.span() * 4 +
               p.occurrence_rows.span() * 4 + p.occurrence_offsets.span() * 8 +
               p.occurrence_units.span() * 8 + p.row_copies.span() * 8 + p.chunk_x.span() * 8 +
               p.chunk_y.span() * 8);
  }
  std::int64_t device_bytes() const { return static_bytes() + plan_bytes(); }

  // --- schedule data (read by the kernels) -------------------------------------------
  std::vector<std::int64_t> level_offsets;  // host copy: launch bounds
  view<std::int32_t> left, right;
  view<Scalar> terminal_coefficients;
  view<std::int32_t> terminal_columns;
  // full array
  view<std::int64_t> row_offsets;
  view<std::int32_t> row_symbols;
  std::vector<std::int64_t> row_offsets_host;  // host copy: chunk boundaries
  // layered
  std::vector<std::int64_t> emit_offsets;  // host copy
  view<std::int32_t> emit_positions, emit_rows;
  std::int64_t max_width = 0;

  /// The product plan for `vectors` right-hand sides (created or resized on demand).
  detail::SweepPlan<MemorySpace>& plan() const {
    if (!plan_) plan_ = std::make_shared<detail::SweepPlan<MemorySpace>>();
    return *plan_;
  }
  /// The left-product schedule and state; throws InvalidArgument when the matrix was built
  /// for right products only.
  detail::TransposeViews<Scalar, MemorySpace>& transpose_views() const {
    if (!transpose_)
      throw InvalidArgument(
          "kcla::multiply_transpose: the matrix was built for right products only; build it "
          "with GrammarMatrixOptions::products = GrammarProducts::transpose or ::both");
    return *transpose_;
  }

  // --- packed images: one block's arrays in one allocation (out-of-core products) ---
  /// Calls f(view) for each right-product schedule array, in the order of a packed image.
  template <class F>
  void for_each_schedule_array(F&& f) const {
    visit_schedule_arrays(*this, f);
  }
  /// Bytes of the packed image of the right-product arrays (each starts 256-byte aligned).
  std::int64_t packed_image_bytes() const {
    std::int64_t b = 0;
    for_each_schedule_array([&](const auto& v) {
      b += detail::packed_array_bytes(static_cast<std::int64_t>(
          v.extent(0) * sizeof(typename std::decay_t<decltype(v)>::value_type)));
    });
    return b;
  }
  /// Writes the packed image into host memory at `image` (packed_image_bytes() long);
  /// needs a matrix whose arrays the host can read.
  void write_packed_image(void* image) const {
    static_assert(Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible,
                  "write_packed_image reads the arrays on the host");
    char* at = static_cast<char*>(image);
    for_each_schedule_array([&](const auto& v) {
      const std::size_t bytes =
          v.extent(0) * sizeof(typename std::decay_t<decltype(v)>::value_type);
      if (bytes > 0) std::memcpy(at, v.data(), bytes);
      at += detail::packed_array_bytes(static_cast<std::int64_t>(bytes));
    });
  }
  /// The same matrix (schedule, prediction, host copies) whose right-product arrays are
  /// views of a packed image at `image` in OtherSpace: nothing is copied or owned (the image
  /// must outlive the result and hold this matrix's image when products run). The result
  /// has its own plan; it has no left-product schedule.
  template <class OtherSpace>
  GrammarMatrix<Scalar, OtherSpace> over_packed_image(void* image) const {
    std::vector<std::int64_t> extents;
    for_each_schedule_array([&](const auto& v) { extents.push_back(v.extent(0)); });
    GrammarMatrix<Scalar, OtherSpace> r;
    r.options_ = options_;
    r.options_.products = GrammarProducts::right;
    r.metrics_ = metrics_;
    r.prediction_ = prediction_;
    r.transpose_launch_ = transpose_launch_;
    r.num_rows_ = num_rows_;
    r.num_cols_ = num_cols_;
    r.depth_ = depth_;
    r.level_offsets = level_offsets;
    r.row_offsets_host = row_offsets_host;
    r.emit_offsets = emit_offsets;
    r.max_width = max_width;
    char* at = static_cast<char*>(image);
    std::size_t k = 0;
    GrammarMatrix<Scalar, OtherSpace>::visit_schedule_arrays(r, [&](auto& v) {
      using V = std::decay_t<decltype(v)>;
      using T = typename V::value_type;
      const std::int64_t n = extents[k++];
      v = V(reinterpret_cast<T*>(at), n);  // unmanaged: the image owns the memory
      at += detail::packed_array_bytes(n * static_cast<std::int64_t>(sizeof(T)));
    });
    return r;
  }

 private:
  template <class T>
  static view<T> to_view(const std::vector<T>& host, const char* label) {
    view<T> d(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), host.size());
    Kokkos::deep_copy(
        d, Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
               host.data(), host.size()));
    return d;
  }
  void load_terminals(const TerminalTable& t) {
    std::vector<Scalar> coefficients(t.coefficients.size());
    for (std::size_t i = 0; i < coefficients.size(); ++i)
      coefficients[i] = static_cast<Scalar>(t.coefficients[i]);
    terminal_coefficients = to_view(coefficients, "kcla::grammar::terminal_coefficients");
    terminal_columns = to_view(t.columns, "kcla::grammar::terminal_columns");
  }
  void load(const FullArraySchedule& s) {
    depth_ = s.depth;
    level_offsets = s.level_offsets;
    left = to_view(s.left, "kcla::grammar::left");
    right = to_view(s.right, "kcla::grammar::right");
    row_offsets = to_view(s.row_offsets, "kcla::grammar::row_offsets");
    row_offsets_host = s.row_offsets;
    row_symbols = to_view(s.row_symbols, "kcla::grammar::row_symbols");
    load_terminals(s.terminals);
  }
  void load(const LayeredSchedule& s) {
    depth_ = s.depth;
    level_offsets = s.level_offsets;
    left = to_view(s.left, "kcla::grammar::left");
    right = to_view(s.right, "kcla::grammar::right");
    emit_offsets = s.emit_offsets;
    emit_positions = to_view(s.emit_positions, "kcla::grammar::emit_positions");
    emit_rows = to_view(s.emit_rows, "kcla::grammar::emit_rows");
    max_width = s.max_width;
    load_terminals(s.terminals);
  }

  template <class Self, class F>
  static void visit_schedule_arrays(Self& m, F&& f) {
    f(m.left), f(m.right), f(m.terminal_coefficients), f(m.terminal_columns), f(m.row_offsets),
        f(m.row_symbols), f(m.emit_positions), f(m.emit_rows);
  }
  template <class, class>
  friend class GrammarMatrix;

  GrammarMatrixOptions options_;
  GrammarMetrics metrics_;
  SweepPrediction prediction_;
  SweepLaunch transpose_launch_ = SweepLaunch::graph;
  std::int64_t num_rows_ = 0, num_cols_ = 0;
  std::int32_t depth_ = 0;
  mutable std::shared_ptr<detail::SweepPlan<MemorySpace>> plan_;
  std::shared_ptr<detail::TransposeViews<Scalar, MemorySpace>> transpose_;
};

}  // namespace kcla
