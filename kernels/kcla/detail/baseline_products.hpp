// What a user would run instead of kcla on the same matrix, each in its best form, ready to
// be timed next to kcla (kcla_bench_baselines, `kcla multiply --compare`):
//   CUDA: every cuSPARSE SpMV / SpMM variant (detail::CusparseCsr: descriptors, workspace and
//         preprocessing made once per variant) and dense cuBLAS GEMV / GEMM (fp32, TF32)
//         when the dense panel fits in half the free device memory;
//   host: KokkosSparse::spmv (single and multi-vector);
//   both: the 2-bit packed genotype product (PLINK .bed layout) when every value is 0, 1
//         or 2, with each of its kernels.
#pragma once

#include <kcla/config.hpp>
#include <kcla/csr_device.hpp>
#include <kcla/csr_matrix.hpp>
#include <kcla/error.hpp>
#include <kcla/packed_genotype_multiply.hpp>
#include <kcla/packed_genotypes.hpp>

#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spmv.hpp>
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#if KCLA_HAVE_CUDA
#include <kcla/detail/cublas_dense.hpp>
#include <kcla/detail/cusparse_csr.hpp>

#include <cuda_runtime_api.h>
#endif

namespace kcla::detail {

/// One product ready to enqueue on the execution space instance it was made for.
struct BaselineProduct {
  std::string family;         // cuSPARSE, cuBLAS, KokkosSparse
  std::string variant;        // the algorithm, as the vendor names it
  std::int64_t bytes = 0;     // representation bytes the product reads (matrix only)
  bool column_major = false;  // writes the column-major output (each vector contiguous)
  double tolerance = 1e-4;    // expected relative error in fp32 (TF32 is looser)
  std::function<void()> run;
};

/// Inputs and outputs of a product with B vectors in both layouts: row-major (kcla's,
/// the B values of a row together) and column-major (each vector contiguous). For B = 1
/// both are the same vectors.
template <class MemorySpace>
struct BaselineOperands {
  Kokkos::View<float**, Kokkos::LayoutRight, MemorySpace> x, y;
  Kokkos::View<float**, Kokkos::LayoutLeft, MemorySpace> x_columns, y_columns;
};

/// The dense copy of a CSR matrix in a layout (a free function: CUDA forbids extended
/// lambdas in private member functions).
template <class ExecutionSpace, class Layout, class MemorySpace>
Kokkos::View<float**, Layout, MemorySpace> densify(const CsrDeviceMatrix<float, MemorySpace>& csr) {
  Kokkos::View<float**, Layout, MemorySpace> d("kcla::baseline_dense", csr.num_rows, csr.num_cols);
  auto offsets = csr.row_offsets;
  auto columns = csr.column_indices;
  auto values = csr.values;
  Kokkos::parallel_for(
      "kcla::baseline_densify", Kokkos::RangePolicy<ExecutionSpace>(0, csr.num_rows),
      KOKKOS_LAMBDA(int r) {
        for (int k = offsets(r); k < offsets(r + 1); ++k) d(r, columns(k)) = values(k);
      });
  ExecutionSpace().fence();
  return d;
}

template <class ExecutionSpace>
class CsrBaselines {
 public:
  using memory_space = typename ExecutionSpace::memory_space;

  explicit CsrBaselines(const CsrMatrix<double>& a, bool with_dense = true)
      : csr_(to_device_csr<float, memory_space>(a)) {
#if KCLA_HAVE_CUDA
    if constexpr (std::is_same<ExecutionSpace, Kokkos::Cuda>::value) {
      vendor_ = std::make_shared<CusparseCsr>(csr_.num_rows, csr_.num_cols, csr_.nnz(),
                                              csr_.row_offsets.data(), csr_.column_indices.data(),
                                              csr_.values.data(), false);
      if (with_dense) make_dense();
    }
#endif
    (void)with_dense;
    try {
      packed_ = std::make_shared<PackedGenotypeMatrix<float, memory_space>>(pack_genotypes(a));
    } catch (const InvalidArgument&) {
      // Not a genotype panel (a value other than 0, 1, 2): no 2-bit baseline.
    }
  }

  std::int64_t csr_bytes() const {
    return static_cast<std::int64_t>(csr_.bytes());
  }
  std::int64_t dense_bytes() const {
    return static_cast<std::int64_t>(csr_.num_rows) * csr_.num_cols * 4;
  }
  std::int64_t packed_bytes() const {
    return packed_ ? static_cast<std::int64_t>(packed_->device_bytes()) : 0;
  }

  /// Every baseline product for `vectors` right-hand sides on these operands.
  std::vector<BaselineProduct> products(const BaselineOperands<memory_space>& o,
                                        std::int64_t vectors) const {
    std::vector<BaselineProduct> out;
    const float* x = o.x.data();
    float* y = o.y.data();
#if KCLA_HAVE_CUDA
    if constexpr (std::is_same<ExecutionSpace, Kokkos::Cuda>::value) {
      const auto stream = ExecutionSpace().cuda_stream();
      auto vendor = vendor_;
      if (vectors == 1) {
        for (const auto& v : all_spmv_variants())
          out.push_back({"cuSPARSE", to_string(v), csr_bytes(), false, 1e-4,
                         [=] { vendor->spmv(stream, x, y, v); }});
      } else {
        const int B = static_cast<int>(vectors);
        for (const auto& v : all_spmm_variants()) {
          const bool row = v.order == DenseOrder::row_major;
          const float* in = row ? x : o.x_columns.data();
          float* result = row ? y : o.y_columns.data();
          out.push_back({"cuSPARSE", to_string(v), csr_bytes(), !row, 1e-4,
                         [=] { vendor->spmm(stream, B, in, result, v); }});
        }
      }
      if (dense_) {
        auto dense = dense_;
        if (vectors == 1) {
          out.push_back({"cuBLAS", "SGEMV fp32 (A row-major)", dense_bytes(), false, 1e-4,
                         [=] { dense->gemv(stream, x, y); }});
        } else {
          float* y_columns = o.y_columns.data();
          for (auto math : {DenseMath::fp32, DenseMath::tf32}) {
            const double tolerance = math == DenseMath::tf32 ? 5e-3 : 1e-4;
            out.push_back({"cuBLAS", std::string("GEMM ") + to_string(math) + " (A row-major)",
                           dense_bytes(), false, tolerance,
                           [=] { dense->gemm(stream, static_cast<int>(vectors), x, y, math); }});
            out.push_back({"cuBLAS",
                           std::string("GEMM ") + to_string(math) + " (A row-major, Y col-major)",
                           dense_bytes(), true, tolerance, [=] {
                             dense->gemm_column_major_y(stream, static_cast<int>(vectors), x,
                                                        y_columns, math);
                           }});
          }
        }
      }
      if (dense_columns_) {
        auto dense = dense_columns_;
        const float* x_columns = o.x_columns.data();
        float* y_columns = o.y_columns.data();
        if (vectors == 1) {
          out.push_back({"cuBLAS", "SGEMV fp32 (A column-major)", dense_bytes(), false, 1e-4,
                         [=] { dense->gemv(stream, x, y); }});
        } else {
          for (auto math : {DenseMath::fp32, DenseMath::tf32})
            out.push_back({"cuBLAS", std::string("GEMM ") + to_string(math) + " (A column-major)",
                           dense_bytes(), true, math == DenseMath::tf32 ? 5e-3 : 1e-4, [=] {
                             dense->gemm(stream, static_cast<int>(vectors), x_columns, y_columns,
                                         math);
                           }});
        }
      }
      add_packed(out, o, vectors);
      return out;
    }
#endif
    add_packed(out, o, vectors);
    using crs_type =
        KokkosSparse::CrsMatrix<float, int, Kokkos::Device<ExecutionSpace, memory_space>, void,
                                int>;
    crs_type crs("kcla::baseline_csr", csr_.num_rows, csr_.num_cols, static_cast<int>(csr_.nnz()),
                 csr_.values, csr_.row_offsets, csr_.column_indices);
    if (vectors == 1) {
      Kokkos::View<const float*, memory_space> xv(x, csr_.num_cols);
      Kokkos::View<float*, memory_space> yv(y, csr_.num_rows);
      out.push_back({"KokkosSparse", "spmv", csr_bytes(), false, 1e-4,
                     [=] { KokkosSparse::spmv("N", 1.0f, crs, xv, 0.0f, yv); }});
    } else {
      auto xc = o.x_columns;
      auto yc = o.y_columns;
      out.push_back({"KokkosSparse", "spmv multivector (LayoutLeft)", csr_bytes(), true, 1e-4,
                     [=] { KokkosSparse::spmv("N", 1.0f, crs, xc, 0.0f, yc); }});
    }
    return out;
  }

  /// The transposed products z = A^T y without a transposed copy (o.x: rows x B, o.y:
  /// cols x B): cuSPARSE with CUSPARSE_OPERATION_TRANSPOSE in every algorithm on CUDA,
  /// KokkosSparse::spmv("T") on the host. The explicit copy is CsrBaselines(transposed(a)).
  std::vector<BaselineProduct> transposed_products(const BaselineOperands<memory_space>& o,
                                                   std::int64_t vectors) const {
    std::vector<BaselineProduct> out;
    const float* x = o.x.data();
    float* y = o.y.data();
#if KCLA_HAVE_CUDA
    if constexpr (std::is_same<ExecutionSpace, Kokkos::Cuda>::value) {
      const auto stream = ExecutionSpace().cuda_stream();
      auto vendor = vendor_;
      if (vectors == 1) {
        for (const auto& v : all_transposed_spmv_variants())
          out.push_back({"cuSPARSE", to_string(v), csr_bytes(), false, 1e-4,
                         [=] { vendor->spmv(stream, x, y, v); }});
      } else {
        const int B = static_cast<int>(vectors);
        for (const auto& v : all_transposed_spmm_variants()) {
          const bool row = v.order == DenseOrder::row_major;
          const float* in = row ? x : o.x_columns.data();
          float* result = row ? y : o.y_columns.data();
          out.push_back({"cuSPARSE", to_string(v), csr_bytes(), !row, 1e-4,
                         [=] { vendor->spmm(stream, B, in, result, v); }});
        }
      }
      return out;
    }
#endif
    using crs_type =
        KokkosSparse::CrsMatrix<float, int, Kokkos::Device<ExecutionSpace, memory_space>, void,
                                int>;
    crs_type crs("kcla::baseline_csr", csr_.num_rows, csr_.num_cols, static_cast<int>(csr_.nnz()),
                 csr_.values, csr_.row_offsets, csr_.column_indices);
    if (vectors == 1) {
      Kokkos::View<const float*, memory_space> xv(x, csr_.num_rows);
      Kokkos::View<float*, memory_space> yv(y, csr_.num_cols);
      out.push_back({"KokkosSparse", "spmv mode T", csr_bytes(), false, 1e-4,
                     [=] { KokkosSparse::spmv("T", 1.0f, crs, xv, 0.0f, yv); }});
    } else {
      auto xc = o.x_columns;
      auto yc = o.y_columns;
      out.push_back({"KokkosSparse", "spmv multivector mode T (LayoutLeft)", csr_bytes(), true,
                     1e-4, [=] { KokkosSparse::spmv("T", 1.0f, crs, xc, 0.0f, yc); }});
    }
    return out;
  }

 private:
  void add_packed(std::vector<BaselineProduct>& out, const BaselineOperands<memory_space>& o,
                  std::int64_t vectors) const {
    if (!packed_) return;
    auto packed = packed_;
    const bool device = !Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible;
    auto kernels = device ? std::vector<PackedKernel>{PackedKernel::tables, PackedKernel::tiles}
                          : std::vector<PackedKernel>{PackedKernel::host_blocks};
    if (device && vectors == 1) {
      kernels.insert(kernels.begin(), PackedKernel::quad_tables);
      if (detail::packed_tensor_cores_available(ExecutionSpace(), *packed))
        kernels.insert(kernels.begin(), PackedKernel::tensor_cores);
      if (detail::packed_int8_tensor_cores_available(ExecutionSpace(), *packed))
        kernels.insert(kernels.begin(), PackedKernel::int8_tensor_cores);
    }
    for (auto kernel : kernels) {
      PackedMultiplyOptions options;
      options.kernel = kernel;
      const char* name = kernel == PackedKernel::int8_tensor_cores ? "int8 tensor cores"
                         : kernel == PackedKernel::tensor_cores    ? "tensor cores"
                         : kernel == PackedKernel::quad_tables     ? "quad tables"
                         : kernel == PackedKernel::tables          ? "pair tables"
                         : kernel == PackedKernel::tiles           ? "decoded tiles"
                                                                   : "host blocks";
      auto x = o.x;
      auto y = o.y;
      if (vectors == 1) {
        Kokkos::View<const float*, memory_space> xv(x.data(), x.extent(0));
        Kokkos::View<float*, memory_space> yv(y.data(), y.extent(0));
        out.push_back({"2-bit", name, packed_bytes(), false, 1e-4,
                       [=] { multiply(ExecutionSpace(), *packed, xv, yv, options); }});
      } else {
        out.push_back({"2-bit", name, packed_bytes(), false, 1e-4,
                       [=] { multiply(ExecutionSpace(), *packed, x, y, options); }});
      }
    }
  }
#if KCLA_HAVE_CUDA
  void make_dense() {
    std::size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) return;
    if (static_cast<double>(dense_bytes()) > 0.5 * static_cast<double>(free_bytes)) return;
    dense_values_ = densify<ExecutionSpace, Kokkos::LayoutRight>(csr_);
    dense_ = std::make_shared<CublasDense>(csr_.num_rows, csr_.num_cols, dense_values_.data());
    // The column-major copy too, when both fit in half of what is free.
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) return;
    if (static_cast<double>(dense_bytes()) > 0.5 * static_cast<double>(free_bytes)) return;
    dense_columns_values_ = densify<ExecutionSpace, Kokkos::LayoutLeft>(csr_);
    dense_columns_ = std::make_shared<CublasDense>(csr_.num_rows, csr_.num_cols,
                                                   dense_columns_values_.data(), true);
  }
  std::shared_ptr<CusparseCsr> vendor_;
  std::shared_ptr<CublasDense> dense_, dense_columns_;
#endif
  CsrDeviceMatrix<float, memory_space> csr_;
  Kokkos::View<float**, Kokkos::LayoutRight, memory_space> dense_values_;
  Kokkos::View<float**, Kokkos::LayoutLeft, memory_space> dense_columns_values_;
  std::shared_ptr<PackedGenotypeMatrix<float, memory_space>> packed_;
};

}  // namespace kcla::detail
