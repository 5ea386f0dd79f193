// kwb.op's spec as a kwb::Op (op_import.hpp).
#include "python/variants/op_import.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/catalogue/elem_type.hpp"
#include "python/variants/case_view.hpp"
#include "python/variants/kept_object.hpp"
#include "python/variants/variant_import.hpp"

namespace py = pybind11;

namespace kwb::python {
namespace {

// Runs `f` with the GIL; a Python exception becomes an `Error` naming the op's function. tensors()
// and work() raise std::invalid_argument, which planning reports as bad input (kwb exits 2, the
// module raises ValueError) before anything runs: the planner calls both at every planned shape.
template <class Error = std::runtime_error, class F>
auto call_python(const std::string& what, F&& f) {
  py::gil_scoped_acquire gil;
  try {
    return f();
  } catch (py::error_already_set& e) {
    throw Error(what + " raised:\n" + python_error_text(e));
  } catch (const py::cast_error& e) {
    throw Error(what + " returned something of the wrong type: " + e.what());
  } catch (const std::runtime_error& e) {
    throw Error(e.what());
  }
}

std::vector<AxisSpec> axes_of(const py::dict& axes, const std::string& op) {
  std::vector<AxisSpec> out;
  for (const auto& [key, value] : axes) {
    AxisSpec a;
    a.name = key.cast<std::string>();
    if (py::isinstance<py::int_>(value)) {
      a.default_value = value.cast<std::int64_t>();
    } else if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
      for (const py::handle c : value) a.choices.push_back(py::str(c).cast<std::string>());
    } else {
      throw std::runtime_error("kwb.op '" + op + "': axis '" + a.name +
                               "' takes a default integer or a list of choice names");
    }
    out.push_back(std::move(a));
  }
  return out;
}

Shape shape_of(const py::handle& value, const std::vector<AxisSpec>& axes, const std::string& op) {
  if (!py::isinstance<py::dict>(value))
    throw std::runtime_error("kwb.op '" + op + "': a shape is " + py::repr(value).cast<std::string>() +
                             ", not a dict {axis: value}: default_shapes and edge_shapes are lists of such dicts");
  const py::dict d = py::reinterpret_borrow<py::dict>(value);
  Shape s;
  for (const AxisSpec& a : axes) {
    if (!d.contains(a.name))
      throw std::runtime_error("kwb.op '" + op + "': a shape " + py::repr(d).cast<std::string>() + " has no axis '" +
                               a.name + "'");
    const py::object v = d[py::str(a.name)];
    if (a.is_choice())
      s.axes.emplace_back(a.name, AxisValue(py::str(v).cast<std::string>()));
    else
      s.axes.emplace_back(a.name, AxisValue(v.cast<std::int64_t>()));
  }
  return s;
}

Distribution distribution_of(const py::dict& t) {
  const std::string kind = t["init"].cast<std::string>();
  const double a = t["a"].cast<double>(), b = t["b"].cast<double>();
  if (kind == "normal") return Distribution::normal(a, b);
  if (kind == "uniform") return Distribution::uniform(a, b);
  if (kind == "integers") return Distribution::integers(static_cast<std::int64_t>(a), static_cast<std::int64_t>(b));
  if (kind == "mask") return Distribution::mask(a);
  throw std::runtime_error("init '" + kind + "' is not one of normal, uniform, integers, mask");
}

TensorSpec tensor_of(const py::handle& item) {
  const py::dict t = py::reinterpret_borrow<py::dict>(item);
  TensorSpec spec;
  spec.name = t["name"].cast<std::string>();
  spec.dims = t["dims"].cast<std::vector<std::int64_t>>();
  spec.is_output = t["output"].cast<bool>();
  spec.sample_dim = t["sample_dim"].cast<int>();
  const auto elem = parse_elem_type(t["elem"].cast<std::string>());
  if (!elem) throw std::runtime_error("tensor '" + spec.name + "': unknown element type " + t["elem"].cast<std::string>());
  spec.elem = *elem;
  if (!spec.is_output) spec.init = distribution_of(t);
  if (!t["atol"].is_none() || !t["rtol"].is_none())
    spec.tolerance = Tolerance{t["atol"].is_none() ? 0.0 : t["atol"].cast<double>(),
                               t["rtol"].is_none() ? 0.0 : t["rtol"].cast<double>()};
  return spec;
}

}  // namespace

Op op_of(const py::dict& spec) {
  Op op;
  op.name = spec["name"].cast<std::string>();
  const std::string id = "the Python op " + op.name;
  op.description = spec["description"].cast<std::string>();
  op.axes = axes_of(spec["axes"].cast<py::dict>(), op.name);
  for (const py::handle d : spec["dtypes"]) {
    const auto dtype = parse_dtype(d.cast<std::string>());
    if (!dtype) throw std::runtime_error("kwb.op '" + op.name + "': unknown dtype " + d.cast<std::string>());
    op.dtypes.push_back(*dtype);
  }
  op.sample_axis = spec["sample_axis"].cast<std::string>();
  op.compute_unit = spec["compute_unit"].cast<std::string>();
  for (const py::handle s : spec["default_shapes"]) op.default_shapes.push_back(shape_of(s, op.axes, op.name));
  for (const py::handle s : spec["edge_shapes"]) op.edge_shapes.push_back(shape_of(s, op.axes, op.name));

  const auto tensors = std::make_shared<KeptObject>(spec["tensors"]);
  op.tensors = [tensors, id](const Shape& shape, DType dtype) {
    return call_python<std::invalid_argument>("the tensors() of " + id, [&] {
      std::vector<TensorSpec> out;
      for (const py::handle t : tensors->get()(shape_dict(shape), std::string(to_string(dtype)))) out.push_back(tensor_of(t));
      return out;
    });
  };
  const auto work = std::make_shared<KeptObject>(spec["work"]);
  op.work = [work, id](const Shape& shape, DType dtype) {
    return call_python<std::invalid_argument>("the work() of " + id, [&] {
      const py::object w = work->get()(shape_dict(shape), std::string(to_string(dtype)));
      if (py::isinstance<py::dict>(w)) return WorkModel{w["bytes"].cast<double>(), w["flops"].cast<double>()};
      const auto pair = w.cast<std::pair<double, double>>();
      return WorkModel{pair.first, pair.second};
    });
  };
  // fp64 in, fp64 out: the inputs as NumPy arrays of their dims (copies, the oracle's to keep), the
  // outputs read back from whatever array-like it returns, by name, each of exactly its dims.
  const auto oracle = std::make_shared<KeptObject>(spec["oracle"]);
  op.oracle = [oracle, id](const Shape& shape, const std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
    call_python("the oracle() of " + id, [&] {
      py::dict inputs;
      for (const HostTensor& t : in)
        inputs[py::str(t.name)] = py::array_t<double>(std::vector<py::ssize_t>(t.dims.begin(), t.dims.end()), t.values.data());
      const py::object result = oracle->get()(shape_dict(shape), inputs);
      const py::object as_array = py::module_::import("numpy").attr("ascontiguousarray");
      for (HostTensor& t : out) {
        if (!result.contains(py::str(t.name)))
          throw std::runtime_error("the oracle() of " + id + " returned no '" + t.name + "' (return a dict of every output)");
        const auto a = as_array(result[py::str(t.name)], "float64").cast<py::array_t<double>>();
        // The shape itself, not only the count: a transposed answer would be read in the wrong order.
        const std::vector<std::int64_t> shape(a.shape(), a.shape() + a.ndim());
        if (shape != t.dims)
          throw std::runtime_error("the oracle() of " + id + " returned '" + t.name + "' of shape " +
                                   py::repr(py::tuple(py::cast(shape))).cast<std::string>() + ", not its dims " +
                                   py::repr(py::tuple(py::cast(t.dims))).cast<std::string>());
        std::memcpy(t.values.data(), a.data(), t.values.size() * sizeof(double));
      }
      return 0;
    });
  };
  return op;
}

}  // namespace kwb::python
