// A grammar matrix's left-product schedule (kcla/transpose_schedule.hpp) resident in a
// memory space, with the mutable state its products reuse. Held by GrammarMatrix when it
// was built with GrammarProducts::transpose or ::both.
#pragma once

#include <kcla/transpose_schedule.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <typeindex>
#include <typeinfo>
#include <vector>

namespace kcla::detail {

template <class Scalar, class MemorySpace>
struct TransposeViews {
  template <class T>
  using view = Kokkos::View<T*, MemorySpace>;

  std::int32_t depth = 0;
  std::vector<std::int64_t> level_offsets;  // host: launch bounds of each group
  view<std::int64_t> level_offsets_device;  // the same, for kernels that run several groups
  std::int64_t num_nodes = 0;
  view<std::int64_t> in_offsets;
  view<std::int32_t> in_sources;
  view<Scalar> terminal_coefficients;
  view<std::int64_t> terminal_offsets;
  view<std::int32_t> terminal_sources;
  view<std::int64_t> column_offsets;

  // Product state: node values (num_nodes x B), chunk buffers, the captured graph.
  Kokkos::View<std::uint64_t*, MemorySpace> workspace, chunk_y, chunk_z;
  // SweepLaunch::dataflow: node values tagged with their product (zeroed when made), the
  // ticket dispenser, tickets handed out and products run so far (never reset).
  Kokkos::View<std::uint64_t*, MemorySpace> tagged_workspace;
  Kokkos::View<unsigned long long*, MemorySpace> dataflow_counter;
  std::int64_t dataflow_tickets = 0, dataflow_products = 0;
  std::shared_ptr<void> graph;
  const void* graph_y = nullptr;
  const void* graph_z = nullptr;
  std::int64_t graph_vectors = 0;
  std::uintptr_t graph_stream = 0;
  std::type_index graph_type = std::type_index(typeid(void));

  /// The schedule arrays of `other` (shared views) without its workspace or launch cache.
  static TransposeViews structure_of(const TransposeViews& other) {
    TransposeViews t;
    t.depth = other.depth;
    t.level_offsets = other.level_offsets;
    t.level_offsets_device = other.level_offsets_device;
    t.num_nodes = other.num_nodes;
    t.in_offsets = other.in_offsets;
    t.in_sources = other.in_sources;
    t.terminal_coefficients = other.terminal_coefficients;
    t.terminal_offsets = other.terminal_offsets;
    t.terminal_sources = other.terminal_sources;
    t.column_offsets = other.column_offsets;
    return t;
  }

  explicit TransposeViews(const TransposeSchedule& s)
      : depth(s.depth), level_offsets(s.level_offsets), num_nodes(s.num_nodes()) {
    level_offsets_device = upload(s.level_offsets, "kcla::transpose::level_offsets");
    in_offsets = upload(s.in_offsets, "kcla::transpose::in_offsets");
    in_sources = upload(s.in_sources, "kcla::transpose::in_sources");
    std::vector<Scalar> coefficients(s.terminal_coefficients.begin(),
                                     s.terminal_coefficients.end());
    terminal_coefficients = upload(coefficients, "kcla::transpose::terminal_coefficients");
    terminal_offsets = upload(s.terminal_offsets, "kcla::transpose::terminal_offsets");
    terminal_sources = upload(s.terminal_sources, "kcla::transpose::terminal_sources");
    column_offsets = upload(s.column_offsets, "kcla::transpose::column_offsets");
  }

  std::int64_t static_bytes() const {
    return static_cast<std::int64_t>(in_offsets.span() * 8 + in_sources.span() * 4 +
                                     terminal_coefficients.span() * sizeof(Scalar) +
                                     terminal_offsets.span() * 8 + terminal_sources.span() * 4 +
                                     column_offsets.span() * 8);
  }
  std::int64_t plan_bytes() const {
    return static_cast<std::int64_t>(
        (workspace.span() + chunk_y.span() + chunk_z.span() + tagged_workspace.span()) * 8);
  }

 private:
  TransposeViews() = default;  // structure_of only
  template <class T>
  static view<T> upload(const std::vector<T>& host, const char* label) {
    view<T> d(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), host.size());
    Kokkos::deep_copy(
        d, Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
               host.data(), host.size()));
    return d;
  }
};

}  // namespace kcla::detail
