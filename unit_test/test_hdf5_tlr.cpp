// HDF5 TLR files: round trips in every precision (factors and decompression bit for bit,
// ragged tiles, rank-0 tiles, empty matrices, custom rank multiples), conversions between
// precisions, atomic writes, and hostile files (truncated, flipped bytes, crafted wrong
// ranks / lengths / types / padding, 2^62 lengths) that must give a FormatError naming
// the file and the dataset, never a crash or a huge allocation.
#include <kcla/hdf5_grammar.hpp>
#include <kcla/hdf5_tlr.hpp>
#include <kcla/tlr_compress.hpp>

#include <gtest/gtest.h>
#include <hdf5.h>

#include "hdf5_crafting.hpp"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "tlr_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using kcla::test::exec_space;
using kcla::test::memory_space;

fs::path scratch_dir() {
  auto d = fs::temp_directory_path() / ("kcla_test_hdf5_tlr_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

/// The raw bytes of a View (any space).
template <class View>
std::vector<unsigned char> bytes_of(const View& v) {
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  std::vector<unsigned char> out(h.span() * sizeof(typename View::value_type));
  if (!out.empty()) std::memcpy(out.data(), h.data(), out.size());
  return out;
}

template <class Scalar, class MemorySpace>
void expect_identical(const kcla::TlrMatrix<Scalar, MemorySpace>& a,
                      const kcla::TlrMatrix<Scalar, MemorySpace>& b) {
  ASSERT_TRUE(a.layout().same_structure(b.layout()));
  EXPECT_EQ(a.layout().leading_dim(), b.layout().leading_dim());
  EXPECT_EQ(a.layout().rank_multiple(), b.layout().rank_multiple());
  EXPECT_TRUE(bytes_of(a.outer_factors()) == bytes_of(b.outer_factors()));
  EXPECT_TRUE(bytes_of(a.inner_factors()) == bytes_of(b.inner_factors()));
  const auto da = kcla::to_dense(exec_space(), a);
  const auto db = kcla::to_dense(exec_space(), b);
  EXPECT_TRUE(bytes_of(da) == bytes_of(db)) << "decompressed matrices differ";
}

void expect_format_error(const std::string& path, const std::string& fragment) {
  try {
    kcla::read_tlr_hdf5<double, memory_space>(path);
    ADD_FAILURE() << "no error for " << path << " (expected '" << fragment << "')";
  } catch (const kcla::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "message '" << e.what() << "' lacks '" << fragment << "'";
  }
}

template <class Scalar>
void check_round_trip(const fs::path& dir, kcla::ScalarKind expected_kind) {
  auto gen = kcla::test::rng(sizeof(Scalar) + 100 * static_cast<int>(expected_kind));
  // Ragged in both directions; random_ranks puts a rank-0 tile at (0, 0) and a full-rank
  // tile at the end.
  for (const auto& [m, n, b] : {std::tuple<std::int64_t, std::int64_t, int>{37, 29, 8},
                                {16, 16, 16},
                                {5, 70, 16},
                                {0, 9, 4}}) {
    auto ranks = kcla::test::random_ranks(gen, m, n, b);
    if (ranks.size() > 2) ranks[1] = 0;
    const auto a = kcla::random_tlr<Scalar, memory_space>(exec_space(), m, n, b, ranks, gen());
    const auto path =
        (dir / ("rt_" + std::to_string(m) + "x" + std::to_string(n) + ".h5")).string();
    kcla::write_tlr_hdf5(path, a);
    EXPECT_TRUE(kcla::is_hdf5_file(path));
    const auto info = kcla::read_tlr_hdf5_info(path);
    EXPECT_EQ(info.value_type, expected_kind);
    EXPECT_TRUE(info.layout->same_structure(a.layout()));
    EXPECT_EQ(info.factor_bytes(), a.bytes());
    expect_identical(kcla::read_tlr_hdf5<Scalar, memory_space>(path), a);
    // Also straight into host memory.
    const auto h = kcla::read_tlr_hdf5<Scalar, Kokkos::HostSpace>(path);
    EXPECT_TRUE(bytes_of(h.outer_factors()) == bytes_of(a.outer_factors()));
  }
}

TEST(Hdf5Tlr, RoundTripsEveryPrecisionBitForBit) {
  const auto dir = scratch_dir();
  check_round_trip<double>(dir, kcla::ScalarKind::f64);
  check_round_trip<float>(dir, kcla::ScalarKind::f32);
  check_round_trip<kcla::bhalf_t>(dir, kcla::ScalarKind::bf16);
  // fp16: a real 16-bit type on CUDA builds; float on host-only builds (Kokkos' choice).
  check_round_trip<Kokkos::Experimental::half_t>(
      dir, kcla::TlrScalarTraits<Kokkos::Experimental::half_t>::kind);
  fs::remove_all(dir);
}

TEST(Hdf5Tlr, RoundTripsCompressedKernelMatrices) {
  const auto dir = scratch_dir();
  auto gen = kcla::test::rng();
  kcla::PointSet points;
  points.dimension = 2;
  std::uniform_real_distribution<double> u(0, 1);
  for (int p = 0; p < 2 * 90; ++p) points.coordinates.push_back(u(gen));
  std::sort(points.coordinates.begin(), points.coordinates.end());  // rough clustering
  kcla::CovarianceKernel k;
  k.type = kcla::KernelType::matern32;
  k.length_scale = 0.3;
  kcla::TlrCompressOptions o;
  o.relative_tolerance = 1e-6;
  const auto a = kcla::compress_kernel<double, memory_space>(points, points, k, 16, o);
  const auto path = (dir / "kernel.h5").string();
  kcla::write_tlr_hdf5(path, a);
  expect_identical(kcla::read_tlr_hdf5<double, memory_space>(path), a);
  // A custom rank multiple (1 for float) is kept as written.
  o.rank_multiple = 1;
  const auto f = kcla::compress_kernel<float, memory_space>(points, points, k, 16, o);
  kcla::write_tlr_hdf5(path, f);
  const auto g = kcla::read_tlr_hdf5<float, memory_space>(path);
  EXPECT_EQ(g.layout().rank_multiple(), 1);
  expect_identical(g, f);
  fs::remove_all(dir);
}

TEST(Hdf5Tlr, ConvertsBetweenPrecisions) {
  const auto dir = scratch_dir();
  auto gen = kcla::test::rng();
  const std::int64_t m = 41, n = 23;
  const int b = 8;
  const auto a = kcla::random_tlr<double, memory_space>(
      exec_space(), m, n, b, kcla::test::random_ranks(gen, m, n, b), gen());
  const auto dense = kcla::test::decompress(a);
  const auto path = (dir / "conv.h5").string();
  // Written as fp16 / bf16 / fp32: the file has that precision and its alignment rules.
  const std::pair<kcla::ScalarKind, double> kinds[] = {
      {kcla::ScalarKind::f32, 1e-6}, {kcla::ScalarKind::f16, 2e-3}, {kcla::ScalarKind::bf16, 1e-2}};
  for (const auto& [kind, tol] : kinds) {
    kcla::write_tlr_hdf5(path, a, kind);
    const auto info = kcla::read_tlr_hdf5_info(path);
    EXPECT_EQ(info.value_type, kind);
    EXPECT_EQ(info.layout->ranks(), a.layout().ranks());
    EXPECT_EQ(info.layout->rank_multiple(), kind == kcla::ScalarKind::f32 ? 4 : 8);
    EXPECT_EQ(info.layout->leading_dim() * static_cast<int>(kcla::element_bytes(kind)) % 16, 0);
    // Read back as double: the 16-bit values widen exactly.
    const auto d = kcla::read_tlr_hdf5<double, memory_space>(path);
    EXPECT_EQ(d.layout().rank_multiple(), info.layout->rank_multiple());
    EXPECT_LT(kcla::test::relative_error(kcla::test::decompress(d), dense), tol)
        << kcla::to_string(kind);
    // Written again as that precision from the widened copy: the same file content.
    const auto path2 = (dir / "conv2.h5").string();
    kcla::write_tlr_hdf5(path2, d, kind);
    const auto again = kcla::read_tlr_hdf5<double, memory_space>(path2);
    expect_identical(again, d);
  }
  // fp64 file read as bf16: repacked to bf16's rank multiple.
  kcla::write_tlr_hdf5(path, a);
  const auto h = kcla::read_tlr_hdf5<kcla::bhalf_t, memory_space>(path);
  EXPECT_EQ(h.layout().rank_multiple(), 8);
  EXPECT_EQ(h.layout().ranks(), a.layout().ranks());
  EXPECT_LT(kcla::test::relative_error(kcla::test::decompress(h), dense), 1e-2);
  fs::remove_all(dir);
}

TEST(Hdf5Tlr, FailedWriteLeavesNothing) {
  const auto dir = scratch_dir();
  // Nonzero padding (rows past a short tile's height) is refused before writing.
  auto layout = kcla::make_tlr_layout<double>(5, 5, 4, {1, 1, 1, 1});
  std::vector<double> outer(static_cast<std::size_t>(layout->outer_size()), 1.0);
  std::vector<double> inner(static_cast<std::size_t>(layout->inner_size()), 1.0);
  const auto bad = kcla::make_tlr_matrix<double, memory_space>(layout, outer, inner);
  const auto path = (dir / "bad.h5").string();
  EXPECT_THROW(kcla::write_tlr_hdf5(path, bad), kcla::InvalidArgument);
  EXPECT_FALSE(fs::exists(path));
  auto gen = kcla::test::rng();
  const auto good = kcla::random_tlr<float, memory_space>(
      exec_space(), 20, 20, 8, kcla::test::random_ranks(gen, 20, 20, 8), 1);
  EXPECT_THROW(kcla::write_tlr_hdf5((dir / "no/such/folder/x.h5").string(), good), kcla::Error);
  EXPECT_THROW(kcla::write_tlr_hdf5(path, kcla::TlrMatrix<float, memory_space>()),
               kcla::InvalidArgument);
  for (const auto& entry : fs::directory_iterator(dir))
    ADD_FAILURE() << "left behind: " << entry.path();
  // An old file survives a failed write over it.
  kcla::write_tlr_hdf5(path, good);
  EXPECT_THROW(kcla::write_tlr_hdf5(path, bad), kcla::InvalidArgument);
  expect_identical(kcla::read_tlr_hdf5<float, memory_space>(path), good);
  fs::remove_all(dir);
}

TEST(Hdf5Tlr, HostileFiles) {
  const auto dir = scratch_dir();
  auto gen = kcla::test::rng();
  const std::int64_t m = 70, n = 45;
  const int b = 16;
  const auto a = kcla::random_tlr<float, memory_space>(
      exec_space(), m, n, b, kcla::test::random_ranks(gen, m, n, b), gen());
  const auto good = (dir / "good.h5").string();
  kcla::write_tlr_hdf5(good, a);
  const std::string bytes = kcla::test::read_bytes(good);
  const std::size_t size = bytes.size();

  expect_format_error((dir / "missing.h5").string(), "no such file");
  {
    const auto p = (dir / "text.h5").string();
    std::ofstream(p) << "not hdf5 at all";
    expect_format_error(p, "not an HDF5 file");
  }
  {  // A grammar file is not a TLR file.
    const auto p = (dir / "grammar.h5").string();
    kcla::Grammar g;
    g.num_cols = 3;
    kcla::write_grammar_hdf5(p, g);
    expect_format_error(p, "'/kcla_tlr': group missing");
  }
  for (double fraction : {0.05, 0.3, 0.6, 0.9, 0.99}) {
    const auto p = (dir / "truncated.h5").string();
    std::ofstream(p, std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(static_cast<double>(size) * fraction));
    try {
      kcla::read_tlr_hdf5<float, memory_space>(p);
      ADD_FAILURE() << "truncated file at " << fraction << " read without error";
    } catch (const kcla::FormatError& e) {
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    }
  }
  // Flipped bytes anywhere: an error, or (a byte HDF5 does not use) the same matrix; an
  // unchecksummed attribute may also change into another consistent matrix, which must
  // then be a valid one.
  std::uniform_int_distribution<std::size_t> where(0, size - 1);
  int errors = 0;
  for (int trial = 0; trial < 80; ++trial) {
    auto corrupt = bytes;
    const auto at = where(gen);
    corrupt[at] = static_cast<char>(corrupt[at] ^ 0x5a);
    const auto p = (dir / "flipped.h5").string();
    std::ofstream(p, std::ios::binary).write(corrupt.data(), static_cast<std::streamsize>(size));
    try {
      const auto read = kcla::read_tlr_hdf5<float, memory_space>(p);
      if (read.layout().same_structure(a.layout())) {
        expect_identical(read, a);
      } else {
        EXPECT_NO_THROW(kcla::to_dense(exec_space(), read));
      }
    } catch (const kcla::FormatError&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 0);
  fs::remove_all(dir);
}

// Builds a file with the TLR layout (5 x 5 tiles of 4 over 18 x 17, fp64) but one thing
// wrong.
void write_crafted(const std::string& path, const std::string& defect) {
  const std::int64_t rows = 18, cols = 17;
  const int b = 4;
  std::vector<int> ranks(25, 1);
  ranks[0] = 0;
  ranks[24] = 1;  // the last tile is 2 x 1
  const auto layout = kcla::make_tlr_layout<double>(rows, cols, b, ranks);
  std::vector<double> outer(static_cast<std::size_t>(layout->outer_size()), 0.0);
  std::vector<double> inner(static_cast<std::size_t>(layout->inner_size()), 0.0);
  for (int i = 0; i < layout->tile_rows(); ++i)
    for (int j = 0; j < layout->tile_cols(); ++j)
      for (int q = 0; q < layout->rank(i, j); ++q) {
        for (int r = 0; r < layout->tile_height(i); ++r)
          outer[static_cast<std::size_t>(layout->outer_offset(i, j) + q * layout->leading_dim() +
                                         r)] = 1.0 + r + i;
        for (int c = 0; c < layout->tile_width(j); ++c)
          inner[static_cast<std::size_t>(layout->inner_offset(i, j) + q * layout->leading_dim() +
                                         c)] = 0.5 - c + j;
      }
  const kcla::test::CraftedHdf5 crafted(path, "/kcla_tlr");
  const hid_t group = crafted.group();
  auto huge = [&](const char* name, hid_t type) {
    // A 2^62-element dataset that holds no data: must not be allocated.
    hsize_t count = hsize_t(1) << 62, chunk = 1024;
    hid_t s = H5Screate_simple(1, &count, nullptr);
    hid_t p = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(p, 1, &chunk);
    hid_t d = H5Dcreate2(group, name, type, s, H5P_DEFAULT, p, H5P_DEFAULT);
    H5Dclose(d), H5Pclose(p), H5Sclose(s);
  };
  crafted.str_attr("format", defect == "format" ? "kcla-grammar" : "kcla-tlr");
  crafted.int_attr("version", defect == "version" ? 99 : 1);
  crafted.int_attr("rows", defect == "rows" ? (std::int64_t(1) << 62) : rows);
  crafted.int_attr("cols", defect == "cols" ? cols + 4 : cols);  // one more tile column
  if (defect == "grid") {
    crafted.int_attr("tile_size", 1);  // 18 x 17 tiles of 1: ranks has the wrong length
  } else if (defect != "no_tile_size") {
    crafted.int_attr("tile_size", defect == "tile_size" ? 0 : b);
  }
  crafted.int_attr("rank_multiple", defect == "rank_multiple" ? 1 << 20 : 1);
  crafted.int_attr("leading_dim", defect == "leading_dim" ? b - 1 : layout->leading_dim());
  crafted.str_attr("value_type", defect == "value_type"   ? "complex128"
                                 : defect == "float_type" ? "float32"
                                                          : "float64");
  auto bad_ranks = ranks;
  if (defect == "rank_high") bad_ranks[24] = 2;  // the 2 x 1 tile cannot have rank 2
  if (defect == "rank_negative") bad_ranks[3] = -1;
  if (defect == "rank_sum") bad_ranks[2] = 0;  // valid ranks, but the factors are longer
  if (defect == "ranks_type")
    crafted.dataset("ranks", H5T_NATIVE_DOUBLE, outer.data(), bad_ranks.size());
  else if (defect == "ranks_huge")
    huge("ranks", H5T_NATIVE_INT32);
  else if (defect == "ranks_2d") {
    hsize_t dims[2] = {5, 5};
    hid_t s = H5Screate_simple(2, dims, nullptr);
    hid_t d =
        H5Dcreate2(group, "ranks", H5T_NATIVE_INT32, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, bad_ranks.data());
    H5Dclose(d), H5Sclose(s);
  } else
    crafted.dataset("ranks", H5T_NATIVE_INT32, bad_ranks.data(), bad_ranks.size());
  if (defect == "padding") outer[static_cast<std::size_t>(layout->outer_offset(4, 0) + 3)] = 7.0;
  if (defect == "outer_short")
    crafted.dataset("outer_factors", H5T_NATIVE_DOUBLE, outer.data(), outer.size() - 1);
  else if (defect == "outer_huge")
    huge("outer_factors", H5T_NATIVE_DOUBLE);
  else if (defect == "outer_int")
    crafted.dataset("outer_factors", H5T_NATIVE_INT64, outer.data(), outer.size());
  else if (defect == "outer_odd_float") {
    // 8-byte floats with another exponent bias: same class and size as IEEE binary64.
    hid_t t = H5Tcopy(H5T_IEEE_F64LE);
    H5Tset_ebias(t, 1000);
    crafted.dataset("outer_factors", t, outer.data(), outer.size());
    H5Tclose(t);
  } else
    crafted.dataset("outer_factors", H5T_NATIVE_DOUBLE, outer.data(), outer.size());
  if (defect != "inner_missing")
    crafted.dataset("inner_factors", H5T_NATIVE_DOUBLE, inner.data(), inner.size());
}

TEST(Hdf5Tlr, CraftedDefectsAreNamed) {
  const auto dir = scratch_dir();
  {  // The crafting itself is right: with no defect the file reads.
    const auto p = (dir / "none.h5").string();
    write_crafted(p, "none");
    const auto a = kcla::read_tlr_hdf5<double, memory_space>(p);
    EXPECT_EQ(a.num_rows(), 18);
    EXPECT_EQ(a.rank(0, 0), 0);
    EXPECT_EQ(a.rank(4, 4), 1);
  }
  const std::pair<const char*, const char*> cases[] = {
      {"format", "'format': is 'kcla-grammar'"},
      {"version", "'version': 99 is not supported"},
      {"rows", "absurd shape"},
      {"cols", "'ranks': has 25 elements, expected 30"},
      {"grid", "'ranks': has 25 elements, expected 306"},
      {"tile_size", "'tile_size': 0 is outside"},
      {"no_tile_size", "'tile_size': attribute missing"},
      {"rank_multiple", "'rank_multiple'"},
      {"leading_dim", "'leading_dim': 3 is outside"},
      {"value_type", "'value_type': 'complex128'"},
      {"float_type", "'outer_factors': wrong element type for value_type float32"},
      {"rank_high", "'ranks': TlrLayout: tile (4, 4) has rank 2"},
      {"rank_negative", "'ranks': TlrLayout: tile (0, 3) has rank -1"},
      {"rank_sum", "'outer_factors': has"},
      {"ranks_type", "'ranks': wrong element type"},
      {"ranks_huge", "'ranks': absurd length"},
      {"ranks_2d", "'ranks': expected a one-dimensional dataset"},
      {"padding", "'outer_factors': tile (4, 0) has a nonzero padding entry (row 3"},
      {"outer_short", "'outer_factors': has"},
      {"outer_huge", "'outer_factors': absurd length"},
      {"outer_int", "'outer_factors': wrong element type"},
      {"outer_odd_float", "'outer_factors': wrong element type"},
      {"inner_missing", "'inner_factors': dataset missing"},
  };
  for (const auto& [defect, fragment] : cases) {
    const auto p = (dir / (std::string(defect) + ".h5")).string();
    write_crafted(p, defect);
    expect_format_error(p, fragment);
  }
  fs::remove_all(dir);
}

TEST(Hdf5Tlr, HugeConsistentSizesAreRefusedBeforeAllocating) {
  // Ranks and lengths that agree, for factor arrays far larger than this machine's memory
  // (datasets declared, never written): refused from the sizes alone.
  const auto dir = scratch_dir();
  const auto p = (dir / "big.h5").string();
  // 512K x 512K in tiles of 4096 (128 x 128 tiles), full rank: 2^38 elements per array.
  const std::int64_t n = std::int64_t(1) << 19;
  const int b = 4096;
  const kcla::TlrLayout l(n, n, b, std::vector<int>(128 * 128, b), 1, 1);
  {  // the file must be closed before it is read
    const kcla::test::CraftedHdf5 crafted(p, "/kcla_tlr");
    const hid_t group = crafted.group();
    crafted.str_attr("format", "kcla-tlr");
    crafted.str_attr("value_type", "float64");
    crafted.int_attr("version", 1);
    crafted.int_attr("rows", n);
    crafted.int_attr("cols", n);
    crafted.int_attr("tile_size", b);
    crafted.int_attr("rank_multiple", 1);
    crafted.int_attr("leading_dim", b);
    {
      const std::vector<std::int32_t> ranks(128 * 128, b);
      hsize_t count = ranks.size();
      hid_t s = H5Screate_simple(1, &count, nullptr);
      hid_t d =
          H5Dcreate2(group, "ranks", H5T_NATIVE_INT32, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, ranks.data());
      H5Dclose(d), H5Sclose(s);
    }
    for (const char* name : {"outer_factors", "inner_factors"}) {
      hsize_t count = static_cast<hsize_t>(l.outer_size()), chunk = 1 << 16;
      hid_t s = H5Screate_simple(1, &count, nullptr);
      hid_t pr = H5Pcreate(H5P_DATASET_CREATE);
      H5Pset_chunk(pr, 1, &chunk);
      hid_t d = H5Dcreate2(group, name, H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, pr, H5P_DEFAULT);
      H5Dclose(d), H5Pclose(pr), H5Sclose(s);
    }
  }
  expect_format_error(p, "more than the");
  fs::remove_all(dir);
}

}  // namespace
