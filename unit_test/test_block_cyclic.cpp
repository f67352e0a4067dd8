// BlockCyclic against a brute-force owner list: every block has one owner, local indices
// count up in global order, and local extents add up to the extent.
#include <kcla/block_cyclic.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

TEST(BlockCyclic, MatchesABruteForceAssignment) {
  for (std::int64_t extent : {0, 1, 7, 8, 9, 63, 64, 65, 200})
    for (int block : {1, 3, 8, 64})
      for (int procs : {1, 2, 3, 5}) {
        const kcla::BlockCyclic map(extent, block, procs);
        const int blocks = static_cast<int>((extent + block - 1) / block);
        ASSERT_EQ(map.blocks(), blocks);
        std::vector<int> seen(static_cast<std::size_t>(procs), 0);
        std::vector<std::int64_t> rows(static_cast<std::size_t>(procs), 0);
        for (int b = 0; b < blocks; ++b) {
          const int owner = b % procs;
          ASSERT_EQ(map.owner(b), owner);
          ASSERT_EQ(map.local_block(b), seen[owner]);
          ASSERT_EQ(map.global_block(owner, seen[owner]), b);
          const std::int64_t width =
              std::min<std::int64_t>(block, extent - std::int64_t{b} * block);
          ASSERT_EQ(map.block_extent(b), width);
          ASSERT_EQ(map.block_start(b), std::int64_t{b} * block);
          ++seen[owner];
          rows[owner] += width;
        }
        std::int64_t total = 0;
        for (int p = 0; p < procs; ++p) {
          EXPECT_EQ(map.local_blocks(p), seen[p]);
          EXPECT_EQ(map.local_extent(p), rows[p]);
          total += map.local_extent(p);
        }
        EXPECT_EQ(total, extent);
      }
}

TEST(BlockCyclic, RejectsBadShapes) {
  EXPECT_THROW(kcla::BlockCyclic(-1, 8, 1), kcla::InvalidArgument);
  EXPECT_THROW(kcla::BlockCyclic(10, 0, 1), kcla::InvalidArgument);
  EXPECT_THROW(kcla::BlockCyclic(10, 8, 0), kcla::InvalidArgument);
}

}  // namespace
