// Environment differences between two reports (see environment_diff.hpp).
#include "reports/compare/environment_diff.hpp"

#include <functional>

#include <fmt/format.h>

namespace kwb {
namespace {

constexpr const char* kNotRecorded = "(not recorded)";

const TimingResult* first_timing(const Report& r) {
  for (const CaseRecord& c : r.cases)
    if (c.timing) return &*c.timing;
  return nullptr;
}

// A run setting, else the first timed case's value of it, else "(not recorded)".
std::string setting(const Report& r, const std::string& key,
                    const std::function<std::string(const TimingResult&)>& from_case) {
  if (auto it = r.run.settings.find(key); it != r.run.settings.end()) return it->second;
  if (const TimingResult* t = first_timing(r)) return from_case(*t);
  return kNotRecorded;
}

std::string gpu(const Report& r) { return r.run.device ? r.run.device->name : kNotRecorded; }

std::string driver(const Report& r) {
  if (!r.run.device) return kNotRecorded;
  const DeviceInfo& d = *r.run.device;
  const std::string api = fmt::format("{}.{}", d.driver_version / 1000, d.driver_version % 1000 / 10);
  return d.driver_release.empty() ? "CUDA " + api : fmt::format("{} (CUDA {})", d.driver_release, api);
}

std::string runtime(const Report& r) {
  if (!r.run.device) return kNotRecorded;
  const int v = r.run.device->runtime_version;
  return fmt::format("{}.{}", v / 1000, v % 1000 / 10);
}

}  // namespace

std::vector<EnvDifference> environment_differences(const Report& base, const Report& next) {
  using Getter = std::function<std::string(const Report&)>;
  const std::vector<std::pair<std::string, Getter>> aspects = {
      {"GPU", gpu},
      {"driver", driver},
      {"CUDA runtime", runtime},
      {"mode", [](const Report& r) { return setting(r, "mode", [](const TimingResult& t) { return std::string(to_string(t.mode)); }); }},
      {"flush", [](const Report& r) { return setting(r, "flush", [](const TimingResult& t) { return t.flush; }); }},
      {"launch", launch_of},
      {"preset", [](const Report& r) { return setting(r, "preset", [](const TimingResult& t) { return t.preset; }); }},
      {"timer", [](const Report& r) { return setting(r, "timer", [](const TimingResult& t) { return t.timer; }); }},
      // A report timed with the test-only slowdown switch on (harness/worker/test_slowdown.hpp) says so.
      {"test slowdown", [](const Report& r) {
         auto it = r.run.settings.find("test_slowdown");
         return it == r.run.settings.end() ? std::string("off") : it->second;
       }},
  };
  std::vector<EnvDifference> out;
  for (const auto& [what, get] : aspects) {
    std::string b = get(base), n = get(next);
    if (b != n) out.push_back({what, std::move(b), std::move(n)});
  }
  return out;
}

}  // namespace kwb
