// Open-addressing hash map from 64-bit keys to 64-bit values (linear probing, power-of-
// two capacity, load factor <= 1/2). Host-only helper for the encoders.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace kcla::detail {

inline std::uint64_t mix64(std::uint64_t x) {
  // splitmix64 finaliser: cheap and spreads consecutive keys.
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

class HashMap64 {
 public:
  explicit HashMap64(std::size_t expected = 16) { rehash(capacity_for(expected)); }

  /// Inserts key -> value unless present; returns (stored value, inserted?).
  std::pair<std::int64_t, bool> insert(std::uint64_t key, std::int64_t value) {
    if (2 * (size_ + 1) > slots_.size()) rehash(slots_.size() * 2);
    std::size_t i = mix64(key) & mask_;
    while (slots_[i].value != kEmpty) {
      if (slots_[i].key == key) return {slots_[i].value, false};
      i = (i + 1) & mask_;
    }
    slots_[i] = {key, value};
    ++size_;
    return {value, true};
  }

  /// The value stored for key, or -1.
  std::int64_t find(std::uint64_t key) const {
    std::size_t i = mix64(key) & mask_;
    while (slots_[i].value != kEmpty) {
      if (slots_[i].key == key) return slots_[i].value;
      i = (i + 1) & mask_;
    }
    return -1;
  }

  std::size_t size() const { return size_; }

 private:
  static constexpr std::int64_t kEmpty = -1;
  struct Slot {
    std::uint64_t key = 0;
    std::int64_t value = kEmpty;
  };
  static std::size_t capacity_for(std::size_t n) {
    std::size_t c = 16;
    while (c < 2 * n) c *= 2;
    return c;
  }
  void rehash(std::size_t capacity) {
    std::vector<Slot> old(capacity);
    old.swap(slots_);
    mask_ = capacity - 1;
    size_ = 0;
    for (const auto& s : old)
      if (s.value != kEmpty) insert(s.key, s.value);
  }
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace kcla::detail
