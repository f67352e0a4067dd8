// Products with a standardized genotype matrix X (kcla/genotype_transform.hpp) held as its
// grammar G, its missing calls M and per-variant maps (scale a, shift b, missing value m):
//
//   X w   = G (a . w) + (b . w) 1 + M ((m - b) . w)
//   X^T y = a . (G^T y) + b (1^T y) + (m - b) . (M^T y)
//
// Nothing is densified: two grammar sweeps' worth of work plus the missing calls.
//
//   auto stats = kcla::genotype_statistics(grammar, plink.missing);
//   Plink2TransformOptions o;  o.centering = GenotypeCentering::variance_standardize;
//   kcla::GenotypeOperator<float> X(grammar, plink.missing, plink2_transform(stats, o).transform);
//   X.apply(exec, w, scores);            // samples
//   X.apply_transpose(exec, y, z);       // variants
//
// w, scores, y, z: rank-1 Views or rank-2 LayoutRight (B vectors, vectors innermost) in the
// operator's memory space. One product at a time per operator (it owns its buffers).
//
// A panel too large for one grammar comes as a block grammar (column blocks compressed
// independently, kcla compress --block-cols): the same operator over a BlockGrammar runs
// the block matrix's products (every block held; BlockMatrixOptions bound its device memory).
#pragma once

#include <kcla/block_grammar_matrix.hpp>
#include <kcla/block_grammar_multiply.hpp>
#include <kcla/error.hpp>
#include <kcla/genotype_transform.hpp>
#include <kcla/grammar_matrix.hpp>
#include <kcla/grammar_multiply.hpp>
#include <kcla/missing_calls.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kcla {

namespace detail {
/// sums[b] = sum_i weight(i) v[i * B + b] (weight 1 when `weight` is empty), in double: one
/// team per vector. (A free function: CUDA forbids extended lambdas in private members.)
template <class ExecutionSpace, class Scalar, class WeightView>
void weighted_vector_sums(const ExecutionSpace& exec, const Scalar* v, const WeightView& weight,
                          std::int64_t n, std::int64_t B, double* sums) {
  const bool weighted = weight.extent(0) > 0;
  using team_policy = Kokkos::TeamPolicy<ExecutionSpace>;
  using member = typename team_policy::member_type;
  Kokkos::parallel_for(
      "kcla::genotype::sums", team_policy(exec, static_cast<int>(B), Kokkos::AUTO),
      KOKKOS_LAMBDA(const member& team) {
        const std::int64_t b = team.league_rank();
        double sum = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, n),
            [&](std::int64_t i, double& acc) {
              acc += static_cast<double>(weighted ? weight(i) : Scalar(1)) *
                     static_cast<double>(v[i * B + b]);
            },
            sum);
        Kokkos::single(Kokkos::PerTeam(team), [&] { sums[b] = sum; });
      });
}
}  // namespace detail

template <class Scalar, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class GenotypeOperator {
 public:
  using scalar_type = Scalar;
  using memory_space = MemorySpace;
  template <class T>
  using view = Kokkos::View<T*, MemorySpace>;

  /// Both directions by default; GrammarMatrixOptions::products = right (or transpose)
  /// builds one schedule only, and the other direction's product then throws.
  static GrammarMatrixOptions both_directions() {
    GrammarMatrixOptions o;
    o.products = GrammarProducts::both;
    return o;
  }

  GenotypeOperator(const Grammar& g, const MissingCalls& missing,
                   const GenotypeTransform& transform,
                   const GrammarMatrixOptions& options = both_directions())
      : rows_(g.num_rows), cols_(g.num_cols) {
    set_maps(missing, transform);
    matrix_ = GrammarMatrix<Scalar, MemorySpace>(g, options);
  }

  /// Over a block grammar holding every block (InvalidArgument for a rank's share: the
  /// shift and missing-call terms are the whole matrix's). `block_options` as for
  /// BlockGrammarMatrix; a device budget (out-of-core blocks) supports right products only,
  /// so it needs `options.products = right`.
  GenotypeOperator(const BlockGrammar& g, const MissingCalls& missing,
                   const GenotypeTransform& transform, const GrammarMatrixOptions& options,
                   const BlockMatrixOptions& block_options = {})
      : rows_(g.num_rows()), cols_(g.num_cols()), blocked_(true) {
    g.require_complete("kcla::GenotypeOperator");
    set_maps(missing, transform);
    blocks_ = BlockGrammarMatrix<Scalar, MemorySpace>(g, options, block_options);
  }
  GenotypeOperator(const BlockGrammar& g, const MissingCalls& missing,
                   const GenotypeTransform& transform)
      : GenotypeOperator(g, missing, transform, both_directions()) {}

  std::int64_t num_rows() const { return rows_; }
  std::int64_t num_cols() const { return cols_; }
  /// True when the operator runs a block grammar (block_matrix()), false for one grammar
  /// (matrix()).
  bool blocked() const { return blocked_; }
  const GrammarMatrix<Scalar, MemorySpace>& matrix() const { return matrix_; }
  const BlockGrammarMatrix<Scalar, MemorySpace>& block_matrix() const { return blocks_; }
  std::int64_t device_bytes() const {
    return (blocked_ ? blocks_.device_bytes() : matrix_.device_bytes()) +
           static_cast<std::int64_t>((scale_.span() + shift_.span() + delta_.span()) *
                                         sizeof(Scalar) +
                                     missing_row_offsets_.span() * 8 + missing_columns_.span() * 4 +
                                     missing_col_offsets_.span() * 8 + missing_rows_.span() * 4 +
                                     buffer_.span() * sizeof(Scalar) + sums_.span() * 8);
  }

 private:
  void set_maps(const MissingCalls& missing, const GenotypeTransform& transform) {
    missing.validate("kcla::GenotypeOperator: missing calls");
    if (missing.num_rows != rows_ || missing.num_cols != cols_)
      throw InvalidArgument("kcla::GenotypeOperator: missing calls are " +
                            std::to_string(missing.num_rows) + " x " +
                            std::to_string(missing.num_cols) + ", the matrix " +
                            std::to_string(rows_) + " x " + std::to_string(cols_));
    if (transform.size() != cols_ || static_cast<std::int64_t>(transform.shift.size()) != cols_ ||
        static_cast<std::int64_t>(transform.missing_value.size()) != cols_)
      throw InvalidArgument("kcla::GenotypeOperator: the transform has " +
                            std::to_string(transform.size()) + " variants, the matrix " +
                            std::to_string(cols_) + " columns");
    std::vector<Scalar> delta(static_cast<std::size_t>(cols_));
    std::vector<Scalar> scale(delta.size()), shift(delta.size());
    for (std::int64_t j = 0; j < cols_; ++j) {
      scale[j] = static_cast<Scalar>(transform.scale[j]);
      shift[j] = static_cast<Scalar>(transform.shift[j]);
      delta[j] = static_cast<Scalar>(transform.missing_value[j] - transform.shift[j]);
    }
    scale_ = upload(scale, "kcla::genotype::scale");
    shift_ = upload(shift, "kcla::genotype::shift");
    delta_ = upload(delta, "kcla::genotype::missing_delta");
    // M by rows (for X w) and by columns (for X^T y).
    missing_row_offsets_ = upload(missing.row_offsets, "kcla::genotype::missing_row_offsets");
    missing_columns_ = upload(missing.columns, "kcla::genotype::missing_columns");
    std::vector<std::int64_t> col_offsets(static_cast<std::size_t>(cols_) + 1, 0);
    for (auto c : missing.columns) ++col_offsets[static_cast<std::size_t>(c) + 1];
    for (std::int64_t j = 0; j < cols_; ++j) col_offsets[j + 1] += col_offsets[j];
    std::vector<std::int32_t> col_rows(missing.columns.size());
    std::vector<std::int64_t> next(col_offsets.begin(), col_offsets.end() - 1);
    for (std::int64_t r = 0; r < rows_; ++r)
      for (auto k = missing.row_offsets[r]; k < missing.row_offsets[r + 1]; ++k)
        col_rows[next[missing.columns[k]]++] = static_cast<std::int32_t>(r);
    missing_col_offsets_ = upload(col_offsets, "kcla::genotype::missing_col_offsets");
    missing_rows_ = upload(col_rows, "kcla::genotype::missing_rows");
  }

  template <class ExecutionSpace, class XView, class YView>
  void grammar_product(const ExecutionSpace& exec, const XView& x, const YView& y) const {
    if (blocked_)
      multiply(exec, blocks_, x, y);
    else
      multiply(exec, matrix_, x, y);
  }
  template <class ExecutionSpace, class YView, class ZView>
  void grammar_product_transpose(const ExecutionSpace& exec, const YView& y, const ZView& z) const {
    if (blocked_)
      multiply_transpose(exec, blocks_, y, z);
    else
      multiply_transpose(exec, matrix_, y, z);
  }

 public:
  /// y = X w: w has num_cols rows, y num_rows (B vectors each for rank-2 Views).
  template <class ExecutionSpace, class WView, class YView>
  void apply(const ExecutionSpace& exec, const WView& w, const YView& y) const {
    check<ExecutionSpace, WView, YView>(w, y, cols_, rows_, "apply", "w", "y");
    const std::int64_t B = vectors(w);
    const Scalar* wp = w.data();
    Scalar* yp = y.data();
    Scalar* aw = buffer(cols_ * B);
    const auto scale = scale_;
    using range = Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>;
    Kokkos::parallel_for(
        "kcla::genotype::scale_w", range(exec, 0, cols_ * B),
        KOKKOS_LAMBDA(std::int64_t k) { aw[k] = scale(k / B) * wp[k]; });
    grammar_product(exec, as_matrix(static_cast<const Scalar*>(aw), cols_, B),
                    as_matrix(yp, rows_, B));
    double* sums = weighted_sums(exec, wp, shift_, cols_, B);
    const auto offsets = missing_row_offsets_;
    const auto columns = missing_columns_;
    const auto delta = delta_;
    Kokkos::parallel_for(
        "kcla::genotype::apply_shift_missing", range(exec, 0, rows_ * B),
        KOKKOS_LAMBDA(std::int64_t k) {
          const std::int64_t r = k / B, b = k % B;
          Scalar v = yp[k] + static_cast<Scalar>(sums[b]);
          for (auto e = offsets(r); e < offsets(r + 1); ++e)
            v += delta(columns(e)) * wp[static_cast<std::int64_t>(columns(e)) * B + b];
          yp[k] = v;
        });
  }

  /// z = X^T y: y has num_rows rows, z num_cols.
  template <class ExecutionSpace, class YView, class ZView>
  void apply_transpose(const ExecutionSpace& exec, const YView& y, const ZView& z) const {
    check<ExecutionSpace, YView, ZView>(y, z, rows_, cols_, "apply_transpose", "y", "z");
    const std::int64_t B = vectors(y);
    const Scalar* yp = y.data();
    Scalar* zp = z.data();
    grammar_product_transpose(exec, as_matrix(yp, rows_, B), as_matrix(zp, cols_, B));
    double* sums = weighted_sums(exec, yp, view<Scalar>(), rows_, B);
    const auto offsets = missing_col_offsets_;
    const auto missing_rows = missing_rows_;
    const auto scale = scale_;
    const auto shift = shift_;
    const auto delta = delta_;
    Kokkos::parallel_for(
        "kcla::genotype::apply_transpose_shift_missing",
        Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>(exec, 0, cols_ * B),
        KOKKOS_LAMBDA(std::int64_t k) {
          const std::int64_t j = k / B, b = k % B;
          Scalar m = 0;
          for (auto e = offsets(j); e < offsets(j + 1); ++e)
            m += yp[static_cast<std::int64_t>(missing_rows(e)) * B + b];
          zp[k] = scale(j) * zp[k] + shift(j) * static_cast<Scalar>(sums[b]) + delta(j) * m;
        });
  }

 private:
  template <class T>
  static view<T> upload(const std::vector<T>& host, const char* label) {
    view<T> d(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), host.size());
    Kokkos::deep_copy(
        d, Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
               host.data(), host.size()));
    return d;
  }
  template <class T>
  static Kokkos::View<T**, Kokkos::LayoutRight, MemorySpace,
                      Kokkos::MemoryTraits<Kokkos::Unmanaged>>
  as_matrix(T* data, std::int64_t n, std::int64_t B) {
    using result = Kokkos::View<T**, Kokkos::LayoutRight, MemorySpace,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    return result(data, static_cast<std::size_t>(n), static_cast<std::size_t>(B));
  }
  template <class V>
  static std::int64_t vectors(const V& v) {
    return int(V::rank) == 2 ? static_cast<std::int64_t>(v.extent(1)) : 1;
  }
  template <class ExecutionSpace, class InView, class OutView>
  void check(const InView& in, const OutView& out, std::int64_t in_rows, std::int64_t out_rows,
             const char* what, const char* in_name, const char* out_name) const {
    detail::check_product_types<ExecutionSpace, MemorySpace, InView, OutView>();
    static_assert(std::is_same<typename InView::non_const_value_type, Scalar>::value &&
                      std::is_same<typename OutView::non_const_value_type, Scalar>::value,
                  "kcla::GenotypeOperator: vectors must hold the operator's Scalar");
    detail::check_product_extents(
        in, out, out_rows, in_rows, "operator " + std::to_string(out_rows),
        "operator " + std::to_string(in_rows), std::string("kcla::GenotypeOperator::") + what,
        in_name, out_name);
  }
  Scalar* buffer(std::int64_t n) const {
    if (static_cast<std::int64_t>(buffer_.extent(0)) < n)
      buffer_ = view<Scalar>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("kcla::genotype::buffer")),
          n);
    return buffer_.data();
  }
  /// sums[b] = sum_i weight(i) v[i * B + b] (weight 1 when `weight` is empty), in double.
  template <class ExecutionSpace>
  double* weighted_sums(const ExecutionSpace& exec, const Scalar* v, const view<Scalar>& weight,
                        std::int64_t n, std::int64_t B) const {
    if (static_cast<std::int64_t>(sums_.extent(0)) < B)
      sums_ = view<double>("kcla::genotype::sums", B);
    detail::weighted_vector_sums(exec, v, weight, n, B, sums_.data());
    return sums_.data();
  }

  std::int64_t rows_ = 0, cols_ = 0;
  bool blocked_ = false;
  GrammarMatrix<Scalar, MemorySpace> matrix_;
  BlockGrammarMatrix<Scalar, MemorySpace> blocks_;
  view<Scalar> scale_, shift_, delta_;
  view<std::int64_t> missing_row_offsets_, missing_col_offsets_;
  view<std::int32_t> missing_columns_, missing_rows_;
  mutable view<Scalar> buffer_;
  mutable view<double> sums_;
};

}  // namespace kcla
