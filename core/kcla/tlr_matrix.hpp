// A tile-low-rank matrix in one Kokkos memory space: a TlrLayout (host metadata) plus the
// two packed factor arrays, and small device copies of the metadata for kernels.
#pragma once

#include <kcla/detail/large_range.hpp>
#include <kcla/error.hpp>
#include <kcla/tlr_layout.hpp>
#include <kcla/tlr_scalar.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace kcla {

/// What kernels need of a TlrLayout, in a memory space (arrays as in TlrLayout).
template <class MemorySpace>
struct TlrDeviceLayout {
  Kokkos::View<const int*, MemorySpace> ranks;                 // logical, row-major tiles
  Kokkos::View<const int*, MemorySpace> stored_ranks;          // row-major tiles
  Kokkos::View<const int*, MemorySpace> outer_prefix;          // tile_rows x (tile_cols + 1)
  Kokkos::View<const int*, MemorySpace> inner_prefix;          // tile_cols x (tile_rows + 1)
  Kokkos::View<const std::int64_t*, MemorySpace> outer_start;  // tile_rows + 1
  Kokkos::View<const std::int64_t*, MemorySpace> inner_start;  // tile_cols + 1
  std::int64_t num_rows = 0, num_cols = 0;
  int tile_size = 1, tile_rows = 0, tile_cols = 0, leading_dim = 1;
};

namespace detail {

template <class T, class MemorySpace>
Kokkos::View<const T*, MemorySpace> to_space(const std::vector<T>& v, const char* label) {
  Kokkos::View<T*, MemorySpace> d(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), v.size());
  Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(v.data(),
                                                                                       v.size());
  Kokkos::deep_copy(d, h);
  return d;
}

}  // namespace detail

/// A TLR matrix whose factors live in MemorySpace (see TlrLayout for the storage).
/// Copies are shallow, like Kokkos Views.
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class TlrMatrix {
 public:
  using value_type = Scalar;
  using memory_space = MemorySpace;
  using factor_view = Kokkos::View<Scalar*, MemorySpace>;

  TlrMatrix() = default;

  /// Allocates zero factors for `layout`.
  explicit TlrMatrix(const TlrLayout& layout)
      : TlrMatrix(std::make_shared<const TlrLayout>(layout)) {}

  explicit TlrMatrix(std::shared_ptr<const TlrLayout> layout) : layout_(std::move(layout)) {
    if (!layout_) throw InvalidArgument("TlrMatrix: null layout");
    // Zeroed in chunks: a plain initialised View of 2^32+ elements would hang Kokkos 3.4
    // on CUDA (detail/large_range.hpp).
    outer_ =
        factor_view(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::tlr::outer_factors"),
                    layout_->outer_size());
    inner_ =
        factor_view(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::tlr::inner_factors"),
                    layout_->inner_size());
    detail::fill_large(outer_, TlrScalarTraits<Scalar>::narrow(0.0));
    detail::fill_large(inner_, TlrScalarTraits<Scalar>::narrow(0.0));
    build_device_layout();
  }

  /// Wraps existing factor arrays (sizes must match the layout).
  TlrMatrix(std::shared_ptr<const TlrLayout> layout, factor_view outer, factor_view inner)
      : layout_(std::move(layout)), outer_(std::move(outer)), inner_(std::move(inner)) {
    if (!layout_) throw InvalidArgument("TlrMatrix: null layout");
    if (static_cast<std::int64_t>(outer_.extent(0)) != layout_->outer_size() ||
        static_cast<std::int64_t>(inner_.extent(0)) != layout_->inner_size())
      throw InvalidArgument("TlrMatrix: factor arrays do not match the layout's sizes");
    build_device_layout();
  }

  bool is_allocated() const { return layout_ != nullptr; }
  const TlrLayout& layout() const { return *layout_; }
  const std::shared_ptr<const TlrLayout>& layout_ptr() const { return layout_; }
  std::int64_t num_rows() const { return layout_->num_rows(); }
  std::int64_t num_cols() const { return layout_->num_cols(); }
  int tile_size() const { return layout_->tile_size(); }
  int tile_rows() const { return layout_->tile_rows(); }
  int tile_cols() const { return layout_->tile_cols(); }
  int rank(int i, int j) const { return layout_->rank(i, j); }
  int stored_rank(int i, int j) const { return layout_->stored_rank(i, j); }

  /// Outer factors U, packed by tile row (column-major, leading dimension
  /// layout().leading_dim()).
  const factor_view& outer_factors() const { return outer_; }
  /// Inner factors V, packed by tile column.
  const factor_view& inner_factors() const { return inner_; }
  const TlrDeviceLayout<MemorySpace>& device_layout() const { return device_; }

  /// Bytes of the two factor arrays (padding included), i.e. the compressed size.
  std::size_t bytes() const { return (outer_.span() + inner_.span()) * sizeof(Scalar); }

 private:
  void build_device_layout() {
    const auto& l = *layout_;
    device_.ranks = detail::to_space<int, MemorySpace>(l.ranks(), "kcla::tlr::ranks");
    device_.stored_ranks =
        detail::to_space<int, MemorySpace>(l.stored_ranks(), "kcla::tlr::stored_ranks");
    device_.outer_prefix =
        detail::to_space<int, MemorySpace>(l.outer_prefix_array(), "kcla::tlr::outer_prefix");
    device_.inner_prefix =
        detail::to_space<int, MemorySpace>(l.inner_prefix_array(), "kcla::tlr::inner_prefix");
    device_.outer_start = detail::to_space<std::int64_t, MemorySpace>(l.outer_start_array(),
                                                                      "kcla::tlr::outer_start");
    device_.inner_start = detail::to_space<std::int64_t, MemorySpace>(l.inner_start_array(),
                                                                      "kcla::tlr::inner_start");
    device_.num_rows = l.num_rows();
    device_.num_cols = l.num_cols();
    device_.tile_size = l.tile_size();
    device_.tile_rows = l.tile_rows();
    device_.tile_cols = l.tile_cols();
    device_.leading_dim = l.leading_dim();
  }

  std::shared_ptr<const TlrLayout> layout_;
  factor_view outer_, inner_;
  TlrDeviceLayout<MemorySpace> device_;
};

/// A layout for Scalar storage: rank multiple `rank_multiple` (0: the type's default,
/// TlrScalarTraits<Scalar>::rank_multiple) and 16-byte leading dimensions.
template <class Scalar>
std::shared_ptr<const TlrLayout> make_tlr_layout(std::int64_t num_rows, std::int64_t num_cols,
                                                 int tile_size, std::vector<int> ranks,
                                                 int rank_multiple = 0) {
  if (rank_multiple == 0) rank_multiple = TlrScalarTraits<Scalar>::rank_multiple;
  return std::make_shared<const TlrLayout>(num_rows, num_cols, tile_size, std::move(ranks),
                                           rank_multiple, tlr_leading_dim_multiple<Scalar>());
}

/// Builds a TLR matrix in MemorySpace from host factor arrays laid out as `layout` says
/// (any arithmetic source type; converted to Scalar on the host, then copied).
template <class Scalar, class MemorySpace, class Source>
TlrMatrix<Scalar, MemorySpace> make_tlr_matrix(std::shared_ptr<const TlrLayout> layout,
                                               const std::vector<Source>& outer,
                                               const std::vector<Source>& inner) {
  if (!layout) throw InvalidArgument("make_tlr_matrix: null layout");
  if (static_cast<std::int64_t>(outer.size()) != layout->outer_size() ||
      static_cast<std::int64_t>(inner.size()) != layout->inner_size())
    throw InvalidArgument("make_tlr_matrix: factor arrays do not match the layout's sizes");
  using view = typename TlrMatrix<Scalar, MemorySpace>::factor_view;
  view u(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::tlr::outer_factors"), outer.size());
  view v(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::tlr::inner_factors"), inner.size());
  auto hu = Kokkos::create_mirror_view(u);
  auto hv = Kokkos::create_mirror_view(v);
  for (std::size_t e = 0; e < outer.size(); ++e)
    hu(e) = TlrScalarTraits<Scalar>::narrow(static_cast<double>(outer[e]));
  for (std::size_t e = 0; e < inner.size(); ++e)
    hv(e) = TlrScalarTraits<Scalar>::narrow(static_cast<double>(inner[e]));
  Kokkos::deep_copy(u, hu);
  Kokkos::deep_copy(v, hv);
  return TlrMatrix<Scalar, MemorySpace>(std::move(layout), u, v);
}

}  // namespace kcla
