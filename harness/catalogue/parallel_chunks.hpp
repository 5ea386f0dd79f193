// Host work over many elements (decoding a tensor, comparing an output with the oracle) spread
// over the host's cores in fixed chunks.
//
// The chunks depend on the element count and the chunk size alone, never on the number of
// threads: a caller that keeps one partial result per chunk and combines them in chunk order gets
// the same answer, to the last bit, on every machine.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace kwb {

// Elements per chunk: large enough that a chunk's work dwarfs handing it out.
inline constexpr std::int64_t kHostChunkElements = std::int64_t{1} << 20;

inline std::int64_t chunk_count(std::int64_t n, std::int64_t chunk = kHostChunkElements) {
  return n <= 0 ? 0 : (n + chunk - 1) / chunk;
}

// Calls fn(chunk_index, begin, end) once for every chunk of [0, n), on up to the host's hardware
// threads (inline when there is one chunk). The first exception a chunk throws is rethrown here
// after every thread has stopped.
template <class F>
void parallel_chunks(std::int64_t n, F&& fn, std::int64_t chunk = kHostChunkElements) {
  const std::int64_t chunks = chunk_count(n, chunk);
  const auto run = [&](std::int64_t c) { fn(c, c * chunk, std::min(n, (c + 1) * chunk)); };
  const std::int64_t threads =
      std::min<std::int64_t>(chunks, std::max(1u, std::thread::hardware_concurrency()));
  if (threads <= 1) {
    for (std::int64_t c = 0; c < chunks; ++c) run(c);
    return;
  }
  std::atomic<std::int64_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto work = [&] {
    for (std::int64_t c = next.fetch_add(1); c < chunks; c = next.fetch_add(1)) {
      try {
        run(c);
      } catch (...) {
        std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next.store(chunks);  // the other threads stop after their current chunk
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::int64_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {  // no more threads (a container's limit): fewer do it all
      break;
    }
  }
  work();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace kwb
