// Axis assignment grammar, its error messages, the max_values guard, and sweep expansion.
#include "harness/plan/axes.hpp"
#include "tests/support/mentions.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <set>

namespace kwb {
namespace {

using test::Mentions;

using Values = std::vector<std::int64_t>;

// The message of the AxisParseError thrown for `text`; a test failure if none is thrown.
std::string assignment_error(std::string_view text, std::size_t max_values = 4096) {
  try {
    parse_axis_assignment(text, max_values);
  } catch (const AxisParseError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected AxisParseError for '" << text << "'";
  return {};
}

std::string values_error(std::string_view text, std::size_t max_values = 4096) {
  try {
    parse_axis_values(text, max_values);
  } catch (const AxisParseError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected AxisParseError for '" << text << "'";
  return {};
}

// The correction a message offers: the text after its last "e.g. ".
std::string suggested_fix(const std::string& message) {
  auto pos = message.rfind("e.g. ");
  return pos == std::string::npos ? std::string() : message.substr(pos + 5);
}

// ---- accepted forms ----

TEST(ParseAxisAssignment, SingleValue) {
  AxisAssignment a = parse_axis_assignment("cols=4096");
  EXPECT_EQ(a.name, "cols");
  EXPECT_EQ(a.values, Values({4096}));
}

TEST(ParseAxisAssignment, GeometricRangeIncludesStop) {
  AxisAssignment a = parse_axis_assignment("cols=1024:16384:x2");
  EXPECT_EQ(a.name, "cols");
  EXPECT_EQ(a.values, Values({1024, 2048, 4096, 8192, 16384}));
}

TEST(ParseAxisAssignment, GeometricRangeStopsAtLastValueNotPastStop) {
  EXPECT_EQ(parse_axis_assignment("cols=1000:5000:x2").values, Values({1000, 2000, 4000}));
}

TEST(ParseAxisAssignment, GeometricRangeWithLargerFactor) {
  EXPECT_EQ(parse_axis_assignment("cols=1:100:x3").values, Values({1, 3, 9, 27, 81}));
}

TEST(ParseAxisAssignment, ArithmeticRangeIncludesStopWhenReached) {
  EXPECT_EQ(parse_axis_assignment("cols=512:2048:+512").values, Values({512, 1024, 1536, 2048}));
}

TEST(ParseAxisAssignment, ArithmeticRangeStopsBeforePassingStop) {
  EXPECT_EQ(parse_axis_assignment("cols=1:10:+4").values, Values({1, 5, 9}));
}

TEST(ParseAxisAssignment, TwoPartRangeStepsByOne) {
  EXPECT_EQ(parse_axis_assignment("rows=3:6").values, Values({3, 4, 5, 6}));
}

TEST(ParseAxisAssignment, RangeWithEqualStartAndStopGivesOneValue) {
  EXPECT_EQ(parse_axis_assignment("cols=7:7:x2").values, Values({7}));
  EXPECT_EQ(parse_axis_assignment("cols=7:7:+3").values, Values({7}));
  EXPECT_EQ(parse_axis_assignment("cols=7:7").values, Values({7}));
}

TEST(ParseAxisAssignment, CommaListMixesValuesAndRangesInOrderWritten) {
  EXPECT_EQ(parse_axis_assignment("cols=512,4100,1024:4096:x2").values,
            Values({512, 4100, 1024, 2048, 4096}));
}

TEST(ParseAxisAssignment, SuffixesKAndMScaleByPowersOfTwoInEitherCase) {
  EXPECT_EQ(parse_axis_assignment("cols=16k,3K,2m,1M").values,
            Values({16384, 3072, 2097152, 1048576}));
}

TEST(ParseAxisAssignment, SuffixesWorkInEveryPartOfARange) {
  EXPECT_EQ(parse_axis_assignment("cols=1k:4k:x2").values, Values({1024, 2048, 4096}));
  EXPECT_EQ(parse_axis_assignment("cols=1k:3k:+1k").values, Values({1024, 2048, 3072}));
}

TEST(ParseAxisAssignment, DuplicatesRemovedKeepingFirstOccurrence) {
  EXPECT_EQ(parse_axis_assignment("cols=4096,1024:4096:x2,1024,512").values,
            Values({4096, 1024, 2048, 512}));
}

TEST(ParseAxisAssignment, NameMayUseUnderscoresAndDigitsAfterTheFirstCharacter) {
  EXPECT_EQ(parse_axis_assignment("_head_dim2=64").name, "_head_dim2");
  EXPECT_EQ(parse_axis_assignment("Rows=64").name, "Rows");
}

TEST(ParseAxisAssignment, SpacesAroundNameAndItemsAreIgnored) {
  AxisAssignment a = parse_axis_assignment(" cols = 512, 1024 ");
  EXPECT_EQ(a.name, "cols");
  EXPECT_EQ(a.values, Values({512, 1024}));
}

TEST(ParseAxisAssignment, Int64MaxIsAccepted) {
  EXPECT_EQ(parse_axis_assignment("n=9223372036854775807").values, Values({9223372036854775807}));
}

TEST(ParseAxisAssignment, RangesNearInt64MaxStopWithoutOverflowing) {
  // 2^62 * 2 would overflow; the range must end at 2^62 instead of wrapping around.
  EXPECT_EQ(parse_axis_assignment("n=4611686018427387904:9223372036854775807:x2").values,
            Values({4611686018427387904}));
  EXPECT_EQ(parse_axis_assignment("n=9223372036854775800:9223372036854775807:+5").values,
            Values({9223372036854775800, 9223372036854775805}));
}

// ---- errors: each says what is wrong, quotes the text, and shows a correct form ----

TEST(ParseAxisAssignment, ErrorsAreInvalidArguments) {
  EXPECT_THROW(parse_axis_assignment("cols"), std::invalid_argument);
}

TEST(ParseAxisAssignment, MissingEqualsIsRejectedWithExample) {
  std::string m = assignment_error("cols4096");
  EXPECT_TRUE(Mentions(m, "missing '='"));
  EXPECT_TRUE(Mentions(m, "'cols4096'"));
  EXPECT_TRUE(Mentions(m, "expected NAME=VALUES, e.g. cols=4096"));
}

TEST(ParseAxisAssignment, EmptyNameIsRejectedWithExample) {
  std::string m = assignment_error("=4096");
  EXPECT_TRUE(Mentions(m, "missing axis name"));
  EXPECT_TRUE(Mentions(m, "'=4096'"));
  EXPECT_TRUE(Mentions(m, "e.g. cols=4096"));
}

TEST(ParseAxisAssignment, NameNotAnIdentifierIsRejectedWithExample) {
  for (std::string_view text : {"1cols=4", "co-ls=4", "co ls=4"}) {
    std::string m = assignment_error(text);
    EXPECT_TRUE(Mentions(m, "invalid axis name"));
    EXPECT_TRUE(Mentions(m, "'" + std::string(text.substr(0, text.find('='))) + "'"));
    EXPECT_TRUE(Mentions(m, "e.g. cols=4096"));
  }
}

TEST(ParseAxisAssignment, EmptyValueListIsRejectedWithExample) {
  std::string m = assignment_error("cols=");
  EXPECT_TRUE(Mentions(m, "no values"));
  EXPECT_TRUE(Mentions(m, "'cols='"));
  EXPECT_TRUE(Mentions(m, "e.g. cols=4096"));
}

TEST(ParseAxisAssignment, EmptyItemIsRejectedWithExample) {
  for (std::string_view text : {"cols=512,,1024", "cols=512,", "cols=,512"}) {
    std::string m = assignment_error(text);
    EXPECT_TRUE(Mentions(m, "empty item"));
    EXPECT_TRUE(Mentions(m, "'" + std::string(text) + "'"));
    EXPECT_TRUE(Mentions(m, "e.g. cols=512,1024"));
  }
}

TEST(ParseAxisAssignment, NonNumericValueIsRejectedWithExample) {
  for (std::string_view value : {"abc", "1.5", "4096q", "k", "0x10"}) {
    std::string m = assignment_error("cols=" + std::string(value));
    EXPECT_TRUE(Mentions(m, "'" + std::string(value) + "'"));
    EXPECT_TRUE(Mentions(m, "not a number"));
    EXPECT_TRUE(Mentions(m, "e.g. cols=4096"));
  }
}

TEST(ParseAxisAssignment, ZeroIsRejectedBecauseValuesArePositive) {
  std::string m = assignment_error("cols=512,0");
  EXPECT_TRUE(Mentions(m, "'0' in 'cols=512,0'"));
  EXPECT_TRUE(Mentions(m, "positive"));
  EXPECT_TRUE(Mentions(m, "e.g. cols=4096"));
}

TEST(ParseAxisAssignment, NegativeValuesAreRejectedBecauseValuesArePositive) {
  for (std::string_view text : {"cols=-5", "cols=-5:10", "cols=5:-10", "cols=0:16:x2"}) {
    std::string m = assignment_error(text);
    EXPECT_TRUE(Mentions(m, "not positive")) << text;
    EXPECT_TRUE(Mentions(m, "e.g. cols=4096")) << text;
  }
  EXPECT_TRUE(Mentions(assignment_error("cols=-5"), "'-5'"));
}

TEST(ParseAxisAssignment, ValuesPastInt64AreRejectedAsOverflow) {
  for (std::string_view value : {"9223372036854775808", "99999999999999999999999",
                                 "9223372036854775807k", "9007199254740992m"}) {
    std::string m = assignment_error("cols=" + std::string(value));
    EXPECT_TRUE(Mentions(m, "'" + std::string(value) + "'"));
    EXPECT_TRUE(Mentions(m, "64-bit"));
    EXPECT_TRUE(Mentions(m, "e.g. cols="));
  }
  EXPECT_TRUE(Mentions(assignment_error("cols=1:99999999999999999999"), "64-bit"));
}

TEST(ParseAxisAssignment, StartGreaterThanStopIsRejectedWithSwappedExample) {
  std::string m = assignment_error("cols=5000:1000:x2");
  EXPECT_TRUE(Mentions(m, "'cols=5000:1000:x2'"));
  EXPECT_TRUE(Mentions(m, "greater than stop"));
  EXPECT_TRUE(Mentions(m, "e.g. cols=1000:5000:x2"));
}

TEST(ParseAxisAssignment, FactorOneIsRejectedBecauseItWouldNeverEnd) {
  std::string m = assignment_error("cols=1:16:x1");
  EXPECT_TRUE(Mentions(m, "'x1'"));
  EXPECT_TRUE(Mentions(m, "'cols=1:16:x1'"));
  EXPECT_TRUE(Mentions(m, "at least 2"));
  EXPECT_TRUE(Mentions(m, "never end"));
  EXPECT_TRUE(Mentions(m, "e.g. cols=1:16:x2"));
}

TEST(ParseAxisAssignment, FactorZeroOrNegativeIsRejected) {
  for (std::string_view factor : {"x0", "x-2"}) {
    std::string m = assignment_error("cols=1:16:" + std::string(factor));
    EXPECT_TRUE(Mentions(m, "'" + std::string(factor) + "'"));
    EXPECT_TRUE(Mentions(m, "at least 2"));
    EXPECT_TRUE(Mentions(m, "e.g. cols=1:16:x2"));
  }
}

TEST(ParseAxisAssignment, StepZeroOrNegativeIsRejected) {
  for (std::string_view step : {"+0", "+-4"}) {
    std::string m = assignment_error("cols=512:4096:" + std::string(step));
    EXPECT_TRUE(Mentions(m, "'" + std::string(step) + "'"));
    EXPECT_TRUE(Mentions(m, "must be positive"));
    EXPECT_TRUE(Mentions(m, "e.g. cols=512:4096:+512"));
  }
}

TEST(ParseAxisAssignment, StopThatIsNotANumberIsAMalformedRange) {
  EXPECT_EQ(assignment_error("cols=1024:x2"),
            "malformed range 'cols=1024:x2': stop 'x2' is not a number; expected "
            "START:STOP[:xFACTOR|:+STEP], e.g. cols=1024:16384:x2 or cols=512:4096:+512");
}

TEST(ParseAxisAssignment, EmptyOrNonNumericBoundsAreMalformedRanges) {
  for (std::string_view text : {"cols=:16", "cols=1:", "cols=abc:16", "cols=1::x2"}) {
    std::string m = assignment_error(text);
    EXPECT_TRUE(Mentions(m, "malformed range '" + std::string(text) + "'"));
    EXPECT_TRUE(Mentions(m, "e.g. cols=1024:16384:x2"));
  }
}

TEST(ParseAxisAssignment, TooManyRangePartsAreRejected) {
  std::string m = assignment_error("cols=1:2:x2:4");
  EXPECT_TRUE(Mentions(m, "malformed range 'cols=1:2:x2:4'"));
  EXPECT_TRUE(Mentions(m, "too many"));
  EXPECT_TRUE(Mentions(m, "e.g. cols=1024:16384:x2"));
}

TEST(ParseAxisAssignment, ThirdPartMustBeFactorOrStep) {
  for (std::string_view text : {"cols=1:16:*2", "cols=1:16:", "cols=1:16:2"}) {
    std::string m = assignment_error(text);
    EXPECT_TRUE(Mentions(m, "malformed range '" + std::string(text) + "'"));
    EXPECT_TRUE(Mentions(m, "xFACTOR or +STEP"));
  }
  for (std::string_view text : {"cols=1:16:xabc", "cols=1:16:x", "cols=1:16:+"}) {
    std::string m = assignment_error(text);
    EXPECT_TRUE(Mentions(m, "malformed range '" + std::string(text) + "'"));
    EXPECT_TRUE(Mentions(m, "not a number"));
  }
}

TEST(ParseAxisAssignment, ErrorInOneItemQuotesTheItemAndTheWholeText) {
  std::string m = assignment_error("cols=512,1024:x2");
  EXPECT_TRUE(Mentions(m, "malformed range '1024:x2' in 'cols=512,1024:x2'"));
}

// ---- the max_values guard ----

TEST(ParseAxisAssignment, RangeOfExactlyMaxValuesIsAccepted) {
  EXPECT_EQ(parse_axis_assignment("cols=1:4096").values.size(), 4096u);
  EXPECT_EQ(parse_axis_assignment("cols=1:8", 8).values.size(), 8u);
}

TEST(ParseAxisAssignment, RangeOverMaxValuesSaysHowManyAndSuggestsAFittingStep) {
  std::string m = assignment_error("cols=1:5000");
  EXPECT_TRUE(Mentions(m, "'cols=1:5000'"));
  EXPECT_TRUE(Mentions(m, "5000 values"));
  EXPECT_TRUE(Mentions(m, "4096"));
  EXPECT_TRUE(Mentions(m, "larger step"));
  // The suggestion itself must be accepted under the same limit.
  std::string fix = suggested_fix(m);
  ASSERT_FALSE(fix.empty()) << m;
  EXPECT_LE(parse_axis_assignment(fix).values.size(), 4096u) << fix;
}

TEST(ParseAxisAssignment, CustomMaxValuesIsHonouredWithAFittingSuggestion) {
  std::string m = assignment_error("cols=1:16:+1", 8);
  EXPECT_TRUE(Mentions(m, "16 values"));
  EXPECT_TRUE(Mentions(m, "limit of 8"));
  std::string fix = suggested_fix(m);
  ASSERT_FALSE(fix.empty()) << m;
  EXPECT_LE(parse_axis_assignment(fix, 8).values.size(), 8u) << fix;
}

TEST(ParseAxisAssignment, GeometricRangeOverMaxValuesSuggestsALargerFactor) {
  std::string m = assignment_error("cols=1:1024:x2", 4);
  EXPECT_TRUE(Mentions(m, "11 values"));
  EXPECT_TRUE(Mentions(m, "larger factor"));
  EXPECT_TRUE(Mentions(m, "e.g. cols=1:1024:x4"));
}

TEST(ParseAxisAssignment, HugeRangeIsRejectedWithoutExpandingIt) {
  auto begin = std::chrono::steady_clock::now();
  std::string m = assignment_error("cols=1:9223372036854775807");
  EXPECT_TRUE(Mentions(m, "9223372036854775807 values"));
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(1));
}

TEST(ParseAxisAssignment, GuardAppliesToEachRangeNotToTheWholeList) {
  // Two ranges of 4096 each are fine on their own; only one range past the limit is an error.
  EXPECT_EQ(parse_axis_assignment("cols=1:4096,5001:9096").values.size(), 8192u);
}

// ---- VALUES without a name ----

TEST(ParseAxisValues, ParsesTheSameGrammarWithoutAName) {
  EXPECT_EQ(parse_axis_values("512,1k:4k:x2,6000:7000:+500"),
            Values({512, 1024, 2048, 4096, 6000, 6500, 7000}));
}

TEST(ParseAxisValues, ErrorExamplesHaveNoName) {
  std::string m = values_error("0");
  EXPECT_TRUE(Mentions(m, "'0'"));
  EXPECT_TRUE(Mentions(m, "e.g. 4096"));
  EXPECT_FALSE(Mentions(m, "="));
  EXPECT_TRUE(Mentions(values_error("1024:x2"), "malformed range '1024:x2'"));
  EXPECT_TRUE(Mentions(values_error("1024:x2"), "e.g. 1024:16384:x2"));
}

TEST(ParseAxisValues, EmptyTextIsRejected) { EXPECT_TRUE(Mentions(values_error(""), "no values")); }

TEST(ParseAxisValues, MaxValuesIsHonoured) {
  EXPECT_TRUE(Mentions(values_error("1:100", 10), "100 values"));
  EXPECT_EQ(parse_axis_values("1:10", 10).size(), 10u);
}

// ---- sweep expansion ----

Shape swept_shape(std::int64_t rows, std::int64_t cols) {
  return Shape{{{"rows", rows}, {"cols", cols}}};
}

TEST(ExpandSweep, FirstAxisVariesSlowest) {
  std::vector<Shape> shapes = expand_sweep({{"rows", {1, 2}}, {"cols", {10, 20, 30}}});
  std::vector<Shape> expected = {swept_shape(1, 10), swept_shape(1, 20), swept_shape(1, 30),
                                 swept_shape(2, 10), swept_shape(2, 20), swept_shape(2, 30)};
  EXPECT_EQ(shapes, expected);
}

TEST(ExpandSweep, SizeIsTheProductOfAxisSizesAndEveryPointIsDistinct) {
  std::vector<Shape> shapes = expand_sweep({{"a", {1, 2}}, {"b", {1, 2, 3}}, {"c", {1, 2, 3, 4}}});
  ASSERT_EQ(shapes.size(), 24u);
  std::set<std::string> distinct;
  for (const Shape& s : shapes) distinct.insert(s.to_compact());
  EXPECT_EQ(distinct.size(), 24u);
  EXPECT_EQ(shapes.front().to_assignments(), "a=1,b=1,c=1");
  EXPECT_EQ(shapes[1].to_assignments(), "a=1,b=1,c=2");
  EXPECT_EQ(shapes.back().to_assignments(), "a=2,b=3,c=4");
}

TEST(ExpandSweep, SingleAxisKeepsValueOrder) {
  std::vector<Shape> shapes = expand_sweep({{"cols", {4096, 512, 1024}}});
  ASSERT_EQ(shapes.size(), 3u);
  EXPECT_EQ(shapes[0].at("cols"), 4096);
  EXPECT_EQ(shapes[1].at("cols"), 512);
  EXPECT_EQ(shapes[2].at("cols"), 1024);
}

TEST(ExpandSweep, AxisWithNoValuesGivesNoShapes) {
  EXPECT_TRUE(expand_sweep({{"rows", {1, 2}}, {"cols", {}}}).empty());
  EXPECT_TRUE(expand_sweep({{"rows", {}}}).empty());
}

TEST(ExpandSweep, NoAxesGivesOneEmptyShape) {
  std::vector<Shape> shapes = expand_sweep({});
  ASSERT_EQ(shapes.size(), 1u);
  EXPECT_TRUE(shapes[0].axes.empty());
}

}  // namespace
}  // namespace kwb
