// One dimension of a 2D block-cyclic distribution (ScaLAPACK's, with no offset): an extent
// cut into blocks of `block` (the last may be short); block b belongs to process
// b mod procs, which stores its blocks one after the other in global order.
#pragma once

#include <kcla/error.hpp>

#include <algorithm>
#include <cstdint>
#include <string>

namespace kcla {

class BlockCyclic {
 public:
  BlockCyclic() = default;
  BlockCyclic(std::int64_t extent, int block, int procs)
      : extent_(extent), block_(block), procs_(procs) {
    if (extent < 0) throw InvalidArgument("BlockCyclic: negative extent");
    if (block < 1) throw InvalidArgument("BlockCyclic: block size must be positive");
    if (procs < 1) throw InvalidArgument("BlockCyclic: process count must be positive");
    if ((extent + block - 1) / block > (std::int64_t{1} << 30))
      throw InvalidArgument("BlockCyclic: more than 2^30 blocks of " + std::to_string(block));
  }

  std::int64_t extent() const { return extent_; }
  int block() const { return block_; }
  int procs() const { return procs_; }
  int blocks() const { return static_cast<int>((extent_ + block_ - 1) / block_); }
  /// Size of global block b (block, or less for the last one).
  int block_extent(int b) const {
    return static_cast<int>(
        std::min<std::int64_t>(block_, extent_ - static_cast<std::int64_t>(b) * block_));
  }
  std::int64_t block_start(int b) const { return static_cast<std::int64_t>(b) * block_; }

  int owner(int b) const { return b % procs_; }
  /// Index of global block b among its owner's blocks.
  int local_block(int b) const { return b / procs_; }
  /// Global index of process `proc`'s local block `lb`.
  int global_block(int proc, int lb) const { return proc + lb * procs_; }
  /// How many blocks process `proc` holds.
  int local_blocks(int proc) const {
    const int n = blocks();
    return proc < n ? (n - proc + procs_ - 1) / procs_ : 0;
  }
  /// Rows (or columns) process `proc` holds: full blocks, and the short last block if it
  /// owns it (always its last local block).
  std::int64_t local_extent(int proc) const {
    const int lb = local_blocks(proc);
    if (lb == 0) return 0;
    return static_cast<std::int64_t>(lb - 1) * block_ + block_extent(global_block(proc, lb - 1));
  }

 private:
  std::int64_t extent_ = 0;
  int block_ = 1, procs_ = 1;
};

}  // namespace kcla
