#include <kcla/plink_writer.hpp>

#include <kcla/detail/atomic_file.hpp>
#include <kcla/detail/parallel_tasks.hpp>
#include <kcla/plink.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <future>
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
    block_cols = std::clamp<std::int64_t>((std::int64_t{1} << 25) / std::max<std::int64_t>(rows, 1),
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
  // Every call starts as the code of 0; the last byte's padding bits are 00 (as PLINK's).
  const std::int64_t bytes_per_snp = (rows + 3) / 4;
  const unsigned zeros = code_of[0] * 0x55u;
  const unsigned tail = static_cast<unsigned>(rows % 4);
  const unsigned last_byte = tail == 0 ? zeros : zeros & ((1u << (2 * tail)) - 1u);
  constexpr std::int64_t tile = 256;   // rows per task: a cache line of each variant
  constexpr std::int64_t chunk = 512;  // variants per pass: 32 KiB of codes
  const std::int64_t tiles = (rows + tile - 1) / tile;

  // Two sets of buffers: one block is written by a helper thread while the next is made
  // and packed (the kernel's copy into the page cache was a fifth of the time).
  std::vector<unsigned char> code_buffers[2];
  std::string bim_buffers[2];
  int current = 0;
  std::future<void> pending;  // after the buffers: destroyed (waited for) first
  CsrMatrix<double> block;
  std::int64_t written = 0;
  while (source.next_block(block_cols, block)) {
    auto& codes = code_buffers[current];
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
    codes.resize(static_cast<std::size_t>(width * bytes_per_snp));
    // Each task owns the bytes of `tile` rows in every variant and packs them through a
    // small buffer, `chunk` variants at a time: scattering straight into `codes` strides
    // a page per call and ran at ~14 ns per nonzero.
    detail::run_tasks(options.threads, tiles, [&](std::int64_t t) {
      const std::int64_t r0 = t * tile, r1 = std::min(rows, r0 + tile);
      const std::int64_t first_byte = r0 / 4, bytes = (r1 - r0 + 3) / 4;
      std::vector<std::int64_t> cursor(block.row_offsets.begin() + r0,
                                       block.row_offsets.begin() + r1);
      std::vector<unsigned char> local(static_cast<std::size_t>(chunk * bytes));
      for (std::int64_t c0 = 0; c0 < width; c0 += chunk) {
        const std::int64_t c1 = std::min(width, c0 + chunk);
        std::fill(local.begin(), local.end(), static_cast<unsigned char>(zeros));
        if (r1 == rows)
          for (std::int64_t c = 0; c < c1 - c0; ++c)
            local[static_cast<std::size_t>(c * bytes + bytes - 1)] =
                static_cast<unsigned char>(last_byte);
        for (std::int64_t r = r0; r < r1; ++r) {
          const unsigned shift = 2 * static_cast<unsigned>(r % 4);
          unsigned char* const row_bytes = local.data() + (r - r0) / 4;
          auto k = cursor[static_cast<std::size_t>(r - r0)];
          for (const auto end = block.row_offsets[r + 1]; k < end; ++k) {
            const std::int64_t c = block.column_indices[k];
            if (c >= c1) break;
            const double v = block.values[k];
            if (c < c0)
              throw FormatError(source.name(), "column index " + std::to_string(c) +
                                                   " out of order or range at row " +
                                                   std::to_string(r) + " of the block at column " +
                                                   std::to_string(written));
            if (!(v == 0 || v == 1 || v == 2))
              throw FormatError(source.name(), "value " + std::to_string(v) + " at " +
                                                   describe_entry(r, written + c) +
                                                   " is not an allele count 0, 1 or 2");
            auto& byte = row_bytes[(c - c0) * bytes];
            byte = static_cast<unsigned char>((byte & ~(3u << shift)) |
                                              (code_of[static_cast<int>(v)] << shift));
          }
          cursor[static_cast<std::size_t>(r - r0)] = k;
        }
        for (std::int64_t c = c0; c < c1; ++c)
          std::memcpy(codes.data() + c * bytes_per_snp + first_byte,
                      local.data() + (c - c0) * bytes, static_cast<std::size_t>(bytes));
      }
      for (std::int64_t r = r0; r < r1; ++r)
        if (const auto k = cursor[static_cast<std::size_t>(r - r0)]; k != block.row_offsets[r + 1])
          throw FormatError(source.name(),
                            "column index out of range at " +
                                describe_entry(r, written + block.column_indices[k]));
    });
    auto& lines = bim_buffers[current];
    lines.clear();
    for (std::int64_t c = 0; c < width; ++c) {
      const std::string j = std::to_string(written + c + 1);
      lines += "1 v" + j + " 0 " + j + " A C\n";
    }
    if (pending.valid()) pending.get();  // the other buffers' write (rethrows its error)
    pending = std::async(std::launch::async, [&bed, &bim, &codes, &lines] {
      bed.write(codes.data(), codes.size());
      bim.write(lines);
    });
    current ^= 1;
    written += width;
    if (options.progress) options.progress(written, expected_cols);
  }
  if (pending.valid()) pending.get();
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
