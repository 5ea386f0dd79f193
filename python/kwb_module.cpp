// The Python module `kwb`: the catalogue, planning, the run session and reports, as a script or
// notebook uses them. It binds the same layers the command line and the app use (the request
// layer harness/plan/run_request.hpp, the session harness/session/session.hpp, the report codec
// harness/record/json_report.hpp), so a sweep run from Python is planned, isolated, verified,
// timed and written exactly as `kwb run` does it: the cases run in a `kwb` worker process, never
// in the interpreter.
//
// Records and reports reach Python as plain objects (dicts, lists, numbers, strings) in the
// report's JSON form (docs/guide.md describes its fields), so what a script reads is what
// report.json holds. Errors in what the caller passed are ValueError with the request layer's
// message.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <dlfcn.h>

#include <chrono>
#include <filesystem>
#include <thread>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/catalogue/case_identity.hpp"
#include "harness/catalogue/plugin_loader.hpp"
#include "harness/catalogue/python_module_loader.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/plan/run_request.hpp"
#include "harness/plan/suite_file.hpp"
#include "harness/plan/suite_plugins.hpp"
#include "harness/record/json_report.hpp"
#include "harness/record/record_json.hpp"
#include "harness/record/version.hpp"
#include "harness/session/journal_plugins.hpp"
#include "harness/session/session.hpp"
#ifdef KWB_PYTHON_VARIANTS
#include "python/variants/variant_api.hpp"
#include "python/variants/variant_import.hpp"
#endif

namespace py = pybind11;

namespace kwb {
namespace {

// kwb's JSON as Python objects: through the json module, so every type is the one json.load gives.
py::object to_python(const nlohmann::ordered_json& j) {
  return py::module_::import("json").attr("loads")(dump_json(j));
}

py::dict axis_to_python(const AxisSpec& a) {
  py::dict d;
  d["name"] = a.name;
  d["help"] = a.help;
  if (a.is_choice()) {
    d["choices"] = a.choices;
  } else {
    d["default"] = a.default_value;
    d["sweep"] = a.sweep;
  }
  return d;
}

// Loads plugins (shared libraries) and Python modules of variants into the catalogue, as --plugin
// does; a refusal is a ValueError with the loader's message.
void load_plugins_or_raise(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    try {
      load_plugin(path);
    } catch (const PluginError& e) {
      throw py::value_error(e.what());
    }
  }
}

py::list catalogue(bool include_test_variants, const std::vector<std::string>& plugins) {
  load_plugins_or_raise(plugins);
  const Registry& registry = Registry::instance();
  py::list ops;
  for (const Op& op : registry.ops()) {
    if (op.test_only && !include_test_variants) continue;
    py::dict o;
    o["name"] = op.name;
    o["description"] = op.description;
    py::list dtypes, axes, variants;
    for (DType t : op.dtypes) dtypes.append(std::string(to_string(t)));
    for (const AxisSpec& a : op.axes) axes.append(axis_to_python(a));
    for (const Variant* v : registry.variants(op.name, include_test_variants)) {
      py::dict vd;
      vd["name"] = v->name;
      vd["role"] = std::string(to_string(v->role));
      vd["description"] = v->description;
      vd["uses"] = v->uses;
      const PluginSource* from = registry.source_of_variant(op.name, v->name);
      vd["plugin"] = from ? py::object(py::str(from->path)) : py::object(py::none());
      py::list tunables;
      for (const Tunable& t : v->tunables) {
        py::dict td;
        td["name"] = t.name;
        td["values"] = t.values;
        td["help"] = t.help;
        tunables.append(td);
      }
      vd["tunables"] = tunables;
      variants.append(vd);
    }
    o["dtypes"] = dtypes;
    o["axes"] = axes;
    o["variants"] = variants;
    ops.append(o);
  }
  return ops;
}

// The keyword arguments of plan() and Session(), as the request layer's settings. Lists of names
// may also be given as one comma-separated string, as on the command line.
// Settings left at None are not given: a suite's own values stand for them, as for a flag left
// out of `kwb run --suite` (a value given, even the default, wins over the suite's).
struct PlanArguments {
  std::vector<std::string> ops, variants, dtypes, axes;
  std::optional<std::string> shapes, mode, preset;
  std::optional<std::uint64_t> seed;
  std::string suite;
  bool include_test_variants = false;
  bool datasheet_ceilings = false;
  std::vector<std::string> plugins;  // shared libraries and .py files, loaded before planning
};

RunSettings settings_of(const PlanArguments& a) {
  RunSettings s;
  s.ops = a.ops;
  s.variants = a.variants;
  s.dtypes = a.dtypes;
  s.axes = a.axes;
  if (a.shapes) s.shapes = *a.shapes;
  if (a.mode) s.mode = *a.mode;
  if (a.preset) s.preset = *a.preset;
  if (a.seed) s.seed = std::to_string(*a.seed);
  s.suite = a.suite;
  s.include_test_variants = a.include_test_variants;
  s.datasheet_ceilings = a.datasheet_ceilings;
  s.given.axis = !a.axes.empty();
  s.given.shapes = a.shapes.has_value();
  s.given.mode = a.mode.has_value();
  s.given.preset = a.preset.has_value();
  s.given.seed = a.seed.has_value();
  return s;
}

// The settings given, as `kwb run` records its flags in the journal's header (cli/run_command.cpp,
// kPlanFlags), so that `kwb run --resume OUT` continues a run started from Python.
nlohmann::ordered_json plan_flags_of(const PlanArguments& a) {
  auto j = nlohmann::ordered_json::object();
  if (!a.ops.empty()) j["op"] = a.ops;
  if (!a.variants.empty()) j["variant"] = a.variants;
  if (!a.dtypes.empty()) j["dtype"] = a.dtypes;
  if (!a.axes.empty()) j["axis"] = a.axes;
  if (a.shapes) j["shapes"] = *a.shapes;
  if (a.mode) j["mode"] = *a.mode;
  if (a.preset) j["preset"] = *a.preset;
  if (a.seed) j["seed"] = std::to_string(*a.seed);
  if (!a.suite.empty()) j["suite"] = a.suite;
  if (a.include_test_variants) j["include-test-variants"] = true;
  if (a.datasheet_ceilings) j["datasheet-ceilings"] = true;
  if (!Registry::instance().plugins().empty()) j[kJournalPluginsKey] = plugins_json(Registry::instance());
  return j;
}

// The plugins given, then those the suite names (its `plugins:`), as `kwb run` loads them.
void load_plan_plugins(const PlanArguments& a) {
  load_plugins_or_raise(a.plugins);
  try {
    load_suite_plugins(a.suite);
  } catch (const SuiteError& e) {
    throw py::value_error(e.what());
  }
}

PlannedRun plan_or_raise(const PlanArguments& a) {
  load_plan_plugins(a);
  try {
    PlannedRun planned = plan_run(settings_of(a), Registry::instance());
    if (planned.cases.empty()) throw no_case_selected();
    return planned;
  } catch (const std::invalid_argument& e) {  // SettingError, SuiteError, TuningError
    throw py::value_error(e.what());
  }
}

std::vector<std::string> plan(const PlanArguments& a) {
  std::vector<std::string> identities;
  for (const CaseRequest& c : plan_or_raise(a).cases) identities.push_back(case_identity(c));
  return identities;
}

std::string default_worker() {
  if (const char* env = std::getenv("KWB_WORKER_EXE"); env && *env) return env;
  return KWB_PYTHON_DEFAULT_WORKER;  // the kwb this module was built beside
}

py::dict progress_to_python(const SessionProgress& p) {
  py::dict d;
  d["done"] = p.done;
  d["total"] = p.total;
  d["failed"] = p.failed;
  d["elapsed_s"] = p.elapsed_s;
  d["eta_s"] = p.eta_s ? py::cast(*p.eta_s) : py::none();
  d["current"] = p.current;
  d["cancel_requested"] = p.cancel_requested;
  return d;
}

// One run. run() blocks (without the GIL) until the plan is done or cancel() stops it, calling
// on_record(record, progress) for each case and on_started(identity, progress) as each starts, on
// the calling thread's interpreter (with the GIL); an exception raised by a callback cancels the
// run after the case in flight and is raised again by run().
class PySession {
 public:
  PySession(const PlanArguments& a, std::optional<std::string> out, std::string worker, int device)
      : planned_(plan_or_raise(a)) {
    SessionOptions o;
    o.worker_exe = worker.empty() ? default_worker() : worker;
    o.device = device;
    if (out) o.out = std::filesystem::path(*out);
    o.ceilings = planned_.ceilings;
    o.suite = planned_.suite;
    o.command_line = "python: kwb.Session";
    o.plan_flags = plan_flags_of(a);
    // The workers load the same plugins and Python modules, refusing a file changed since, and
    // import the Python files with this very interpreter (a virtual environment's torch and
    // triton), unless $KWB_PYTHON names another.
    o.worker_environment = plugin_environment();
    const std::string executable = py::module_::import("sys").attr("executable").cast<std::string>();
    if (!std::getenv("KWB_PYTHON") && !executable.empty()) o.worker_environment.emplace_back("KWB_PYTHON", executable);
    o.settings["started_by"] = "kwb Python module";
    options_ = std::move(o);
  }

  std::vector<std::string> cases() const {
    std::vector<std::string> ids;
    for (const CaseRequest& c : planned_.cases) ids.push_back(case_identity(c));
    return ids;
  }

  py::dict run(const std::function<void(py::object, py::dict)>& on_record,
               const std::function<void(std::string, py::dict)>& on_started) {
    if (ran_) throw std::logic_error("this Session has run already: make another to run again");
    ran_ = true;
    SessionCallbacks callbacks;
    if (on_record)
      callbacks.on_record = [this, on_record](const CaseRecord& r, const SessionProgress& p) {
        call_back([&] { on_record(to_python(to_json(r)), progress_to_python(p)); });
      };
    if (on_started)
      callbacks.on_started = [this, on_started](const CaseRequest& c, const SessionProgress& p) {
        call_back([&] { on_started(case_identity(c), progress_to_python(p)); });
      };
    session_ = std::make_unique<Session>(planned_.cases, options_, std::unique_ptr<CaseExecutor>{}, std::move(callbacks));
    if (cancel_before_run_) session_->cancel(CancelMode::finish_current);
    // The session runs on a thread of its own while this one waits without the GIL, in slices,
    // so that Ctrl-C (KeyboardInterrupt, a notebook's interrupt) is seen: the first stops the run
    // after the case in flight, a second abandons that case; the interrupt is raised once the
    // run has ended and written its report.
    session_->start();
    std::optional<py::error_already_set> interrupt;
    for (int interrupts = 0;;) {
      bool finished;
      {
        py::gil_scoped_release release;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        finished = session_->progress().state == SessionState::finished;
      }
      if (finished) break;
      if (PyErr_CheckSignals() != 0) {
        if (interrupt) PyErr_Clear();
        else interrupt.emplace();  // takes the pending exception
        session_->cancel(++interrupts == 1 ? CancelMode::finish_current : CancelMode::abandon_current);
      }
    }
    SessionResult result;
    {
      py::gil_scoped_release release;
      result = session_->wait();
    }
    // The session (and the callbacks it holds, which may refer to this object) goes now, with the
    // GIL held: a cycle through them would be one Python's collector cannot see.
    last_progress_ = session_->progress();
    session_.reset();
    if (interrupt) throw std::move(*interrupt);
    if (callback_error_) {
      py::error_already_set error = std::move(*callback_error_);
      callback_error_.reset();
      throw error;
    }
    py::dict d;
    d["outcome"] = std::string(to_string(result.outcome));
    d["message"] = result.message;
    d["report"] = to_python(report_to_json(result.report));
    d["write_errors"] = result.write_errors;
    return d;
  }

  // From another Python thread while run() blocks, or from a callback.
  // Before run(): the run stops before its first case.
  void cancel(bool abandon_current) {
    if (session_) session_->cancel(abandon_current ? CancelMode::abandon_current : CancelMode::finish_current);
    else if (!ran_) cancel_before_run_ = true;
  }

  py::object progress() const {
    if (session_) return progress_to_python(session_->progress());
    return ran_ ? py::object(progress_to_python(last_progress_)) : py::none();
  }

 private:
  template <class F>
  void call_back(F&& f) {
    py::gil_scoped_acquire gil;
    if (callback_error_) return;
    try {
      f();
    } catch (py::error_already_set& e) {
      callback_error_.emplace(std::move(e));
      if (session_) session_->cancel(CancelMode::finish_current);
    }
  }

  PlannedRun planned_;
  SessionOptions options_;
  std::unique_ptr<Session> session_;  // while run() runs
  bool ran_ = false;
  bool cancel_before_run_ = false;
  SessionProgress last_progress_;
  std::optional<py::error_already_set> callback_error_;
};

// A path given as str or os.PathLike (pathlib.Path).
std::string path_text(const py::object& path) {
  return py::str(py::module_::import("os").attr("fspath")(path)).cast<std::string>();
}

// plugins: one path or a list of them (str or os.PathLike).
std::vector<std::string> paths(const py::object& value, const char* what) {
  if (value.is_none()) return {};
  if (py::isinstance<py::str>(value) || py::hasattr(value, "__fspath__")) return {path_text(value)};
  std::vector<std::string> out;
  try {
    for (const py::handle item : value) out.push_back(path_text(py::reinterpret_borrow<py::object>(item)));
  } catch (py::error_already_set&) {
    throw py::type_error(std::string(what) + " takes a path or a list of paths");
  }
  return out;
}

py::object load_report(const py::object& path_like) {
  const std::string path = path_text(path_like);
  try {
    return to_python(report_to_json(read_report_json(path)));
  } catch (const std::exception& e) {  // ReportError: what, where, how to fix
    throw py::value_error(e.what());
  }
}

// The report's cases as a pandas DataFrame, one row per case, nested fields flattened with dots
// ("timing.span.median"). pandas is needed only here.
py::object report_dataframe(py::object report) {
  if (!py::isinstance<py::dict>(report)) report = load_report(report);  // a path
  py::module_ pandas;
  try {
    pandas = py::module_::import("pandas");
  } catch (py::error_already_set&) {
    throw py::import_error("kwb.dataframe needs pandas (apt-get install python3-pandas, or pip install pandas); "
                           "kwb.load_report gives the same records as plain objects without it");
  }
  return pandas.attr("json_normalize")(report["cases"]);
}

// ops, variants, dtypes: a list of names, or one comma-separated string.
std::vector<std::string> names(const py::object& value, const char* what) {
  if (value.is_none()) return {};
  if (py::isinstance<py::str>(value)) {
    std::vector<std::string> out;
    std::string text = value.cast<std::string>(), item;
    for (char c : text + ",") {
      if (c == ',') {
        if (!item.empty()) out.push_back(item);
        item.clear();
      } else {
        item += c;
      }
    }
    return out;
  }
  try {
    return value.cast<std::vector<std::string>>();
  } catch (const py::cast_error&) {
    throw py::type_error(std::string(what) + " takes a list of strings or one comma-separated string");
  }
}

// One axis value as the --axis grammar writes it: True/False as the 1/0 of a switch.
std::string axis_value(const py::handle& v) {
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>() ? "1" : "0";
  return py::str(v).cast<std::string>();
}

// axes: {"rows": [1024, 4096], "cols": 4096, "causal": True, "softcap": "0,30"} (a value may be any
// iterable: a list, a tuple, a range), or NAME=VALUES assignments: one string, or a list of them.
std::vector<std::string> axis_assignments(const py::object& value) {
  if (value.is_none()) return {};
  if (py::isinstance<py::str>(value)) return {value.cast<std::string>()};
  if (!py::isinstance<py::dict>(value)) {
    try {
      return value.cast<std::vector<std::string>>();
    } catch (const py::cast_error&) {
      throw py::type_error("axes takes a dict {name: values}, a NAME=VALUES string, or a list of them");
    }
  }
  std::vector<std::string> out;
  for (auto [key, v] : value.cast<py::dict>()) {
    std::string text = py::str(key).cast<std::string>() + "=";
    if (!py::isinstance<py::str>(v) && py::isinstance<py::iterable>(v)) {
      bool first = true;
      for (auto item : v) {
        text += (first ? "" : ",") + axis_value(item);
        first = false;
      }
    } else {
      text += axis_value(v);
    }
    out.push_back(text);
  }
  return out;
}

std::optional<std::string> optional_text(const py::object& value) {
  if (value.is_none()) return std::nullopt;
  return py::str(value).cast<std::string>();
}

PlanArguments plan_arguments(const py::object& ops, const py::object& variants, const py::object& dtypes,
                             const py::object& axes, const py::object& shapes, const py::object& mode,
                             const py::object& preset, const py::object& seed, const py::object& suite,
                             bool include_test_variants, bool datasheet_ceilings, const py::object& plugins) {
  PlanArguments a;
  a.ops = names(ops, "ops");
  a.variants = names(variants, "variants");
  a.dtypes = names(dtypes, "dtypes");
  a.axes = axis_assignments(axes);
  a.shapes = optional_text(shapes);
  a.mode = optional_text(mode);
  a.preset = optional_text(preset);
  if (!seed.is_none()) {
    try {
      a.seed = seed.cast<std::uint64_t>();
    } catch (const py::cast_error&) {
      throw py::value_error("seed takes an integer from 0 to 2^64-1");
    }
  }
  if (!suite.is_none()) a.suite = path_text(suite);
  a.include_test_variants = include_test_variants;
  a.datasheet_ceilings = datasheet_ceilings;
  a.plugins = paths(plugins, "plugins");
  return a;
}

}  // namespace
}  // namespace kwb

PYBIND11_MODULE(kwb, m) {
  using namespace kwb;
  // A plugin resolves kwb's functions (the registry) against whatever loaded it; Python opened this
  // module with its symbols local, so it makes them global, as the kwb executable's are.
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&default_worker), &self) && self.dli_fname)
    dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
#ifdef KWB_PYTHON_VARIANTS
  // @kwb.variant, and .py files loaded (plugins=...) in this interpreter; their cases run in a kwb
  // worker, which imports the file again through kwb's Python bridge.
  python::define_variant_api(m);
  set_python_module_loader(&python::import_python_variants);
#endif
  m.doc() = "Kernel Workbench: the catalogue, planning, run sessions and reports (see docs/python.md)";
  m.attr("__version__") = std::string(kToolVersion);
  m.def("worker", &default_worker, "The kwb executable whose worker runs the cases ($KWB_WORKER_EXE overrides it)");
  m.def(
      "catalogue",
      [](bool include_test_variants, py::object plugins) {
        return catalogue(include_test_variants, paths(plugins, "plugins"));
      },
      py::arg("include_test_variants") = false, py::arg("plugins") = py::none(),
      "Every op: name, description, dtypes, axes, and its variants (name, role, description, uses, tunables, and "
      "the plugin or Python file it came from); plugins: shared libraries or .py files to load first");
  // shapes, mode, preset, seed: None (not given) lets a suite's own values stand, as a flag left out.
#define KWB_PLAN_ARGS                                                                                           \
  py::arg("ops") = py::none(), py::arg("variants") = py::none(), py::arg("dtypes") = py::none(),                \
  py::arg("axes") = py::none(), py::arg("shapes") = py::none(), py::arg("mode") = py::none(),                   \
  py::arg("preset") = py::none(), py::arg("seed") = py::none(), py::arg("suite") = py::none(),                  \
  py::arg("include_test_variants") = false, py::arg("datasheet_ceilings") = false, py::arg("plugins") = py::none()
  m.def(
      "plan",
      [](py::object ops, py::object variants, py::object dtypes, py::object axes, py::object shapes, py::object mode,
         py::object preset, py::object seed, py::object suite, bool tests, bool datasheet, py::object plugins) {
        return plan(
            plan_arguments(ops, variants, dtypes, axes, shapes, mode, preset, seed, suite, tests, datasheet, plugins));
      },
      KWB_PLAN_ARGS,
      "The case identities `kwb run` would run with these settings (ValueError names a bad one); needs no GPU");
  py::class_<PySession>(m, "Session", "One run of a plan, as `kwb run` runs it (in a kwb worker process)")
      .def(py::init([](py::object ops, py::object variants, py::object dtypes, py::object axes, py::object shapes,
                       py::object mode, py::object preset, py::object seed, py::object suite, bool tests,
                       bool datasheet, py::object plugins, py::object out, std::string worker, int device) {
             std::optional<std::string> out_dir;
             if (!out.is_none()) out_dir = path_text(out);
             return std::make_unique<PySession>(
                 plan_arguments(ops, variants, dtypes, axes, shapes, mode, preset, seed, suite, tests, datasheet,
                                plugins),
                 out_dir, worker, device);
           }),
           KWB_PLAN_ARGS, py::arg("out") = py::none(), py::arg("worker") = "", py::arg("device") = 0)
      .def_property_readonly("cases", &PySession::cases, "The planned case identities, in plan order")
      .def("run", &PySession::run, py::arg("on_record") = nullptr, py::arg("on_started") = nullptr,
           "Runs the plan; returns {outcome, message, report, write_errors}. outcome: completed, cancelled, "
           "no_gpu (nothing ran: message says why) or bad_input. Ctrl-C stops it after the case in flight "
           "(a second one abandons that case) and is raised once the report is written")
      .def("cancel", &PySession::cancel, py::arg("abandon_current") = false,
           "Stops the run after the case in flight (or now, abandoning it); the report keeps what finished. "
           "Before run(): the run stops before its first case")
      .def("progress", &PySession::progress,
           "done, total, failed, elapsed_s, eta_s, current, cancel_requested; None before run()");
#undef KWB_PLAN_ARGS
  m.def("load_report", &load_report, py::arg("path"),
        "A report.json (str or os.PathLike) as plain objects: {schema, run, cases, ...}; ValueError says what "
        "is wrong and where");
  m.def("dataframe", &report_dataframe, py::arg("report"),
        "A report (a path, or what load_report returned) as a pandas DataFrame, one row per case");
}
