// What the kcla tlr subcommands share, single-process and under mpirun: precision and
// kernel names, the scalar type of a precision, summaries, the compression method, the
// error of a compression, host copies in double and product tolerances.
#pragma once

#include "cli_common.hpp"

#include <kcla/dense_matrix_market.hpp>
#include <kcla/hdf5_tlr.hpp>
#include <kcla/tlr_compress.hpp>
#include <kcla/tlr_kernel_function.hpp>
#include <kcla/tlr_layout.hpp>
#include <kcla/tlr_matrix.hpp>
#include <kcla/tlr_scalar.hpp>
#include <kcla/tlr_to_dense.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kcla::cli {

/// kcla tlr compress (tools/cli_tlr_compress.cpp) and kcla tlr gemm (tools/cli_tlr_gemm.cpp).
int run_tlr_compress(int argc, char** argv);
int run_tlr_gemm(int argc, char** argv);

/// fp64, fp32, fp16 or bf16 (UsageError otherwise).
ScalarKind parse_precision(const std::string& name);

/// "fp16 (as fp32: ...)" when the build stores a precision in a wider type.
std::string precision_note(ScalarKind wanted, ScalarKind used);

/// "1.23 GB", "4.56 MB" or "7.8 kB".
std::string megabytes(double bytes);

/// Shape, precision, rank statistics and bytes of a TLR layout (kcla tlr info / compress).
void print_summary(const TlrLayout& l, ScalarKind kind);

/// The compression method's line: the SVD, or the randomized compression's report.
void print_method(bool randomized, const TlrCompressReport& report);

/// A --kernel name (UsageError otherwise).
KernelType parse_kernel(const std::string& name);

/// Tolerance of the relative Frobenius error of a product in each precision: the storage
/// precision's own (as the tests use), or 4 u sqrt(k) when larger.
double product_tolerance(ScalarKind kind, bool tf32, std::int64_t k);

/// The initial C of a product (--c FILE): a Matrix Market matrix of exactly m x n
/// (FormatError naming the file otherwise).
DenseMatrix read_initial_c(const std::string& path, std::int64_t m, std::int64_t n);

/// The relative Frobenius error of `result` against alpha op(A) op(B) + beta C computed in
/// double (`reference` holds C on entry and the exact product on return); infinity when
/// not finite.
double product_error(bool transa, bool transb, double alpha, double beta, const DenseMatrix& a,
                     const DenseMatrix& b, DenseMatrix& reference, const DenseMatrix& result);

template <class T>
struct Tag {
  using type = T;
};

/// Calls f(Tag<Scalar>) for the scalar type that stores `kind` (fp16: Kokkos' half_t,
/// which is float on host-only builds).
template <class F>
void with_scalar(ScalarKind kind, F&& f) {
  switch (kind) {
    case ScalarKind::f64:
      f(Tag<double>{});
      break;
    case ScalarKind::f32:
      f(Tag<float>{});
      break;
    case ScalarKind::f16:
      f(Tag<Kokkos::Experimental::half_t>{});
      break;
    default:
      f(Tag<bhalf_t>{});
      break;
  }
}

/// A host TLR matrix in double with exactly the values of `a` (widened).
template <class Scalar, class MemorySpace>
TlrMatrix<double, Kokkos::HostSpace> widen_to_host(const TlrMatrix<Scalar, MemorySpace>& a) {
  const auto u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.outer_factors());
  const auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.inner_factors());
  std::vector<double> du(u.extent(0)), dv(v.extent(0));
  for (std::size_t e = 0; e < du.size(); ++e)
    du[e] = static_cast<double>(TlrScalarTraits<Scalar>::widen(u(e)));
  for (std::size_t e = 0; e < dv.size(); ++e)
    dv[e] = static_cast<double>(TlrScalarTraits<Scalar>::widen(v(e)));
  return make_tlr_matrix<double, Kokkos::HostSpace>(a.layout_ptr(), du, dv);
}

/// The matrix being compressed: a dense one, or a kernel on a point set.
struct Source {
  DenseMatrix dense;
  bool is_kernel = false;
  PointSet points;
  CovarianceKernel kernel;
  std::int64_t rows() const { return is_kernel ? points.size() : dense.rows; }
  std::int64_t cols() const { return is_kernel ? points.size() : dense.cols; }
  double operator()(std::int64_t r, std::int64_t c) const {
    return is_kernel ? kernel(points, r, points, c) : dense(r, c);
  }
};

/// ||A - Ã||_F / ||A||_F with Ã the stored matrix (widened to double), tile by tile.
double compression_error(const Source& src, const TlrMatrix<double, Kokkos::HostSpace>& a);

/// A rows x cols column-major View whose leading dimension is a multiple of 8 (what
/// 16-bit products need of dense operands), and the padded allocation behind it.
template <class Scalar, class MemorySpace>
struct PaddedMatrix {
  Kokkos::View<Scalar**, Kokkos::LayoutLeft, MemorySpace> full;
  Kokkos::View<Scalar**, Kokkos::LayoutStride, MemorySpace> view;
  PaddedMatrix(const std::string& label, std::int64_t rows, std::int64_t cols)
      : full(label, std::max<std::int64_t>(8, (rows + 7) / 8 * 8), cols),
        view(Kokkos::subview(full, std::pair<std::int64_t, std::int64_t>(0, rows), Kokkos::ALL())) {
  }
};

/// A dense View (any space) as a host matrix in double.
template <class View>
DenseMatrix dense_to_host(const View& v) {
  using scalar = typename View::non_const_value_type;
  Kokkos::View<scalar**, Kokkos::LayoutLeft, typename View::memory_space> packed(
      "packed", v.extent(0), v.extent(1));
  Kokkos::deep_copy(packed, v);
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), packed);
  DenseMatrix d{static_cast<std::int64_t>(v.extent(0)), static_cast<std::int64_t>(v.extent(1)), {}};
  d.values.resize(static_cast<std::size_t>(d.rows * d.cols));
  for (std::int64_t c = 0; c < d.cols; ++c)
    for (std::int64_t r = 0; r < d.rows; ++r)
      d(r, c) = static_cast<double>(TlrScalarTraits<scalar>::widen(h(r, c)));
  return d;
}

template <class Scalar, class MemorySpace>
DenseMatrix tlr_to_host(const TlrMatrix<Scalar, MemorySpace>& a) {
  const auto d = widen_to_host(a);
  return dense_to_host(to_dense(Kokkos::DefaultHostExecutionSpace(), d));
}

}  // namespace kcla::cli
