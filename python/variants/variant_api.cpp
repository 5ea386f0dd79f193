// kwb.variant and kwb.registered_variants (variant_api.hpp): the decorator checks what it is given
// where the user wrote it, so a mistake raises at that line of their file.
#include "python/variants/variant_api.hpp"

// Every file of the module includes the STL casters: a file without them would compile a different
// (and, once linked, shared) conversion of the same std::vector type.
#include <pybind11/stl.h>

#include <string>

#include "harness/catalogue/types.hpp"
#include "python/variants/case_view.hpp"

namespace py = pybind11;

namespace kwb::python {
namespace {

std::string required_name(const py::object& value, const char* what) {
  if (!py::isinstance<py::str>(value) || py::len(value) == 0)
    throw py::type_error(std::string("kwb.variant: ") + what + " takes a non-empty string");
  return value.cast<std::string>();
}

// A list of names; one bare string is refused (it would read as a list of its characters).
py::list names(const py::object& value, const char* what) {
  py::list out;
  if (py::isinstance<py::str>(value))
    throw py::type_error(std::string("kwb.variant: ") + what + " takes a list of names, e.g. " + what + "=[\"" +
                         value.cast<std::string>() + "\"]");
  for (const py::handle item : value) {
    if (!py::isinstance<py::str>(item)) throw py::type_error(std::string("kwb.variant: ") + what + " holds a non-string");
    out.append(item);
  }
  return out;
}

// {"BLOCK": [1024, 2048]}: each a non-empty list of positive integers, the first the default.
py::dict tunables_of(const py::object& value) {
  py::dict out;
  if (value.is_none()) return out;
  if (!py::isinstance<py::dict>(value))
    throw py::type_error("kwb.variant: tunables takes a dict of name -> list of positive integers (the first is the default)");
  for (const auto& [key, values] : value.cast<py::dict>()) {
    const std::string name = required_name(py::reinterpret_borrow<py::object>(key), "a tunable's name");
    py::list list;
    for (const py::handle v : values) {
      if (!py::isinstance<py::int_>(v) || py::isinstance<py::bool_>(v) || v.cast<long long>() <= 0)
        throw py::value_error("kwb.variant: tunable '" + name + "' takes positive integers");
      list.append(v);
    }
    if (list.empty()) throw py::value_error("kwb.variant: tunable '" + name + "' has no value");
    out[key] = list;
  }
  return out;
}

}  // namespace

void define_variant_api(py::module_& m) {
  define_case_classes(m);
  py::list registered;
  m.attr(kRegisteredVariantsAttr) = registered;
  m.def(
      "variant",
      [registered](const py::object& op, const py::object& name, const std::string& role, const std::string& description,
                   const py::object& uses, const std::string& math, const py::object& tunables,
                   const py::object& requires_modules, const py::object& refuse, bool test_only,
                   bool varies_run_to_run) {
        py::dict spec;
        spec["op"] = required_name(op, "op");
        spec["name"] = required_name(name, "name");
        if (!parse_role(role))
          throw py::value_error("kwb.variant: role '" + role + "' is not one of fused, baseline, vendor");
        spec["role"] = role;
        spec["description"] = description;
        spec["uses"] = names(uses, "uses");
        spec["math"] = math;
        spec["tunables"] = tunables_of(tunables);
        spec["requires"] = names(requires_modules, "requires");
        if (!refuse.is_none() && !PyCallable_Check(refuse.ptr()))
          throw py::type_error("kwb.variant: refuse takes a function of (shape, dtype) returning None or why not");
        spec["refuse"] = refuse;
        spec["test_only"] = test_only;
        spec["varies_run_to_run"] = varies_run_to_run;
        return py::cpp_function([registered, spec](const py::object& factory) {
          if (!PyCallable_Check(factory.ptr()))
            throw py::type_error("kwb.variant(...) decorates a function of the case that returns its launcher");
          py::dict entry = spec.attr("copy")();
          entry["factory"] = factory;
          registered.attr("append")(entry);
          return factory;
        });
      },
      py::kw_only(), py::arg("op"), py::arg("name"), py::arg("role") = "fused", py::arg("description") = "",
      py::arg("uses") = py::list(), py::arg("math") = "", py::arg("tunables") = py::none(),
      py::arg("requires") = py::list(), py::arg("refuse") = py::none(), py::arg("test_only") = false, py::arg("varies_run_to_run") = false,
      "Registers the decorated function as a variant of a catalogue op. It is called once per case, in prepare "
      "(outside timing), with a kwb.Case, and returns a launcher: a function of the stream (a cudaStream_t as "
      "int) that enqueues the work on it. kwb calls the launcher once in prepare (a JIT compiles there), then for "
      "the verified launch, the warm-ups and every sample. role: fused, baseline or vendor; uses: libraries it "
      "calls (shown beside its name); tunables: {name: [values]}, swept with --axis name=...; requires: Python "
      "modules it needs (without them its cases are skipped, saying which); refuse: a function of (shape dict, "
      "dtype name) returning None to accept the case or a string saying why it cannot run it (skipped); test_only: hidden from default "
      "sweeps; varies_run_to_run: its output may differ between launches within tolerance (atomics)");
  py::list ops;
  m.attr(kRegisteredOpsAttr) = ops;
  m.def(
      "op",
      [ops](const py::object& name, const std::string& description, const py::dict& axes, const py::object& dtypes,
            const py::object& tensors, const py::object& oracle, const py::object& work, const py::object& default_shapes,
            const py::object& edge_shapes, const std::string& sample_axis, const std::string& compute_unit) {
        py::dict spec;
        spec["name"] = required_name(name, "op's name");
        for (const auto& [what, f] : {std::pair<const char*, const py::object*>{"tensors", &tensors},
                                      {"oracle", &oracle}, {"work", &work}})
          if (!PyCallable_Check(f->ptr())) throw py::type_error(std::string("kwb.op: ") + what + " takes a function");
        spec["description"] = description;
        spec["axes"] = axes;
        spec["dtypes"] = names(dtypes, "dtypes");
        spec["tensors"] = tensors;
        spec["oracle"] = oracle;
        spec["work"] = work;
        // Lists of {axis: value} dicts; one dict alone would read as a list of its keys.
        auto shape_list = [](const py::object& value, const char* what) {
          if (value.is_none()) return py::list();
          if (py::isinstance<py::dict>(value) || py::isinstance<py::str>(value))
            throw py::type_error(std::string("kwb.op: ") + what + " takes a list of {axis: value} dicts");
          py::list out(value);
          for (const py::handle s : out)
            if (!py::isinstance<py::dict>(s))
              throw py::type_error(std::string("kwb.op: ") + what + " holds " + py::repr(s).cast<std::string>() +
                                   ", not a dict {axis: value}");
          return out;
        };
        spec["default_shapes"] = shape_list(default_shapes, "default_shapes");
        spec["edge_shapes"] = shape_list(edge_shapes, "edge_shapes");
        if (py::len(spec["default_shapes"]) == 0) throw py::value_error("kwb.op: default_shapes lists no shape");
        spec["sample_axis"] = sample_axis;
        spec["compute_unit"] = compute_unit;
        ops.attr("append")(spec);
      },
      py::kw_only(), py::arg("name"), py::arg("description") = "", py::arg("axes"), py::arg("dtypes"),
      py::arg("tensors"), py::arg("oracle"), py::arg("work"), py::arg("default_shapes"),
      py::arg("edge_shapes") = py::none(), py::arg("sample_axis") = "", py::arg("compute_unit") = "fp32",
      "Registers a new op, for Python variants (and plugins) to implement. axes: {name: default integer, or a list "
      "of choice names}; dtypes: of fp32, fp16, bf16; tensors(shape, dtype): a list of kwb.tensor(...) in the op's "
      "order; oracle(shape, inputs): the outputs in fp64 from the inputs (NumPy float64 arrays by name, as the "
      "device holds them), a dict of array-likes by output name; work(shape, dtype): (bytes, flops), the least the "
      "op must move and compute; default_shapes, edge_shapes: lists of {axis: value}; sample_axis: an axis whose "
      "indices are independent (verification may sample it; a tensor's sample_dim says which of its dims runs "
      "along it); compute_unit: fp32, tensor_bf16, ... (the roof)");
  m.def(
      "tensor",
      [](const std::string& name, const std::vector<std::int64_t>& dims, bool output, int sample_dim,
         const std::string& init, double a, double b, const std::string& elem, const py::object& atol,
         const py::object& rtol) {
        py::dict t;
        t["name"] = name;
        t["dims"] = dims;
        t["output"] = output;
        t["sample_dim"] = sample_dim;
        t["init"] = init;
        t["a"] = a;
        t["b"] = b;
        t["elem"] = elem;
        t["atol"] = atol;
        t["rtol"] = rtol;
        return t;
      },
      py::arg("name"), py::arg("dims"), py::kw_only(), py::arg("output") = false, py::arg("sample_dim") = -1,
      py::arg("init") = "normal", py::arg("a") = 0.0, py::arg("b") = 1.0, py::arg("elem") = "case_dtype",
      py::arg("atol") = py::none(), py::arg("rtol") = py::none(),
      "One tensor of a kwb.op: row-major dims; output or input; sample_dim: its dim along the op's sample_axis "
      "(-1: none); init (inputs): normal (a mean, b stddev), uniform [a, b), integers [a, b), mask (a: P(true)); "
      "elem: case_dtype, fp32, fp16, bf16, int32, int64, bool; atol/rtol (outputs): a flat tolerance instead of "
      "the element type's default");
  m.def(
      "registered_variants", [registered] { return py::list(registered); },
      "The variants decorated so far in this interpreter, as dicts (op, name, role, ..., factory), in order");
}

}  // namespace kwb::python
