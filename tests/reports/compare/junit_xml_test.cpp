// The JUnit XML of a comparison: well-formed (read back by a small strict parser), one testsuite
// per op, a <failure> with ratio, interval and p-value for slower and failed cases, escaping.
#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <stdexcept>

#include "reports/compare/compare_report.hpp"
#include "harness/record/atomic_file.hpp"
#include "reports/compare/junit_xml.hpp"
#include "tests/reports/compare/compare_test_support.hpp"
#include "tests/support/temp_dir.hpp"

namespace kwb {
namespace {

using test::empty_report;
using test::noisy_samples;
using test::scaled;
using test::timed_case;

// An element as read back: its name, attributes (unescaped), text, children.
struct Element {
  std::string name;
  std::map<std::string, std::string> attrs;
  std::string text;
  std::vector<Element> children;
  std::vector<const Element*> all(const std::string& n) const {
    std::vector<const Element*> out;
    for (const auto& c : children) {
      if (c.name == n) out.push_back(&c);
      for (const Element* d : c.all(n)) out.push_back(d);
    }
    return out;
  }
};

// A strict reader for the subset of XML the writer uses: a declaration, elements, attributes in
// double quotes, character data and the five predefined entities. Throws on anything malformed.
class XmlReader {
 public:
  explicit XmlReader(const std::string& s) : s_(s) {}
  Element document() {
    if (s_.rfind("<?xml", 0) != 0) fail("no XML declaration");
    pos_ = s_.find("?>") + 2;
    skip_space();
    Element root = element();
    skip_space();
    if (pos_ != s_.size()) fail("text after the root element");
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what + " at byte " + std::to_string(pos_)); }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  std::string name() {
    const std::size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '-' || s_[pos_] == '_' || s_[pos_] == '.')) ++pos_;
    if (start == pos_) fail("expected a name");
    return s_.substr(start, pos_ - start);
  }
  std::string unescape(const std::string& raw) {
    static const std::map<std::string, char> entities = {{"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
    std::string out;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '<') fail("raw '<' in text or attribute");
      if (raw[i] != '&') { out += raw[i]; continue; }
      const std::size_t end = raw.find(';', i);
      if (end == std::string::npos || !entities.contains(raw.substr(i + 1, end - i - 1))) fail("bad entity");
      out += entities.at(raw.substr(i + 1, end - i - 1));
      i = end;
    }
    return out;
  }
  Element element() {
    if (s_[pos_] != '<') fail("expected '<'");
    ++pos_;
    Element e;
    e.name = name();
    for (;;) {
      skip_space();
      if (s_.compare(pos_, 2, "/>") == 0) { pos_ += 2; return e; }
      if (s_[pos_] == '>') { ++pos_; break; }
      const std::string key = name();
      if (s_.compare(pos_, 2, "=\"") != 0) fail("expected =\"");
      pos_ += 2;
      const std::size_t end = s_.find('"', pos_);
      if (end == std::string::npos) fail("unterminated attribute");
      if (e.attrs.contains(key)) fail("duplicate attribute " + key);
      e.attrs[key] = unescape(s_.substr(pos_, end - pos_));
      pos_ = end + 1;
    }
    for (;;) {
      const std::size_t lt = s_.find('<', pos_);
      if (lt == std::string::npos) fail("unterminated element " + e.name);
      e.text += unescape(s_.substr(pos_, lt - pos_));
      pos_ = lt;
      if (s_.compare(pos_, 2, "</") == 0) {
        pos_ += 2;
        if (name() != e.name) fail("mismatched end tag for " + e.name);
        if (s_[pos_++] != '>') fail("expected '>'");
        return e;
      }
      e.children.push_back(element());
    }
  }
  const std::string& s_;
  std::size_t pos_ = 0;
};

CompareReport sample_comparison() {
  const auto s = noisy_samples(1, 100, 20.0, 0.01);
  Report base = test::empty_report("NVIDIA H100 80GB HBM3"), next = test::empty_report("NVIDIA H200");
  base.cases = {timed_case("rms", "same_v", 1, s), timed_case("rms", "slow_v", 1, s), timed_case("soft", "bad_v", 1, s),
                timed_case("soft", "gone_v", 1, s)};
  next.cases = {timed_case("rms", "same_v", 1, s), timed_case("rms", "slow_v", 1, scaled(s, 1.08)),
                timed_case("soft", "bad_v", 1, s, Disposition::failed), timed_case("soft", "new_v", 1, s)};
  next.cases[2].reason = "mismatch at out[3]: got <nan> & \"expected\" 1.5";
  CompareInputs in;
  in.base = &base;
  in.next = &next;
  in.base_name = "base&.json";
  in.new_name = "new.json";
  return compare_reports(in);
}

TEST(CompareJunitXml, IsWellFormedWithOneSuitePerOpAndFailuresForRegressions) {
  const std::string xml = compare_junit_xml(sample_comparison());
  Element root;
  ASSERT_NO_THROW(root = XmlReader(xml).document()) << xml;
  EXPECT_EQ(root.name, "testsuites");
  EXPECT_EQ(root.attrs["tests"], "5");
  EXPECT_EQ(root.attrs["failures"], "2");
  EXPECT_EQ(root.attrs["skipped"], "2");  // gone_v (only in BASE), new_v (only in NEW)
  const auto suites = root.all("testsuite");
  ASSERT_EQ(suites.size(), 2u);
  EXPECT_EQ(suites[0]->attrs.at("name"), "rms");
  EXPECT_EQ(suites[0]->attrs.at("tests"), "2");
  EXPECT_EQ(suites[0]->attrs.at("failures"), "1");
  EXPECT_EQ(suites[1]->attrs.at("name"), "soft");

  std::map<std::string, const Element*> by_name;
  for (const Element* t : root.all("testcase")) by_name[t->attrs.at("name")] = t;
  ASSERT_EQ(by_name.size(), 5u);
  const Element* slow = by_name.at("rms:slow_v:bf16:1x4096");
  ASSERT_EQ(slow->all("failure").size(), 1u);
  const std::string message = slow->all("failure")[0]->attrs.at("message");
  EXPECT_NE(message.find("slower: NEW/BASE 1.080"), std::string::npos) << message;
  EXPECT_NE(message.find("95% interval ["), std::string::npos) << message;
  EXPECT_NE(message.find(", p "), std::string::npos) << message;
  EXPECT_TRUE(by_name.at("rms:same_v:bf16:1x4096")->all("failure").empty());
  // The reason survives escaping intact.
  const Element* bad = by_name.at("soft:bad_v:bf16:1x4096");
  ASSERT_EQ(bad->all("failure").size(), 1u);
  EXPECT_NE(bad->all("failure")[0]->attrs.at("message").find("got <nan> & \"expected\""), std::string::npos);
  EXPECT_EQ(by_name.at("soft:gone_v:bf16:1x4096")->all("skipped").size(), 1u);
  EXPECT_EQ(by_name.at("soft:new_v:bf16:1x4096")->all("skipped").size(), 1u);
}

TEST(CompareJunitXml, EnvironmentDifferencesAreProperties) {
  Element root = XmlReader(compare_junit_xml(sample_comparison())).document();
  std::map<std::string, std::string> props;
  for (const Element* p : root.all("testsuite")[0]->all("property")) props[p->attrs.at("name")] = p->attrs.at("value");
  EXPECT_EQ(props["base"], "base&.json");
  EXPECT_EQ(props["env.GPU"], "BASE: NVIDIA H100 80GB HBM3 | NEW: NVIDIA H200");
}

TEST(CompareJunitXml, FailOnClassesBecomeFailuresOfTheirTypeAndTheGateIsAProperty) {
  const auto s = noisy_samples(2, 100, 20.0, 0.01);
  Report base = empty_report(), next = empty_report();
  base.cases = {timed_case("rms", "hot_v", 1, s), timed_case("rms", "gone_v", 1, s), timed_case("rms", "skip_v", 1, s)};
  CaseRecord skipped = timed_case("rms", "skip_v", 1, s, Disposition::skipped);
  skipped.timing.reset();
  next.cases = {timed_case("rms", "hot_v", 1, scaled(s, 1.08)), skipped};
  base.cases[0].timing->clocks = ClockSummary{1980, 1980, 1980, 10, 100, 0, {}};
  next.cases[0].timing->clocks = ClockSummary{1400, 1980, 1980, 10, 100, 30, {"sw_power_cap"}};
  CompareInputs in;
  in.base = &base;
  in.next = &next;
  in.threshold_source = "thresholds: 3% for every op (the default)";
  in.fail_on = {FailOnClass::ambiguous, FailOnClass::missing, FailOnClass::skipped};
  in.fail_on_source = "fails on: slower and failed cases, and ambiguous, missing, skipped (from --fail-on)";
  Element root = XmlReader(compare_junit_xml(compare_reports(in))).document();
  EXPECT_EQ(root.attrs["failures"], "3");
  EXPECT_EQ(root.attrs["skipped"], "0");
  std::map<std::string, const Element*> by_name;
  for (const Element* t : root.all("testcase")) by_name[t->attrs.at("name")] = t;
  auto failure_of = [&](const std::string& name) { return by_name.at(name)->all("failure").at(0)->attrs; };
  EXPECT_EQ(failure_of("rms:hot_v:bf16:1x4096").at("type"), "ambiguous");
  EXPECT_NE(failure_of("rms:hot_v:bf16:1x4096").at("message").find("ambiguous (throttled) (--fail-on ambiguous): throttled"),
            std::string::npos);
  EXPECT_EQ(failure_of("rms:gone_v:bf16:1x4096").at("type"), "missing");
  EXPECT_EQ(failure_of("rms:skip_v:bf16:1x4096").at("type"), "skipped");
  std::map<std::string, std::string> props;
  for (const Element* p : root.all("testsuite")[0]->all("property")) props[p->attrs.at("name")] = p->attrs.at("value");
  EXPECT_EQ(props["gate.thresholds"], "3% for every op (the default)");
  EXPECT_EQ(props["gate.fails on"], "slower and failed cases, and ambiguous, missing, skipped (from --fail-on)");
  // Without --fail-on the same cases are not failures: the missing and skipped ones are <skipped>.
  in.fail_on.clear();
  Element plain = XmlReader(compare_junit_xml(compare_reports(in))).document();
  EXPECT_EQ(plain.attrs["failures"], "0");
  EXPECT_EQ(plain.attrs["skipped"], "2");
}

TEST(CompareJunitXml, EscapesMarkupAndDropsControlCharacters) {
  EXPECT_EQ(xml_escape("a<b>&\"c'\x01\td"), "a&lt;b&gt;&amp;&quot;c&apos;?\td");
}

TEST(CompareJunitXml, WritesTheFile) {
  test::TempDir dir;
  write_compare_junit_xml(dir / "sub" / "junit.xml", sample_comparison());
  EXPECT_NO_THROW(XmlReader(read_text_file(dir / "sub" / "junit.xml")).document());
}

}  // namespace
}  // namespace kwb
