// From what a person gives `kwb profile` to the one case: identities (with choices and tunables),
// repro lines (every record of the committed sample report whose variant this build has plans back
// to its own identity, from its repro line and from its identity), the report's mode and seed,
// the kernel count a record tells, and every refusal with what to write instead.
#include <gtest/gtest.h>

#include "harness/plan/planner.hpp"
#include "harness/record/json_report.hpp"
#include "reports/profile/profile_case.hpp"

namespace kwb {
namespace profile_case_test {
namespace {

const Registry& registry() { return Registry::instance(); }

std::string refusal(const std::string& text) {
  try {
    resolve_profile_case(text, registry());
  } catch (const ProfileCaseError& e) {
    return e.what();
  }
  return "";
}

TEST(ProfileCase, AnIdentityPlansExactlyItsCaseInColdMode) {
  const CaseRequest c = resolve_profile_case("rmsnorm_fwd:fused_v2_vec16:bf16:16384x4096", registry());
  EXPECT_EQ(case_identity(c), "rmsnorm_fwd:fused_v2_vec16:bf16:16384x4096");
  EXPECT_EQ(c.mode, Mode::cold);
  EXPECT_EQ(c.seed, 1u);
  EXPECT_FALSE(c.include_test_variants);
}

TEST(ProfileCase, AnIdentityWithChoicesAndTunablesOfATestOnlyVariant) {
  const std::string id = "test_seq_sum:test_atomic_scatter:fp32:2x96x3x40,layout=bhsd,causal=1:block=512";
  const CaseRequest c = resolve_profile_case(id, registry());
  EXPECT_EQ(case_identity(c), id);
  EXPECT_TRUE(c.include_test_variants) << "a test-only case is named on purpose";
  EXPECT_EQ(c.shape.choice("layout"), "bhsd");
  EXPECT_EQ(c.tunables, (TunableValues{{"block", 512}}));
}

TEST(ProfileCase, AReproLineDecidesModeSeedAndFlush) {
  const CaseRequest c = resolve_profile_case(
      "./build/kwb run --op rmsnorm_fwd --variant=fused_v2_vec16 -d bf16 --axis rows=2048 --axis cols=4096 --mode hot "
      "--preset quick --seed 99 --out somewhere --timer events --counters memory,tensor",
      registry());
  EXPECT_EQ(case_identity(c), "rmsnorm_fwd:fused_v2_vec16:bf16:2048x4096");
  EXPECT_EQ(c.mode, Mode::hot);
  EXPECT_EQ(c.seed, 99u);
  EXPECT_EQ(c.counter_sets, (std::vector<std::string>{"memory", "tensor"}));
  const CaseRequest clean = resolve_profile_case(
      "kwb run --op rmsnorm_fwd --variant fused_v2_vec16 --dtype bf16 --axis rows=2048 --axis cols=4096 --flush clean",
      registry());
  EXPECT_EQ(clean.flush, FlushKind::clean);
  EXPECT_EQ(clean.mode, Mode::cold);
  // A graph run's repro line (its records write --launch graph) plans too.
  const CaseRequest graph = resolve_profile_case(
      "kwb run --op rmsnorm_fwd --variant fused_v2_vec16 --dtype bf16 --axis rows=2048 --axis cols=4096 --launch graph",
      registry());
  EXPECT_EQ(graph.launch, LaunchKind::graph);
}

TEST(ProfileCase, EveryRecordOfTheCommittedSampleReplansToItsIdentity) {
  const Report report = read_report_json(KWB_SOURCE_DIR "/samples/h100-roofline-review/report.json");
  int checked = 0;
  for (const CaseRecord& rec : report.cases) {
    const Variant* variant = registry().find_variant(rec.op, rec.variant);
    if (!variant) continue;  // renamed since the sample was measured
    std::vector<std::string> declared, recorded_names;
    for (const Tunable& t : variant->tunables) declared.push_back(t.name);
    for (const auto& [name, value] : rec.tunables) recorded_names.push_back(name);
    if (declared != recorded_names) continue;  // a tunable added since: the case's identity has changed
    EXPECT_EQ(case_identity(resolve_profile_case(rec.repro, registry())), rec.nvtx_range) << rec.repro;
    EXPECT_EQ(case_identity(resolve_profile_case(rec.nvtx_range, registry())), rec.nvtx_range);
    const CaseRequest recorded = case_as_recorded(rec, resolve_profile_case(rec.nvtx_range, registry()), registry());
    EXPECT_EQ(recorded.mode, rec.timing ? rec.timing->mode : Mode::cold) << rec.nvtx_range;
    ++checked;
  }
  EXPECT_GT(checked, 20) << "the sample's cases mostly still exist";
}

TEST(ProfileCase, TheRecordsReproLineGivesModeAndSeedToAnIdentity) {
  CaseRecord rec;
  rec.nvtx_range = "rmsnorm_fwd:fused_v2_vec16:bf16:2048x4096";
  rec.repro = "kwb run --op rmsnorm_fwd --variant fused_v2_vec16 --dtype bf16 --axis rows=2048 --axis cols=4096 "
              "--mode hot --preset default --seed 17";
  const CaseRequest planned = resolve_profile_case(rec.nvtx_range, registry());
  const CaseRequest c = case_as_recorded(rec, planned, registry());
  EXPECT_EQ(c.mode, Mode::hot);
  EXPECT_EQ(c.seed, 17u);
  rec.repro = "kwb run --op rmsnorm_fwd --variant fused_v2_vec16 --dtype bf16 --axis rows=4096 --axis cols=4096";
  EXPECT_THROW(case_as_recorded(rec, planned, registry()), ProfileCaseError)
      << "a repro line of another case is not this record's";
  rec.repro.clear();
  TimingResult hot;
  hot.mode = Mode::hot;
  rec.timing = hot;
  EXPECT_EQ(case_as_recorded(rec, planned, registry()).mode, Mode::hot) << "no repro: the timing's mode";
}

TEST(ProfileCase, KernelsPerLaunchFromTheRecord) {
  CaseRecord rec;
  EXPECT_EQ(kernels_per_launch(rec), 0) << "not timed: it tells none";
  TimingResult t;
  t.kernels_per_sample = -1;  // CUDA events
  rec.timing = t;
  EXPECT_EQ(kernels_per_launch(rec), 0);
  rec.timing->kernels_per_sample = 3;
  EXPECT_EQ(kernels_per_launch(rec), 3);
  CaseCounters counters;
  counters.kernels.resize(2);
  rec.counters = counters;
  EXPECT_EQ(kernels_per_launch(rec), 2) << "the counters' own kernels first";
}

TEST(ProfileCase, FindsTheRecordOrNamesTheClosest) {
  Report report;
  CaseRecord a, b;
  a.nvtx_range = "rmsnorm_fwd:fused_v2_vec16:bf16:16384x4096";
  b.nvtx_range = "softmax_fwd:fused_v1_row_in_registers:bf16:16384x4096";
  report.cases = {a, b};
  EXPECT_EQ(&find_case(report, b.nvtx_range, "r.json"), &report.cases[1]);
  try {
    find_case(report, "rmsnorm_fwd:fused_v2_vec16:bf16:16384x4095", "r.json");
    ADD_FAILURE() << "no such case";
  } catch (const ProfileCaseError& e) {
    EXPECT_NE(std::string(e.what()).find("r.json holds no case 'rmsnorm_fwd:fused_v2_vec16:bf16:16384x4095' (2 cases); "
                                         "did you mean 'rmsnorm_fwd:fused_v2_vec16:bf16:16384x4096'?"),
              std::string::npos)
        << e.what();
  }
}

TEST(ProfileCase, BadIdentitiesAndLinesAreRefusedWithWhatToWrite) {
  struct Bad {
    std::string text, expect;
  };
  const std::vector<Bad> bad = {
      {"rmsnorm_fwd:fused_v2_vec16:bf16", "has 3 ':'-separated parts, an identity has 4 or 5"},
      {"rmsnorm_fwd::bf16:16384x4096", "a part is empty"},
      {"rmsnrom_fwd:fused_v2_vec16:bf16:16384x4096", "unknown op 'rmsnrom_fwd' (did you mean 'rmsnorm_fwd'?)"},
      {"rmsnorm_fwd:fused_v2_vec61:bf16:16384x4096", "unknown variant of rmsnorm_fwd 'fused_v2_vec61' (did you mean"},
      {"rmsnorm_fwd:fused_v2_vec16:bf61:16384x4096", "unknown dtype 'bf61'"},
      {"rmsnorm_fwd:fused_v2_vec16:bf16:16384", "has 1 integer value; rmsnorm_fwd's shape is rowsxcols"},
      {"rmsnorm_fwd:fused_v2_vec16:bf16:16384x4096x2", "has 3 integer values"},
      {"rmsnorm_fwd:fused_v2_vec16:bf16:16384xcols", "--axis"},
      {"rmsnorm_fwd:fused_v2_vec16:bf16:16384x04096",
       "is not the identity of the case it plans, 'rmsnorm_fwd:fused_v2_vec16:bf16:16384x4096'"},
      {"cross_entropy:fused_v1_cluster_row_in_registers:bf16:8192x128256",
       "it plans, 'cross_entropy:fused_v1_cluster_row_in_registers:bf16:8192x128256:max_threads=1024'"},
      {"test_seq_sum:test_atomic_scatter:fp32:2x96x3x40,bhsd,causal=1:block=256", "'bhsd' is not name=choice"},
      {"test_seq_sum:test_atomic_scatter:fp32:2x96x3x40,layout=bhsd,causal=1:256", "'256' is not name=value"},
      {"kwb run --op rmsnorm_fwd --variant fused_v2_vec16 --dtype bf16 --axis cols=512,4100",
       "kwb profile takes one"},
      {"kwb run --op rmsnorm_fwd --bogus 1", "'--bogus' is not a flag of kwb run"},
      {"kwb run --suite suites/smoke.yaml", "--suite plans a whole run"},
      {"kwb run --op rmsnorm_fwd --variant", "--variant has no value"},
      {"kwb run --op 'rmsnorm_fwd", "a single quote is not closed"},
      {"kwb compare a.json b.json", "'compare' is not a flag of kwb run"},
  };
  for (const Bad& b : bad) {
    const std::string e = refusal(b.text);
    EXPECT_NE(e.find(b.expect), std::string::npos) << "input: " << b.text << "\nmessage: " << e;
  }
}

}  // namespace
}  // namespace profile_case_test
}  // namespace kwb
