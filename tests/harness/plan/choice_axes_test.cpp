// --axis for choice axes (layout=bshd,bhsd): accepted forms, and refusals that say what is valid.
#include <gtest/gtest.h>

#include "harness/plan/axes.hpp"
#include "harness/plan/planner.hpp"
#include "tests/support/mentions.hpp"

namespace kwb {
namespace {

using test::Mentions;

const std::vector<std::string> kLayouts = {"bshd", "bhsd"};

std::string choice_error(std::string_view text) {
  try {
    parse_choice_assignment(text, kLayouts);
  } catch (const AxisParseError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected AxisParseError for '" << text << "'";
  return {};
}

TEST(ParseChoiceAssignment, ListKeepsTheOrderWrittenWithoutDuplicates) {
  const auto a = parse_choice_assignment(" layout = bhsd, bshd ,bhsd", kLayouts);
  EXPECT_EQ(a.name, "layout");
  EXPECT_EQ(a.choices, (std::vector<std::string>{"bhsd", "bshd"}));
  EXPECT_TRUE(a.values.empty());
  EXPECT_EQ(a.axis_values(), (std::vector<AxisValue>{"bhsd", "bshd"}));
}

TEST(ParseChoiceAssignment, UnknownChoiceSuggestsTheClosestAndListsAll) {
  const std::string m = choice_error("layout=bshd,bhsq");
  EXPECT_TRUE(Mentions(m, "unknown choice 'bhsq'"));
  EXPECT_TRUE(Mentions(m, "did you mean 'bhsd'"));
  EXPECT_TRUE(Mentions(m, "bshd, bhsd"));
  EXPECT_TRUE(Mentions(m, "axis 'layout'"));
}

TEST(ParseChoiceAssignment, RangeIsRefusedBecauseTheAxisTakesNames) {
  const std::string m = choice_error("layout=1:4");
  EXPECT_TRUE(Mentions(m, "choice axis"));
  EXPECT_TRUE(Mentions(m, "takes names"));
  EXPECT_TRUE(Mentions(m, "e.g. layout=bshd,bhsd"));
}

TEST(ParseChoiceAssignment, EmptyListOrItemIsRefusedWithTheChoices) {
  EXPECT_TRUE(Mentions(choice_error("layout="), "e.g. layout=bshd,bhsd"));
  EXPECT_TRUE(Mentions(choice_error("layout=bshd,,bhsd"), "stray comma"));
  EXPECT_TRUE(Mentions(choice_error("lay out=bshd"), "invalid axis name"));
}

TEST(ParseAxisAssignmentWithChoices, PicksTheGrammarByTheAxisName) {
  const std::vector<std::string> causal = {"0", "1"};
  const ChoicesOf choices_of = [&](std::string_view axis) -> const std::vector<std::string>* {
    if (axis == "layout") return &kLayouts;
    if (axis == "causal") return &causal;
    return nullptr;
  };
  // "0" would be refused by the integer grammar (values are positive): here it is a name.
  EXPECT_EQ(parse_axis_assignment("causal=0,1", choices_of).choices, causal);
  EXPECT_EQ(parse_axis_assignment("cols=1k:4k:x2", choices_of).values,
            (std::vector<std::int64_t>{1024, 2048, 4096}));
  EXPECT_THROW(parse_axis_assignment("causal=2", choices_of), AxisParseError);
  EXPECT_THROW(parse_axis_assignment("cols=bshd", choices_of), AxisParseError);
}

TEST(ParseAxisFor, ReadsTheRegistrysChoiceAxes) {
  const auto a = parse_axis_for("layout=bhsd", Registry::instance());
  EXPECT_EQ(a.choices, (std::vector<std::string>{"bhsd"}));
  const auto b = parse_axis_for("block=128,512", Registry::instance());
  EXPECT_EQ(b.values, (std::vector<std::int64_t>{128, 512}));
  EXPECT_THROW(parse_axis_for("layout=bhds", Registry::instance()), AxisParseError);
}

TEST(ExpandSweepWithChoices, ChoicesTakePartInTheProduct) {
  const auto shapes = expand_sweep({{"seq", {64, 128}}, {"layout", {"bshd", "bhsd"}}});
  ASSERT_EQ(shapes.size(), 4u);
  EXPECT_EQ(shapes[0].to_assignments(), "seq=64,layout=bshd");
  EXPECT_EQ(shapes[1].to_assignments(), "seq=64,layout=bhsd");
  EXPECT_EQ(shapes[3].to_assignments(), "seq=128,layout=bhsd");
}

}  // namespace
}  // namespace kwb

namespace kwb {
namespace {

// An integer axis takes its own default even where it is not positive: window=0 is "none".
TEST(ParseAxisFor, AnAxisAcceptsItsOwnDefaultBelowOne) {
  const DefaultsOf defaults_of = [](std::string_view axis) {
    return axis == "window" ? std::vector<std::int64_t>{0} : std::vector<std::int64_t>{4096};
  };
  EXPECT_EQ(parse_axis_assignment("window=0,100", nullptr, defaults_of).values, (std::vector<std::int64_t>{0, 100}));
  try {
    parse_axis_assignment("window=-1", nullptr, defaults_of);
    FAIL() << "expected a refusal";
  } catch (const AxisParseError& e) {
    EXPECT_NE(std::string(e.what()).find("or the axis's own default 0"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_axis_assignment("cols=0", nullptr, defaults_of), AxisParseError);
  if (const Op* attention = Registry::instance().find_op("attention_fwd")) {
    (void)attention;
    EXPECT_EQ(parse_axis_for("window=0,100", Registry::instance()).values, (std::vector<std::int64_t>{0, 100}));
    EXPECT_THROW(parse_axis_for("seq=0", Registry::instance()), AxisParseError);
  }
}

}  // namespace
}  // namespace kwb
