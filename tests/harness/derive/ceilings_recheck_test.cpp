// Cached ceilings re-checked by a short copy (harness/derive/ceilings.hpp recheck_cached_ceilings):
// kept within 3% above, measured again beyond it, kept and said so when the copy could not run;
// the cache file is per ceilings version, and the read-only ceiling's methods travel with it.
#include "harness/derive/ceilings.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

#include "harness/record/record_json.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

Ceilings cached_at(double copy_gbps) {
  Ceilings c;
  c.source = "measured";
  c.measured_at = "2026-11-20T10:00:00Z";
  c.dram_copy_gbps = copy_gbps;
  c.dram_read_gbps = 3200;
  return c;
}

TEST(CeilingsRecheck, KeptWithinThreePercentAboveMeasuredAgainBeyond) {
  const Ceilings cached = cached_at(3000);
  const auto at = [&](double gbps) { return recheck_cached_ceilings(cached, gbps, "copy_blocks<1,1> 1024MiB dirty", ""); };
  EXPECT_FALSE(at(2700).remeasure) << "a slower short copy keeps the best seen";
  EXPECT_FALSE(at(3000).remeasure);
  EXPECT_FALSE(at(3089).remeasure);  // +2.97%
  EXPECT_TRUE(at(3091).remeasure);   // +3.03%
  const CeilingsRecheck kept = at(3050);
  EXPECT_NE(kept.text.find("3000 GB/s"), std::string::npos) << kept.text;
  EXPECT_NE(kept.text.find("3050 GB/s (+1.7%, copy_blocks<1,1> 1024MiB dirty)"), std::string::npos) << kept.text;
  EXPECT_NE(kept.text.find("kept"), std::string::npos) << kept.text;
  EXPECT_NE(kept.text.find("2026-11-20"), std::string::npos) << kept.text;
  const CeilingsRecheck stale = at(3200);
  EXPECT_NE(stale.text.find("+6.7%"), std::string::npos) << stale.text;
  EXPECT_NE(stale.text.find("measured again"), std::string::npos) << stale.text;
}

TEST(CeilingsRecheck, NoShortCopyKeepsTheCacheAndSaysWhy) {
  const CeilingsRecheck r = recheck_cached_ceilings(cached_at(3000), std::nullopt, "", "no worker");
  EXPECT_FALSE(r.remeasure);
  EXPECT_NE(r.text.find("not re-checked"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("no worker"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("kwb ceilings --refresh"), std::string::npos) << r.text;
  // A cache without a copy figure is always measured again.
  EXPECT_TRUE(recheck_cached_ceilings(cached_at(0), 3000.0, "m", "").remeasure);
}

TEST(CeilingsCache, ReadAndWriteMethodsRoundTripAndTheCacheFileIsVersionSeven) {
  Ceilings c = cached_at(3000);
  c.dram_read_method = "read_unrolled<16B,8> 2x512 2048MiB dirty";
  c.dram_read_by_method = {{"read_stream 8x512 1024MiB dirty", 3112.5}, {c.dram_read_method, 3180.25}};
  c.dram_read_gbps = 3180.25;
  c.dram_write_method = "write_blocks<4> 2048MiB clean";
  c.dram_write_by_method = {{"cudaMemsetAsync 1024MiB dirty", 3150.5}, {c.dram_write_method, 3260.75}};
  c.dram_write_gbps = 3260.75;
  const Ceilings back = ceilings_from_json(to_json(c));
  EXPECT_EQ(back.dram_read_method, c.dram_read_method);
  EXPECT_EQ(back.dram_read_by_method, c.dram_read_by_method);
  EXPECT_EQ(back.dram_write_gbps, c.dram_write_gbps);
  EXPECT_EQ(back.dram_write_method, c.dram_write_method);
  EXPECT_EQ(back.dram_write_by_method, c.dram_write_by_method);
  // Ceilings without a write figure (datasheet, older caches and reports) write none and read 0.
  EXPECT_FALSE(to_json(cached_at(3000)).contains("dram_write_gbps"));
  EXPECT_EQ(ceilings_from_json(to_json(cached_at(3000))).dram_write_gbps, 0);
  // Older files (one read kernel, no methods) still read.
  auto old = to_json(cached_at(3000));
  old.erase("dram_read_method");
  old.erase("dram_read_by_method");
  EXPECT_TRUE(ceilings_from_json(old).dram_read_by_method.empty());

  test::TempDir dir;
  const char* prior = std::getenv("KWB_CACHE_DIR");
  const std::string saved = prior ? prior : "";
  setenv("KWB_CACHE_DIR", dir.path().c_str(), 1);
  DeviceInfo d;
  d.uuid = "GPU-x";
  d.driver_version = 13000;
  EXPECT_EQ(ceilings_cache_path(d).filename().string().rfind("ceilings-v7-GPU-x-driver13000", 0), 0u)
      << ceilings_cache_path(d);
  save_cached_ceilings(d, c);
  const auto loaded = load_cached_ceilings(d);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->dram_read_by_method.size(), 2u);
  if (prior) setenv("KWB_CACHE_DIR", saved.c_str(), 1);
  else unsetenv("KWB_CACHE_DIR");
}

}  // namespace
}  // namespace kwb
