// HDF5 storage of tile-low-rank matrices (layout: docs/format.md, "TLR matrix (kcla-tlr,
// version 1)"). The file holds the logical ranks, the rank multiple and leading dimension,
// and the two packed factor arrays exactly as TlrMatrix keeps them, so reading rebuilds
// the matrix without recomputation. Files are written atomically and validated completely
// on read: a corrupt or hostile file gives a kcla::FormatError naming the file and the
// dataset or attribute.
//
//   kcla::write_tlr_hdf5("a.h5", A);                                // any memory space
//   auto B = kcla::read_tlr_hdf5<float, Kokkos::CudaSpace>("a.h5");
//
// The HDF5 code itself works on host arrays of a run-time ScalarKind (detail::); the
// templates below only copy between memory spaces.
#pragma once

#include <kcla/config.hpp>
#include <kcla/error.hpp>
#include <kcla/tlr_layout.hpp>
#include <kcla/tlr_matrix.hpp>
#include <kcla/tlr_scalar.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace kcla {

/// The format name and current version written into every TLR file.
constexpr const char* kTlrFormatName = "kcla-tlr";
constexpr int kTlrFormatVersion = 2;  // 2: checksummed HDF5 metadata (docs/format.md)

/// The value_type attribute of a precision: "float64", "float32", "float16", "bfloat16".
const char* tlr_value_type_name(ScalarKind kind);

/// What a TLR file holds, read and validated without its factor arrays: the precision of
/// the stored factors and the layout (shape, tiling, logical ranks, rank multiple,
/// leading dimension).
struct TlrFileInfo {
  ScalarKind value_type = ScalarKind::f64;
  std::shared_ptr<const TlrLayout> layout;

  /// Bytes of the two factor arrays as stored (uncompressed).
  std::size_t factor_bytes() const {
    return static_cast<std::size_t>(layout->outer_size() + layout->inner_size()) *
           element_bytes(value_type);
  }
};

/// Reads the attributes and ranks of a TLR file and checks the factor datasets' types and
/// lengths (not their contents). Throws FormatError.
TlrFileInfo read_tlr_hdf5_info(const std::string& path);

namespace detail {

/// The layout that factors of layout `l` and precision `from` get when converted to `to`:
/// `l` itself when the precision stays or `l`'s rank multiple and leading dimension suit
/// `to` (multiples of its defaults), otherwise `to`'s defaults
/// (TlrScalarTraits::rank_multiple, 16-byte leading dimension) with the same logical ranks.
std::shared_ptr<const TlrLayout> tlr_layout_for(const std::shared_ptr<const TlrLayout>& l,
                                                ScalarKind from, ScalarKind to);

/// Copies factor arrays from one layout and precision into another with the same shape,
/// tiling and logical ranks (each tile's logical columns; padding becomes zero). Values
/// are rounded to nearest when narrowing.
void convert_tlr_factors(const TlrLayout& from, ScalarKind from_kind, const void* from_outer,
                         const void* from_inner, const TlrLayout& to, ScalarKind to_kind,
                         void* to_outer, void* to_inner);

/// Throws InvalidArgument unless the padding of both factor arrays (columns past a tile's
/// logical rank, rows past a short tile's height or the tile size) is zero.
void check_tlr_padding(const TlrLayout& l, ScalarKind kind, const void* outer, const void* inner);

/// Writes host factor arrays (`kind`, laid out as `l`) as a file of precision `file_kind`
/// (converted, and repacked when `l` does not suit it: tlr_layout_for).
void write_tlr_hdf5_host(const std::string& path, const TlrLayout& l, ScalarKind kind,
                         const void* outer, const void* inner, ScalarKind file_kind);

/// An open, validated TLR file (read_tlr_hdf5_info's checks done), ready to load its
/// factors into caller memory.
class TlrHdf5Reader {
 public:
  explicit TlrHdf5Reader(const std::string& path);
  ~TlrHdf5Reader();
  TlrHdf5Reader(const TlrHdf5Reader&) = delete;
  TlrHdf5Reader& operator=(const TlrHdf5Reader&) = delete;

  const TlrFileInfo& info() const;
  /// Throw FormatError unless this machine's memory (or KCLA_MEMORY_LIMIT_MB) holds the
  /// whole factor arrays, or grid rank (p, q)'s share of them: checked before allocating,
  /// so that a file declaring absurd sizes is refused from its sizes alone.
  void require_memory_for_all() const;
  void require_memory_for_tiles(int p, int P, int q, int Q) const;
  /// Reads both factor arrays (checksums verified, padding checked) into host memory laid
  /// out as `target` with elements of `kind`; `target` must have the file's shape, tiling
  /// and ranks (e.g. tlr_layout_for(info().layout, info().value_type, kind)). Reads straight into
  /// the destination when layout and precision are the file's, else through a converted copy.
  void read_factors(const TlrLayout& target, ScalarKind kind, void* outer, void* inner) const;
  /// Reads only grid rank (p, q)'s tiles of the matrix laid out block-cyclically on a
  /// P x Q grid (local_tlr_layout) into host memory laid out as `target` (that local layout,
  /// or tlr_layout_for of it) with elements of `kind`: what a rank of a distributed matrix
  /// reads, for any grid shape.
  void read_local_factors(int p, int P, int q, int Q, const TlrLayout& target, ScalarKind kind,
                          void* outer, void* inner) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace detail

/// Writes `a` to `path` (replacing any file there) in the precision `value_type`: the
/// matrix's own (the default) is stored bit for bit; another is converted (rounded to
/// nearest when narrowing) and repacked if its alignment rules differ. Factors in device
/// memory are copied to the host first.
template <class Scalar, class MemorySpace>
void write_tlr_hdf5(const std::string& path, const TlrMatrix<Scalar, MemorySpace>& a,
                    ScalarKind value_type = TlrScalarTraits<Scalar>::kind) {
  if (!a.is_allocated()) throw InvalidArgument("write_tlr_hdf5: empty TlrMatrix");
  const auto outer = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.outer_factors());
  const auto inner = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.inner_factors());
  detail::write_tlr_hdf5_host(path, a.layout(), TlrScalarTraits<Scalar>::kind, outer.data(),
                              inner.data(), value_type);
}

/// Reads a TLR file into MemorySpace. When the file's precision is Scalar's, the factors
/// and layout are loaded exactly as written; otherwise the values are converted (and the
/// layout adapted to Scalar's alignment rules when needed; logical ranks never change).
/// On host-only builds Kokkos::Experimental::half_t is float, so fp16 files load as fp32.
template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
TlrMatrix<Scalar, MemorySpace> read_tlr_hdf5(const std::string& path) {
  constexpr ScalarKind kind = TlrScalarTraits<Scalar>::kind;
  const detail::TlrHdf5Reader reader(path);
  reader.require_memory_for_all();
  const auto layout = detail::tlr_layout_for(reader.info().layout, reader.info().value_type, kind);
  using view = typename TlrMatrix<Scalar, MemorySpace>::factor_view;
  view outer(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::tlr::outer_factors"),
             layout->outer_size());
  view inner(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kcla::tlr::inner_factors"),
             layout->inner_size());
  const auto host_outer = Kokkos::create_mirror_view(outer);
  const auto host_inner = Kokkos::create_mirror_view(inner);
  reader.read_factors(*layout, kind, host_outer.data(), host_inner.data());
  Kokkos::deep_copy(outer, host_outer);
  Kokkos::deep_copy(inner, host_inner);
  return TlrMatrix<Scalar, MemorySpace>(layout, outer, inner);
}

}  // namespace kcla
