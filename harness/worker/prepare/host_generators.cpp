// Permutations and cumulative offsets on the host; the fit of a distribution to its tensor.
#include "harness/worker/prepare/host_generators.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <unordered_set>

#include <fmt/format.h>

#include "harness/worker/prepare/draws.hpp"

namespace kwb {

std::vector<std::int64_t> random_permutation(std::int64_t n, std::uint64_t key) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
  for (std::int64_t i = 0; i < n; ++i) out[i] = i;
  for (std::int64_t i = n - 1; i > 0; --i) {
    const std::int64_t j = draws::below(draws::element_bits(key, static_cast<std::uint64_t>(i)), i + 1);
    std::swap(out[i], out[j]);
  }
  return out;
}

std::vector<std::int64_t> random_offsets(std::int64_t count, std::int64_t total, std::uint64_t key) {
  const std::int64_t segments = count - 1;
  if (count < 1 || total < 0 || (segments == 0 && total != 0) || total < segments)
    throw std::invalid_argument(fmt::format(
        "offsets: {} offsets cannot split a total of {} into {} positive lengths", count, total, segments));
  if (segments == 0) return {0};
  // Choose segments - 1 distinct cut points in [1, total - 1] (Floyd's algorithm), then sort.
  const std::int64_t pool = total - 1, pick = segments - 1;
  std::unordered_set<std::int64_t> cuts;
  cuts.reserve(static_cast<std::size_t>(pick) * 2);
  for (std::int64_t j = pool - pick; j < pool; ++j) {
    const std::int64_t t = draws::below(draws::element_bits(key, static_cast<std::uint64_t>(j)), j + 1);
    cuts.insert(cuts.count(t) ? j : t);
  }
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(count));
  out.push_back(0);
  for (std::int64_t c : cuts) out.push_back(c + 1);
  std::sort(out.begin() + 1, out.end());
  out.push_back(total);
  return out;
}

std::vector<double> random_doubly_stochastic(std::int64_t count, std::int64_t n, std::uint64_t key) {
  std::vector<std::int64_t> perm(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) perm[i] = i;
  std::vector<std::vector<std::int64_t>> perms;  // all n! permutations, in lexicographic order
  do perms.push_back(perm);
  while (std::next_permutation(perm.begin(), perm.end()));
  const std::int64_t block = n * n;
  std::vector<double> out(static_cast<std::size_t>(count), 0.0);
  std::vector<double> weight(perms.size());
  for (std::int64_t b = 0; b * block < count; ++b) {
    double total = 0;
    for (std::size_t k = 0; k < perms.size(); ++k) {
      const auto draw = static_cast<std::uint64_t>(b) * perms.size() + k;
      weight[k] = -std::log1p(-draws::unit_double(draws::element_bits(key, draw)));  // Exp(1)
      total += weight[k];
    }
    double* m = out.data() + b * block;
    for (std::size_t k = 0; k < perms.size(); ++k)
      for (std::int64_t row = 0; row < n; ++row) m[row * n + perms[k][row]] += weight[k] / total;
  }
  return out;
}

std::optional<std::string> distribution_problem(const Distribution& d, ElemType type,
                                                std::int64_t count) {
  using K = Distribution::Kind;
  const std::string kind(to_string(d.kind));
  const std::string elem(to_string(type));
  const auto max_value = [&](std::int64_t v) -> std::optional<std::string> {
    if (type == ElemType::int32 && v > std::numeric_limits<std::int32_t>::max())
      return fmt::format("{} reaches {}, beyond int32: declare the tensor int64", kind, v);
    return std::nullopt;
  };
  switch (d.kind) {
    case K::normal:
    case K::uniform:
      if (!is_floating(type))
        return fmt::format("{} draws need a floating element type, not {}", kind, elem);
      if (d.kind == K::uniform && !(d.b > d.a))
        return fmt::format("uniform needs low < high, got [{}, {})", d.a, d.b);
      return std::nullopt;
    case K::integers:
      if (!is_integer(type)) return fmt::format("integers need int32 or int64, not {}", elem);
      if (!(d.b > d.a)) return fmt::format("integers need low < high, got [{}, {})", d.a, d.b);
      if (d.ignore_fraction < 0 || d.ignore_fraction > 1)
        return fmt::format("ignore_fraction must be in [0, 1], got {}", d.ignore_fraction);
      return max_value(static_cast<std::int64_t>(d.b) - 1);
    case K::position_ids:
      if (!is_integer(type)) return fmt::format("position_ids need int32 or int64, not {}", elem);
      if (d.period < 1) return fmt::format("position_ids need a period (sequence length) >= 1, got {}", d.period);
      if (d.a < 0) return fmt::format("position_ids need max_start >= 0, got {}", d.a);
      return max_value(static_cast<std::int64_t>(d.a) + d.period - 1);
    case K::permutation:
      if (!is_integer(type)) return fmt::format("permutation needs int32 or int64, not {}", elem);
      return max_value(count - 1);
    case K::offsets:
      if (!is_integer(type)) return fmt::format("offsets need int32 or int64, not {}", elem);
      if (count < 2 || d.total < count - 1)
        return fmt::format("offsets: {} offsets cannot split a total of {} into {} positive lengths",
                           count, d.total, count - 1);
      return max_value(d.total);
    case K::mask:
      if (d.a < 0 || d.a > 1) return fmt::format("mask true fraction must be in [0, 1], got {}", d.a);
      return std::nullopt;
    case K::derived:
      return std::nullopt;  // written by the op's derive_inputs, not drawn
    case K::doubly_stochastic:
      if (!is_floating(type))
        return fmt::format("doubly_stochastic needs a floating element type, not {}", elem);
      if (d.period < 1 || d.period > 6)
        return fmt::format("doubly_stochastic needs a block size n in [1, 6], got {}", d.period);
      if (count % (d.period * d.period) != 0)
        return fmt::format("doubly_stochastic: {} elements are not whole {}x{} blocks", count, d.period,
                           d.period);
      return std::nullopt;
  }
  return "unknown distribution";
}

}  // namespace kwb
