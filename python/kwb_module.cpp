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

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/catalogue/case_identity.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/plan/run_request.hpp"
#include "harness/record/json_report.hpp"
#include "harness/record/record_json.hpp"
#include "harness/record/version.hpp"
#include "harness/session/session.hpp"

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

py::list catalogue(bool include_test_variants) {
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
struct PlanArguments {
  std::vector<std::string> ops, variants, dtypes, axes;
  std::string shapes = "default", mode = "cold", preset = "default", suite;
  std::uint64_t seed = 1;
  bool include_test_variants = false;
  bool datasheet_ceilings = false;
};

RunSettings settings_of(const PlanArguments& a) {
  RunSettings s;
  s.ops = a.ops;
  s.variants = a.variants;
  s.dtypes = a.dtypes;
  s.axes = a.axes;
  s.shapes = a.shapes;
  s.mode = a.mode;
  s.preset = a.preset;
  s.seed = std::to_string(a.seed);
  s.suite = a.suite;
  s.include_test_variants = a.include_test_variants;
  s.datasheet_ceilings = a.datasheet_ceilings;
  s.given.axis = !a.axes.empty();
  s.given.shapes = a.shapes != "default";
  s.given.mode = a.mode != "cold";
  s.given.preset = a.preset != "default";
  s.given.seed = a.seed != 1;
  return s;
}

PlannedRun plan_or_raise(const PlanArguments& a) {
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
    if (session_) throw std::logic_error("this Session has run already: make another to run again");
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
    SessionResult result;
    {
      py::gil_scoped_release release;
      result = session_->run();
    }
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
  void cancel(bool abandon_current) {
    if (session_) session_->cancel(abandon_current ? CancelMode::abandon_current : CancelMode::finish_current);
  }

  py::object progress() const { return session_ ? py::object(progress_to_python(session_->progress())) : py::none(); }

 private:
  template <class F>
  void call_back(F&& f) {
    py::gil_scoped_acquire gil;
    if (callback_error_) return;
    try {
      f();
    } catch (py::error_already_set& e) {
      callback_error_.emplace(std::move(e));
      session_->cancel(CancelMode::finish_current);
    }
  }

  PlannedRun planned_;
  SessionOptions options_;
  std::unique_ptr<Session> session_;
  std::optional<py::error_already_set> callback_error_;
};

py::object load_report(const std::string& path) {
  try {
    return to_python(report_to_json(read_report_json(path)));
  } catch (const std::exception& e) {  // ReportError: what, where, how to fix
    throw py::value_error(e.what());
  }
}

// The report's cases as a pandas DataFrame, one row per case, nested fields flattened with dots
// ("timing.span.median"). pandas is needed only here.
py::object report_dataframe(py::object report) {
  if (py::isinstance<py::str>(report)) report = load_report(report.cast<std::string>());
  py::module_ pandas;
  try {
    pandas = py::module_::import("pandas");
  } catch (py::error_already_set&) {
    throw py::import_error("kwb.dataframe needs pandas (apt-get install python3-pandas, or pip install pandas); "
                           "kwb.load_report gives the same records as plain objects without it");
  }
  return pandas.attr("json_normalize")(report["cases"]);
}

// Argument lists: a list of names, or one comma-separated string.
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

// axes: {"rows": [1024, 4096], "cols": 4096, "causal": "0,1"} or ["rows=1024,4096", ...].
std::vector<std::string> axis_assignments(const py::object& value) {
  if (value.is_none()) return {};
  if (!py::isinstance<py::dict>(value)) return names(value, "axes");
  std::vector<std::string> out;
  for (auto [key, v] : value.cast<py::dict>()) {
    std::string text = py::str(key).cast<std::string>() + "=";
    if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
      bool first = true;
      for (auto item : v) {
        text += (first ? "" : ",") + py::str(item).cast<std::string>();
        first = false;
      }
    } else {
      text += py::str(v).cast<std::string>();
    }
    out.push_back(text);
  }
  return out;
}

PlanArguments plan_arguments(const py::object& ops, const py::object& variants, const py::object& dtypes,
                             const py::object& axes, const std::string& shapes, const std::string& mode,
                             const std::string& preset, std::uint64_t seed, const std::string& suite,
                             bool include_test_variants, bool datasheet_ceilings) {
  PlanArguments a;
  a.ops = names(ops, "ops");
  a.variants = names(variants, "variants");
  a.dtypes = names(dtypes, "dtypes");
  a.axes = axis_assignments(axes);
  a.shapes = shapes;
  a.mode = mode;
  a.preset = preset;
  a.seed = seed;
  a.suite = suite;
  a.include_test_variants = include_test_variants;
  a.datasheet_ceilings = datasheet_ceilings;
  return a;
}

}  // namespace
}  // namespace kwb

PYBIND11_MODULE(kwb, m) {
  using namespace kwb;
  m.doc() = "Kernel Workbench: the catalogue, planning, run sessions and reports (see docs/python.md)";
  m.attr("__version__") = std::string(kToolVersion);
  m.def("worker", &default_worker, "The kwb executable whose worker runs the cases ($KWB_WORKER_EXE overrides it)");
  m.def("catalogue", &catalogue, py::arg("include_test_variants") = false,
        "Every op: name, description, dtypes, axes, and its variants (name, role, description, tunables)");
#define KWB_PLAN_ARGS                                                                                           \
  py::arg("ops") = py::none(), py::arg("variants") = py::none(), py::arg("dtypes") = py::none(),                \
  py::arg("axes") = py::none(), py::arg("shapes") = "default", py::arg("mode") = "cold",                        \
  py::arg("preset") = "default", py::arg("seed") = 1, py::arg("suite") = "",                                    \
  py::arg("include_test_variants") = false, py::arg("datasheet_ceilings") = false
  m.def(
      "plan",
      [](py::object ops, py::object variants, py::object dtypes, py::object axes, std::string shapes,
         std::string mode, std::string preset, std::uint64_t seed, std::string suite, bool tests,
         bool datasheet) {
        return plan(plan_arguments(ops, variants, dtypes, axes, shapes, mode, preset, seed, suite, tests, datasheet));
      },
      KWB_PLAN_ARGS,
      "The case identities `kwb run` would run with these settings (ValueError names a bad one); needs no GPU");
  py::class_<PySession>(m, "Session", "One run of a plan, as `kwb run` runs it (in a kwb worker process)")
      .def(py::init([](py::object ops, py::object variants, py::object dtypes, py::object axes, std::string shapes,
                       std::string mode, std::string preset, std::uint64_t seed, std::string suite, bool tests,
                       bool datasheet, std::optional<std::string> out, std::string worker, int device) {
             return std::make_unique<PySession>(
                 plan_arguments(ops, variants, dtypes, axes, shapes, mode, preset, seed, suite, tests, datasheet),
                 out, worker, device);
           }),
           KWB_PLAN_ARGS, py::arg("out") = py::none(), py::arg("worker") = "", py::arg("device") = 0)
      .def_property_readonly("cases", &PySession::cases, "The planned case identities, in plan order")
      .def("run", &PySession::run, py::arg("on_record") = nullptr, py::arg("on_started") = nullptr,
           "Runs the plan; returns {outcome, message, report, write_errors}. outcome: completed, cancelled, "
           "no_gpu (nothing ran: message says why) or bad_input")
      .def("cancel", &PySession::cancel, py::arg("abandon_current") = false,
           "Stops the run after the case in flight (or now, abandoning it); the report keeps what finished")
      .def("progress", &PySession::progress, "done, total, failed, elapsed_s, eta_s, current; None before run()");
#undef KWB_PLAN_ARGS
  m.def("load_report", &load_report, py::arg("path"),
        "A report.json as plain objects: {schema, run, cases, ...}; ValueError says what is wrong and where");
  m.def("dataframe", &report_dataframe, py::arg("report"),
        "A report (a path or what load_report returned) as a pandas DataFrame, one row per case");
}
