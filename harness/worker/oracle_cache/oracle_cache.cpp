// Entries on disk: read and check, write atomically, evict (unused for a week, then the least oracle
// time saved per byte), list, clear.
#include "harness/worker/oracle_cache/oracle_cache.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "harness/record/atomic_file.hpp"
#include "harness/worker/oracle_cache/oracle_entry.hpp"

namespace kwb {
namespace {

namespace fs = std::filesystem;

// A temp file this old belongs to a writer that died: no entry takes an hour to write.
constexpr auto kStaleTempAge = std::chrono::hours(1);
// An entry unused this long answers a build, a suite or a shape no longer run: it goes before any
// entry in use, whatever it would save.
constexpr auto kUnusedEntryAge = std::chrono::hours(24 * 7);

bool starts_with_digest(const std::string& name) {
  return name.size() >= 32 && std::all_of(name.begin(), name.begin() + 32, [](char c) {
           return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
         });
}

struct FileOnDisk {
  fs::path path;
  std::uint64_t bytes = 0;
  fs::file_time_type used;
};

// The oracle time an entry's file says it saves (0 when it cannot be read or is of another format:
// such an entry is a miss anyway).
double saved_ms(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(kOracleEntryHeadBytes, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  if (in.gcount() != static_cast<std::streamsize>(head.size())) return 0;
  return peek_oracle_entry_compute_ms(head).value_or(0);
}

// The folder's entries and temp files (anything else is left out). A file that vanishes while
// listed (another worker evicted it) is simply not there.
void list_files(const fs::path& dir, std::vector<FileOnDisk>* entries, std::vector<FileOnDisk>* temps) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const bool entry = is_oracle_entry_name(name);
    if (!entry && !is_oracle_temp_name(name)) continue;
    std::error_code file_ec;
    FileOnDisk f{it->path(), static_cast<std::uint64_t>(fs::file_size(it->path(), file_ec)), {}};
    if (file_ec) continue;
    f.used = fs::last_write_time(it->path(), file_ec);
    if (file_ec) continue;
    if (entry && entries) entries->push_back(std::move(f));
    if (!entry && temps) temps->push_back(std::move(f));
  }
}

std::chrono::system_clock::time_point to_system(fs::file_time_type t) {
  return std::chrono::time_point_cast<std::chrono::system_clock::duration>(std::chrono::file_clock::to_sys(t));
}

// An entry (or one about to be written) as eviction weighs it.
struct Candidate {
  fs::path path;  // empty: the entry about to be written
  std::uint64_t bytes = 0;
  fs::file_time_type used;
  bool unused = false;  // unused for kUnusedEntryAge
  double ms_per_byte = 0;
};

Candidate candidate_of(const FileOnDisk& e, fs::file_time_type now) {
  return {e.path, e.bytes, e.used, now - e.used > kUnusedEntryAge,
          e.bytes > 0 ? saved_ms(e.path) / static_cast<double>(e.bytes) : 0.0};
}

// The order entries go in (see the header): unused for a week, oldest first; then the least oracle
// time saved per byte; the least recently used first among equals.
void sort_for_eviction(std::vector<Candidate>& order) {
  std::sort(order.begin(), order.end(), [](const Candidate& a, const Candidate& b) {
    if (a.unused != b.unused) return a.unused;
    if (!a.unused && a.ms_per_byte != b.ms_per_byte) return a.ms_per_byte < b.ms_per_byte;
    return a.used < b.used;
  });
}

}  // namespace

bool is_oracle_entry_name(const std::string& name) {
  return name.size() == 32 + kOracleEntrySuffix.size() && starts_with_digest(name) &&
         std::string_view(name).substr(32) == kOracleEntrySuffix;
}

bool is_oracle_temp_name(const std::string& name) {
  const std::string temp_mark = std::string(kOracleEntrySuffix) + ".tmp.";
  return starts_with_digest(name) && name.compare(32, temp_mark.size(), temp_mark) == 0;
}

std::optional<std::string> check_cache_folder(const fs::path& dir) {
  if (dir.empty()) return std::string("the cache folder is an empty path");
  std::error_code ec;
  const fs::path target = fs::absolute(dir, ec);
  if (ec) return fmt::format("cannot resolve the folder {}: {}", dir.string(), ec.message());
  // The folder itself, or the nearest folder above it that exists (where the first store will
  // create it): checked, not created, so that a run that never reaches a GPU leaves nothing behind.
  fs::path existing = target;
  while (!fs::exists(existing, ec) && existing.has_parent_path() && existing.parent_path() != existing)
    existing = existing.parent_path();
  if (!fs::is_directory(existing, ec))
    return existing == target ? fmt::format("{} is not a folder", dir.string())
                              : fmt::format("cannot create the folder {}: {} is not a folder", dir.string(),
                                            existing.string());
  if (::access(existing.c_str(), W_OK | X_OK) != 0)
    return existing == target
               ? fmt::format("cannot write in the folder {}: {}", dir.string(), std::strerror(errno))
               : fmt::format("cannot create the folder {} in {}: {}", dir.string(), existing.string(),
                             std::strerror(errno));
  return std::nullopt;
}

OracleCache::OracleCache(fs::path dir, std::uint64_t max_bytes, Warn warn)
    : dir_(std::move(dir)), max_bytes_(max_bytes), warn_(std::move(warn)) {
  if (!warn_) warn_ = [](const std::string& line) { std::cerr << "kwb: oracle cache: " << line << "\n"; };
}

std::optional<std::vector<HostTensor>> OracleCache::load(const OracleKey& key, std::string* miss) const {
  const auto missed = [&](std::string why) -> std::optional<std::vector<HostTensor>> {
    if (miss) *miss = std::move(why);
    return std::nullopt;
  };
  const fs::path path = entry_path(key);
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return missed("no entry");
  // The open file stays readable whole even if another process removes or replaces it meanwhile.
  const std::streamoff size = in.tellg();
  if (size < 0) return missed(fmt::format("{}: cannot read", path.string()));
  std::string bytes(static_cast<std::size_t>(size), '\0');
  in.seekg(0);
  in.read(bytes.data(), size);
  if (in.gcount() != size) return missed(fmt::format("{}: cannot read", path.string()));
  std::string why;
  std::optional<OracleEntry> entry = decode_oracle_entry(bytes, &why);
  if (!entry) {
    std::error_code ec;
    fs::remove(path, ec);  // rebuilt by the store that follows the miss
    return missed(fmt::format("{}: {}; removed", path.string(), why));
  }
  if (entry->key_text != key.text)  // a digest collision: the store that follows replaces it
    return missed(fmt::format("{}: holds another key with the same digest", path.string()));
  std::error_code ec;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);  // used now (gone meanwhile: no matter)
  return std::move(entry->outputs);
}

OracleCache::StoreResult OracleCache::store(const OracleKey& key, const std::vector<HostTensor>& outputs,
                                           double compute_ms) {
  if (writes_failed_.load()) return StoreResult::failed;
  const std::uint64_t size = encoded_oracle_entry_size(key.text, outputs);
  if (size > max_bytes_ / 4) return StoreResult::too_large;
  // Not written at all when it would be the first to go: a full cache of answers dearer per byte.
  if (would_be_evicted(size, compute_ms)) return StoreResult::not_worth_a_place;
  const std::string bytes = encode_oracle_entry(key.text, outputs, compute_ms);
  try {
    atomic_write_file(entry_path(key), bytes);
  } catch (const std::exception& e) {
    if (!writes_failed_.exchange(true))
      warn_(fmt::format("{}; no further entries are written by this process (runs go on, computing every "
                        "oracle; `kwb cache show` says where the cache is)", e.what()));
    return StoreResult::failed;
  }
  evict_to_bound();
  return StoreResult::stored;
}

void OracleCache::evict_to_bound() const {
  std::vector<FileOnDisk> entries, temps;
  list_files(dir_, &entries, &temps);
  const auto now = fs::file_time_type::clock::now();
  std::error_code ec;
  for (const FileOnDisk& t : temps)
    if (now - t.used > kStaleTempAge) fs::remove(t.path, ec);
  std::uint64_t total = 0;
  for (const FileOnDisk& e : entries) total += e.bytes;
  if (total <= max_bytes_) return;
  std::vector<Candidate> order;
  order.reserve(entries.size());
  for (const FileOnDisk& e : entries) order.push_back(candidate_of(e, now));
  sort_for_eviction(order);
  for (const Candidate& c : order) {
    if (total <= max_bytes_) break;
    fs::remove(c.path, ec);  // already gone (another worker evicted it): counted out all the same
    total -= c.bytes;
  }
}

bool OracleCache::would_be_evicted(std::uint64_t bytes, double compute_ms) const {
  std::vector<FileOnDisk> entries;
  list_files(dir_, &entries, nullptr);
  std::uint64_t total = bytes;
  for (const FileOnDisk& e : entries) total += e.bytes;
  if (total <= max_bytes_) return false;
  const auto now = fs::file_time_type::clock::now();
  std::vector<Candidate> order;
  order.reserve(entries.size() + 1);
  for (const FileOnDisk& e : entries) order.push_back(candidate_of(e, now));
  order.push_back({{}, bytes, now, false, bytes > 0 ? compute_ms / static_cast<double>(bytes) : 0.0});
  sort_for_eviction(order);
  for (const Candidate& c : order) {
    if (total <= max_bytes_) return false;
    if (c.path.empty()) return true;
    total -= c.bytes;
  }
  return false;
}

OracleCacheContents OracleCache::contents() const {
  std::vector<FileOnDisk> entries, temps;
  list_files(dir_, &entries, &temps);
  OracleCacheContents c;
  c.entries = entries.size();
  for (const FileOnDisk& e : entries) {
    c.bytes += e.bytes;
    c.saved_ms += saved_ms(e.path);
    const auto used = to_system(e.used);
    if (!c.oldest_use || used < *c.oldest_use) c.oldest_use = used;
    if (!c.newest_use || used > *c.newest_use) c.newest_use = used;
  }
  c.temp_files = temps.size();
  for (const FileOnDisk& t : temps) c.temp_bytes += t.bytes;
  return c;
}

OracleCacheClearOutcome OracleCache::clear() const {
  std::vector<FileOnDisk> files;
  list_files(dir_, &files, &files);
  OracleCacheClearOutcome out;
  for (const FileOnDisk& f : files) {
    std::error_code ec;
    if (fs::remove(f.path, ec)) {
      ++out.removed;
      out.bytes += f.bytes;
    } else if (ec) {
      out.errors.push_back(fmt::format("{}: {}", f.path.string(), ec.message()));
    }
  }
  return out;
}

}  // namespace kwb
