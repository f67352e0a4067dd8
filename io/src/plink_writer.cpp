#include <kcla/plink_writer.hpp>

#include <kcla/detail/atomic_file.hpp>
#include <kcla/detail/parallel_tasks.hpp>
#include <kcla/plink.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>
#include <vector>

namespace kcla {

namespace {

/// The .bed code of each allele count 0, 1, 2 when `counted` is what the counts count.
std::array<std::uint8_t, 3> codes_of_values(CountedAllele counted) {
  using namespace bed_code;
  return counted == CountedAllele::a1 ? std::array<std::uint8_t, 3>{hom_a2, het, hom_a1}
                                      : std::array<std::uint8_t, 3>{hom_a1, het, hom_a2};
}

std::string describe_entry(std::int64_t row, std::int64_t column) {
  return "row " + std::to_string(row) + ", column " + std::to_string(column);
}

}  // namespace

std::int64_t write_plink(ColumnBlockSource& source, const std::string& base_path,
                         const PlinkWriteOptions& options) {
  const std::string base = plink_base_name(base_path);
  const std::int64_t rows = source.num_rows(), expected_cols = source.num_cols();
  if (rows < 0) throw FormatError(source.name(), "negative number of rows");
  std::int64_t block_cols = options.block_cols;
  if (block_cols < 0)
    throw InvalidArgument("write_plink: block_cols must be >= 0 (got " +
                          std::to_string(block_cols) + ")");
  if (block_cols == 0)
    block_cols = std::clamp<std::int64_t>((std::int64_t{1} << 27) / std::max<std::int64_t>(rows, 1),
                                          64, std::int64_t{1} << 20);

  detail::AtomicFile fam(base + ".fam"), bim(base + ".bim"), bed(base + ".bed");
  std::string text;
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::string id = "s" + std::to_string(i + 1);
    text += id + ' ' + id + " 0 0 0 -9\n";
    if (text.size() > (1u << 20)) fam.write(text), text.clear();
  }
  fam.write(text);
  const unsigned char magic[3] = {0x6c, 0x1b, 0x01};
  bed.write(magic, 3);

  const auto code_of = codes_of_values(options.counted_allele);
  // Every call starts as the code of 0; the last byte's padding bits stay 00 (as PLINK).
  const std::int64_t bytes_per_snp = (rows + 3) / 4;
  const unsigned zeros = code_of[0] * 0x55u;
  const unsigned tail = static_cast<unsigned>(rows % 4);
  const unsigned last_byte = tail == 0 ? zeros : zeros & ((1u << (2 * tail)) - 1u);
  constexpr std::int64_t tile = 256;  // rows per task: 64 bytes of each variant
  const std::int64_t tiles = (rows + tile - 1) / tile;

  std::vector<unsigned char> codes;
  CsrMatrix<double> block;
  std::int64_t written = 0;
  while (source.next_block(block_cols, block)) {
    const std::int64_t width = block.num_cols;
    if (block.num_rows != rows || width < 1 || width > block_cols ||
        block.row_offsets.size() != static_cast<std::size_t>(rows) + 1 ||
        block.values.size() != block.column_indices.size() ||
        block.row_offsets.back() != block.nnz())
      throw FormatError(source.name(), "malformed block at column " + std::to_string(written) +
                                           " (" + std::to_string(block.num_rows) + " x " +
                                           std::to_string(width) + ")");
    if (expected_cols >= 0 && written + width > expected_cols)
      throw FormatError(source.name(),
                        "more columns than the " + std::to_string(expected_cols) + " announced");
    codes.assign(static_cast<std::size_t>(width * bytes_per_snp),
                 static_cast<unsigned char>(zeros));
    if (last_byte != zeros)
      for (std::int64_t c = 0; c < width; ++c)
        codes[static_cast<std::size_t>((c + 1) * bytes_per_snp - 1)] =
            static_cast<unsigned char>(last_byte);
    // Tasks own disjoint byte ranges of every variant (tile is a multiple of 4 rows).
    detail::run_tasks(options.threads, tiles, [&](std::int64_t t) {
      for (std::int64_t r = t * tile; r < std::min(rows, (t + 1) * tile); ++r) {
        const unsigned shift = 2 * static_cast<unsigned>(r % 4);
        for (auto k = block.row_offsets[r]; k < block.row_offsets[r + 1]; ++k) {
          const std::int64_t c = block.column_indices[k];
          const double v = block.values[k];
          if (c < 0 || c >= width)
            throw FormatError(source.name(),
                              "column index out of range at " + describe_entry(r, written + c));
          if (!(v == 0 || v == 1 || v == 2))
            throw FormatError(source.name(), "value " + std::to_string(v) + " at " +
                                                 describe_entry(r, written + c) +
                                                 " is not an allele count 0, 1 or 2");
          auto& byte = codes[static_cast<std::size_t>(c * bytes_per_snp + r / 4)];
          byte = static_cast<unsigned char>((byte & ~(3u << shift)) |
                                            (code_of[static_cast<int>(v)] << shift));
        }
      }
    });
    bed.write(codes.data(), codes.size());
    text.clear();
    for (std::int64_t c = 0; c < width; ++c) {
      const std::string j = std::to_string(written + c + 1);
      text += "1 v" + j + " 0 " + j + " A C\n";
    }
    bim.write(text);
    written += width;
    if (options.progress) options.progress(written, expected_cols);
  }
  if (expected_cols >= 0 && written != expected_cols)
    throw FormatError(source.name(), "delivered " + std::to_string(written) + " columns, not the " +
                                         std::to_string(expected_cols) + " announced");
  std::remove((base + ".bed").c_str());  // no old .bed beside the new .bim/.fam meanwhile
  bim.commit();
  fam.commit();
  bed.commit();
  return written;
}

}  // namespace kcla
