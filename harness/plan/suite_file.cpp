// Suite YAML -> SuiteFile. Every refusal names the file, line, column and key path, says what
// was wrong, and how to write it instead; the first problem found stops the parse.
#include "harness/plan/suite_file.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "harness/record/stats.hpp"
#include "harness/plan/suggest.hpp"
#include "harness/plan/threshold.hpp"
#include "harness/catalogue/excerpt.hpp"

namespace kwb {
namespace {

constexpr std::size_t kMaxSuiteNameBytes = 200;

const std::vector<std::string> kTopKeys = {"name", "description", "plugins", "mode", "flush", "launch", "preset",
                                           "seed", "ceilings", "thresholds", "compare", "entries"};
const std::vector<std::string> kEntryKeys = {"ops", "variants", "dtypes", "shapes"};
const std::vector<std::string> kSuiteLevelKeys = {"plugins", "mode", "flush", "launch", "preset", "seed",
                                                  "ceilings", "thresholds", "compare"};
const std::vector<std::string> kCompareKeys = {"fail_on"};

std::string located_text(const std::string& file, const SuiteLocation& at, const std::string& message) {
  if (at.line <= 0) return fmt::format("{}: {}", file, message);
  return fmt::format("{}:{}:{}: {}: {}", file, at.line, at.column, at.key.empty() ? "(top level)" : excerpt(at.key),
                     message);
}

// Reads one file's nodes; every error goes through fail() so that it carries the location.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const SuiteLocation& at, const std::string& message) const {
    throw SuiteError(file_, at, message);
  }

  // The node's own place; a node without a mark (yaml-cpp gives none to some nulls) takes its
  // parent's line and column.
  static SuiteLocation at(const YAML::Node& n, std::string key, const SuiteLocation& parent) {
    const YAML::Mark m = n.Mark();
    if (m.line < 0) return {parent.line, parent.column, std::move(key)};
    return {m.line + 1, m.column + 1, std::move(key)};
  }

  static std::string kind(const YAML::Node& n) {
    switch (n.Type()) {
      case YAML::NodeType::Scalar: return "a value ('" + n.Scalar() + "')";
      case YAML::NodeType::Sequence: return "a list";
      case YAML::NodeType::Map: return "a map";
      default: return "nothing (the value is empty)";
    }
  }

  std::string scalar(const YAML::Node& n, const SuiteLocation& at, const std::string& expected) const {
    if (!n.IsScalar()) fail(at, fmt::format("expected {}, got {}", expected, kind(n)));
    return n.Scalar();
  }

  // One name or a list of names ("ops: rmsnorm_fwd" or "ops: [rmsnorm_fwd, softmax_fwd]").
  std::vector<Located<std::string>> names(const YAML::Node& n, const SuiteLocation& at, const std::string& what) const {
    const std::string expected = fmt::format("{} name or a list of them", what);
    if (n.IsScalar()) return {{n.Scalar(), at}};
    if (!n.IsSequence()) fail(at, fmt::format("expected {}, got {}", expected, kind(n)));
    if (n.size() == 0) fail(at, fmt::format("the list is empty; give at least one {} name or leave the key out", what));
    std::vector<Located<std::string>> out;
    for (std::size_t i = 0; i < n.size(); ++i) {
      const SuiteLocation item = this->at(n[i], fmt::format("{}[{}]", at.key, i), at);
      out.push_back({scalar(n[i], item, "a " + what + " name"), item});
    }
    return out;
  }

  struct Pair {
    std::string key;
    YAML::Node value;
    SuiteLocation key_at, value_at;
  };

  // The pairs of a map in file order. Keys must be strings, each once; with `known` given, one
  // of them (a "did you mean" otherwise).
  std::vector<Pair> pairs(const YAML::Node& map, const SuiteLocation& at, const std::string& prefix,
                          const std::vector<std::string>* known, const std::string& expected) const {
    if (!map.IsMap()) fail(at, fmt::format("expected {}, got {}", expected, kind(map)));
    std::vector<Pair> out;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const SuiteLocation key_at = this->at(it->first, prefix, at);
      const std::string key = scalar(it->first, key_at, "a key name");
      const std::string path = prefix.empty() ? key : prefix + "." + key;
      if (std::any_of(out.begin(), out.end(), [&](const Pair& p) { return p.key == key; }))
        fail({key_at.line, key_at.column, path}, fmt::format("key '{}' is given twice; keep one", excerpt(key)));
      if (known && std::find(known->begin(), known->end(), key) == known->end())
        fail({key_at.line, key_at.column, path}, unknown_name_message("key", key, *known));
      // An empty value ("ops:" and nothing) is marked where the next token starts, often the next
      // line: point at its key instead.
      const SuiteLocation value_at = it->second.IsNull() ? SuiteLocation{key_at.line, key_at.column, path}
                                                         : this->at(it->second, path, key_at);
      out.push_back({key, it->second, {key_at.line, key_at.column, path}, value_at});
    }
    return out;
  }

 private:
  std::string file_;
};

const YAML::Node* find(const std::vector<Reader::Pair>& pairs, std::string_view key, const Reader::Pair** pair = nullptr) {
  for (const auto& p : pairs)
    if (p.key == key) {
      if (pair) *pair = &p;
      return &p.value;
    }
  return nullptr;
}

std::uint64_t parse_seed_text(const Reader& r, const std::string& text, const SuiteLocation& at) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    r.fail(at, fmt::format("seed '{}' is not a whole number from 0 to 2^64-1, e.g. seed: 1", excerpt(text)));
  return value;
}

// An axis's values: 16384, "512:16384:x2", [512, 4100] or [bshd, bhsd], as one --axis string.
std::string axis_values(const Reader& r, const YAML::Node& n, const SuiteLocation& at) {
  const std::string expected = "axis values (16384, \"512:16384:x2\" or a list such as [512, 4100])";
  if (n.IsScalar()) return n.Scalar();
  if (!n.IsSequence() || n.size() == 0)
    r.fail(at, fmt::format("expected {}, got {}", expected, n.IsSequence() ? "an empty list" : Reader::kind(n)));
  std::string joined;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const SuiteLocation item = Reader::at(n[i], fmt::format("{}[{}]", at.key, i), at);
    if (i) joined += ',';
    joined += r.scalar(n[i], item, "one axis value or range");
  }
  return joined;
}

std::vector<SuiteAxis> read_grid(const Reader& r, const YAML::Node& n, const SuiteLocation& at) {
  std::vector<SuiteAxis> grid;
  for (const auto& p : r.pairs(n, at, at.key, nullptr, "a map of axes such as {rows: 16384, cols: \"1024:16384:x2\"}"))
    grid.push_back({{p.key, p.key_at}, {axis_values(r, p.value, p.value_at), p.value_at}});
  if (grid.empty()) r.fail(at, "the map names no axis; name at least one, e.g. {cols: \"1024:16384:x2\"}, or write shapes: default");
  return grid;
}

void read_shapes(const Reader& r, const YAML::Node& n, const SuiteLocation& at, SuiteEntry& e) {
  e.shapes_at = at;
  if (n.IsScalar()) {
    if (n.Scalar() == "default") e.shape_set = ShapeSet::standard;
    else if (n.Scalar() == "edge") e.shape_set = ShapeSet::edge;
    else r.fail(at, unknown_name_message("shape set", n.Scalar(), {"default", "edge"}) +
                    "; or give axes, e.g. shapes: {rows: 16384, cols: \"1024:16384:x2\"}");
  } else if (n.IsSequence()) {
    if (n.size() == 0) r.fail(at, "the list of shape grids is empty; give at least one map of axes or leave the key out");
    for (std::size_t i = 0; i < n.size(); ++i)
      e.grids.push_back(read_grid(r, n[i], Reader::at(n[i], fmt::format("{}[{}]", at.key, i), at)));
  } else {
    e.grids.push_back(read_grid(r, n, at));
  }
}

SuiteEntry read_entry(const Reader& r, const YAML::Node& n, const SuiteLocation& at) {
  if (n.IsMap())
    for (auto it = n.begin(); it != n.end(); ++it)
      if (it->first.IsScalar() &&
          std::count(kSuiteLevelKeys.begin(), kSuiteLevelKeys.end(), it->first.Scalar()))
        r.fail(Reader::at(it->first, at.key + "." + it->first.Scalar(), at),
               fmt::format("'{}' is a suite-level setting, not an entry's: a report holds one mode, flush, launch, "
                           "preset, seed and one set of thresholds per run (compare refuses to mix them); move it to the top "
                           "level of the file, or put these cases in a suite of their own", excerpt(it->first.Scalar())));
  const auto pairs = r.pairs(n, at, at.key, &kEntryKeys, "an entry (a map with ops and optional variants, dtypes, shapes)");
  SuiteEntry e;
  e.at = at;
  e.shapes_at = at;
  const Reader::Pair* p = nullptr;
  if (!find(pairs, "ops", &p))
    r.fail(at, "the entry has no 'ops'; name one op or a list of them (see `kwb list`), e.g. ops: rmsnorm_fwd");
  e.ops = r.names(p->value, p->value_at, "an op");
  if (find(pairs, "variants", &p)) e.variants = r.names(p->value, p->value_at, "a variant");
  if (find(pairs, "dtypes", &p))
    for (const auto& d : r.names(p->value, p->value_at, "a dtype")) {
      const auto dtype = parse_dtype(d.value);
      if (!dtype) r.fail(d.at, unknown_name_message("dtype", d.value, {"fp32", "fp16", "bf16"}));
      e.dtypes.push_back(*dtype);
    }
  if (find(pairs, "shapes", &p)) read_shapes(r, p->value, p->value_at, e);
  return e;
}

void read_thresholds(const Reader& r, const YAML::Node& n, const SuiteLocation& at, SuiteFile& s) {
  const auto threshold = [&](const YAML::Node& v, const SuiteLocation& v_at) {
    try {
      return parse_threshold(r.scalar(v, v_at, "a threshold such as 3% or 0.03"));
    } catch (const ThresholdError& e) {
      r.fail(v_at, e.what());
    }
  };
  if (n.IsScalar()) {  // thresholds: 3%  (the default for every op)
    s.default_threshold = threshold(n, at);
    return;
  }
  for (const auto& p : r.pairs(n, at, at.key, nullptr, "a threshold (3%) or a map such as {default: 3%, rmsnorm_fwd: 2%}")) {
    if (p.key == "default") s.default_threshold = threshold(p.value, p.value_at);
    else s.op_thresholds.push_back({{p.key, p.key_at}, threshold(p.value, p.value_at)});
  }
}

// compare: {fail_on: [missing, skipped]}: what else a compare against this suite's runs fails on.
void read_compare(const Reader& r, const YAML::Node& n, const SuiteLocation& at, SuiteFile& s) {
  const auto pairs = r.pairs(n, at, at.key, &kCompareKeys, "a map such as {fail_on: [missing, skipped]}");
  const Reader::Pair* p = nullptr;
  if (!find(pairs, "fail_on", &p))
    r.fail(at, "'compare' names nothing; give fail_on, e.g. compare: {fail_on: [missing, skipped]}, or drop the key");
  for (const auto& name : r.names(p->value, p->value_at, "a fail-on class")) {
    const auto c = parse_fail_on_class(name.value);
    if (!c) r.fail(name.at, unknown_name_message("fail-on class", name.value, fail_on_class_names()));
    if (std::find(s.compare_fail_on.begin(), s.compare_fail_on.end(), *c) != s.compare_fail_on.end())
      r.fail(name.at, fmt::format("'{}' is listed twice; keep one", excerpt(name.value)));
    s.compare_fail_on.push_back(*c);
  }
}

// Flow collections ([...], {...}) nested deeper than this are refused before yaml-cpp sees them:
// it gives up on them with "bad file". Suites nest under 10.
constexpr int kMaxYamlFlowDepth = 256;

// Where the text first nests flow collections deeper than kMaxYamlFlowDepth, outside quotes and
// comments (nullopt: nowhere).
std::optional<SuiteLocation> too_deep(std::string_view text) {
  int depth = 0, line = 1, column = 0;
  char quote = 0;  // ' or " while inside a quoted scalar
  bool comment = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    ++column;
    if (c == '\n') {
      ++line, column = 0, comment = false;
      continue;
    }
    if (comment) continue;
    if (quote) {
      if (escaped) escaped = false;
      else if (quote == '"' && c == '\\') escaped = true;
      else if (c == quote) quote = 0;
      continue;
    }
    if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t' || text[i - 1] == '\n')) comment = true;
    else if (c == '"' || c == '\'') quote = c;
    else if ((c == '[' || c == '{') && ++depth > kMaxYamlFlowDepth) return SuiteLocation{line, column, "(nesting)"};
    else if ((c == ']' || c == '}') && depth > 0) --depth;
  }
  return std::nullopt;
}

}  // namespace

SuiteError::SuiteError(const std::string& file_, const SuiteLocation& at_, const std::string& message_)
    : std::invalid_argument(located_text(file_, at_, message_)), file(file_), at(at_), message(message_) {}

SuiteFile parse_suite(std::string_view text, const std::string& path) {
  const Reader r(path);
  YAML::Node root;
  if (const auto at = too_deep(text))
    r.fail(*at, fmt::format("nested deeper than {} levels of [ ] and {{ }}; a suite nests under 10: this is not "
                            "one (see suites/smoke.yaml)",
                            kMaxYamlFlowDepth));
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {  // syntax errors, too-deep nesting
    r.fail({e.mark.line + 1, e.mark.column + 1, "(syntax)"},
           "YAML syntax error: " + e.msg + "; check the indentation and quoting around this place");
  }
  const SuiteLocation top{1, 1, ""};
  if (root.IsNull() || !root.IsDefined())
    r.fail(top, "the file holds no suite; it needs at least 'name' and 'entries' (see suites/smoke.yaml)");
  const auto pairs = r.pairs(root, Reader::at(root, "", top), "", &kTopKeys, "a map with name, entries and settings");
  SuiteFile s;
  s.path = path;
  const Reader::Pair* p = nullptr;
  if (!find(pairs, "name", &p)) r.fail(top, "missing required key 'name'; give the suite a name, e.g. name: smoke");
  s.name = r.scalar(p->value, p->value_at, "the suite's name");
  if (s.name.empty()) r.fail(p->value_at, "the name is empty; give the suite a name, e.g. name: smoke");
  // The name heads every report, table and compare of the suite: a line, not a document.
  if (s.name.size() > kMaxSuiteNameBytes)
    r.fail(p->value_at, fmt::format("the name '{}' is longer than {} bytes; give the suite a short name, e.g. name: "
                                    "smoke", excerpt(s.name), kMaxSuiteNameBytes));
  if (find(pairs, "description", &p)) s.description = r.scalar(p->value, p->value_at, "a description (text)");
  // Relative to the suite's folder, so that a suite and the plugin it names travel together.
  if (find(pairs, "plugins", &p))
    for (auto& plugin : r.names(p->value, p->value_at, "a plugin")) {
      if (plugin.value.empty()) r.fail(plugin.at, "the plugin path is empty; name its shared library, e.g. build/libmykernels.so");
      plugin.value = (std::filesystem::path(path).parent_path() / plugin.value).lexically_normal().string();
      s.plugins.push_back(std::move(plugin));
    }
  if (find(pairs, "mode", &p)) {
    const std::string text = r.scalar(p->value, p->value_at, "a mode (cold or hot)");
    const auto mode = parse_mode(text);
    if (!mode) r.fail(p->value_at, unknown_name_message("mode", text, {"cold", "hot"}));
    s.mode = *mode;
  }
  if (find(pairs, "flush", &p)) {
    const std::string text = r.scalar(p->value, p->value_at, "a flush (dirty or clean)");
    const auto flush = parse_flush_kind(text);
    if (!flush) r.fail(p->value_at, unknown_name_message("flush", text, {"dirty", "clean"}));
    if (!flush_fits_mode(*flush, s.mode))
      r.fail(p->value_at, "hot mode flushes nothing; drop 'flush' or set mode: cold");
    s.flush = *flush;
  }
  if (find(pairs, "launch", &p)) {
    const std::string text = r.scalar(p->value, p->value_at, "a launch (stream or graph)");
    const auto launch = parse_launch_kind(text);
    if (!launch) r.fail(p->value_at, unknown_name_message("launch", text, {"stream", "graph"}));
    s.launch = *launch;
  }
  if (find(pairs, "preset", &p)) {
    s.preset = r.scalar(p->value, p->value_at, "a preset (quick, default, precise or verify)");
    if (!stopping_preset(s.preset) && s.preset != kVerifyOnlyPreset)
      r.fail(p->value_at, unknown_name_message("preset", s.preset, {"quick", "default", "precise", "verify"}));
  }
  if (find(pairs, "seed", &p)) s.seed = parse_seed_text(r, r.scalar(p->value, p->value_at, "a seed (a whole number)"), p->value_at);
  if (find(pairs, "ceilings", &p)) {
    const std::string text = r.scalar(p->value, p->value_at, "cached, measure or datasheet");
    if (text == "cached") s.ceilings = SuiteCeilings::cached;
    else if (text == "measure") s.ceilings = SuiteCeilings::measure;
    else if (text == "datasheet") s.ceilings = SuiteCeilings::datasheet;
    else r.fail(p->value_at, unknown_name_message("ceilings choice", text, {"cached", "measure", "datasheet"}));
  }
  if (find(pairs, "thresholds", &p)) read_thresholds(r, p->value, p->value_at, s);
  if (find(pairs, "compare", &p)) read_compare(r, p->value, p->value_at, s);
  if (!find(pairs, "entries", &p))
    r.fail(top, "missing required key 'entries'; list what the suite runs, e.g. entries: [{ops: rmsnorm_fwd}]");
  if (!p->value.IsSequence() || p->value.size() == 0)
    r.fail(p->value_at, fmt::format("expected a list of entries (each a map with ops), got {}",
                                    p->value.IsSequence() ? "an empty list" : Reader::kind(p->value)));
  for (std::size_t i = 0; i < p->value.size(); ++i)
    s.entries.push_back(read_entry(r, p->value[i], Reader::at(p->value[i], fmt::format("entries[{}]", i), p->value_at)));
  return s;
}

SuiteFile load_suite(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw SuiteError(path.string(), {}, std::filesystem::exists(path, ec)
                                            ? "not a regular file; pass a suite file, e.g. suites/smoke.yaml"
                                            : "no such file; pass a suite file, e.g. suites/smoke.yaml (`ls suites/`)");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) throw SuiteError(path.string(), {}, "cannot read the file; check its permissions");
  return parse_suite(text.str(), path.string());
}

}  // namespace kwb
