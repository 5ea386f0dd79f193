// The catalogue: ops (contracts with an oracle and a work model) and their variants.
//
// An op file in reference/ registers the op; a kernel file in kernels/<op>/ registers its
// variants. Registration happens in static initialisers, so adding a kernel touches no
// harness file:
//
//   KWB_REGISTER_VARIANT(Variant{.op = "rmsnorm_fwd", .name = "fused_v2_vec16", ...});
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "catalogue/host_tensor.hpp"
#include "catalogue/types.hpp"

namespace kwb {

// One axis of an op: an integer (rows, cols) or, when `choices` is not empty, one of a few named
// values (layout=bshd,bhsd; causal=0,1). A choice axis ignores default_value and sweep: its
// default is the first choice, and `--axis layout=bshd,bhsd` names choices, never ranges.
struct AxisSpec {
  std::string name;
  std::int64_t default_value = 0;     // integer axes: used when the sweep does not name the axis
  std::vector<std::int64_t> sweep;    // the op's own sweep when none is given
  std::string help;
  std::vector<std::string> choices;   // non-empty: a choice axis; the first is the default

  bool is_choice() const { return !choices.empty(); }
  AxisValue default_axis_value() const {
    return is_choice() ? AxisValue(choices.front()) : AxisValue(default_value);
  }
};

// A knob of one variant (block size, unroll), swept like an axis and part of the case identity.
// Only the first value (the default) runs unless the sweep names others: --axis block=128,256.
struct Tunable {
  std::string name;
  std::vector<std::int64_t> values;  // positive; the first is the default
  std::string help;
};

// How the generator fills one input tensor. Values are drawn on the device from a counter-based
// hash of (seed, tensor, element), so any element can be regenerated and nothing is zero-filled.
struct Distribution {
  enum class Kind { normal, uniform } kind = Kind::normal;
  double a = 0, b = 1;  // normal: mean, stddev; uniform: [low, high)
};

struct TensorSpec {
  std::string name;
  std::vector<std::int64_t> dims;  // row-major; outputs: dims[0] is the verification row axis
  bool is_output = false;
  // Element r of dims[0] belongs to row r of the op's row axis: the verifier may check a sample
  // of rows by gathering just those rows. Outputs of an op with a row axis must be row-aligned.
  bool row_aligned = false;
  Distribution init;               // inputs only
  std::int64_t numel() const;
};

// The fewest bytes the op must move (each input read once, each output written once) and the
// arithmetic it must do. GB/s, TFLOP/s and roofline figures all derive from these.
struct WorkModel {
  double bytes = 0;
  double flops = 0;
};

struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

// Device buffers of one case, in the op's tensor order, plus what a launch needs.
struct LaunchArgs {
  const Shape& shape;
  DType dtype;
  const std::vector<void*>& tensors;
  void* workspace;  // workspace_bytes(shape, dtype) bytes, allocated by the harness, or null
  cudaStream_t stream;
  // What the variant's prepare() returned for this case (null before prepare, or without one).
  // The harness owns it for the case and destroys it when the case ends.
  void* state = nullptr;
  const TunableValues* tunables = nullptr;  // this case's value of each declared tunable

  // The value of a declared tunable; throws std::out_of_range naming it if it is not declared.
  std::int64_t tunable(std::string_view name) const;
  template <class T>
  T& state_as() const { return *static_cast<T*>(state); }
};

struct Op {
  std::string name;
  std::string description;
  std::vector<AxisSpec> axes;
  std::vector<DType> dtypes;
  std::function<std::vector<TensorSpec>(const Shape&, DType)> tensors;
  std::function<WorkModel(const Shape&, DType)> work;
  std::function<Tolerance(DType)> tolerance;
  // fp64 oracle: fill `expected` (one per output tensor, preallocated to numel) from the inputs
  // as the device holds them (already rounded to the dtype). When the verifier samples rows, it
  // calls the oracle on a sub-shape whose row axis is the number of sampled rows and whose
  // row-aligned tensors hold just those rows: the oracle never needs to know.
  std::function<void(const Shape&, const std::vector<HostTensor>& inputs,
                     std::vector<HostTensor>& expected)>
      oracle;
  // Axis whose rows are independent (empty: verify everything, never sample).
  std::string row_axis;
  // Which unit does the op's arithmetic: "fp32" (CUDA cores) or "tensor_bf16", "tensor_fp16",
  // "tensor_tf32". Picks the compute roof of the roofline.
  std::string compute_unit = "fp32";
  // Shapes swept when the command line names no axis (the op's smoke set).
  std::vector<Shape> default_shapes;
  // Optional: a reason why this shape is invalid for the op itself (e.g. cols == 0).
  std::function<std::optional<std::string>(const Shape&)> invalid;
  // Hidden from `list` and default sweeps unless --include-test-variants (test-only contracts).
  bool test_only = false;
};

struct Variant {
  std::string op;
  std::string name;  // carries its configuration: fused_v2_vec16_row_per_block
  Role role = Role::fused;
  std::string description;  // one line: what this version changes and why it should be faster
  std::function<void(const LaunchArgs&)> launch;
  // nullopt to accept the case; otherwise the reason it cannot run it (shown as "skipped").
  std::function<std::optional<std::string>(const Shape&, DType)> refuse;
  // Scratch memory the variant needs (intermediates of an unfused baseline); none if unset.
  std::function<std::size_t(const Shape&, DType)> workspace_bytes;
  bool test_only = false;  // hidden from `list` and default sweeps (fault-injection variants)
  // Knobs swept like axes; their values reach the launch through LaunchArgs::tunable(name).
  std::vector<Tunable> tunables;
  // Once per case, outside timing, after the inputs exist and before the verification launch:
  // plans, handles, heuristics, packed weights. The returned state lives until the case ends
  // and reaches every launch and reset as LaunchArgs::state.
  std::function<std::shared_ptr<void>(const LaunchArgs&)> prepare;
  // Before every launch (verification, warm-up and each sample), outside the measured interval
  // and before the L2 flush: e.g. zero an accumulator the kernel adds into.
  std::function<void(const LaunchArgs&)> reset;
};

class Registry {
 public:
  static Registry& instance();

  // Never throws: a mistake (duplicate name, unknown op, ...) is kept for problems(), so that
  // a bad registration is reported by `kwb` at start-up instead of aborting before main().
  void add(Op op);
  void add(Variant variant);

  // Every registration mistake, one line each naming the op or variant and how to fix it.
  // Empty when the catalogue is sound. Checked at the start of `kwb`.
  std::vector<std::string> problems() const;

  const std::vector<Op>& ops() const { return ops_; }
  const Op* find_op(std::string_view name) const;
  // Variants of one op in registration order; test-only ones only when asked for.
  std::vector<const Variant*> variants(std::string_view op, bool include_test_only) const;
  const Variant* find_variant(std::string_view op, std::string_view name) const;
  std::vector<std::string> op_names() const;
  std::vector<std::string> variant_names(bool include_test_only) const;

 private:
  std::vector<Op> ops_;
  std::vector<Variant> variants_;
  std::vector<std::string> add_problems_;  // found while adding (duplicates)
};

namespace detail {
struct Registrar {
  template <class T>
  explicit Registrar(T item) { Registry::instance().add(std::move(item)); }
};
}  // namespace detail

#define KWB_CONCAT_INNER(a, b) a##b
#define KWB_CONCAT(a, b) KWB_CONCAT_INNER(a, b)
#define KWB_REGISTER_OP(...) \
  static const ::kwb::detail::Registrar KWB_CONCAT(kwb_registrar_, __LINE__){__VA_ARGS__}
#define KWB_REGISTER_VARIANT(...) KWB_REGISTER_OP(__VA_ARGS__)

}  // namespace kwb
