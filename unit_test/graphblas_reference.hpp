// SuiteSparse:GraphBLAS (libgraphblas-dev, host) as an independent semiring reference for
// kcla's products: w = A u with GrB_mxv in the GraphBLAS semiring that matches a kcla
// semiring policy, returned as a dense std::vector. Used by the tests
// (test_grammar_graphblas.cpp) and by perf_test/bench_grammar.cpp; it needs no GoogleTest.
//
//   kcla::test::graphblas::initialize();                  // once per program
//   kcla::test::graphblas::Matrix A(csr, kcla::test::graphblas::Traits<kcla::Boolean>::type());
//   auto w = kcla::test::graphblas::mxv<kcla::Boolean>(A, u);   // u: one char per column
//   kcla::test::graphblas::finalize();
//
// Semantics (GraphBLAS vectors are sparse; kcla's are dense):
// - w(i) that no entry of A and u contributes to is absent in GraphBLAS; here it reads as
//   the semiring's zero: 0 (plus-times), false (Boolean), +inf (min-plus) — exactly what
//   kcla (and reference::csr_multiply) write for such a row.
// - u is dense, every entry stored, except in min-plus: an entry equal to +inf is left
//   out of u (absent), which is what +inf means in the tropical semiring (no path). Stored
//   or absent gives the same w there, but absent is how a GraphBLAS user writes it.
// - Boolean vectors are held as char (0 / 1) on the host: std::vector<bool> packs bits.
// - The matrix keeps every stored entry of the CSR, explicit zeros too (as kcla's CSRV
//   encoding does); in a BOOL matrix an entry holds value != 0.
// - Types: the matrix and u hold the semiring's own type (FP32, FP64 or BOOL), so GrB_mxv
//   never typecasts; A is held by row (CSR), GraphBLAS' default.
// Errors of any GraphBLAS call throw std::runtime_error naming the call and its GrB_Info.
#pragma once

#include <kcla/csr_matrix.hpp>
#include <kcla/semiring.hpp>

extern "C" {
#include <GraphBLAS.h>
}

#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kcla::test::graphblas {

inline void check(GrB_Info info, const char* call) {
  if (info != GrB_SUCCESS)
    throw std::runtime_error(std::string("GraphBLAS: ") + call + " failed with GrB_Info " +
                             std::to_string(static_cast<int>(info)));
}

/// GrB_init(GrB_NONBLOCKING), once per program (later calls do nothing).
inline void initialize() {
  static const bool done = [] {
    check(GrB_init(GrB_NONBLOCKING), "GrB_init");
    return true;
  }();
  (void)done;
}

/// GrB_finalize: call at the end of the program, after every Matrix and Mxv is gone.
inline void finalize() {
  GrB_finalize();
}

/// The GraphBLAS type and semiring that compute what kcla policy `Semiring` computes.
template <class Semiring>
struct Traits;
template <>
struct Traits<PlusTimes<float>> {
  using value_type = float;
  static GrB_Type type() { return GrB_FP32; }
  static GrB_Semiring semiring() { return GrB_PLUS_TIMES_SEMIRING_FP32; }
};
template <>
struct Traits<PlusTimes<double>> {
  using value_type = double;
  static GrB_Type type() { return GrB_FP64; }
  static GrB_Semiring semiring() { return GrB_PLUS_TIMES_SEMIRING_FP64; }
};
template <>
struct Traits<Boolean> {
  using value_type = bool;
  static GrB_Type type() { return GrB_BOOL; }
  static GrB_Semiring semiring() { return GrB_LOR_LAND_SEMIRING_BOOL; }
};
template <>
struct Traits<MinPlus<float>> {
  using value_type = float;
  static GrB_Type type() { return GrB_FP32; }
  static GrB_Semiring semiring() { return GrB_MIN_PLUS_SEMIRING_FP32; }
};
template <>
struct Traits<MinPlus<double>> {
  using value_type = double;
  static GrB_Type type() { return GrB_FP64; }
  static GrB_Semiring semiring() { return GrB_MIN_PLUS_SEMIRING_FP64; }
};

/// What a host vector of the semiring holds: char for bool, else the value type.
template <class Semiring>
using host_value_t = std::conditional_t<std::is_same<typename Semiring::value_type, bool>::value,
                                        char, typename Semiring::value_type>;

namespace detail {

inline GrB_Info import_csr(GrB_Matrix* a, GrB_Type t, GrB_Index rows, GrB_Index cols,
                           const GrB_Index* ap, const GrB_Index* ai, const float* ax, GrB_Index nap,
                           GrB_Index nai) {
  return GrB_Matrix_import_FP32(a, t, rows, cols, ap, ai, ax, nap, nai, nai, GrB_CSR_FORMAT);
}
inline GrB_Info import_csr(GrB_Matrix* a, GrB_Type t, GrB_Index rows, GrB_Index cols,
                           const GrB_Index* ap, const GrB_Index* ai, const double* ax,
                           GrB_Index nap, GrB_Index nai) {
  return GrB_Matrix_import_FP64(a, t, rows, cols, ap, ai, ax, nap, nai, nai, GrB_CSR_FORMAT);
}
inline GrB_Info import_csr(GrB_Matrix* a, GrB_Type t, GrB_Index rows, GrB_Index cols,
                           const GrB_Index* ap, const GrB_Index* ai, const bool* ax, GrB_Index nap,
                           GrB_Index nai) {
  return GrB_Matrix_import_BOOL(a, t, rows, cols, ap, ai, ax, nap, nai, nai, GrB_CSR_FORMAT);
}
inline GrB_Info build(GrB_Vector v, const GrB_Index* i, const float* x, GrB_Index n) {
  return GrB_Vector_build_FP32(v, i, x, n, GrB_PLUS_FP32);
}
inline GrB_Info build(GrB_Vector v, const GrB_Index* i, const double* x, GrB_Index n) {
  return GrB_Vector_build_FP64(v, i, x, n, GrB_PLUS_FP64);
}
inline GrB_Info build(GrB_Vector v, const GrB_Index* i, const bool* x, GrB_Index n) {
  return GrB_Vector_build_BOOL(v, i, x, n, GrB_LOR);
}
inline GrB_Info extract(GrB_Index* i, float* x, GrB_Index* n, GrB_Vector v) {
  return GrB_Vector_extractTuples_FP32(i, x, n, v);
}
inline GrB_Info extract(GrB_Index* i, double* x, GrB_Index* n, GrB_Vector v) {
  return GrB_Vector_extractTuples_FP64(i, x, n, v);
}
inline GrB_Info extract(GrB_Index* i, bool* x, GrB_Index* n, GrB_Vector v) {
  return GrB_Vector_extractTuples_BOOL(i, x, n, v);
}

template <class T>
void import_matrix(GrB_Matrix* m, GrB_Type type, const CsrMatrix<double>& a) {
  const std::size_t nnz = static_cast<std::size_t>(a.nnz());
  // GraphBLAS reads through the pointers even for zero entries: never hand it null.
  std::vector<GrB_Index> ap(a.row_offsets.begin(), a.row_offsets.end());
  std::vector<GrB_Index> ai(std::max<std::size_t>(nnz, 1), 0);
  std::unique_ptr<T[]> ax(new T[std::max<std::size_t>(nnz, 1)]());
  for (std::size_t k = 0; k < nnz; ++k) {
    ai[k] = static_cast<GrB_Index>(a.column_indices[k]);
    if constexpr (std::is_same<T, bool>::value)
      ax[k] = a.values[k] != 0;
    else
      ax[k] = static_cast<T>(a.values[k]);
  }
  check(import_csr(m, type, static_cast<GrB_Index>(a.num_rows), static_cast<GrB_Index>(a.num_cols),
                   ap.data(), ai.data(), ax.get(), static_cast<GrB_Index>(ap.size()),
                   static_cast<GrB_Index>(nnz)),
        "GrB_Matrix_import");
  check(GrB_Matrix_wait(*m, GrB_MATERIALIZE), "GrB_Matrix_wait");
}

}  // namespace detail

/// A GrB_Matrix holding a copy of a CSR matrix in one GraphBLAS type (GrB_FP32, GrB_FP64
/// or GrB_BOOL), by row.
class Matrix {
 public:
  Matrix(const CsrMatrix<double>& a, GrB_Type type) : rows_(a.num_rows), cols_(a.num_cols) {
    if (type == GrB_FP32)
      detail::import_matrix<float>(&m_, type, a);
    else if (type == GrB_FP64)
      detail::import_matrix<double>(&m_, type, a);
    else if (type == GrB_BOOL)
      detail::import_matrix<bool>(&m_, type, a);
    else
      throw std::invalid_argument("graphblas::Matrix: type must be GrB_FP32, GrB_FP64 or GrB_BOOL");
    type_ = type;
  }
  /// The matrix in the type of `Semiring`.
  template <class Semiring>
  static Matrix for_semiring(const CsrMatrix<double>& a) {
    return Matrix(a, Traits<Semiring>::type());
  }
  ~Matrix() {
    if (m_) GrB_Matrix_free(&m_);
  }
  Matrix(Matrix&& o) noexcept
      : m_(std::exchange(o.m_, nullptr)), type_(o.type_), rows_(o.rows_), cols_(o.cols_) {}
  Matrix& operator=(Matrix&& o) noexcept {
    std::swap(m_, o.m_);
    std::swap(type_, o.type_);
    std::swap(rows_, o.rows_);
    std::swap(cols_, o.cols_);
    return *this;
  }
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;

  GrB_Matrix get() const { return m_; }
  GrB_Type type() const { return type_; }
  std::int64_t num_rows() const { return rows_; }
  std::int64_t num_cols() const { return cols_; }
  /// Bytes GraphBLAS holds for the matrix (GxB_Matrix_memoryUsage).
  std::int64_t bytes() const {
    std::size_t size = 0;
    check(GxB_Matrix_memoryUsage(&size, m_), "GxB_Matrix_memoryUsage");
    return static_cast<std::int64_t>(size);
  }

 private:
  GrB_Matrix m_ = nullptr;
  GrB_Type type_ = nullptr;
  std::int64_t rows_ = 0, cols_ = 0;
};

/// w = A u in `Semiring`, with u and w kept between products (what a benchmark times):
/// set_input() once, run() per product, result() to read w.
template <class Semiring>
class Mxv {
 public:
  using T = typename Traits<Semiring>::value_type;
  using H = host_value_t<Semiring>;

  explicit Mxv(const Matrix& a) : a_(&a) {
    if (a.type() != Traits<Semiring>::type())
      throw std::invalid_argument("graphblas::Mxv: the matrix is not of the semiring's type");
    check(GrB_Vector_new(&u_, Traits<Semiring>::type(), static_cast<GrB_Index>(a.num_cols())),
          "GrB_Vector_new");
    check(GrB_Vector_new(&w_, Traits<Semiring>::type(), static_cast<GrB_Index>(a.num_rows())),
          "GrB_Vector_new");
  }
  ~Mxv() {
    if (u_) GrB_Vector_free(&u_);
    if (w_) GrB_Vector_free(&w_);
  }
  Mxv(const Mxv&) = delete;
  Mxv& operator=(const Mxv&) = delete;

  /// u = the dense vector `u` (num_cols values); +inf left out in min-plus (see top).
  void set_input(const H* u) {
    check(GrB_Vector_clear(u_), "GrB_Vector_clear");
    const auto n = static_cast<std::size_t>(a_->num_cols());
    std::vector<GrB_Index> index;
    std::unique_ptr<T[]> value(new T[std::max<std::size_t>(n, 1)]());
    index.reserve(std::max<std::size_t>(n, 1));  // data() must not be null
    for (std::size_t j = 0; j < n; ++j) {
      if constexpr (std::is_same<Semiring, MinPlus<T>>::value)
        if (u[j] == static_cast<T>(INFINITY)) continue;
      value[index.size()] = static_cast<T>(u[j]);
      index.push_back(static_cast<GrB_Index>(j));
    }
    check(detail::build(u_, index.data(), value.get(), static_cast<GrB_Index>(index.size())),
          "GrB_Vector_build");
    check(GrB_Vector_wait(u_, GrB_MATERIALIZE), "GrB_Vector_wait");
  }
  void set_input(const std::vector<H>& u) {
    if (static_cast<std::int64_t>(u.size()) != a_->num_cols())
      throw std::invalid_argument("graphblas::Mxv: u has the wrong length");
    set_input(u.data());
  }

  /// w = A u (no mask, no accumulator), completed: GrB_mxv then GrB_wait(w, materialize).
  void run() {
    check(GrB_mxv(w_, GrB_NULL, GrB_NULL, Traits<Semiring>::semiring(), a_->get(), u_, GrB_NULL),
          "GrB_mxv");
    check(GrB_Vector_wait(w_, GrB_MATERIALIZE), "GrB_Vector_wait");
  }

  /// w as a dense vector, absent entries as the semiring's zero.
  std::vector<H> result() const {
    const auto rows = static_cast<std::size_t>(a_->num_rows());
    std::vector<H> dense(rows, static_cast<H>(Semiring::zero()));
    GrB_Index nvals = 0;
    check(GrB_Vector_nvals(&nvals, w_), "GrB_Vector_nvals");
    std::vector<GrB_Index> index(std::max<GrB_Index>(nvals, 1));
    std::unique_ptr<T[]> value(new T[std::max<GrB_Index>(nvals, 1)]());
    check(detail::extract(index.data(), value.get(), &nvals, w_), "GrB_Vector_extractTuples");
    for (GrB_Index k = 0; k < nvals; ++k) dense[index[k]] = static_cast<H>(value[k]);
    return dense;
  }

  GrB_Vector input() const { return u_; }
  GrB_Vector output() const { return w_; }

 private:
  const Matrix* a_;
  GrB_Vector u_ = nullptr, w_ = nullptr;
};

/// w = A u in `Semiring`, dense in and out (see the semantics at the top).
template <class Semiring>
std::vector<host_value_t<Semiring>> mxv(const Matrix& a,
                                        const std::vector<host_value_t<Semiring>>& u) {
  Mxv<Semiring> product(a);
  product.set_input(u);
  product.run();
  return product.result();
}

}  // namespace kcla::test::graphblas
