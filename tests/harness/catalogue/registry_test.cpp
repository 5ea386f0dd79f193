// Registration mistakes are collected by a Registry (never thrown before main) and each one is
// named by problems(); the real catalogue has none. Shape's two kinds of axis value.
#include "harness/catalogue/registry.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>

namespace kwb {
namespace {

Op sound_op(const std::string& name) {
  return Op{
      .name = name,
      .axes = {{"rows", 4, {}, ""}, {"layout", 0, {}, "", {"bshd", "bhsd"}}},
      .dtypes = {DType::fp32},
      .tensors = [](const Shape&, DType) { return std::vector<TensorSpec>{}; },
      .work = [](const Shape&, DType) { return WorkModel{}; },
      .oracle = [](const Shape&, const std::vector<HostTensor>&, std::vector<HostTensor>&) {},
  };
}

Variant sound_variant(const std::string& op, const std::string& name) {
  return Variant{.op = op, .name = name, .launch = [](const LaunchArgs&) {}};
}

// The one problem that mentions every part; a failure lists them all.
::testing::AssertionResult HasProblem(const Registry& r, std::vector<std::string> parts) {
  const auto problems = r.problems();
  for (const auto& p : problems)
    if (std::all_of(parts.begin(), parts.end(), [&](const auto& x) { return p.find(x) != std::string::npos; }))
      return ::testing::AssertionSuccess();
  auto failure = ::testing::AssertionFailure() << "no problem mentions all of:";
  for (const auto& x : parts) failure << " '" << x << "'";
  failure << "; problems:";
  for (const auto& p : problems) failure << "\n  " << p;
  return failure;
}

// A variant reads its buffers by the op's tensor names (LaunchArgs::tensor), never by position.
struct NamedTensors {
  Shape shape{{{"rows", 4}, {"cols", 8}}};
  std::vector<TensorSpec> specs = {
      {.name = "x", .dims = {4, 8}},
      {.name = "mean", .dims = {4}, .elem = ElemType::fp32},
      {.name = "y", .dims = {4, 8}, .is_output = true},
  };
  float x = 0, mean = 0, y = 0;
  std::vector<void*> buffers{&x, &mean, &y};
  LaunchArgs args(DType dtype) const { return LaunchArgs{shape, dtype, buffers, nullptr, nullptr, nullptr, nullptr, &specs}; }
};

TEST(LaunchArgsTensor, ANameGivesThatTensorsBufferWhateverItsPosition) {
  const NamedTensors t;
  const LaunchArgs a = t.args(DType::fp32);
  EXPECT_EQ(a.tensor<const float>("x"), &t.x);
  EXPECT_EQ(a.tensor<float>("y"), &t.y);
  EXPECT_EQ(a.tensor<const float>("mean"), &t.mean);
  EXPECT_EQ(a.tensor<void>("y"), static_cast<void*>(const_cast<float*>(&t.y)));
}

TEST(LaunchArgsTensor, AnUnknownNameIsRefusedWithTheOpsTensorNames) {
  const NamedTensors t;
  try {
    (void)t.args(DType::fp32).tensor<float>("weight");
    FAIL() << "no tensor 'weight'";
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find("'weight'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("x, mean, y"), std::string::npos) << e.what();
  }
}

TEST(LaunchArgsTensor, AStorageTypeOfTheWrongSizeIsRefused) {
  const NamedTensors t;
  const LaunchArgs bf16 = t.args(DType::bf16);
  EXPECT_NO_THROW((void)bf16.tensor<const std::uint16_t>("x"));  // the case dtype: 2 bytes
  EXPECT_NO_THROW((void)bf16.tensor<const float>("mean"));       // its own element type: fp32
  EXPECT_THROW((void)bf16.tensor<const float>("x"), std::logic_error);
  EXPECT_THROW((void)bf16.tensor<std::uint16_t>("mean"), std::logic_error);
}

TEST(LaunchArgsTensor, ALaunchGivenNoTensorNamesSaysSo) {
  const NamedTensors t;
  const LaunchArgs a{t.shape, DType::fp32, t.buffers, nullptr, nullptr};
  EXPECT_THROW((void)a.tensor<float>("x"), std::out_of_range);
}

TEST(RegistryProblems, TheBuiltCatalogueHasNone) {
  const auto problems = Registry::instance().problems();
  EXPECT_TRUE(problems.empty()) << problems.front();
}

TEST(RegistryProblems, ASoundRegistryHasNone) {
  Registry r;
  r.add(sound_op("op_a"));
  Variant v = sound_variant("op_a", "v1");
  v.tunables = {{"block", {128, 256}, ""}};
  r.add(v);
  EXPECT_TRUE(r.problems().empty()) << r.problems().front();
}

TEST(RegistryProblems, AnOpThatLabelsSomeIntegerAxesLabelsThemAll) {
  Op half = sound_op("op_a");
  half.axes.push_back({"cols", 4, {}, "", {}, "c"});
  Registry r;
  r.add(half);
  EXPECT_TRUE(HasProblem(r, {"op 'op_a'", "'rows'", ".label"}));
  Op flag = sound_op("op_f");
  flag.axes = {{"rows", 4, {}, "", {}, "r"}, {"causal", 0, {}, "", {"0", "1"}}};
  Registry flags;
  flags.add(flag);
  EXPECT_TRUE(HasProblem(flags, {"op 'op_f'", "0/1 choice", "'causal'"}));
  Op whole = half;
  whole.name = "op_b";
  whole.axes[0].label = "r";  // the choice axis 'layout' may go unlabelled: it reads as its choice
  Registry sound;
  sound.add(whole);
  EXPECT_TRUE(sound.problems().empty()) << sound.problems().front();
}

// unaligned_from_whole_inputs means the oracle is told which indices to give: it needs a
// positional oracle and a sample axis.
TEST(RegistryProblems, UnalignedFromWholeInputsNeedsAPositionalOracleAndASampleAxis) {
  Op plain = sound_op("op_a");
  plain.unaligned_from_whole_inputs = true;
  plain.sample_axis = "rows";
  Registry r;
  r.add(plain);
  EXPECT_TRUE(HasProblem(r, {"op 'op_a'", ".unaligned_from_whole_inputs", ".positional_oracle"}));
  Op positional = sound_op("op_b");
  positional.oracle = nullptr;
  positional.positional_oracle = [](const Shape&, const std::vector<std::int64_t>&, const std::vector<HostTensor>&,
                                    std::vector<HostTensor>&) {};
  positional.unaligned_from_whole_inputs = true;
  Registry no_axis;
  no_axis.add(positional);
  EXPECT_TRUE(HasProblem(no_axis, {"op 'op_b'", ".unaligned_from_whole_inputs", "sample_axis"}));
  positional.sample_axis = "rows";
  Registry sound;
  sound.add(positional);
  EXPECT_TRUE(sound.problems().empty()) << sound.problems().front();
  // The host oracle would give the unaligned outputs and the device oracle never run: refused.
  positional.device_unaligned_oracle = [](const DeviceOracleArgs&, std::vector<HostTensor>&) {};
  Registry both;
  both.add(positional);
  EXPECT_TRUE(HasProblem(both, {"op 'op_b'", ".unaligned_from_whole_inputs", ".device_unaligned_oracle", "keep one"}));
}

TEST(RegistryProblems, VariantOfAnUnknownOpIsNamedWithTheOp) {
  Registry r;
  r.add(sound_op("op_a"));
  r.add(sound_variant("op_b", "orphan"));
  EXPECT_TRUE(HasProblem(r, {"op_b:orphan", "op 'op_b'", "not registered"}));
  EXPECT_EQ(r.variants("op_a", true).size(), 0u);
}

TEST(RegistryProblems, DuplicateOpAndVariantAreReportedNotThrown) {
  Registry r;
  r.add(sound_op("op_a"));
  EXPECT_NO_THROW(r.add(sound_op("op_a")));
  r.add(sound_variant("op_a", "v1"));
  EXPECT_NO_THROW(r.add(sound_variant("op_a", "v1")));
  EXPECT_TRUE(HasProblem(r, {"op 'op_a'", "registered twice"}));
  EXPECT_TRUE(HasProblem(r, {"op_a:v1", "registered twice"}));
  EXPECT_EQ(r.ops().size(), 1u);
}

TEST(RegistryProblems, OpWithNoDtypesOrFunctionsIsNamed) {
  Registry r;
  Op op = sound_op("op_a");
  op.dtypes.clear();
  op.oracle = nullptr;
  r.add(op);
  EXPECT_TRUE(HasProblem(r, {"op 'op_a'", "no dtypes"}));
  EXPECT_TRUE(HasProblem(r, {"op 'op_a'", ".oracle"}));
}

TEST(RegistryProblems, APositionalOracleStandsInForTheOracleButNotBesideIt) {
  Op positional = sound_op("op_a");
  positional.oracle = nullptr;
  positional.positional_oracle = [](const Shape&, const std::vector<std::int64_t>&, const std::vector<HostTensor>&,
                                    std::vector<HostTensor>&) {};
  Registry alone;
  alone.add(positional);
  EXPECT_TRUE(alone.problems().empty());
  Op both = positional;
  both.oracle = sound_op("op_a").oracle;
  Registry r;
  r.add(both);
  EXPECT_TRUE(HasProblem(r, {"op 'op_a'", "both .oracle and .positional_oracle"}));
}

TEST(RegistryProblems, ADeviceOracleForUnalignedOutputsNeedsASampleAxis) {
  Op op = sound_op("op_a");
  op.sample_axis.clear();
  op.device_unaligned_oracle = [](const DeviceOracleArgs&, std::vector<HostTensor>&) {};
  Registry r;
  r.add(op);
  EXPECT_TRUE(HasProblem(r, {"op 'op_a'", ".device_unaligned_oracle but no sample_axis"}));
}

// Derived inputs (Distribution::derived) and the function that computes them come together.
TEST(RegistryProblems, DerivedInputsAndDeriveInputsComeTogether) {
  Op op = sound_op("op_a");
  op.default_shapes = {Shape{{{"rows", 4}, {"layout", "bshd"}}}};
  op.tensors = [](const Shape&, DType) {
    return std::vector<TensorSpec>{{.name = "x", .dims = {4}},
                                   {.name = "stat", .dims = {4}, .init = Distribution::derived()},
                                   {.name = "y", .dims = {4}, .is_output = true}};
  };
  Registry without;
  without.add(op);
  EXPECT_TRUE(HasProblem(without, {"op 'op_a'", "Distribution::derived", "no .derive_inputs"}));
  op.derive_inputs = [](const LaunchArgs&) {};
  Registry sound;
  sound.add(op);
  EXPECT_TRUE(sound.problems().empty()) << sound.problems().front();
  // A derive_inputs with nothing to derive.
  Op plain = sound_op("op_b");
  plain.default_shapes = op.default_shapes;
  plain.tensors = [](const Shape&, DType) {
    return std::vector<TensorSpec>{{.name = "x", .dims = {4}}, {.name = "y", .dims = {4}, .is_output = true}};
  };
  plain.derive_inputs = op.derive_inputs;
  Registry stray;
  stray.add(plain);
  EXPECT_TRUE(HasProblem(stray, {"op 'op_b'", "sets .derive_inputs but none of its inputs"}));
}

TEST(RegistryProblems, TunableNamedLikeAnAxisOfItsOpClashes) {
  Registry r;
  r.add(sound_op("op_a"));
  Variant v = sound_variant("op_a", "v1");
  v.tunables = {{"rows", {1}, ""}};
  r.add(v);
  EXPECT_TRUE(HasProblem(r, {"op_a:v1", "tunable 'rows'", "axis"}));
}

TEST(RegistryProblems, TunableNamedLikeAChoiceAxisOfAnotherOpClashes) {
  Registry r;
  r.add(sound_op("op_a"));
  Op other = sound_op("op_b");
  other.axes = {{"rows", 4, {}, ""}};
  r.add(other);
  Variant v = sound_variant("op_b", "v1");
  v.tunables = {{"layout", {1}, ""}};
  r.add(v);
  EXPECT_TRUE(HasProblem(r, {"op_b:v1", "tunable 'layout'", "choice axis", "op_a"}));
}

TEST(RegistryProblems, TunableWithoutValuesOrWithNonPositiveValuesIsNamed) {
  Registry r;
  r.add(sound_op("op_a"));
  Variant v = sound_variant("op_a", "v1");
  v.tunables = {{"block", {}, ""}, {"unroll", {4, 0}, ""}};
  r.add(v);
  EXPECT_TRUE(HasProblem(r, {"tunable 'block'", "no values"}));
  EXPECT_TRUE(HasProblem(r, {"tunable 'unroll'", "value 0"}));
}

TEST(RegistryProblems, AxisNameThatIsAChoiceInOneOpAndAnIntegerInAnotherClashes) {
  Registry r;
  r.add(sound_op("op_a"));
  Op other = sound_op("op_b");
  other.axes = {{"layout", 2, {}, ""}};
  r.add(other);
  EXPECT_TRUE(HasProblem(r, {"axis 'layout'", "op 'op_a'", "op 'op_b'"}));
}

TEST(RegistryProblems, DefaultShapeWithAnInvalidChoiceIsNamed) {
  Registry r;
  Op op = sound_op("op_a");
  op.default_shapes = {Shape{{{"rows", 8}, {"layout", "sbhd"}}}};
  r.add(op);
  EXPECT_TRUE(HasProblem(r, {"op 'op_a'", "rows=8,layout=sbhd"}));
}

TEST(RegistryProblems, DuplicateChoiceAndRowAxisThatIsNoAxisAreNamed) {
  Registry r;
  Op op = sound_op("op_a");
  op.axes[1].choices = {"bshd", "bshd"};
  op.sample_axis = "tokens";
  r.add(op);
  EXPECT_TRUE(HasProblem(r, {"choice 'bshd' twice"}));
  EXPECT_TRUE(HasProblem(r, {"sample_axis 'tokens'"}));
}

// ---- Shape with choice axes ----------------------------------------------------------------

TEST(ShapeChoices, IntegersAndChoicesAreReadByTheirOwnAccessors) {
  std::mt19937_64 rng(41);
  const std::int64_t rows = 1 + static_cast<std::int64_t>(rng() % 100000);
  const Shape s{{{"rows", rows}, {"layout", "bhsd"}, {"causal", "1"}}};
  EXPECT_EQ(s.at("rows"), rows);
  EXPECT_EQ(s.choice("layout"), "bhsd");
  EXPECT_EQ(s.choice("causal"), "1");
  EXPECT_THROW(s.at("layout"), std::logic_error);
  EXPECT_THROW(s.choice("rows"), std::logic_error);
  EXPECT_THROW(s.choice("heads"), std::out_of_range);
  EXPECT_FALSE(s.find("heads").has_value());
}

TEST(ShapeChoices, PrintedFormsKeepChoicesReadable) {
  const Shape s{{{"batch", 2}, {"layout", "bshd"}, {"seq", 128}, {"causal", "0"}}};
  EXPECT_EQ(s.to_assignments(), "batch=2,layout=bshd,seq=128,causal=0");
  EXPECT_EQ(s.to_compact(), "2x128,layout=bshd,causal=0");
  EXPECT_NE(s, (Shape{{{"batch", 2}, {"layout", "bhsd"}, {"seq", 128}, {"causal", "0"}}}));
  // A choice named "1" is not the integer 1.
  EXPECT_NE(AxisValue("1"), AxisValue(1));
}

}  // namespace
}  // namespace kwb

namespace kwb {
namespace {

// A tunable whose default depends on the shape: 8 for rows up to 4, else 16.
Tunable per_shape_block(std::string rule = "8 up to 4 rows, else 16", std::int64_t big = 16) {
  return Tunable{"block", {8, 16, 32}, "",
                 [big](const Shape& s, DType) { return s.at("rows") <= 4 ? std::int64_t{8} : big; },
                 std::move(rule)};
}

Op op_with_shapes(const std::string& name) {
  Op op = sound_op(name);
  op.default_shapes = {Shape{{{"rows", 2}, {"layout", "bshd"}}}, Shape{{{"rows", 64}, {"layout", "bshd"}}}};
  return op;
}

TEST(TunableDefaults, AShapeRulePicksPerShapeAndStatesItsRule) {
  const Tunable t = per_shape_block();
  EXPECT_EQ(default_value(t, Shape{{{"rows", 2}}}, DType::fp32), 8);
  EXPECT_EQ(default_value(t, Shape{{{"rows", 64}}}, DType::fp32), 16);
  EXPECT_EQ(default_text(t), "per shape: 8 up to 4 rows, else 16");
  const Tunable plain{"unroll", {4, 2}, ""};
  EXPECT_EQ(default_value(plain, Shape{{{"rows", 64}}}, DType::fp32), 4) << "no rule: the first value";
  EXPECT_EQ(default_text(plain), "4");
  Variant v = sound_variant("op_a", "v1");
  v.tunables = {t, plain};
  EXPECT_EQ(default_tunables(v, Shape{{{"rows", 64}}}, DType::fp32),
            (TunableValues{{"block", 16}, {"unroll", 4}}));
}

TEST(RegistryProblems, AShapeRuleWithoutItsWordsOrPickingAnUndeclaredValueIsNamed) {
  Registry r;
  r.add(op_with_shapes("op_a"));
  Variant silent = sound_variant("op_a", "v1");
  silent.tunables = {per_shape_block("")};
  r.add(silent);
  Variant stray = sound_variant("op_a", "v2");
  stray.tunables = {per_shape_block("8 or 24", 24)};
  r.add(stray);
  EXPECT_TRUE(HasProblem(r, {"op_a:v1", "tunable 'block'", "default_rule"}));
  EXPECT_TRUE(HasProblem(r, {"op_a:v2", "picks 24", "64", "not among its declared values"}));
  Registry sound;
  sound.add(op_with_shapes("op_a"));
  Variant fine = sound_variant("op_a", "v1");
  fine.tunables = {per_shape_block()};
  sound.add(fine);
  EXPECT_TRUE(sound.problems().empty()) << sound.problems().front();
}

}  // namespace
}  // namespace kwb
