// Genotype panels (samples x variants, allele counts 0/1/2) packed two bits per call in
// the PLINK 1 .bed layout: the form a user would multiply with instead of a kcla grammar
// (the honest baseline), and a compact in-memory copy of a .bed fileset.
//
//   auto packed = kcla::pack_genotypes(csr);          // from a samples x variants CSR
//   auto packed = kcla::read_plink_packed("panel");   // or straight from panel.bed (io/)
//   kcla::PackedGenotypeMatrix<float> G(packed);      // device copy (packed_genotype_multiply.hpp)
#pragma once

#include <kcla/csr_matrix.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kcla {

/// Which allele a genotype value counts. PLINK's A1 (the .bim's fifth column) is usually
/// the minor allele, so counting it keeps the matrix sparse.
enum class CountedAllele { a1, a2 };

/// The 2-bit .bed codes.
namespace bed_code {
constexpr int hom_a1 = 0;   ///< 00: two copies of A1
constexpr int missing = 1;  ///< 01: no call (counts 0, as kcla's PLINK reader does)
constexpr int het = 2;      ///< 10: one copy of each
constexpr int hom_a2 = 3;   ///< 11: two copies of A2
}  // namespace bed_code

/// The allele count (0, 1, 2) each code stands for, indexed by code; missing is 0.
constexpr std::array<std::uint8_t, 4> allele_counts_of_codes(CountedAllele counted) {
  return counted == CountedAllele::a1 ? std::array<std::uint8_t, 4>{2, 0, 1, 0}
                                      : std::array<std::uint8_t, 4>{0, 0, 1, 2};
}

/// A genotype panel in the .bed code convention, variant-major: the calls of variant j
/// are bytes [j * bytes_per_variant, (j + 1) * bytes_per_variant) of `codes`, four samples
/// per byte, low bits first (sample s in bits 2 (s % 4) .. 2 (s % 4) + 1 of byte s / 4).
/// bytes_per_variant is ceil(num_samples / 4) rounded up to a multiple of 16, so every
/// variant starts 16-byte aligned (whole 32-bit words and 128-bit vectors of samples).
/// The padding calls (samples >= num_samples) carry no value: kcla writes them as 01
/// (missing) and every product ignores them.
struct PackedGenotypes {
  static constexpr std::int64_t variant_alignment = 16;  ///< bytes

  std::int64_t num_samples = 0;
  std::int64_t num_variants = 0;
  std::int64_t bytes_per_variant = 0;
  CountedAllele counted_allele = CountedAllele::a1;  ///< what the codes' values count
  std::vector<std::uint8_t> codes;                   ///< num_variants * bytes_per_variant

  /// ceil(num_samples / 4) rounded up to a multiple of variant_alignment.
  static std::int64_t padded_bytes_per_variant(std::int64_t num_samples);

  /// A num_samples x num_variants panel with every call missing (code 01).
  /// Throws InvalidArgument for a negative shape or one whose size overflows.
  static PackedGenotypes all_missing(std::int64_t num_samples, std::int64_t num_variants,
                                     CountedAllele counted = CountedAllele::a1);

  /// Bytes of the packed codes.
  std::size_t bytes() const { return codes.size(); }

  /// The 2-bit code of one call (no bounds check).
  int code(std::int64_t sample, std::int64_t variant) const {
    const auto byte = codes[static_cast<std::size_t>(variant * bytes_per_variant + sample / 4)];
    return (byte >> (2 * (sample % 4))) & 3;
  }
  /// The allele count of one call, missing as 0 (no bounds check).
  int allele_count(std::int64_t sample, std::int64_t variant) const {
    return allele_counts_of_codes(counted_allele)[static_cast<std::size_t>(code(sample, variant))];
  }
  /// Calls with code 01 (padding not counted).
  std::int64_t count_missing() const;

  /// Throws InvalidArgument when the shape and the size of `codes` disagree.
  void validate(const std::string& what = "packed genotypes") const;
};

/// Packs a samples x variants matrix of allele counts: a stored value of 1 or 2 (or an
/// explicit 0) becomes the code kcla's PLINK reader reads that count from (counting A1:
/// 2 -> 00, 1 -> 10, 0 -> 11; counting A2: 0 -> 00, 1 -> 10, 2 -> 11); an absent entry
/// is 0. Throws InvalidArgument for an invalid CSR matrix, any other value (3, 0.5, NaN),
/// or a call stored twice with nonzero values.
PackedGenotypes pack_genotypes(const CsrMatrix<double>& genotypes,
                               CountedAllele counted = CountedAllele::a1);

/// The samples x variants matrix of allele counts (missing calls absent, like read_plink).
CsrMatrix<double> unpack_genotypes(const PackedGenotypes& packed);

}  // namespace kcla
