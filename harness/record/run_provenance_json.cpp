// The run-provenance codec: suite, shard and merge records of a run (run_provenance_json.hpp).
#include "harness/record/run_provenance_json.hpp"

#include <cstdint>

#include <fmt/format.h>

namespace kwb {

using json_read::Node;
using Json = nlohmann::ordered_json;

// {"name", "path", "thresholds": {"default": 0.03, "rmsnorm_fwd": 0.02}}: the thresholds as
// one object so that compare reads run.suite.thresholds.<op> or .default directly.
Json suite_json(const SuiteInfo& s) {
  Json thresholds = Json::object();
  thresholds["default"] = s.default_threshold;
  for (const auto& [op, fraction] : s.op_thresholds) thresholds[op] = fraction;
  Json j = Json::object();
  j["name"] = s.name;
  j["path"] = s.path;
  j["thresholds"] = std::move(thresholds);
  if (!s.compare_fail_on.empty()) {  // absent, not empty, for suites that do not set it
    Json fail_on = Json::array();
    for (FailOnClass c : s.compare_fail_on) fail_on.push_back(std::string(to_string(c)));
    j["compare"] = Json{{"fail_on", std::move(fail_on)}};
  }
  return j;
}

namespace {

// A threshold is a fraction in (0, 1): 3 would be 300%, which no compare could mean.
double read_threshold_fraction(const Node& n) {
  const double fraction = n.number();
  if (!(fraction > 0 && fraction < 1))
    n.fail(fmt::format("threshold {} is not a fraction in (0, 1) (0.03 means 3%)", fraction));
  return fraction;
}

}  // namespace

SuiteInfo read_suite(const Node& n) {
  n.object();
  SuiteInfo s;
  s.name = n["name"].string();
  s.path = n["path"].string();
  Node thresholds = n["thresholds"];
  s.default_threshold = read_threshold_fraction(thresholds["default"]);
  for (const auto& item : thresholds.object().items())
    if (item.key() != "default")
      s.op_thresholds[item.key()] = read_threshold_fraction(Node(item.value(), thresholds.child_path(item.key())));
  if (auto compare = n.find("compare")) {  // reports before `compare: {fail_on}` have none
    const Node fail_on = (*compare)["fail_on"];
    for (std::size_t i = 0; i < fail_on.size(); ++i) {
      const Node item = fail_on.at(i);
      const auto c = parse_fail_on_class(item.string());
      if (!c) item.fail(fmt::format("'{}' is not a class compare can fail on (ambiguous, missing, skipped)", item.string()));
      s.compare_fail_on.push_back(*c);
    }
  }
  return s;
}

// run.shard: {"index", "count", "plan_cases", "plan_digest"}.
Json shard_json(const ShardInfo& s) {
  return Json{{"index", s.index}, {"count", s.count}, {"plan_cases", s.plan_cases}, {"plan_digest", s.plan_digest}};
}

ShardInfo read_shard(const Node& n) {
  n.object();
  ShardInfo s;
  s.index = n["index"].integer<int>();
  s.count = n["count"].integer<int>();
  s.plan_cases = n["plan_cases"].integer<std::int64_t>();
  s.plan_digest = n["plan_digest"].string();
  if (s.count < 1) n["count"].fail(fmt::format("shard count {} is not at least 1", s.count));
  if (s.index < 0 || s.index >= s.count)
    n["index"].fail(fmt::format("shard index {} is not in [0, {})", s.index, s.count));
  if (s.plan_cases < 0) n["plan_cases"].fail("a negative number of cases");
  return s;
}

Json merge_json(const MergeInfo& m) {
  Json missing = Json::array();
  for (int i : m.missing_shards) missing.push_back(i);
  Json shards = Json::array();
  for (const auto& s : m.shards)
    shards.push_back({{"index", s.index}, {"file", s.file}, {"host", s.host}, {"device_name", s.device_name},
                      {"device_uuid", s.device_uuid}, {"started_at", s.started_at},
                      {"finished_at", s.finished_at}, {"cases", s.cases}});
  return Json{{"shard_count", m.shard_count}, {"plan_cases", m.plan_cases}, {"plan_digest", m.plan_digest},
              {"missing_shards", std::move(missing)}, {"ceilings_differ", m.ceilings_differ},
              {"shards", std::move(shards)}};
}

MergeInfo read_merge(const Node& n) {
  n.object();
  MergeInfo m;
  m.shard_count = n["shard_count"].integer<int>();
  m.plan_cases = n["plan_cases"].integer<std::int64_t>();
  m.plan_digest = n["plan_digest"].string();
  Node missing = n["missing_shards"];
  for (std::size_t i = 0; i < missing.size(); ++i) m.missing_shards.push_back(missing.at(i).integer<int>());
  m.ceilings_differ = n["ceilings_differ"].boolean();
  Node shards = n["shards"];
  for (std::size_t i = 0; i < shards.size(); ++i) {
    Node s = shards.at(i);
    s.object();
    MergedShard out;
    out.index = s["index"].integer<int>();
    out.file = s["file"].string();
    out.host = s["host"].string();
    out.device_name = s["device_name"].string();
    out.device_uuid = s["device_uuid"].string();
    out.started_at = s["started_at"].string();
    out.finished_at = s["finished_at"].string();
    out.cases = s["cases"].integer<std::int64_t>();
    m.shards.push_back(std::move(out));
  }
  return m;
}

}  // namespace kwb
