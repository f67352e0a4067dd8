#include <kcla/packed_genotypes.hpp>

#include <limits>
#include <string>

namespace kcla {

namespace {

/// The byte whose four calls are all missing (01 01 01 01).
constexpr std::uint8_t all_missing_byte = 0x55;

/// `byte` with its calls for samples >= `valid` (0..4) set to missing.
std::uint8_t mask_padding(std::uint8_t byte, std::int64_t valid) {
  if (valid >= 4) return byte;
  const unsigned keep = (1u << (2 * valid)) - 1u;
  return static_cast<std::uint8_t>((byte & keep) | (all_missing_byte & ~keep));
}

std::string entry_name(std::int64_t row, std::int32_t column) {
  return "(sample " + std::to_string(row) + ", variant " + std::to_string(column) + ")";
}

}  // namespace

std::int64_t PackedGenotypes::padded_bytes_per_variant(std::int64_t num_samples) {
  if (num_samples < 0)
    throw InvalidArgument("PackedGenotypes: negative number of samples " +
                          std::to_string(num_samples));
  const std::int64_t bytes = num_samples / 4 + (num_samples % 4 != 0);
  return (bytes + variant_alignment - 1) / variant_alignment * variant_alignment;
}

PackedGenotypes PackedGenotypes::all_missing(std::int64_t num_samples, std::int64_t num_variants,
                                             CountedAllele counted) {
  if (num_samples < 0 || num_variants < 0)
    throw InvalidArgument("PackedGenotypes: negative shape " + std::to_string(num_samples) + " x " +
                          std::to_string(num_variants));
  PackedGenotypes p;
  p.num_samples = num_samples;
  p.num_variants = num_variants;
  p.bytes_per_variant = padded_bytes_per_variant(num_samples);
  p.counted_allele = counted;
  if (p.bytes_per_variant > 0 &&
      num_variants > std::numeric_limits<std::int64_t>::max() / p.bytes_per_variant)
    throw InvalidArgument("PackedGenotypes: " + std::to_string(num_samples) + " x " +
                          std::to_string(num_variants) + " calls overflow a 64-bit size");
  p.codes.assign(static_cast<std::size_t>(num_variants * p.bytes_per_variant), all_missing_byte);
  return p;
}

std::int64_t PackedGenotypes::count_missing() const {
  std::int64_t missing = 0;
  for (std::int64_t j = 0; j < num_variants; ++j)
    for (std::int64_t s = 0; s < num_samples; ++s) missing += code(s, j) == bed_code::missing;
  return missing;
}

void PackedGenotypes::validate(const std::string& what) const {
  if (num_samples < 0 || num_variants < 0)
    throw InvalidArgument(what + ": negative shape " + std::to_string(num_samples) + " x " +
                          std::to_string(num_variants));
  const std::int64_t stride = padded_bytes_per_variant(num_samples);
  if (bytes_per_variant != stride)
    throw InvalidArgument(what + ": bytes_per_variant is " + std::to_string(bytes_per_variant) +
                          ", but " + std::to_string(num_samples) + " samples need " +
                          std::to_string(stride));
  if (stride > 0 && num_variants > std::numeric_limits<std::int64_t>::max() / stride)
    throw InvalidArgument(what + ": size overflows a 64-bit count");
  if (codes.size() != static_cast<std::uint64_t>(num_variants * stride))
    throw InvalidArgument(
        what + ": codes has " + std::to_string(codes.size()) +
        " bytes, expected variants x bytes_per_variant = " + std::to_string(num_variants * stride));
}

PackedGenotypes pack_genotypes(const CsrMatrix<double>& genotypes, CountedAllele counted) {
  genotypes.validate("pack_genotypes");
  auto p = PackedGenotypes::all_missing(genotypes.num_rows, genotypes.num_cols, counted);
  // Every real call starts as allele count 0; padding calls stay missing.
  const auto counts = allele_counts_of_codes(counted);
  int code_of_count[3] = {-1, -1, -1};
  for (int c = 0; c < 4; ++c)  // 01 (missing) counts 0 too, but is not the call of a 0
    if (c != bed_code::missing) code_of_count[counts[static_cast<std::size_t>(c)]] = c;
  const auto zero_code = static_cast<unsigned>(code_of_count[0]);
  const auto zero_byte = static_cast<std::uint8_t>(zero_code * 0x55u);
  const std::int64_t full_bytes = p.num_samples / 4, tail = p.num_samples % 4;
  for (std::int64_t j = 0; j < p.num_variants; ++j) {
    std::uint8_t* column = p.codes.data() + j * p.bytes_per_variant;
    for (std::int64_t b = 0; b < full_bytes; ++b) column[b] = zero_byte;
    if (tail) column[full_bytes] = mask_padding(zero_byte, tail);
  }
  for (std::int64_t s = 0; s < genotypes.num_rows; ++s) {
    for (auto k = genotypes.row_offsets[s]; k < genotypes.row_offsets[s + 1]; ++k) {
      const double v = genotypes.values[static_cast<std::size_t>(k)];
      const std::int32_t j = genotypes.column_indices[static_cast<std::size_t>(k)];
      if (!(v == 0.0 || v == 1.0 || v == 2.0))
        throw InvalidArgument("pack_genotypes: entry " + entry_name(s, j) + " is " +
                              std::to_string(v) + "; allele counts must be 0, 1 or 2");
      if (v == 0.0) continue;  // an explicit zero: the call is already 0
      std::uint8_t& byte = p.codes[static_cast<std::size_t>(j * p.bytes_per_variant + s / 4)];
      const int shift = static_cast<int>(2 * (s % 4));
      if (((byte >> shift) & 3u) != zero_code)
        throw InvalidArgument("pack_genotypes: entry " + entry_name(s, j) +
                              " is stored twice with nonzero values");
      const auto code = static_cast<unsigned>(code_of_count[static_cast<int>(v)]);
      byte = static_cast<std::uint8_t>((byte & ~(3u << shift)) | (code << shift));
    }
  }
  return p;
}

CsrMatrix<double> unpack_genotypes(const PackedGenotypes& packed) {
  packed.validate("unpack_genotypes");
  if (packed.num_variants > std::numeric_limits<std::int32_t>::max())
    throw InvalidArgument("unpack_genotypes: " + std::to_string(packed.num_variants) +
                          " variants; a CsrMatrix holds at most 2^31-1 columns");
  const auto counts = allele_counts_of_codes(packed.counted_allele);
  CsrMatrix<double> a;
  a.num_rows = packed.num_samples;
  a.num_cols = packed.num_variants;
  a.row_offsets.assign(static_cast<std::size_t>(a.num_rows) + 1, 0);
  for (std::int64_t j = 0; j < packed.num_variants; ++j)
    for (std::int64_t s = 0; s < packed.num_samples; ++s)
      a.row_offsets[static_cast<std::size_t>(s) + 1] +=
          counts[static_cast<std::size_t>(packed.code(s, j))] != 0;
  for (std::size_t r = 0; r < static_cast<std::size_t>(a.num_rows); ++r)
    a.row_offsets[r + 1] += a.row_offsets[r];
  a.column_indices.resize(static_cast<std::size_t>(a.row_offsets.back()));
  a.values.resize(a.column_indices.size());
  std::vector<std::int64_t> next(a.row_offsets.begin(), a.row_offsets.end() - 1);
  for (std::int64_t j = 0; j < packed.num_variants; ++j)  // by variant: columns ascend in rows
    for (std::int64_t s = 0; s < packed.num_samples; ++s)
      if (const int v = counts[static_cast<std::size_t>(packed.code(s, j))]) {
        const auto at = static_cast<std::size_t>(next[static_cast<std::size_t>(s)]++);
        a.column_indices[at] = static_cast<std::int32_t>(j);
        a.values[at] = v;
      }
  return a;
}

}  // namespace kcla
