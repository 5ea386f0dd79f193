// Tuning files at run time (tuning_file.hpp).
#include "harness/plan/tuning_file.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/catalogue/excerpt.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/record/atomic_file.hpp"

namespace kwb {
namespace {

// Sum of |log(a / b)| over the integer axes; infinite when a choice axis differs or an axis is
// missing (another layout is not "near").
double distance(const Shape& a, const Shape& b) {
  if (a.axes.size() != b.axes.size()) return std::numeric_limits<double>::infinity();
  double d = 0;
  for (std::size_t i = 0; i < a.axes.size(); ++i) {
    const auto& [name, va] = a.axes[i];
    const auto& [other, vb] = b.axes[i];
    if (name != other || va.is_choice() != vb.is_choice()) return std::numeric_limits<double>::infinity();
    if (va.is_choice()) {
      if (va.choice() != vb.choice()) return std::numeric_limits<double>::infinity();
    } else {
      d += std::abs(std::log(static_cast<double>(std::max<std::int64_t>(va.integer(), 1)) /
                             static_cast<double>(std::max<std::int64_t>(vb.integer(), 1))));
    }
  }
  return d;
}

}  // namespace

TuningTable read_tuning_file(const std::filesystem::path& path) {
  const std::string where = "--tuning " + path.string();
  nlohmann::json j;
  try {
    const std::string text = read_text_file(path);
    check_json_text(text, path);
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw TuningError(fmt::format("{}: not a tuning file ({}); give the tune.json that `kwb tune` wrote", where,
                                  json_library_message(e.what())));
  } catch (const std::exception& e) {  // the file guard's own messages (not a file, too deep, NUL)
    throw TuningError(fmt::format("{}: not a tuning file ({}); give the tune.json that `kwb tune` wrote", where, e.what()));
  }
  try {
    if (j.value("schema", "") != "kwb.tune/1")
      throw TuningError(fmt::format("{}: schema '{}' is not kwb.tune/1; give the tune.json that `kwb tune` wrote",
                                    where, excerpt(j.value("schema", ""))));
    TuningTable t{path.string(), j.at("op").get<std::string>(), j.at("variant").get<std::string>(),
                  j.at("device").get<std::string>(), {}};
    const Op* op = Registry::instance().find_op(t.op);
    const Variant* v = Registry::instance().find_variant(t.op, t.variant);
    if (!op || !v)
      throw TuningError(fmt::format("{}: {}:{} is not in this build's catalogue (`kwb list`)", where, excerpt(t.op),
                                    excerpt(t.variant)));
    for (const auto& s : j.at("shapes")) {
      if (s.at("best").is_null()) continue;  // nothing passed at that shape
      TuningTable::Entry e;
      const auto dtype = parse_dtype(s.at("dtype").get<std::string>());
      if (!dtype) throw TuningError(fmt::format("{}: unknown dtype '{}'", where, excerpt(s.at("dtype").get<std::string>())));
      e.dtype = *dtype;
      for (const auto& axis : op->axes) {  // the op's axis order, as a planned shape has it
        const auto& value = s.at("shape").at(axis.name);
        if (value.is_string()) e.shape.axes.push_back({axis.name, AxisValue(value.get<std::string>())});
        else e.shape.axes.push_back({axis.name, AxisValue(value.get<std::int64_t>())});
      }
      for (const Tunable& declared : v->tunables) {  // the variant's declaration order
        const auto& best = s.at("best").at("tunables");
        if (!best.contains(declared.name))
          throw TuningError(fmt::format("{}: shape {} has no value for tunable '{}'", where,
                                        excerpt(s.value("shape_compact", "?")), declared.name));
        const auto value = best.at(declared.name).get<std::int64_t>();
        if (std::find(declared.values.begin(), declared.values.end(), value) == declared.values.end())
          throw TuningError(fmt::format("{}: {}={} is not a value {} declares (tune again with this build)", where,
                                        declared.name, value, t.variant));
        e.best.push_back({declared.name, value});
      }
      t.entries.push_back(std::move(e));
    }
    return t;
  } catch (const nlohmann::json::exception& e) {
    throw TuningError(fmt::format("{}: {}; give the tune.json that `kwb tune` wrote", where, json_library_message(e.what())));
  }
}

std::optional<TunableValues> tuned_for(const TuningTable& table, DType dtype, const Shape& shape) {
  const TuningTable::Entry* nearest = nullptr;
  double best = std::numeric_limits<double>::infinity();
  for (const auto& e : table.entries) {
    if (e.dtype != dtype) continue;
    const double d = distance(e.shape, shape);
    if (d < best) best = d, nearest = &e;  // the first of equals: the file's order
  }
  if (!nearest) return std::nullopt;
  return nearest->best;
}

std::size_t apply_tuning(std::vector<CaseRequest>& cases, const std::vector<TuningTable>& tables,
                         const std::vector<AxisAssignment>& given_axes) {
  std::size_t changed = 0;
  for (CaseRequest& c : cases)
    for (const TuningTable& t : tables) {
      if (c.op != t.op || c.variant != t.variant) continue;
      auto tuned = tuned_for(t, c.dtype, c.shape);
      if (!tuned) continue;
      // Both hold the variant's tunables in declaration order; an --axis naming one keeps its value.
      for (std::size_t i = 0; i < tuned->size(); ++i)
        if (std::any_of(given_axes.begin(), given_axes.end(),
                        [&](const AxisAssignment& a) { return a.name == (*tuned)[i].first; }))
          (*tuned)[i].second = c.tunables[i].second;
      if (*tuned != c.tunables) ++changed;
      c.tunables = std::move(*tuned);
    }
  return changed;
}

}  // namespace kwb
