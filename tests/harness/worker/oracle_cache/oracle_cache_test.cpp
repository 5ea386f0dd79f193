// The oracle cache on disk: hits, misses, damaged entries, the size bound (week-old entries first,
// then the least oracle time saved per byte, then the least recently used; oversized entries refused), an unwritable folder, and concurrent writers of one key.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <thread>

#include "harness/worker/oracle_cache/oracle_cache.hpp"
#include "harness/worker/oracle_cache/oracle_entry.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

OracleKey key_named(const std::string& op, std::uint64_t seed = 1) {
  OracleKeyParts parts;
  parts.op = op;
  parts.shape.axes = {{"rows", 64}};
  parts.seed = seed;
  parts.plan.axis = "rows";
  parts.plan.axis_size = 64;
  const std::vector<HostTensor> inputs{{"x", {64}, std::vector<double>(64, 0.5)}};
  return make_oracle_key(parts, key_inputs(inputs), {{"y", {64}, {}}});
}

// `n` seeded values with a NaN, an infinity and a minus zero among them, and magnitudes.
std::vector<HostTensor> outputs_of(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  HostTensor y{"y", {static_cast<std::int64_t>(n)}, std::vector<double>(n)};
  for (double& v : y.values) v = normal(rng);
  y.values[0] = NAN;
  y.values[1] = -INFINITY;
  y.values[2] = -0.0;
  y.abs_sum = y.values;
  y.root_sum_sq = y.values;
  return {y};
}

void expect_same_bits(const std::vector<HostTensor>& a, const std::vector<HostTensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].dims, b[i].dims);
    ASSERT_EQ(a[i].values.size(), b[i].values.size());
    EXPECT_EQ(std::memcmp(a[i].values.data(), b[i].values.data(), a[i].values.size() * 8), 0);
    ASSERT_EQ(a[i].abs_sum.size(), b[i].abs_sum.size());
    EXPECT_EQ(std::memcmp(a[i].abs_sum.data(), b[i].abs_sum.data(), a[i].abs_sum.size() * 8), 0);
    ASSERT_EQ(a[i].root_sum_sq.size(), b[i].root_sum_sq.size());
    EXPECT_EQ(std::memcmp(a[i].root_sum_sq.data(), b[i].root_sum_sq.data(), a[i].root_sum_sq.size() * 8), 0);
  }
}

std::uint64_t entry_bytes(std::size_t n) {
  return encode_oracle_entry(key_named("op_a").text, outputs_of(n, 1)).size();
}

void set_age(const fs::path& path, std::chrono::seconds age) {
  fs::last_write_time(path, fs::file_time_type::clock::now() - age);
}

TEST(OracleCache, AStoredAnswerIsReadBackBitForBitAndAnUnknownKeyIsAMiss) {
  TempDir dir;
  OracleCache cache(dir / "oracle", 1 << 20);
  const OracleKey key = key_named("op_a");
  std::string miss;
  EXPECT_FALSE(cache.load(key, &miss));
  EXPECT_EQ(miss, "no entry");
  const auto outputs = outputs_of(100, 3);
  ASSERT_EQ(cache.store(key, outputs), OracleCache::StoreResult::stored);  // the folder is created
  EXPECT_TRUE(fs::is_regular_file(cache.entry_path(key)));
  const auto back = cache.load(key, &miss);
  ASSERT_TRUE(back) << miss;
  expect_same_bits(*back, outputs);
  EXPECT_FALSE(cache.load(key_named("op_a", 2)));
}

TEST(OracleCache, ADamagedOrCutEntryIsAMissAndIsRemoved) {
  TempDir dir;
  OracleCache cache(dir.path(), 1 << 20);
  const OracleKey key = key_named("op_a");
  for (const std::string& damage : {std::string("cut"), std::string("flip"), std::string("garbage")}) {
    ASSERT_EQ(cache.store(key, outputs_of(50, 4)), OracleCache::StoreResult::stored);
    const fs::path path = cache.entry_path(key);
    std::string bytes;
    {
      std::ifstream in(path, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    if (damage == "cut") bytes.resize(bytes.size() / 2);
    if (damage == "flip") bytes[bytes.size() / 2] ^= 0x10;
    if (damage == "garbage") bytes = "not an entry at all";
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    std::string miss;
    EXPECT_FALSE(cache.load(key, &miss)) << damage;
    EXPECT_NE(miss.find("removed"), std::string::npos) << miss;
    EXPECT_FALSE(fs::exists(path)) << damage;
  }
}

TEST(OracleCache, AnEntryOfAnotherKeyUnderTheSameNameIsAMiss) {
  // What a digest collision would look like: the file named by the key holds another key's answer.
  TempDir dir;
  OracleCache cache(dir.path(), 1 << 20);
  const OracleKey wanted = key_named("op_a");
  OracleKey other = key_named("op_b");
  other.digest = wanted.digest;  // same file name, other text
  ASSERT_EQ(cache.store(other, outputs_of(10, 5)), OracleCache::StoreResult::stored);
  std::string miss;
  EXPECT_FALSE(cache.load(wanted, &miss));
  EXPECT_NE(miss.find("another key"), std::string::npos) << miss;
  EXPECT_TRUE(cache.load(other));
}

TEST(OracleCache, TheBoundEvictsTheLeastRecentlyUsedEntriesFirst) {
  TempDir dir;
  const std::uint64_t one = entry_bytes(1000);  // every entry below is this size
  // Room for four entries and a half (each one then under a quarter of the bound).
  OracleCache cache(dir.path(), 4 * one + one / 2);
  std::vector<OracleKey> keys;
  for (const char* op : {"op_a", "op_b", "op_c", "op_d", "op_e"}) keys.push_back(key_named(op));
  for (int i = 0; i < 4; ++i) ASSERT_EQ(cache.store(keys[i], outputs_of(1000, 6)), OracleCache::StoreResult::stored);
  for (int i = 0; i < 4; ++i) set_age(cache.entry_path(keys[i]), std::chrono::seconds(400 - 100 * i));
  ASSERT_TRUE(cache.load(keys[0]));  // a hit: the oldest written is now the most recently used
  ASSERT_EQ(cache.store(keys[4], outputs_of(1000, 7)), OracleCache::StoreResult::stored);
  EXPECT_TRUE(fs::exists(cache.entry_path(keys[0])));
  EXPECT_FALSE(fs::exists(cache.entry_path(keys[1]))) << "the least recently used entry stayed";
  for (int i = 2; i < 5; ++i) EXPECT_TRUE(fs::exists(cache.entry_path(keys[i]))) << i;
  const OracleCacheContents contents = cache.contents();
  EXPECT_EQ(contents.entries, 4u);
  EXPECT_LE(contents.bytes, cache.max_bytes());
}

TEST(OracleCache, TheBoundKeepsTheEntriesThatSaveTheMostOracleTimePerByte) {
  TempDir dir;
  const std::uint64_t one = entry_bytes(1000);
  OracleCache cache(dir.path(), 4 * one + one / 2);
  std::vector<OracleKey> keys;
  for (const char* op : {"op_a", "op_b", "op_c", "op_d", "op_e"}) keys.push_back(key_named(op));
  // op_a is the dearest and the oldest; op_d the cheapest and the most recently used.
  const double ms[] = {900, 500, 300, 10, 400};
  for (int i = 0; i < 4; ++i)
    ASSERT_EQ(cache.store(keys[i], outputs_of(1000, 6), ms[i]), OracleCache::StoreResult::stored);
  for (int i = 0; i < 4; ++i) set_age(cache.entry_path(keys[i]), std::chrono::seconds(400 - 100 * i));
  ASSERT_EQ(cache.store(keys[4], outputs_of(1000, 7), ms[4]), OracleCache::StoreResult::stored);
  EXPECT_FALSE(fs::exists(cache.entry_path(keys[3]))) << "the entry that saves least stayed";
  for (int i : {0, 1, 2, 4}) EXPECT_TRUE(fs::exists(cache.entry_path(keys[i]))) << i;
  // A newcomer that saves less than any entry held would be the one to go: it is not written.
  const OracleKey cheap = key_named("op_f");
  EXPECT_EQ(cache.store(cheap, outputs_of(1000, 8), 1), OracleCache::StoreResult::not_worth_a_place);
  EXPECT_FALSE(fs::exists(cache.entry_path(cheap)));
  // While there is room, even a cheap one is stored.
  OracleCache roomy(dir.path(), 100 * one);
  EXPECT_EQ(roomy.store(cheap, outputs_of(1000, 8), 1), OracleCache::StoreResult::stored);
  EXPECT_TRUE(fs::exists(cache.entry_path(cheap)));
  fs::remove(cache.entry_path(cheap));
  for (int i : {0, 1, 2, 4}) EXPECT_TRUE(fs::exists(cache.entry_path(keys[i]))) << i;
  EXPECT_NEAR(cache.contents().saved_ms, 900 + 500 + 300 + 400, 1e-9);
}

TEST(OracleCache, WorthIsPerByteALargerEntryMustSaveMoreToStay) {
  TempDir dir;
  const std::uint64_t small = entry_bytes(1000), large = entry_bytes(3000);
  OracleCache cache(dir.path(), 4 * large + small / 2);  // the large entry stays under a quarter
  const OracleKey big = key_named("op_big");
  ASSERT_EQ(cache.store(big, outputs_of(3000, 1), 600), OracleCache::StoreResult::stored);  // 200 ms per 1000 values
  std::vector<OracleKey> smalls;
  for (int i = 0; i < 10; ++i) {  // 300 ms per 1000 values each; the tenth takes the folder over
    smalls.push_back(key_named("op_" + std::to_string(i)));
    ASSERT_EQ(cache.store(smalls.back(), outputs_of(1000, 2 + i), 300), OracleCache::StoreResult::stored);
  }
  EXPECT_FALSE(fs::exists(cache.entry_path(big))) << "the entry saving most in all but least per byte stayed";
  for (const OracleKey& k : smalls) EXPECT_TRUE(fs::exists(cache.entry_path(k)));
}

TEST(OracleCache, AnEntryUnusedForAWeekGoesBeforeAnyInUseWhateverItSaves) {
  TempDir dir;
  const std::uint64_t one = entry_bytes(1000);
  OracleCache cache(dir.path(), 4 * one + one / 2);
  const OracleKey old_dear = key_named("op_old");
  ASSERT_EQ(cache.store(old_dear, outputs_of(1000, 1), 1e6), OracleCache::StoreResult::stored);
  set_age(cache.entry_path(old_dear), std::chrono::hours(24 * 8));
  std::vector<OracleKey> cheap;
  for (int i = 0; i < 4; ++i) {  // the fourth takes the folder over
    cheap.push_back(key_named("op_" + std::to_string(i)));
    ASSERT_EQ(cache.store(cheap.back(), outputs_of(1000, 2 + i), 1), OracleCache::StoreResult::stored);
  }
  EXPECT_FALSE(fs::exists(cache.entry_path(old_dear)));
  for (const OracleKey& k : cheap) EXPECT_TRUE(fs::exists(cache.entry_path(k)));
}

TEST(OracleCache, AnEntryOfTheFormerFormatIsWorthNothingAndGoesFirst) {
  TempDir dir;
  const std::uint64_t one = entry_bytes(1000);
  OracleCache cache(dir.path(), 4 * one + one / 2);
  const OracleKey former = key_named("op_former");
  ASSERT_EQ(cache.store(former, outputs_of(1000, 1), 1e6), OracleCache::StoreResult::stored);
  {  // its format field rewritten as an older build wrote it
    std::fstream f(cache.entry_path(former), std::ios::in | std::ios::out | std::ios::binary);
    const std::uint32_t first_format = 1;
    f.seekp(8);
    f.write(reinterpret_cast<const char*>(&first_format), 4);
  }
  std::vector<OracleKey> others;
  for (int i = 0; i < 4; ++i) {
    others.push_back(key_named("op_" + std::to_string(i)));
    ASSERT_EQ(cache.store(others.back(), outputs_of(1000, 2 + i), 5), OracleCache::StoreResult::stored);
    if (i == 0) set_age(cache.entry_path(others.back()), std::chrono::seconds(100));  // older than the former entry
  }
  EXPECT_FALSE(fs::exists(cache.entry_path(former)));
  for (const OracleKey& k : others) EXPECT_TRUE(fs::exists(cache.entry_path(k)));
}

TEST(OracleCache, ASmallerBoundEvictsDownToItOldestFirst) {
  TempDir dir;
  const std::uint64_t one = entry_bytes(1000);
  std::vector<OracleKey> keys;
  for (const char* op : {"op_a", "op_b", "op_c", "op_d"}) keys.push_back(key_named(op));
  OracleCache roomy(dir.path(), 100 * one);
  for (int i = 0; i < 4; ++i) ASSERT_EQ(roomy.store(keys[i], outputs_of(1000, 6)), OracleCache::StoreResult::stored);
  for (int i = 0; i < 4; ++i) set_age(roomy.entry_path(keys[i]), std::chrono::seconds(400 - 100 * i));
  OracleCache tight(dir.path(), 2 * one);  // a later run with a smaller bound
  tight.evict_to_bound();
  EXPECT_FALSE(fs::exists(roomy.entry_path(keys[0])));
  EXPECT_FALSE(fs::exists(roomy.entry_path(keys[1])));
  EXPECT_TRUE(fs::exists(roomy.entry_path(keys[2])));
  EXPECT_TRUE(fs::exists(roomy.entry_path(keys[3])));
}

TEST(OracleCache, AnEntryAboveAQuarterOfTheBoundIsNotStored) {
  TempDir dir;
  const std::uint64_t one = entry_bytes(1000);
  OracleCache cache(dir.path(), 4 * one - 8);  // a quarter is just under one entry
  EXPECT_EQ(cache.store(key_named("op_a"), outputs_of(1000, 8)), OracleCache::StoreResult::too_large);
  EXPECT_EQ(cache.contents().entries, 0u);
  OracleCache roomier(dir.path(), 4 * one);
  EXPECT_EQ(roomier.store(key_named("op_a"), outputs_of(1000, 8)), OracleCache::StoreResult::stored);
}

TEST(OracleCache, StaleTempFilesGoWithEvictionAndOtherFilesAreNeverTouched) {
  TempDir dir;
  OracleCache cache(dir.path(), 1 << 20);
  const std::string stem = key_named("op_z").file_name();
  const fs::path stale = dir / (stem + ".tmp.99999.0"), fresh = dir / (stem + ".tmp.99999.1");
  const fs::path notes = dir / "notes.txt", ceilings = dir / "ceilings-v5-GPU-x-driver580.json";
  for (const fs::path& p : {stale, fresh, notes, ceilings}) std::ofstream(p) << "some bytes";
  set_age(stale, std::chrono::hours(2));
  set_age(notes, std::chrono::hours(2));
  cache.evict_to_bound();
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(fresh)) << "a write in flight keeps its temp file";
  EXPECT_TRUE(fs::exists(notes));
  EXPECT_TRUE(fs::exists(ceilings));
  EXPECT_EQ(cache.contents().temp_files, 1u);
}

TEST(OracleCache, ContentsCountEntriesBytesAndTheirLastUse) {
  TempDir dir;
  OracleCache cache(dir.path(), 1 << 20);
  EXPECT_EQ(cache.contents().entries, 0u);
  EXPECT_FALSE(cache.contents().oldest_use);
  ASSERT_EQ(cache.store(key_named("op_a"), outputs_of(10, 1)), OracleCache::StoreResult::stored);
  ASSERT_EQ(cache.store(key_named("op_b"), outputs_of(20, 1)), OracleCache::StoreResult::stored);
  set_age(cache.entry_path(key_named("op_a")), std::chrono::hours(5));
  const OracleCacheContents c = cache.contents();
  EXPECT_EQ(c.entries, 2u);
  EXPECT_EQ(c.bytes, fs::file_size(cache.entry_path(key_named("op_a"))) + fs::file_size(cache.entry_path(key_named("op_b"))));
  ASSERT_TRUE(c.oldest_use && c.newest_use);
  const auto gap = std::chrono::duration_cast<std::chrono::minutes>(*c.newest_use - *c.oldest_use);
  EXPECT_NEAR(static_cast<double>(gap.count()), 300.0, 2.0);
}

TEST(OracleCache, ClearRemovesEntriesAndTempFilesOnly) {
  TempDir dir;
  OracleCache cache(dir.path(), 1 << 20);
  ASSERT_EQ(cache.store(key_named("op_a"), outputs_of(10, 1)), OracleCache::StoreResult::stored);
  ASSERT_EQ(cache.store(key_named("op_b"), outputs_of(10, 1)), OracleCache::StoreResult::stored);
  std::ofstream(dir / (key_named("op_c").file_name() + ".tmp.1.0")) << "partial";
  std::ofstream(dir / "keep.me") << "mine";
  const std::uint64_t bytes = cache.contents().bytes + 7;
  const OracleCacheClearOutcome out = cache.clear();
  EXPECT_EQ(out.removed, 3u);
  EXPECT_EQ(out.bytes, bytes);
  EXPECT_TRUE(out.errors.empty());
  EXPECT_EQ(cache.contents().entries + cache.contents().temp_files, 0u);
  EXPECT_TRUE(fs::exists(dir / "keep.me"));
}

TEST(OracleCache, AnUnwritableFolderIsSaidOnceAndCostsOnlyTheCache) {
  TempDir dir;
  std::ofstream(dir / "a-file") << "x";
  const fs::path under_a_file = dir / "a-file" / "oracle";  // cannot be created, even by root
  const auto problem = check_cache_folder(under_a_file);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find(under_a_file.string()), std::string::npos) << *problem;
  EXPECT_NE(problem->find("is not a folder"), std::string::npos) << *problem;
  std::vector<std::string> warnings;
  OracleCache cache(under_a_file, 1 << 20, [&](const std::string& w) { warnings.push_back(w); });
  EXPECT_EQ(cache.store(key_named("op_a"), outputs_of(10, 1)), OracleCache::StoreResult::failed);
  EXPECT_EQ(cache.store(key_named("op_b"), outputs_of(10, 1)), OracleCache::StoreResult::failed);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("a-file"), std::string::npos) << warnings[0];
  EXPECT_FALSE(cache.load(key_named("op_a")));
  EXPECT_EQ(cache.contents().entries, 0u);
}

TEST(OracleCache, AFolderCheckCreatesNothing) {
  TempDir dir;
  EXPECT_FALSE(check_cache_folder(dir / "not" / "yet" / "there"));
  EXPECT_FALSE(fs::exists(dir / "not"));
  EXPECT_FALSE(check_cache_folder(dir.path()));
  std::ofstream(dir / "plain") << "x";
  EXPECT_TRUE(check_cache_folder(dir / "plain"));
}

TEST(OracleCache, TwoWritersOfOneKeyNeverLeaveAnythingButAWholeEntry) {
  TempDir dir;
  const OracleKey key = key_named("op_a");
  const auto outputs = outputs_of(20000, 9);  // ~500 KB: long enough writes to overlap
  std::atomic<bool> stop{false};
  std::atomic<int> hits{0}, bad{0};
  std::thread reader([&] {
    OracleCache cache(dir.path(), std::uint64_t{1} << 30);
    while (!stop) {
      if (auto got = cache.load(key)) {
        ++hits;
        if (got->size() != 1 || std::memcmp(got->at(0).values.data(), outputs[0].values.data(),
                                             outputs[0].values.size() * 8) != 0)
          ++bad;
      }
    }
  });
  std::vector<std::thread> writers;
  for (int w = 0; w < 2; ++w)
    writers.emplace_back([&] {
      OracleCache cache(dir.path(), std::uint64_t{1} << 30);
      for (int i = 0; i < 25; ++i) EXPECT_EQ(cache.store(key, outputs), OracleCache::StoreResult::stored);
    });
  for (auto& t : writers) t.join();
  stop = true;
  reader.join();
  EXPECT_EQ(bad, 0) << "a reader saw a partial or mixed entry";
  OracleCache cache(dir.path(), std::uint64_t{1} << 30);
  const auto back = cache.load(key);
  ASSERT_TRUE(back);
  expect_same_bits(*back, outputs);
  const OracleCacheContents c = cache.contents();
  EXPECT_EQ(c.entries, 1u);
  EXPECT_EQ(c.temp_files, 0u);
}

TEST(OracleCache, TwoWorkerProcessesWritingOneKeyLeaveOneWholeEntry) {
  // As the workers of two GPUs would: separate processes, one folder, the same group.
  TempDir dir;
  const OracleKey key = key_named("op_a");
  const auto outputs = outputs_of(20000, 10);
  std::vector<pid_t> children;
  for (int w = 0; w < 2; ++w) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      OracleCache cache(dir.path(), std::uint64_t{1} << 30);
      int failures = 0;
      for (int i = 0; i < 20; ++i) failures += cache.store(key, outputs) != OracleCache::StoreResult::stored;
      _exit(failures == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  OracleCache cache(dir.path(), std::uint64_t{1} << 30);
  int bad = 0;
  for (int i = 0; i < 200; ++i)
    if (auto got = cache.load(key))
      bad += std::memcmp(got->at(0).values.data(), outputs[0].values.data(), outputs[0].values.size() * 8) != 0;
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer failed to store";
  }
  EXPECT_EQ(bad, 0);
  const auto back = cache.load(key);
  ASSERT_TRUE(back);
  expect_same_bits(*back, outputs);
  EXPECT_EQ(cache.contents().entries, 1u);
  EXPECT_EQ(cache.contents().temp_files, 0u);
}

}  // namespace
}  // namespace kwb
