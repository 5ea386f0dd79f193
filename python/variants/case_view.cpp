// kwb.Case and kwb.Tensor (case_view.hpp). A Tensor hands out DLPack capsules of the legacy
// "dltensor" kind, which every consumer of the protocol reads (torch.from_dlpack, cupy.from_dlpack,
// jax.dlpack.from_dlpack); the memory stays the harness's, so the capsule's deleter frees only the
// shape and strides it carries.
#include "python/variants/case_view.hpp"

// Every file of the module includes the STL casters: a file without them would compile a different
// (and, once linked, shared) conversion of the same std::vector type.
#include <pybind11/stl.h>

#include <cuda_runtime_api.h>
#include KWB_DLPACK_HEADER

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/catalogue/elem_type.hpp"

namespace py = pybind11;

namespace kwb::python {
namespace {

struct TensorView {
  std::string name;
  std::vector<std::int64_t> dims;
  ElemType elem = ElemType::fp32;
  std::uintptr_t data = 0;
  int device = 0;
  bool is_output = false;

  std::vector<std::int64_t> strides() const {  // row-major, in elements
    std::vector<std::int64_t> s(dims.size(), 1);
    for (std::size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
    return s;
  }
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (std::int64_t d : dims) n *= d;
    return n;
  }
};

struct CaseView {
  std::string op, variant, dtype;
  py::dict shape, tunables, tensors;
  std::uint64_t seed = 0;
  std::uintptr_t stream = 0;
  int device = 0;
};

// The name PyTorch and NumPy give the type: what `tensor.dtype` prints there.
const char* dtype_name(ElemType e) {
  switch (e) {
    case ElemType::fp32: return "float32";
    case ElemType::fp16: return "float16";
    case ElemType::bf16: return "bfloat16";
    case ElemType::int32: return "int32";
    case ElemType::int64: return "int64";
    case ElemType::boolean: return "bool";
    case ElemType::case_dtype: break;
  }
  return "unknown";
}

DLDataType dlpack_type(ElemType e) {
  switch (e) {
    case ElemType::fp32: return {kDLFloat, 32, 1};
    case ElemType::fp16: return {kDLFloat, 16, 1};
    case ElemType::bf16: return {kDLBfloat, 16, 1};
    case ElemType::int32: return {kDLInt, 32, 1};
    case ElemType::int64: return {kDLInt, 64, 1};
#if (defined(DLPACK_VERSION) && DLPACK_VERSION >= 80) || (defined(DLPACK_MAJOR_VERSION) && DLPACK_MAJOR_VERSION >= 1)
    case ElemType::boolean: return {kDLBool, 8, 1};
#else
    case ElemType::boolean: return {kDLUInt, 8, 1};  // DLPack before 0.8 has no bool: one byte, 0 or 1
#endif
    case ElemType::case_dtype: break;
  }
  throw std::logic_error("dlpack_type: an unresolved element type");
}

// NumPy's typestr; none for bfloat16, which NumPy cannot name.
std::optional<std::string> array_interface_typestr(ElemType e) {
  switch (e) {
    case ElemType::fp32: return "<f4";
    case ElemType::fp16: return "<f2";
    case ElemType::int32: return "<i4";
    case ElemType::int64: return "<i8";
    case ElemType::boolean: return "|b1";
    default: return std::nullopt;
  }
}

// The DLManagedTensor and the arrays it points into, freed together by its deleter.
struct ManagedView {
  DLManagedTensor managed{};
  std::vector<std::int64_t> shape, strides;
};

constexpr const char* kCapsuleName = "dltensor";
constexpr const char* kUsedCapsuleName = "used_dltensor";  // renamed so by the consumer that took it

py::capsule dlpack_capsule(const TensorView& t) {
  auto view = std::make_unique<ManagedView>();
  view->shape = t.dims;
  view->strides = t.strides();
  DLTensor& d = view->managed.dl_tensor;
  d.data = reinterpret_cast<void*>(t.data);
  d.device = {kDLCUDA, t.device};
  d.ndim = static_cast<std::int32_t>(t.dims.size());
  d.dtype = dlpack_type(t.elem);
  d.shape = view->shape.data();
  d.strides = view->strides.data();
  d.byte_offset = 0;
  view->managed.manager_ctx = view.get();
  view->managed.deleter = [](DLManagedTensor* m) { delete static_cast<ManagedView*>(m->manager_ctx); };
  // Not taken by a consumer (still named "dltensor"): the capsule frees the view itself.
  // It may be freed while an exception is on its way up (a consumer that refused it): that exception
  // is put back untouched.
  PyObject* capsule = PyCapsule_New(&view->managed, kCapsuleName, [](PyObject* self) {
    if (PyCapsule_IsValid(self, kUsedCapsuleName)) return;
    PyObject *type, *value, *trace;
    PyErr_Fetch(&type, &value, &trace);
    if (auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(self, kCapsuleName))) m->deleter(m);
    PyErr_Clear();
    PyErr_Restore(type, value, trace);
  });
  if (!capsule) throw py::error_already_set();
  view.release();
  return py::reinterpret_steal<py::capsule>(capsule);
}

py::dict cuda_array_interface(const TensorView& t) {
  const auto typestr = array_interface_typestr(t.elem);
  if (!typestr)
    throw py::attribute_error("kwb.Tensor '" + t.name + "' is " + dtype_name(t.elem) +
                              ", which __cuda_array_interface__ cannot name: take it through DLPack "
                              "(torch.from_dlpack(tensor))");
  py::dict d;
  d["shape"] = py::tuple(py::cast(t.dims));
  d["typestr"] = *typestr;
  d["data"] = py::make_tuple(t.data, !t.is_output);
  d["strides"] = py::none();
  d["version"] = 3;
  d["stream"] = py::none();  // the harness synchronised before handing the case over
  return d;
}

std::string shape_text(const std::vector<std::int64_t>& dims) {
  std::string s = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

}  // namespace

void define_case_classes(py::module_& m) {
  py::class_<TensorView>(m, "Tensor",
                         "One of the case's device tensors, row-major and contiguous; the harness owns its memory "
                         "until the case ends. Take it with torch.from_dlpack (or cupy/jax from_dlpack)")
      .def_readonly("name", &TensorView::name)
      .def_property_readonly("shape", [](const TensorView& t) { return py::tuple(py::cast(t.dims)); })
      .def_property_readonly("dtype", [](const TensorView& t) { return std::string(dtype_name(t.elem)); })
      .def_readonly("is_output", &TensorView::is_output)
      .def_readonly("data_ptr", &TensorView::data)
      .def_readonly("device", &TensorView::device)
      .def_property_readonly("nbytes",
                             [](const TensorView& t) { return t.numel() * static_cast<std::int64_t>(elem_size(t.elem)); })
      .def("__dlpack__", [](const TensorView& t, const py::object& /*stream*/) { return dlpack_capsule(t); },
           py::arg("stream") = py::none(),
           "A DLPack capsule of the tensor (the data is ready on every stream: the harness synchronised)")
      .def("__dlpack_device__", [](const TensorView& t) { return py::make_tuple(static_cast<int>(kDLCUDA), t.device); })
      .def_property_readonly("__cuda_array_interface__", &cuda_array_interface)
      .def("__repr__", [](const TensorView& t) {
        return "kwb.Tensor(" + t.name + ", " + dtype_name(t.elem) + ", shape " + shape_text(t.dims) +
               (t.is_output ? ", output)" : ", input)");
      });
  py::class_<CaseView>(m, "Case",
                       "One case a Python variant runs: op, variant, dtype, shape (axis -> value), tunables, seed, "
                       "stream (a cudaStream_t as int), device, and its tensors by the op's names: case[\"x\"]")
      .def_readonly("op", &CaseView::op)
      .def_readonly("variant", &CaseView::variant)
      .def_readonly("dtype", &CaseView::dtype)
      .def_readonly("shape", &CaseView::shape)
      .def_readonly("tunables", &CaseView::tunables)
      .def_readonly("tensors", &CaseView::tensors)
      .def_readonly("seed", &CaseView::seed)
      .def_readonly("stream", &CaseView::stream)
      .def_readonly("device", &CaseView::device)
      .def("__getitem__",
           [](const CaseView& c, const std::string& name) -> py::object {
             if (c.tensors.contains(name)) return c.tensors[py::str(name)];
             std::string known;
             for (const auto& [key, value] : c.tensors) known += (known.empty() ? "" : ", ") + key.cast<std::string>();
             throw py::key_error("op " + c.op + " has no tensor '" + name + "' (its tensors: " + known + ")");
           })
      .def("__repr__", [](const CaseView& c) {
        return "kwb.Case(" + c.op + ":" + c.variant + ", " + c.dtype + ", " + py::repr(c.shape).cast<std::string>() + ")";
      });
}

py::dict shape_dict(const Shape& shape) {
  py::dict d;
  for (const auto& [name, value] : shape.axes)
    d[py::str(name)] = value.is_choice() ? py::object(py::str(value.choice())) : py::object(py::int_(value.integer()));
  return d;
}

py::object make_case(const LaunchArgs& args, const std::string& op, const std::string& variant) {
  CaseView c;
  c.op = op;
  c.variant = variant;
  c.dtype = std::string(to_string(args.dtype));
  c.seed = args.seed;
  c.stream = reinterpret_cast<std::uintptr_t>(args.stream);
  if (cudaGetDevice(&c.device) != cudaSuccess) c.device = 0;
  c.shape = shape_dict(args.shape);
  if (args.tunables)
    for (const auto& [name, value] : *args.tunables) c.tunables[py::str(name)] = value;
  if (args.specs)
    for (std::size_t i = 0; i < args.specs->size(); ++i) {
      const TensorSpec& spec = (*args.specs)[i];
      TensorView t{spec.name, spec.dims, spec.elem_type(args.dtype), reinterpret_cast<std::uintptr_t>(args.tensors[i]),
                   c.device, spec.is_output};
      c.tensors[py::str(spec.name)] = py::cast(std::move(t));
    }
  return py::cast(std::move(c));
}

}  // namespace kwb::python
