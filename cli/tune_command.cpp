// `kwb tune`: every combination of one variant's declared tunables (or the values --axis gives for
// some of them), each verified and timed as `kwb run` does (journal, report, progress with ETA,
// Ctrl-C keeps what was measured), then per shape the ranking: DIR/tune.json and a short table.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/shape_label.hpp"
#include "cli/commands.hpp"
#include "cli/flag_values.hpp"
#include "cli/plugin_flags.hpp"
#include "cli/progress_display.hpp"
#include "cli/run_flags.hpp"
#include "harness/plan/suggest.hpp"
#include "harness/record/atomic_file.hpp"
#include "harness/record/json_report.hpp"
#include "reports/tune/tune_summary.hpp"

namespace kwb::cli {
namespace {

struct TuneFlags {
  std::string op, variant, top = "5";
  RunFlags run;
};

// The variant, or a message naming what is wrong and what exists.
const Variant* find_tunable_variant(const std::string& op_name, const std::string& variant_name, std::string& error) {
  const Registry& registry = Registry::instance();
  const Op* op = registry.find_op(op_name);
  if (!op) {
    error = fmt::format("--op: unknown op '{}' (`kwb list` shows them)", op_name);
    return nullptr;
  }
  const Variant* v = registry.find_variant(op_name, variant_name);
  if (!v) {
    std::vector<std::string> names;
    for (const Variant* candidate : registry.variants(op_name, false))
      if (!candidate->tunables.empty()) names.push_back(candidate->name);
    error = fmt::format("--variant: op '{}' has no variant '{}'", op_name, variant_name);
    if (auto close = closest_match(variant_name, names)) error += fmt::format("; did you mean '{}'?", *close);
    error += names.empty() ? "; none of its variants has tunables" : "; those with tunables: " + fmt::format("{}", fmt::join(names, ", "));
    return nullptr;
  }
  if (v->tunables.empty()) {
    error = fmt::format("--variant: {}:{} declares no tunables, so there is nothing to search", op_name, variant_name);
    return nullptr;
  }
  return v;
}

void print_tuning(std::ostream& out, const TuneSummary& summary, std::size_t top_n) {
  for (const TunedShape& s : summary.shapes) {
    out << fmt::format("\n{} {} {}: {} configurations timed, {} failed, {} skipped\n", summary.variant,
                       to_string(s.dtype), shape_label(summary.op, s.shape), s.ranked.size(), s.failed, s.skipped);
    for (std::size_t i = 0; i < s.ranked.size() && i < top_n; ++i) {
      const auto& c = s.ranked[i];
      out << fmt::format("  {:>2}. {:<56} {:>10.2f} us  noise {:.1f}%{}\n", i + 1, to_assignments(c.tunables),
                         c.median_us, 100 * c.noise,
                         s.default_config && c.tunables == s.default_config->tunables ? "  (default)" : "");
    }
    if (auto speedup = s.speedup_over_default())
      out << fmt::format("  best against the declared default: {:.3f}x\n", *speedup);
    for (const auto& [why, n] : s.reasons) out << fmt::format("  {} x {}\n", n, why.substr(0, 140));
  }
}

// DIR/report.json -> the ranking on stdout and DIR/tune.json; the exit code given, or 1 when the
// report cannot be summarised.
int write_summary(const std::filesystem::path& out, std::size_t top_n, int exit_code) {
  const std::filesystem::path report_path = out / "report.json";
  try {
    const Report report = read_report_json(report_path);
    const Variant* v = report.cases.empty() ? nullptr
                                            : Registry::instance().find_variant(report.cases.front().op,
                                                                                report.cases.front().variant);
    // The variant's defaults at each tuned shape (a default may depend on the shape).
    const TuneSummary summary = summarize_tuning(report, [&](const Shape& shape, DType dtype) {
      return v ? default_tunables(*v, shape, dtype) : TunableValues{};
    });
    print_tuning(std::cout, summary, top_n);
    const auto tune_path = out / "tune.json";
    atomic_write_file(tune_path, tune_json(summary, report, top_n).dump(1) + "\n");
    std::cerr << "kwb tune: wrote " << tune_path.string()
              << (summary.complete ? "" : " (search interrupted: the configurations measured)") << "\n";
    return exit_code;
  } catch (const std::exception& e) {
    std::cerr << "kwb tune: error: cannot summarise " << report_path.string() << ": " << e.what() << "\n";
    return exit_code == kExitOk ? kExitCaseFailed : exit_code;
  }
}

bool has_report(int rc) { return rc == kExitOk || rc == kExitCaseFailed || rc == kExitInterrupted; }

}  // namespace

void add_tune_command(CLI::App& app, int& exit_code, const std::string& self_exe) {
  auto* cmd = app.add_subcommand(
      "tune", "Search a variant's launch configurations: every combination of its tunables, verified and timed "
              "per shape; writes DIR/tune.json (every configuration, the best, the top N) beside the run's reports");
  static TuneFlags f;
  f.run.out = "tune";
  cmd->add_option("--op", f.op, "The op");
  cmd->add_option("--variant", f.variant, "The variant whose tunables are searched");
  cmd->add_option("--dtype,-d", f.run.dtypes, "fp32, fp16, bf16 (default: all the op defines)")->delimiter(',');
  cmd->add_option("--axis,-a", f.run.axes,
                  "NAME=VALUES as for `kwb run`: shapes, and for a tunable the values to try (default: every value "
                  "it declares)");
  cmd->add_option("--shapes", f.run.shapes, "Shapes when --axis names none: default or edge");
  cmd->add_option("--top", f.top, "Configurations listed per shape (default 5)")->type_name("N");
  cmd->add_option("--preset", f.run.preset, "Stopping rule: quick, default (the default) or precise");
  cmd->add_option("--mode", f.run.mode, "cold (default) or hot");
  cmd->add_option("--flush", f.run.flush, "Cold-mode L2 flush: dirty (default) or clean");
  cmd->add_option("--launch", f.run.launch, "stream (default) or graph (each sample a CUDA graph replay)");
  cmd->add_option("--out", f.run.out, "Output folder (default: tune)");
  cmd->add_option("--device", f.run.device, "CUDA device index (default: 0)")->type_name("INT");
  cmd->add_option("--seed", f.run.seed, "Seed of the input generator (default: 1)")->type_name("UINT");
  cmd->add_option("--case-timeout", f.run.case_timeout_s, "Watchdog per case, seconds (default: 120): the longest wait for a case's inputs and oracle, and again for its launches")->type_name("SECONDS");
  cmd->add_option("--progress", f.run.progress, kProgressFlagHelp)->type_name("bar|lines|none");
  cmd->add_flag("--list-cases", f.run.list_cases, "Print the configurations planned and exit; needs no GPU");
  cmd->add_option("--resume", f.run.resume,
                  "Continue the interrupted search whose --out folder is DIR (its journal gives op, variant, shapes "
                  "and settings), then write its tune.json")
      ->type_name("DIR");
  static std::vector<std::string> plugins;
  add_plugin_option(cmd, plugins);
  cmd->callback([cmd, &exit_code, self_exe] {
    if (!load_plugin_flags("kwb tune", plugins)) {
      exit_code = kExitBadInput;
      return;
    }
    f.run.verb = "tune";  // the shared run path's messages say "kwb tune"
    std::string error;
    if (!f.run.resume.empty()) {
      for (const char* flag : {"--op", "--variant", "--dtype", "--axis", "--shapes", "--preset", "--mode", "--flush",
                               "--launch", "--seed", "--out", "--list-cases"})
        if (cmd->count(flag)) {
          std::cerr << "kwb tune: --resume: the search's plan and folder come from its journal; leave out " << flag
                    << "\n";
          exit_code = kExitBadInput;
          return;
        }
      std::size_t top_n = 5;
      try {
        top_n = static_cast<std::size_t>(parse_positive_count("--top", f.top));
      } catch (const std::invalid_argument& e) {
        std::cerr << "kwb tune: " << e.what() << "\n";
        exit_code = kExitBadInput;
        return;
      }
      const int rc = run_from_flags(f.run, nlohmann::ordered_json::object(), self_exe, invoked_command_line());
      exit_code = has_report(rc) ? write_summary(f.run.resume, top_n, rc) : rc;
      return;
    }
    if (f.op.empty() || f.variant.empty()) {
      std::cerr << "kwb tune: --op and --variant name what to search (or --resume DIR continues a search)\n";
      exit_code = kExitBadInput;
      return;
    }
    const Variant* variant = find_tunable_variant(f.op, f.variant, error);
    std::size_t top_n = 0;
    try {
      top_n = static_cast<std::size_t>(parse_positive_count("--top", f.top));
    } catch (const std::invalid_argument& e) {
      error = e.what();
    }
    if (!variant || !error.empty()) {
      std::cerr << "kwb tune: " << error << "\n";
      exit_code = kExitBadInput;
      return;
    }
    RunFlags run = f.run;
    run.ops = {f.op};
    run.variants = {f.variant};
    for (const Tunable& t : variant->tunables) {
      const bool given = std::any_of(run.axes.begin(), run.axes.end(),
                                     [&](const std::string& a) { return a.rfind(t.name + "=", 0) == 0; });
      if (!given) run.axes.push_back(fmt::format("{}={}", t.name, fmt::join(t.values, ",")));
    }
    run.given = {.axis = !run.axes.empty(), .shapes = cmd->count("--shapes") > 0, .mode = cmd->count("--mode") > 0,
                 .flush = cmd->count("--flush") > 0, .preset = cmd->count("--preset") > 0,
                 .seed = cmd->count("--seed") > 0, .launch = cmd->count("--launch") > 0};
    // The journal's header records the plan as `kwb run` flags, so `kwb run --resume DIR` continues
    // an interrupted search.
    nlohmann::ordered_json given = {{"op", run.ops}, {"variant", run.variants}, {"axis", run.axes}};
    if (!run.dtypes.empty()) given["dtype"] = run.dtypes;
    const std::pair<const char*, const std::string*> written[] = {
        {"shapes", &run.shapes}, {"preset", &run.preset}, {"mode", &run.mode},
        {"flush", &run.flush},   {"launch", &run.launch}, {"seed", &run.seed},
        {"case-timeout", &run.case_timeout_s}};
    for (const auto& [name, value] : written)
      if (cmd->count(std::string("--") + name)) given[name] = *value;
    const int rc = run_from_flags(run, given, self_exe, invoked_command_line());
    exit_code = run.list_cases || !has_report(rc) ? rc : write_summary(run.out, top_n, rc);
  });
}

}  // namespace kwb::cli
