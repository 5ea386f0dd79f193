// Pieces the vectorised kernels share: a pack of elements moved by one wide access, and the
// step from a run-time "vectors per thread" to a compile-time one (so rows stay in registers).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "harness/catalogue/types.hpp"

namespace kwb {

// E elements of T, aligned so that one load or store moves all of them at once.
template <class T, int E>
struct alignas(sizeof(T) * E) Pack {
  T v[E];
};

// Calls fn(std::integral_constant<int, V>{}) for V = vectors_per_thread in {1, 2, 4, 8, 16}.
template <class Fn>
void with_vectors_per_thread(int vectors_per_thread, Fn&& fn) {
  switch (vectors_per_thread) {
    case 1: fn(std::integral_constant<int, 1>{}); break;
    case 2: fn(std::integral_constant<int, 2>{}); break;
    case 4: fn(std::integral_constant<int, 4>{}); break;
    case 8: fn(std::integral_constant<int, 8>{}); break;
    default: fn(std::integral_constant<int, 16>{}); break;
  }
}

// Row-per-block kernels put the row index in blockIdx.x.
inline std::optional<std::string> refuse_rows_beyond_grid(std::int64_t rows) {
  if (rows > 2147483647) return "rows above 2^31-1 exceed the grid's x dimension";
  return std::nullopt;
}

}  // namespace kwb
