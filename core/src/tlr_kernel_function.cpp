// Point sets for kernel matrices.
#include <kcla/error.hpp>
#include <kcla/tlr_kernel_function.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace kcla {

PointSet morton_points(std::int64_t n, int dim, std::uint64_t seed) {
  if (dim < 1 || dim > 3) throw InvalidArgument("morton_points: dimension must be 1, 2 or 3");
  if (n < 0) throw InvalidArgument("morton_points: negative point count");
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0, 1);
  const int bits = dim == 1 ? 62 : dim == 2 ? 31 : 21;  // at most 63 bits of code
  std::vector<std::pair<std::uint64_t, std::int64_t>> order(static_cast<std::size_t>(n));
  std::vector<double> coords(static_cast<std::size_t>(n * dim));
  for (std::int64_t p = 0; p < n; ++p) {
    std::uint64_t code = 0;
    std::uint64_t cell[3] = {0, 0, 0};
    for (int d = 0; d < dim; ++d) {
      const double x = u(gen);
      coords[static_cast<std::size_t>(p * dim + d)] = x;
      cell[d] = std::min<std::uint64_t>(static_cast<std::uint64_t>(x * double(1ULL << bits)),
                                        (1ULL << bits) - 1);
    }
    for (int b = bits - 1; b >= 0; --b)
      for (int d = 0; d < dim; ++d) code = (code << 1) | ((cell[d] >> b) & 1u);
    order[static_cast<std::size_t>(p)] = {code, p};
  }
  std::sort(order.begin(), order.end());
  PointSet s;
  s.dimension = dim;
  s.coordinates.reserve(coords.size());
  for (const auto& [code, p] : order)
    for (int d = 0; d < dim; ++d)
      s.coordinates.push_back(coords[static_cast<std::size_t>(p * dim + d)]);
  return s;
}

}  // namespace kcla
