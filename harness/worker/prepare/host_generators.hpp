// Generators that need the whole tensor at once, run on the host (then copied to the device),
// and the check that a distribution fits a tensor's element type and size.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/catalogue/registry.hpp"

namespace kwb {

// A random permutation of 0 .. n-1 (Fisher-Yates on the counter-based hash of `key`).
std::vector<std::int64_t> random_permutation(std::int64_t n, std::uint64_t key);

// `count` monotone offsets 0 = o_0 < o_1 < ... < o_{count-1} = total: cu_seqlens of count-1
// sequences of random positive lengths (a uniformly random composition of `total`). Needs
// count >= 2 and total >= count - 1; count == 1 gives {total} only when total == 0.
std::vector<std::int64_t> random_offsets(std::int64_t count, std::int64_t total, std::uint64_t key);

// `count` values, consecutive n x n row-major blocks (count a multiple of n * n, n <= 6), each
// the convex combination sum_k w_k P_k of the n! permutation matrices P_k, with weights drawn
// from a flat Dirichlet (normalised exponential draws): every row and column sums to 1.
std::vector<double> random_doubly_stochastic(std::int64_t count, std::int64_t n, std::uint64_t key);

// nullopt when `dist` can fill `count` elements of `type`; otherwise what is wrong, for the
// message that names the op and tensor.
std::optional<std::string> distribution_problem(const Distribution& dist, ElemType type,
                                                std::int64_t count);

}  // namespace kwb
