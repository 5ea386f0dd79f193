// The request layer on CPU: settings as a person gives them -> the planned cases and the run's
// settings, the same plan the planner gives for the parsed request; every bad setting refused
// with the setting it names; a suite file with settings beside it; the flush parsed once into the
// FlushKind the cases carry.
#include "harness/plan/run_request.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>

#include "tests/support/mentions.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace run_request_test {
namespace {

using test::Mentions;

const Registry& registry() { return Registry::instance(); }

// A small sweep: rmsnorm_fwd's fused_v2_vec16 in bf16 at two shapes.
RunSettings small_sweep() {
  RunSettings s;
  s.ops = {"rmsnorm_fwd"};
  s.variants = {"fused_v2_vec16"};
  s.dtypes = {"bf16"};
  s.axes = {"rows=4096", "cols=1024,2048"};
  s.given.axis = true;
  return s;
}

// The SettingError plan_run gives; a test failure when none.
std::optional<SettingError> refusal(const RunSettings& s) {
  try {
    plan_run(s, registry());
  } catch (const SettingError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a SettingError";
  return std::nullopt;
}

std::filesystem::path write_suite(const test::TempDir& dir, const std::string& text) {
  const auto path = dir.path() / "suite.yaml";
  std::ofstream(path) << text;
  return path;
}

const char* kColdSuite =
    "name: t\n"
    "mode: cold\n"
    "flush: clean\n"
    "preset: quick\n"
    "seed: 7\n"
    "ceilings: measure\n"
    "entries:\n"
    "  - {ops: rmsnorm_fwd, variants: fused_v2_vec16, dtypes: bf16, shapes: {rows: 4096, cols: [1024, 2048]}}\n";

TEST(RunRequest, SettingsPlanTheSameCasesAsThePlannerDoesForTheParsedRequest) {
  // Prepare the reference: the planner on the request written by hand.
  PlanRequest by_hand;
  by_hand.ops = {"rmsnorm_fwd"};
  by_hand.variants = {"fused_v2_vec16"};
  by_hand.dtypes = {DType::bf16};
  by_hand.axes = {parse_axis_for("rows=4096", registry()), parse_axis_for("cols=1024,2048", registry())};
  const auto expected = plan_cases(by_hand, registry());
  ASSERT_EQ(expected.size(), 2u);

  // Run.
  const PlannedRun run = plan_run(small_sweep(), registry());

  // Verify: same cases, the defaults of `kwb run`, and nothing but the plan.
  ASSERT_EQ(run.cases.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(case_identity(run.cases[i]), case_identity(expected[i]));
    EXPECT_EQ(run.cases[i].index, static_cast<int>(i));
    EXPECT_EQ(run.cases[i].mode, Mode::cold);
    EXPECT_EQ(run.cases[i].flush, FlushKind::dirty);
    EXPECT_EQ(run.cases[i].launch, LaunchKind::stream);
    EXPECT_EQ(run.cases[i].preset, "default");
    EXPECT_EQ(run.cases[i].seed, 1u);
  }
  EXPECT_FALSE(run.suite.has_value());
  EXPECT_EQ(run.ceilings, CeilingsChoice::cached_or_measured);
  EXPECT_TRUE(run.tuning.empty());
  EXPECT_TRUE(run.tuning_note.empty());
}

TEST(RunRequest, RepeatedNamesCountOnceAndNumbersAreReadFromText) {
  RunSettings s = small_sweep();
  s.ops = {"rmsnorm_fwd", "rmsnorm_fwd"};
  s.variants = {"fused_v2_vec16", "fused_v2_vec16"};
  s.dtypes = {"bf16", "bf16"};
  s.seed = "18446744073709551615";
  s.max_cases = "2";
  const PlannedRun run = plan_run(s, registry());
  ASSERT_EQ(run.cases.size(), 2u) << "a repeated op, variant or dtype must not run every case twice";
  EXPECT_EQ(run.cases[0].seed, 18446744073709551615u);
  EXPECT_EQ(run.request.max_cases, 2u);
}

TEST(RunRequest, TheFlushIsParsedOnceIntoTheKindEveryCaseCarries) {
  RunSettings s = small_sweep();
  s.flush = "clean";
  for (const CaseRequest& c : plan_run(s, registry()).cases) EXPECT_EQ(c.flush, FlushKind::clean);
  s.mode = "hot";
  const auto e = refusal(s);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->setting, Setting::flush);
  EXPECT_STREQ(e->what(), "--flush clean: hot mode flushes nothing; drop --flush or use --mode cold");
}

TEST(RunRequest, TheLaunchIsParsedOnceIntoTheKindEveryCaseCarriesInHotAndColdMode) {
  RunSettings s = small_sweep();
  s.launch = "graph";
  for (const char* mode : {"cold", "hot"}) {
    s.mode = mode;
    const PlannedRun run = plan_run(s, registry());
    ASSERT_EQ(run.cases.size(), 2u);
    for (const CaseRequest& c : run.cases) {
      EXPECT_EQ(c.launch, LaunchKind::graph) << mode;
      EXPECT_TRUE(Mentions(repro_command(c), "--launch graph")) << repro_command(c);
    }
  }
  s.launch = "stream";
  for (const CaseRequest& c : plan_run(s, registry()).cases)
    EXPECT_FALSE(Mentions(repro_command(c), "--launch")) << "the default is not written: " << repro_command(c);
}

TEST(RunRequest, EveryBadSettingIsRefusedNamingThatSetting) {
  struct Bad {
    const char* what;
    std::function<void(RunSettings&)> change;
    Setting setting;
    const char* message;  // the command line's wording, as `kwb run` has always printed it
  };
  const Bad bad[] = {
      {"dtype", [](RunSettings& s) { s.dtypes = {"fp7"}; }, Setting::dtype,
       "--dtype: unknown dtype 'fp7'; use fp32, fp16 or bf16"},
      {"axis grammar", [](RunSettings& s) { s.axes = {"rows=abc"}; }, Setting::axis, "--axis: "},
      {"shapes", [](RunSettings& s) { s.shapes = "huge"; }, Setting::shapes,
       "--shapes: unknown set 'huge'; use default (realistic sizes) or edge (small, odd sizes)"},
      {"mode", [](RunSettings& s) { s.mode = "warm"; }, Setting::mode,
       "--mode: unknown mode 'warm'; use cold (L2 flushed before every sample) or hot"},
      {"flush", [](RunSettings& s) { s.flush = "Clean"; }, Setting::flush, "--flush: unknown flush 'Clean'"},
      {"launch", [](RunSettings& s) { s.launch = "graphs"; }, Setting::launch,
       "--launch: unknown launch 'graphs'; use stream (the variant's launches, each sample as a program issues it) "
       "or graph (one sample captured in a CUDA graph and replayed)"},
      {"preset", [](RunSettings& s) { s.preset = "sloppy"; }, Setting::preset,
       "--preset: unknown preset 'sloppy'; use quick, default or precise (or verify: check, do not time)"},
      {"seed", [](RunSettings& s) { s.seed = "-1"; }, Setting::seed, "--seed: '-1' is not a whole number >= 0"},
      {"max-cases", [](RunSettings& s) { s.max_cases = "0"; }, Setting::max_cases, "--max-cases: '0' is not a count"},
      {"max-cases ceiling", [](RunSettings& s) { s.max_cases = "1000001"; }, Setting::max_cases,
       "--max-cases: 1000001 is more than one run can plan (at most 1000000); split the sweep into several runs "
       "with narrower --axis ranges"},
      {"too many cases", [](RunSettings& s) { s.max_cases = "1"; }, Setting::max_cases, "the plan has 2 cases"},
      {"op", [](RunSettings& s) { s.ops = {"rmsnrom_fwd"}; }, Setting::op, "unknown op 'rmsnrom_fwd'"},
      {"variant", [](RunSettings& s) { s.variants = {"fused_v9"}; }, Setting::variant, "unknown variant 'fused_v9'"},
      {"axis name", [](RunSettings& s) { s.axes = {"colz=4"}; }, Setting::axis, "unknown axis 'colz'"},
      {"axis twice", [](RunSettings& s) { s.axes = {"rows=1", "rows=2"}; }, Setting::axis,
       "--axis: axis 'rows' is given twice; give all its values in one --axis, e.g. --axis rows=512,4096"},
      {"counters", [](RunSettings& s) { s.counter_sets = {"memry"}; }, Setting::counters,
       "--counters: unknown counter set 'memry' (did you mean 'memory'?)"},
      {"metrics", [](RunSettings& s) { s.metrics = {"dram__bytes_read"}; }, Setting::metrics,
       "--metrics: 'dram__bytes_read' is not a full metric name"},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.what);
    RunSettings s = small_sweep();
    b.change(s);
    const auto e = refusal(s);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->setting, b.setting) << e->what();
    EXPECT_TRUE(Mentions(e->what(), b.message));
  }
}

TEST(RunRequest, TheCounterRequestIsOnEveryCaseAndOnTheRun) {
  RunSettings s = small_sweep();
  s.counter_sets = {"memory", "tensor", "memory"};
  s.metrics = {"l1tex__t_bytes.sum"};
  const PlannedRun run = plan_run(s, registry());
  const CounterRequest want = parse_counter_request(s.counter_sets, s.metrics);
  EXPECT_EQ(run.counters.sets, (std::vector<std::string>{"memory", "tensor"}));
  EXPECT_EQ(run.counters.metrics, want.metrics);
  ASSERT_EQ(run.cases.size(), 2u);
  for (const CaseRequest& c : run.cases) {
    EXPECT_EQ(c.counter_sets, want.sets);
    EXPECT_EQ(c.counter_metrics, want.metrics);
    EXPECT_EQ(c.counter_metrics.front(), kDurationMetric);
  }
}

TEST(RunRequest, CountersWithTheVerifyPresetAreRefusedNamingBoth) {
  RunSettings s = small_sweep();
  s.counter_sets = {"memory"};
  s.preset = "verify";
  try {
    plan_run(s, registry());
    FAIL() << "counters with --preset verify were accepted, though no counter pass would run";
  } catch (const SettingError& e) {
    EXPECT_EQ(e.setting, Setting::counters);
    EXPECT_NE(std::string(e.what()).find("--counters"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--preset"), std::string::npos) << e.what();
  }
}

TEST(RunRequest, WithoutCountersNoCaseCollectsAny) {
  const PlannedRun run = plan_run(small_sweep(), registry());
  EXPECT_TRUE(run.counters.empty());
  for (const CaseRequest& c : run.cases) {
    EXPECT_TRUE(c.counter_sets.empty());
    EXPECT_TRUE(c.counter_metrics.empty());
  }
}

TEST(RunRequest, ASuitesCasesTakeTheCountersGivenBesideIt) {
  test::TempDir dir;
  RunSettings s;
  s.suite = write_suite(dir, kColdSuite).string();
  s.counter_sets = {"occupancy"};
  const PlannedRun run = plan_run(s, registry());
  ASSERT_EQ(run.cases.size(), 2u);
  for (const CaseRequest& c : run.cases) EXPECT_EQ(c.counter_sets, (std::vector<std::string>{"occupancy"}));
}

TEST(RunRequest, NoCaseSelectedNamesTheFilters) {
  const SettingError e = no_case_selected();
  EXPECT_EQ(e.setting, Setting::op);
  EXPECT_STREQ(e.what(), "the filters select no case (check --op, --variant and --dtype against `kwb list`)");
}

TEST(RunRequest, ASuiteGivesThePlanItsSettingsAndItsCeilings) {
  test::TempDir dir;
  RunSettings s;
  s.suite = write_suite(dir, kColdSuite).string();
  const PlannedRun run = plan_run(s, registry());
  ASSERT_EQ(run.cases.size(), 2u);
  for (const CaseRequest& c : run.cases) {
    EXPECT_EQ(c.flush, FlushKind::clean);
    EXPECT_EQ(c.preset, "quick");
    EXPECT_EQ(c.seed, 7u);
  }
  ASSERT_TRUE(run.suite.has_value());
  EXPECT_EQ(run.suite->name, "t");
  EXPECT_EQ(run.suite->path, s.suite);
  EXPECT_EQ(run.ceilings, CeilingsChoice::measure_fresh);
}

TEST(RunRequest, SettingsGivenBesideASuiteNarrowItAndWinOverItsValues) {
  test::TempDir dir;
  RunSettings s;
  s.suite = write_suite(dir, kColdSuite).string();
  s.preset = "precise";  // not given: the suite's quick stands
  s.seed = "9";
  s.given.seed = true;
  s.flush = "dirty";
  s.given.flush = true;
  s.datasheet_ceilings = true;
  const PlannedRun run = plan_run(s, registry());
  ASSERT_EQ(run.cases.size(), 2u);
  EXPECT_EQ(run.cases[0].preset, "quick");
  EXPECT_EQ(run.cases[0].seed, 9u);
  EXPECT_EQ(run.cases[0].flush, FlushKind::dirty);
  EXPECT_EQ(run.ceilings, CeilingsChoice::datasheet) << "datasheet ceilings win over the suite's `measure`";

  s.given = {};
  s.dtypes = {"fp32"};  // the suite runs bf16 only: a filter narrows, it cannot add
  const auto e = refusal(s);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->setting, Setting::op);
  EXPECT_TRUE(Mentions(e->what(), "--op, --variant and --dtype leave none of the 2 cases of suite 't'"));
}

TEST(RunRequest, AxesAndShapesGivenBesideASuiteAreRefusedBeforeTheFileIsRead) {
  RunSettings s;
  s.suite = "/no/such/suite.yaml";
  s.axes = {"rows=64"};
  s.given.axis = true;
  auto e = refusal(s);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->setting, Setting::axis);
  EXPECT_TRUE(Mentions(e->what(), "--axis cannot be combined with --suite"));
  s.axes.clear();
  s.given.axis = false;
  s.given.shapes = true;
  e = refusal(s);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->setting, Setting::shapes);
  EXPECT_TRUE(Mentions(e->what(), "--shapes cannot be combined with --suite"));
}

TEST(RunRequest, ASuitesLaunchStandsUnlessTheLaunchIsGiven) {
  test::TempDir dir;
  RunSettings s;
  s.suite = write_suite(dir, "name: t\nlaunch: graph\nentries: [{ops: rmsnorm_fwd, variants: fused_v2_vec16, "
                             "dtypes: bf16}]\n").string();
  s.launch = "stream";  // not given: the suite's graph stands
  for (const CaseRequest& c : plan_run(s, registry()).cases) EXPECT_EQ(c.launch, LaunchKind::graph);
  s.given.launch = true;
  for (const CaseRequest& c : plan_run(s, registry()).cases) EXPECT_EQ(c.launch, LaunchKind::stream);
}

TEST(RunRequest, AFlushGivenBesideAHotSuiteIsRefusedByTheSameRule) {
  test::TempDir dir;
  RunSettings s;
  s.suite = write_suite(dir, "name: t\nmode: hot\nentries: [{ops: rmsnorm_fwd, dtypes: bf16}]\n").string();
  s.flush = "clean";
  s.given.flush = true;
  const auto e = refusal(s);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->setting, Setting::flush);
  EXPECT_STREQ(e->what(), "--flush clean: hot mode flushes nothing; drop --flush or use --mode cold");
}

}  // namespace
}  // namespace run_request_test
}  // namespace kwb
