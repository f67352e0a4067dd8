#include <kcla/config.hpp>
#include <kcla/detail/tlr_host_driver.hpp>
#include <kcla/hdf5_tlr.hpp>
#include <kcla/tlr_block_cyclic.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#if KCLA_HAVE_HDF5
#include <kcla/detail/atomic_file.hpp>
#include <kcla/detail/memory_limit.hpp>
#include "hdf5_handle.hpp"
#endif

namespace kcla {

const char* tlr_value_type_name(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::f64:
      return "float64";
    case ScalarKind::f32:
      return "float32";
    case ScalarKind::f16:
      return "float16";
    default:
      return "bfloat16";
  }
}

namespace detail {

namespace {

int default_rank_multiple(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::f64:
      return 1;
    case ScalarKind::f32:
      return 4;
    default:
      return 8;
  }
}

int default_leading_dim_multiple(ScalarKind kind) {
  return static_cast<int>(16 / element_bytes(kind));
}

bool suits(const TlrLayout& l, ScalarKind kind) {
  return l.rank_multiple() % default_rank_multiple(kind) == 0 &&
         l.leading_dim() % default_leading_dim_multiple(kind) == 0;
}

bool same_tiles(const TlrLayout& a, const TlrLayout& b) {
  return a.num_rows() == b.num_rows() && a.num_cols() == b.num_cols() &&
         a.tile_size() == b.tile_size() && a.ranks() == b.ranks();
}

/// Where a factor family's padding is not zero: "" when it all is.
std::string padding_defect(const TlrLayout& l, ScalarKind kind, const void* p, bool outer) {
  const std::int64_t ld = l.leading_dim();
  const int panels = outer ? l.tile_rows() : l.tile_cols();
  const int per_panel = outer ? l.tile_cols() : l.tile_rows();
  for (int panel = 0; panel < panels; ++panel) {
    const int height = outer ? l.tile_height(panel) : l.tile_width(panel);
    for (int t = 0; t < per_panel; ++t) {
      const int i = outer ? panel : t, j = outer ? t : panel;
      const std::int64_t base = outer ? l.outer_offset(i, j) : l.inner_offset(i, j);
      for (int q = 0; q < l.stored_rank(i, j); ++q) {
        const std::int64_t column = base + q * ld;
        for (std::int64_t r = q < l.rank(i, j) ? height : 0; r < ld; ++r)
          if (!(load(kind, p, column + r) == 0.0))
            return "tile (" + std::to_string(i) + ", " + std::to_string(j) +
                   ") has a nonzero padding entry (row " + std::to_string(r) + " of column " +
                   std::to_string(q) + ", logical rank " + std::to_string(l.rank(i, j)) +
                   ", height " + std::to_string(height) + ")";
      }
    }
  }
  return {};
}

}  // namespace

std::shared_ptr<const TlrLayout> tlr_layout_for(const std::shared_ptr<const TlrLayout>& l,
                                                ScalarKind from, ScalarKind kind) {
  if (!l) throw InvalidArgument("tlr_layout_for: null layout");
  if (from == kind || suits(*l, kind)) return l;
  return std::make_shared<const TlrLayout>(l->num_rows(), l->num_cols(), l->tile_size(), l->ranks(),
                                           default_rank_multiple(kind),
                                           default_leading_dim_multiple(kind));
}

void convert_tlr_factors(const TlrLayout& from, ScalarKind from_kind, const void* from_outer,
                         const void* from_inner, const TlrLayout& to, ScalarKind to_kind,
                         void* to_outer, void* to_inner) {
  if (!same_tiles(from, to))
    throw InvalidArgument("convert_tlr_factors: layouts differ in shape, tiling or ranks");
  if (from.same_structure(to)) {
    if (from_kind == to_kind) {
      const std::size_t eb = element_bytes(from_kind);
      if (from.outer_size() > 0)
        std::memcpy(to_outer, from_outer, static_cast<std::size_t>(from.outer_size()) * eb);
      if (from.inner_size() > 0)
        std::memcpy(to_inner, from_inner, static_cast<std::size_t>(from.inner_size()) * eb);
      return;
    }
    for (std::int64_t e = 0; e < from.outer_size(); ++e)
      store(to_kind, to_outer, e, load(from_kind, from_outer, e));
    for (std::int64_t e = 0; e < from.inner_size(); ++e)
      store(to_kind, to_inner, e, load(from_kind, from_inner, e));
    return;
  }
  // Repack: each tile's logical columns, everything else zero (all-zero bits are +0 in
  // every kind).
  const std::size_t eb = element_bytes(to_kind);
  if (to.outer_size() > 0) std::memset(to_outer, 0, static_cast<std::size_t>(to.outer_size()) * eb);
  if (to.inner_size() > 0) std::memset(to_inner, 0, static_cast<std::size_t>(to.inner_size()) * eb);
  const std::int64_t fld = from.leading_dim(), tld = to.leading_dim();
  for (int i = 0; i < from.tile_rows(); ++i)
    for (int j = 0; j < from.tile_cols(); ++j)
      for (int q = 0; q < from.rank(i, j); ++q) {
        const std::int64_t fu = from.outer_offset(i, j) + q * fld;
        const std::int64_t tu = to.outer_offset(i, j) + q * tld;
        for (int r = 0; r < from.tile_height(i); ++r)
          store(to_kind, to_outer, tu + r, load(from_kind, from_outer, fu + r));
        const std::int64_t fv = from.inner_offset(i, j) + q * fld;
        const std::int64_t tv = to.inner_offset(i, j) + q * tld;
        for (int c = 0; c < from.tile_width(j); ++c)
          store(to_kind, to_inner, tv + c, load(from_kind, from_inner, fv + c));
      }
}

void check_tlr_padding(const TlrLayout& l, ScalarKind kind, const void* outer, const void* inner) {
  auto defect = padding_defect(l, kind, outer, true);
  if (!defect.empty()) throw InvalidArgument("TLR outer factors: " + defect);
  defect = padding_defect(l, kind, inner, false);
  if (!defect.empty()) throw InvalidArgument("TLR inner factors: " + defect);
}

}  // namespace detail

#if KCLA_HAVE_HDF5

namespace detail {

namespace {

constexpr const char* kGroup = "/kcla_tlr";
constexpr std::int64_t kMaxDimension = std::int64_t(1) << 40;
constexpr std::int64_t kMaxTiles = std::int64_t(1) << 28;
constexpr std::int64_t kMaxTileSize = std::int64_t(1) << 30;
constexpr std::int64_t kMaxRankMultiple = 256;

/// Host buffer of `count` elements of `kind`, aligned for any of them.
struct RawBuffer {
  std::vector<std::uint64_t> words;
  RawBuffer(std::int64_t count, ScalarKind kind)
      : words((static_cast<std::size_t>(count) * element_bytes(kind) + 7) / 8) {}
  void* data() { return words.data(); }
};

void write_factors(const Hdf5File& file, hid_t group, const std::string& name, ScalarKind kind,
                   const void* data, std::int64_t n) {
  switch (kind) {
    case ScalarKind::f64:
      file.write_dataset(group, name, static_cast<const double*>(data), n);
      break;
    case ScalarKind::f32:
      file.write_dataset(group, name, static_cast<const float*>(data), n);
      break;
    default:
      file.write_dataset(group, name, static_cast<const std::uint16_t*>(data), n);
      break;
  }
}

void read_factors_raw(const Hdf5File& file, hid_t group, const std::string& name, ScalarKind kind,
                      void* out, std::int64_t n) {
  switch (kind) {
    case ScalarKind::f64:
      file.read_dataset_into(group, name, static_cast<double*>(out), n);
      break;
    case ScalarKind::f32:
      file.read_dataset_into(group, name, static_cast<float*>(out), n);
      break;
    default:
      file.read_dataset_into(group, name, static_cast<std::uint16_t*>(out), n);
      break;
  }
}

using Ranges = std::vector<std::pair<std::int64_t, std::int64_t>>;

void read_ranges_raw(const Hdf5File& file, hid_t group, const std::string& name, ScalarKind kind,
                     std::int64_t length, const Ranges& ranges, void* out) {
  switch (kind) {
    case ScalarKind::f64:
      file.read_dataset_ranges(group, name, length, ranges, static_cast<double*>(out));
      break;
    case ScalarKind::f32:
      file.read_dataset_ranges(group, name, length, ranges, static_cast<float*>(out));
      break;
    default:
      file.read_dataset_ranges(group, name, length, ranges, static_cast<std::uint16_t*>(out));
      break;
  }
}

/// Checks a factor dataset's element type and length without reading it.
void check_factor_dataset(const Hdf5File& file, hid_t group, const std::string& name,
                          ScalarKind kind, std::int64_t length) {
  const std::int64_t n = file.dataset_length(group, name);
  if (n != length)
    file.fail(name, "has " + std::to_string(n) + " elements, expected " + std::to_string(length) +
                        " (leading_dim x the sum of the stored ranks)");
  Hdf5Quiet quiet;
  Hdf5Handle set(H5Dopen2(group, name.c_str(), H5P_DEFAULT), H5Dclose);
  Hdf5Handle type(H5Dget_type(set.get()), H5Tclose);
  const hid_t native = kind == ScalarKind::f64   ? H5T_NATIVE_DOUBLE
                       : kind == ScalarKind::f32 ? H5T_NATIVE_FLOAT
                                                 : H5T_NATIVE_UINT16;
  if (!hdf5_type_matches(type.get(), native))
    file.fail(name, std::string("wrong element type for value_type ") + tlr_value_type_name(kind) +
                        " (expected " +
                        (kind == ScalarKind::f64   ? "IEEE binary64"
                         : kind == ScalarKind::f32 ? "IEEE binary32"
                                                   : "unsigned 16-bit integers") +
                        ")");
}

}  // namespace

struct TlrHdf5Reader::Impl {
  Hdf5File file;
  Hdf5Handle group;
  TlrFileInfo info;
};

TlrHdf5Reader::TlrHdf5Reader(const std::string& path) : impl_(std::make_unique<Impl>()) {
  auto& file = impl_->file;
  file = Hdf5File::open(path);
  impl_->group = file.open_group(kGroup);
  const hid_t group = impl_->group.get();
  const auto format = file.read_string_attribute(group, "format");
  if (format != kTlrFormatName)
    file.fail("format", "is '" + format + "', expected '" + kTlrFormatName + "'");
  const auto version = file.read_int_attribute(group, "version");
  if (version < 1 || version > kTlrFormatVersion)
    file.fail("version", std::to_string(version) + " is not supported (this kcla reads 1.." +
                             std::to_string(kTlrFormatVersion) + ")");
  const auto value_type = file.read_string_attribute(group, "value_type");
  bool known = false;
  for (ScalarKind kind : {ScalarKind::f64, ScalarKind::f32, ScalarKind::f16, ScalarKind::bf16})
    if (value_type == tlr_value_type_name(kind)) {
      impl_->info.value_type = kind;
      known = true;
    }
  if (!known)
    file.fail("value_type",
              "'" + value_type + "' is not one of float64, float32, float16, bfloat16");
  const auto rows = file.read_int_attribute(group, "rows");
  const auto cols = file.read_int_attribute(group, "cols");
  if (rows < 0 || cols < 0 || rows > kMaxDimension || cols > kMaxDimension)
    file.fail("rows/cols", "absurd shape " + std::to_string(rows) + " x " + std::to_string(cols));
  const auto tile_size = file.read_int_attribute(group, "tile_size");
  if (tile_size < 1 || tile_size > kMaxTileSize)
    file.fail("tile_size", std::to_string(tile_size) + " is outside [1, 2^30]");
  const auto rank_multiple = file.read_int_attribute(group, "rank_multiple");
  if (rank_multiple < 1 || rank_multiple > kMaxRankMultiple)
    file.fail("rank_multiple", std::to_string(rank_multiple) + " is outside [1, 256]");
  const auto leading_dim = file.read_int_attribute(group, "leading_dim");
  if (leading_dim < tile_size || leading_dim > kMaxTileSize)
    file.fail("leading_dim", std::to_string(leading_dim) +
                                 " is outside [tile_size, 2^30] (tile_size " +
                                 std::to_string(tile_size) + ")");
  const std::int64_t tile_rows = (rows + tile_size - 1) / tile_size;
  const std::int64_t tile_cols = (cols + tile_size - 1) / tile_size;
  // Both at most 2^40, so the product only needs a guard against overflow.
  if (tile_rows > 0 && tile_cols > kMaxTiles / tile_rows)
    file.fail("ranks", "absurd tile grid " + std::to_string(tile_rows) + " x " +
                           std::to_string(tile_cols) + " (refusing to allocate)");
  const std::int64_t tiles = tile_rows * tile_cols;
  // The ranks and the layout's own arrays (stored ranks, prefixes, offsets).
  check_allocation(path, "the rank grid", static_cast<std::uint64_t>(tiles), 24);
  auto ranks = file.read_dataset<std::int32_t>(group, "ranks", tiles);
  try {
    impl_->info.layout = std::make_shared<const TlrLayout>(
        rows, cols, static_cast<int>(tile_size), std::vector<int>(ranks.begin(), ranks.end()),
        static_cast<int>(rank_multiple), static_cast<int>(leading_dim));
  } catch (const InvalidArgument& e) {
    file.fail("ranks", e.what());
  }
  const auto& layout = *impl_->info.layout;
  if (layout.leading_dim() != leading_dim)  // cannot happen for leading_dim >= tile_size
    file.fail("leading_dim", "inconsistent with tile_size");
  const ScalarKind kind = impl_->info.value_type;
  check_factor_dataset(file, group, "outer_factors", kind, layout.outer_size());
  check_factor_dataset(file, group, "inner_factors", kind, layout.inner_size());
}

TlrHdf5Reader::~TlrHdf5Reader() = default;

const TlrFileInfo& TlrHdf5Reader::info() const {
  return impl_->info;
}

void TlrHdf5Reader::require_memory_for_all() const {
  const TlrLayout& l = *impl_->info.layout;
  check_allocation(impl_->file.name(), "the factor arrays",
                   static_cast<std::uint64_t>(l.outer_size() + l.inner_size()),
                   element_bytes(impl_->info.value_type));
}

void TlrHdf5Reader::require_memory_for_tiles(int p, int P, int q, int Q) const {
  if (P < 1 || Q < 1 || p < 0 || p >= P || q < 0 || q >= Q)
    throw InvalidArgument("TlrHdf5Reader: grid rank (" + std::to_string(p) + ", " +
                          std::to_string(q) + ") outside a " + std::to_string(P) + " x " +
                          std::to_string(Q) + " grid");
  const auto local = local_tlr_layout(*impl_->info.layout, p, P, q, Q);
  check_allocation(impl_->file.name(), "this rank's factor arrays",
                   static_cast<std::uint64_t>(local->outer_size() + local->inner_size()),
                   element_bytes(impl_->info.value_type));
}

void TlrHdf5Reader::read_factors(const TlrLayout& target, ScalarKind kind, void* outer,
                                 void* inner) const {
  const auto& file = impl_->file;
  const hid_t group = impl_->group.get();
  const TlrLayout& layout = *impl_->info.layout;
  const ScalarKind file_kind = impl_->info.value_type;
  if (!same_tiles(layout, target))
    throw InvalidArgument("TlrHdf5Reader::read_factors: the target layout differs from " +
                          file.name() + "'s in shape, tiling or ranks");
  require_memory_for_all();
  auto check = [&](const void* data, bool is_outer) {
    const auto defect = padding_defect(layout, file_kind, data, is_outer);
    if (!defect.empty()) file.fail(is_outer ? "outer_factors" : "inner_factors", defect);
  };
  if (kind == file_kind && target.same_structure(layout)) {
    read_factors_raw(file, group, "outer_factors", kind, outer, layout.outer_size());
    check(outer, true);
    read_factors_raw(file, group, "inner_factors", kind, inner, layout.inner_size());
    check(inner, false);
    return;
  }
  RawBuffer u(layout.outer_size(), file_kind), v(layout.inner_size(), file_kind);
  read_factors_raw(file, group, "outer_factors", file_kind, u.data(), layout.outer_size());
  check(u.data(), true);
  read_factors_raw(file, group, "inner_factors", file_kind, v.data(), layout.inner_size());
  check(v.data(), false);
  convert_tlr_factors(layout, file_kind, u.data(), v.data(), target, kind, outer, inner);
}

void TlrHdf5Reader::read_local_factors(int p, int P, int q, int Q, const TlrLayout& target,
                                       ScalarKind kind, void* outer, void* inner) const {
  const auto& file = impl_->file;
  const hid_t group = impl_->group.get();
  const TlrLayout& layout = *impl_->info.layout;
  const ScalarKind file_kind = impl_->info.value_type;
  if (P < 1 || Q < 1 || p < 0 || p >= P || q < 0 || q >= Q)
    throw InvalidArgument("TlrHdf5Reader::read_local_factors: grid rank (" + std::to_string(p) +
                          ", " + std::to_string(q) + ") outside a " + std::to_string(P) + " x " +
                          std::to_string(Q) + " grid");
  const auto local = local_tlr_layout(layout, p, P, q, Q);
  if (!same_tiles(*local, target))
    throw InvalidArgument("TlrHdf5Reader::read_local_factors: the target layout differs from " +
                          file.name() + "'s local tiles in shape, tiling or ranks");
  require_memory_for_tiles(p, P, q, Q);
  // Local tiles come in global order in both arrays, so each array is one selection.
  const TlrLocalRanges ranges = tlr_local_ranges(layout, p, P, q, Q);
  auto check = [&](const void* data, bool is_outer) {
    const auto defect = padding_defect(*local, file_kind, data, is_outer);
    if (!defect.empty()) file.fail(is_outer ? "outer_factors" : "inner_factors", defect);
  };
  const bool direct = kind == file_kind && target.same_structure(*local);
  std::unique_ptr<RawBuffer> u, v;
  if (!direct) {
    u = std::make_unique<RawBuffer>(local->outer_size(), file_kind);
    v = std::make_unique<RawBuffer>(local->inner_size(), file_kind);
  }
  void* file_outer = direct ? outer : u->data();
  void* file_inner = direct ? inner : v->data();
  read_ranges_raw(file, group, "outer_factors", file_kind, layout.outer_size(), ranges.outer,
                  file_outer);
  check(file_outer, true);
  read_ranges_raw(file, group, "inner_factors", file_kind, layout.inner_size(), ranges.inner,
                  file_inner);
  check(file_inner, false);
  if (!direct)
    convert_tlr_factors(*local, file_kind, file_outer, file_inner, target, kind, outer, inner);
}

void write_tlr_hdf5_host(const std::string& path, const TlrLayout& l, ScalarKind kind,
                         const void* outer, const void* inner, ScalarKind file_kind) {
  check_tlr_padding(l, kind, outer, inner);
  if (l.tile_size() > kMaxTileSize || l.rank_multiple() > kMaxRankMultiple ||
      l.leading_dim() > kMaxTileSize)
    throw InvalidArgument(
        "write_tlr_hdf5: tile size, rank multiple or leading dimension beyond "
        "what the format allows (2^30, 256, 2^30)");
  // The file's layout: the matrix's own unless another precision needs other alignment.
  std::shared_ptr<const TlrLayout> converted;
  const TlrLayout* file_layout = &l;
  if (file_kind != kind && !suits(l, file_kind)) {
    converted = std::make_shared<const TlrLayout>(l.num_rows(), l.num_cols(), l.tile_size(),
                                                  l.ranks(), default_rank_multiple(file_kind),
                                                  default_leading_dim_multiple(file_kind));
    file_layout = converted.get();
  }
  const void* file_outer = outer;
  const void* file_inner = inner;
  std::unique_ptr<RawBuffer> u, v;
  if (file_kind != kind) {
    u = std::make_unique<RawBuffer>(file_layout->outer_size(), file_kind);
    v = std::make_unique<RawBuffer>(file_layout->inner_size(), file_kind);
    convert_tlr_factors(l, kind, outer, inner, *file_layout, file_kind, u->data(), v->data());
    file_outer = u->data();
    file_inner = v->data();
  }
  const TlrLayout& fl = *file_layout;
  detail::write_atomically(path, [&](const std::string& tmp) {
    auto file = Hdf5File::create(tmp, path);
    auto group = file.create_group(kGroup);
    const hid_t g = group.get();
    file.write_attribute(g, "format", std::string(kTlrFormatName));
    file.write_attribute(g, "version", std::int64_t{kTlrFormatVersion});
    file.write_attribute(g, "rows", fl.num_rows());
    file.write_attribute(g, "cols", fl.num_cols());
    file.write_attribute(g, "tile_size", std::int64_t{fl.tile_size()});
    file.write_attribute(g, "rank_multiple", std::int64_t{fl.rank_multiple()});
    file.write_attribute(g, "leading_dim", std::int64_t{fl.leading_dim()});
    file.write_attribute(g, "value_type", std::string(tlr_value_type_name(file_kind)));
    const std::vector<std::int32_t> ranks(fl.ranks().begin(), fl.ranks().end());
    file.write_dataset(g, "ranks", ranks);
    write_factors(file, g, "outer_factors", file_kind, file_outer, fl.outer_size());
    write_factors(file, g, "inner_factors", file_kind, file_inner, fl.inner_size());
  });
}

}  // namespace detail

TlrFileInfo read_tlr_hdf5_info(const std::string& path) {
  return detail::TlrHdf5Reader(path).info();
}

#else

namespace detail {

struct TlrHdf5Reader::Impl {};

TlrHdf5Reader::TlrHdf5Reader(const std::string& path) {
  throw FormatError(path, "kcla was built without HDF5 (KCLA_ENABLE_HDF5)");
}
TlrHdf5Reader::~TlrHdf5Reader() = default;
const TlrFileInfo& TlrHdf5Reader::info() const {
  throw InvalidArgument("TlrHdf5Reader: kcla was built without HDF5");
}
void TlrHdf5Reader::read_factors(const TlrLayout&, ScalarKind, void*, void*) const {
  throw InvalidArgument("TlrHdf5Reader: kcla was built without HDF5");
}
void TlrHdf5Reader::read_local_factors(int, int, int, int, const TlrLayout&, ScalarKind, void*,
                                       void*) const {
  throw InvalidArgument("TlrHdf5Reader: kcla was built without HDF5");
}
void TlrHdf5Reader::require_memory_for_all() const {
  throw InvalidArgument("TlrHdf5Reader: kcla was built without HDF5");
}
void TlrHdf5Reader::require_memory_for_tiles(int, int, int, int) const {
  throw InvalidArgument("TlrHdf5Reader: kcla was built without HDF5");
}
void write_tlr_hdf5_host(const std::string& path, const TlrLayout&, ScalarKind, const void*,
                         const void*, ScalarKind) {
  throw FormatError(path, "kcla was built without HDF5 (KCLA_ENABLE_HDF5)");
}

}  // namespace detail

TlrFileInfo read_tlr_hdf5_info(const std::string& path) {
  throw FormatError(path, "kcla was built without HDF5 (KCLA_ENABLE_HDF5)");
}

#endif

}  // namespace kcla
