// A file of Python variants into a registry (variant_import.hpp).
#include "python/variants/variant_import.hpp"

#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/catalogue/elem_type.hpp"
#include "python/variants/case_view.hpp"
#include "python/variants/kept_object.hpp"
#include "python/variants/op_import.hpp"
#include "python/variants/variant_api.hpp"

namespace py = pybind11;

namespace kwb::python {
namespace {

// What prepare() returned for one case: the case as Python sees it and its launcher. Released
// with the GIL, after which Python's collector runs and PyTorch's cache (where PyTorch is loaded)
// gives its blocks back, so that the next case finds the device memory the last one freed.
struct LaunchState {
  py::object case_view, launcher;
};

void release_device_caches() {
  try {
    py::module_::import("gc").attr("collect")();
    const py::dict modules = py::module_::import("sys").attr("modules");
    if (modules.contains("torch")) {
      const py::object cuda = modules["torch"].attr("cuda");
      if (cuda.attr("is_initialized")().cast<bool>()) cuda.attr("empty_cache")();
    }
  } catch (py::error_already_set&) {  // a cleanup that fails costs nothing of the case's
  }
}

std::shared_ptr<void> hold(LaunchState* state) {
  return std::shared_ptr<LaunchState>(state, [](LaunchState* s) {
    if (!Py_IsInitialized()) return;  // the interpreter is gone (process exit): nothing to give back
    py::gil_scoped_acquire gil;
    delete s;
    release_device_caches();
  });
}

py::object stream_handle(const LaunchArgs& args) { return py::int_(reinterpret_cast<std::uintptr_t>(args.stream)); }

// requires=[...]: the first module the interpreter cannot find, as the reason its cases are skipped.
std::optional<std::string> missing_module(const py::list& modules) {
  const py::object find_spec = py::module_::import("importlib.util").attr("find_spec");
  for (const py::handle m : modules) {
    bool found = false;
    try {
      found = !find_spec(m).is_none();
    } catch (py::error_already_set&) {  // a parent package that is missing raises instead
    }
    if (!found)
      return "needs the Python module '" + m.cast<std::string>() + "', which " +
             py::module_::import("sys").attr("executable").cast<std::string>() +
             " cannot import (install it there, or set $KWB_PYTHON to a Python of the same version that has it)";
  }
  return std::nullopt;
}

// requires=[...] missing: every case is refused, saying which module; else the user's refuse(), if any.
std::function<std::optional<std::string>(const Shape&, DType)> refusal_of(const py::dict& spec, const std::string& id) {
  if (auto why = missing_module(spec["requires"]))
    return [why = *why](const Shape&, DType) -> std::optional<std::string> { return why; };
  if (spec["refuse"].is_none()) return {};
  const auto refuse = std::make_shared<KeptObject>(spec["refuse"]);
  // Never throws (the worker asks before a case's try block): a refuse() that raises or returns
  // something else skips the case with that said.
  return [refuse, id](const Shape& shape, DType dtype) -> std::optional<std::string> {
    py::gil_scoped_acquire gil;
    try {
      const py::object why = refuse->get()(shape_dict(shape), std::string(to_string(dtype)));
      if (why.is_none()) return std::nullopt;
      if (py::isinstance<py::str>(why)) return why.cast<std::string>();
      return "the refuse() of the Python variant " + id + " returned " + py::repr(why).cast<std::string>() +
             ", neither None (the case runs) nor a string (why it cannot)";
    } catch (py::error_already_set& e) {
      return "the refuse() of the Python variant " + id + " raised:\n" + python_error_text(e);
    } catch (const std::exception& e) {  // a string that is not UTF-8, say
      return "the refuse() of the Python variant " + id + " failed: " + e.what();
    }
  };
}

Variant variant_of(const py::dict& spec) {
  Variant v;
  v.op = spec["op"].cast<std::string>();
  v.name = spec["name"].cast<std::string>();
  v.role = *parse_role(spec["role"].cast<std::string>());
  v.description = spec["description"].cast<std::string>();
  v.uses = {"Python"};
  for (const py::handle u : spec["uses"]) v.uses.push_back(u.cast<std::string>());
  v.math = spec["math"].cast<std::string>();
  v.test_only = spec["test_only"].cast<bool>();
  v.varies_run_to_run = spec["varies_run_to_run"].cast<bool>();
  for (const auto& [name, values] : spec["tunables"].cast<py::dict>())
    v.tunables.push_back(Tunable{name.cast<std::string>(), values.cast<std::vector<std::int64_t>>(),
                                 "declared by the Python variant"});
  v.refuse = refusal_of(spec, v.op + ":" + v.name);
  const auto factory = std::make_shared<KeptObject>(spec["factory"]);
  v.prepare = [factory, op = v.op, name = v.name](const LaunchArgs& args) -> std::shared_ptr<void> {
    py::gil_scoped_acquire gil;
    try {
      auto state = std::make_unique<LaunchState>();
      state->case_view = make_case(args, op, name);
      state->launcher = factory->get()(state->case_view);
      if (!PyCallable_Check(state->launcher.ptr()))
        throw std::runtime_error("the Python variant " + op + ":" + name + " returned " +
                                 py::repr(state->launcher).cast<std::string>() +
                                 " from prepare, not a launcher: return a function of the stream (def launch(stream): ...)");
      // Once here, outside timing and before the verified launch (which runs on poisoned outputs):
      // a JIT compiles, an autotuner tries its configurations.
      state->launcher(stream_handle(args));
      return hold(state.release());
    } catch (py::error_already_set& e) {
      throw std::runtime_error(python_error_text(e));
    }
  };
  v.launch = [](const LaunchArgs& args) {
    py::gil_scoped_acquire gil;
    try {
      args.state_as<LaunchState>().launcher(stream_handle(args));
    } catch (py::error_already_set& e) {
      throw std::runtime_error(python_error_text(e));
    }
  };
  return v;
}

// A kwb.op, its functions called once at each of its default and edge shapes in each dtype: a
// tensors() or work() that raises or returns the wrong thing refuses the file at start-up, not a
// case later.
Op checked_op(const py::dict& spec) {
  Op op = op_of(spec);
  for (const auto* shapes : {&op.default_shapes, &op.edge_shapes})
    for (const Shape& s : *shapes)
      for (DType dtype : op.dtypes) {
        op.tensors(s, dtype);
        op.work(s, dtype);
      }
  // The oracle once, at the first edge shape (small by intent), on inputs drawn here: one that
  // raises, leaves out an output or answers in another shape is refused now, not case by case.
  if (!op.edge_shapes.empty()) {
    const Shape& s = op.edge_shapes.front();
    std::vector<HostTensor> in, out;
    std::mt19937_64 draw(1);
    std::normal_distribution<double> normal;
    const std::vector<TensorSpec> specs = op.tensors(s, op.dtypes.front());
    std::int64_t elements = 0;
    for (const TensorSpec& t : specs) elements += t.numel();
    if (elements <= (std::int64_t{1} << 22)) {
      for (const TensorSpec& t : specs) {
        HostTensor h{t.name, t.dims, std::vector<double>(static_cast<std::size_t>(t.numel()), std::nan(""))};
        if (!t.is_output)
          for (double& v : h.values) v = is_floating(t.elem_type(op.dtypes.front())) ? normal(draw) : 0.0;
        (t.is_output ? out : in).push_back(std::move(h));
      }
      op.oracle(s, in, out);
    }
  }
  return op;
}

// The module's name: the file's stem, unless a module of that name is loaded already (a second
// registry importing the same file, or a stem such as "torch").
std::string module_name_for(const std::filesystem::path& path, const py::dict& modules) {
  const std::string stem = path.stem().string();
  std::string name = stem;
  for (int i = 2; modules.contains(name); ++i) name = stem + "_kwb" + std::to_string(i);
  return name;
}

}  // namespace

std::string python_error_text(py::error_already_set& error) {
  try {
    const py::object format = py::module_::import("traceback").attr("format_exception");
    // The import machinery's own frames lead every traceback of an import: the user's come after.
    py::object trace = error.trace();
    while (!trace.is_none() &&
           trace.attr("tb_frame").attr("f_code").attr("co_filename").cast<std::string>().rfind("<frozen importlib", 0) == 0)
      trace = trace.attr("tb_next");
    std::string text;
    for (const py::handle line : format(error.type(), error.value(), trace)) text += line.cast<std::string>();
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  } catch (const std::exception&) {  // the formatting itself failed (text that is not UTF-8)
    return error.what();
  }
}

void import_python_variants(const std::string& path, Registry& staged) {
  py::gil_scoped_acquire gil;
  try {
    py::dict modules = py::module_::import("sys").attr("modules");
    const py::module_ kwb = py::module_::import("kwb");
    const py::list registered = kwb.attr(kRegisteredVariantsAttr), registered_ops = kwb.attr(kRegisteredOpsAttr);
    const std::size_t before = registered.size(), ops_before = registered_ops.size();
    // Its folder first on sys.path, as `python FILE` has it: a file may import the files beside it.
    const std::filesystem::path file(path);
    py::list sys_path = py::module_::import("sys").attr("path");
    if (!sys_path.contains(file.parent_path().string())) sys_path.insert(0, file.parent_path().string());
    const py::object util = py::module_::import("importlib.util");
    const std::string name = module_name_for(file, modules);
    const py::object spec = util.attr("spec_from_file_location")(name, path);
    const py::object module = util.attr("module_from_spec")(spec);
    modules[py::str(name)] = module;
    try {
      spec.attr("loader").attr("exec_module")(module);
    } catch (py::error_already_set&) {
      PyDict_DelItemString(modules.ptr(), name.c_str());
      throw;
    }
    for (std::size_t i = ops_before; i < registered_ops.size(); ++i) staged.add(checked_op(registered_ops[i].cast<py::dict>()));
    for (std::size_t i = before; i < registered.size(); ++i) staged.add(variant_of(registered[i].cast<py::dict>()));
  } catch (py::error_already_set& e) {
    throw std::runtime_error("importing it raised:\n" + python_error_text(e));
  }
}

}  // namespace kwb::python
