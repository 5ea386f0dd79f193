// The oracle cache on disk: the expected outputs of a case group, kept between runs.
//
// The fp64 oracles run on the host and cost seconds for a large group; their answer depends only
// on what its key holds (oracle_key.hpp), so it is computed once and read back by every later run
// and every variant. One file per key in one folder, named by the key's digest:
// - Writes are atomic (temp file + rename, harness/record/atomic_file.hpp): a reader sees a whole
//   entry or none, so the workers of several GPUs (one process each) can share the folder.
// - A read that finds no file, a damaged or cut file, another format or another key is a miss;
//   a damaged entry is removed, and the caller's store after computing rebuilds it. An entry
//   removed by another process while it is read is a miss too.
// - Size is bounded: after each store, entries are removed until the folder is within the bound.
//   Those unused for a week go first (file times: a hit marks its entry used), oldest first; then
//   those that save the least oracle time per byte (each entry records what its oracle took), the
//   least recently used first among equals. A sweep larger than the bound so keeps the answers
//   dearest to compute for their size, where least-recently-used order would turn the whole cache
//   over before any entry's next use. An entry above a quarter of the bound is not stored (it
//   would evict most of the others).
// Only files named like entries (32 hex digits + ".kwb-oracle") and their temp files are ever
// counted or removed, so a folder given by mistake loses nothing else.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/catalogue/host_tensor.hpp"
#include "harness/worker/oracle_cache/oracle_key.hpp"

namespace kwb {

// What the folder holds.
struct OracleCacheContents {
  std::size_t entries = 0;
  std::uint64_t bytes = 0;
  double saved_ms = 0;  // what the entries' oracles took to compute: the time a run that hits them all saves
  // The least and the most recently used entry's time (written or last read); none when empty.
  std::optional<std::chrono::system_clock::time_point> oldest_use, newest_use;
  // Temp files of writes in flight, or left by a process that died while writing.
  std::size_t temp_files = 0;
  std::uint64_t temp_bytes = 0;
};

struct OracleCacheClearOutcome {
  std::size_t removed = 0;
  std::uint64_t bytes = 0;
  std::vector<std::string> errors;  // "<path>: <why>" for each file that could not be removed
};

class OracleCache {
 public:
  // Problems a worker meets while writing (the disk filled up) are said through `warn` once;
  // the default writes one line to stderr (the worker's log).
  using Warn = std::function<void(const std::string&)>;
  OracleCache(std::filesystem::path dir, std::uint64_t max_bytes, Warn warn = {});

  const std::filesystem::path& dir() const { return dir_; }
  std::uint64_t max_bytes() const { return max_bytes_; }
  std::filesystem::path entry_path(const OracleKey& key) const { return dir_ / key.file_name(); }

  // The outputs stored for `key`, or nullopt (`miss`, when given, says why). A hit marks the
  // entry used now. Never throws for what it finds on disk.
  std::optional<std::vector<HostTensor>> load(const OracleKey& key, std::string* miss = nullptr) const;

  // not_worth_a_place: the folder is full of entries that save more oracle time per byte; the
  // entry would have been the first evicted, so it is not written.
  enum class StoreResult { stored, too_large, not_worth_a_place, failed };
  // Writes the entry, with what its oracle took (compute_ms, its worth when space is short), then
  // evicts down to the bound. A failed write is said once (through warn) and turns later stores of
  // this cache into no-ops; reads go on. Never throws.
  StoreResult store(const OracleKey& key, const std::vector<HostTensor>& outputs, double compute_ms = 0);

  // Removes entries in the order above until the folder is within the bound, and temp files older
  // than an hour (a writer that died).
  void evict_to_bound() const;

  // Whether an entry of `bytes` whose oracle took compute_ms would be the first to go if stored now.
  bool would_be_evicted(std::uint64_t bytes, double compute_ms) const;

  OracleCacheContents contents() const;
  // Removes every entry and temp file (nothing else).
  OracleCacheClearOutcome clear() const;

 private:
  std::filesystem::path dir_;
  std::uint64_t max_bytes_;
  Warn warn_;
  std::atomic<bool> writes_failed_{false};
};

// Whether `name` is an entry's file name, or an entry's temp file's.
bool is_oracle_entry_name(const std::string& name);
bool is_oracle_temp_name(const std::string& name);

// nullopt when `dir` is a folder this process may write in, or does not exist yet and the nearest
// folder above it that does is one; else what is wrong, naming the folder. Creates nothing. (A
// full disk or a quota shows only when an entry is written: OracleCache::store says it then.)
std::optional<std::string> check_cache_folder(const std::filesystem::path& dir);

}  // namespace kwb
