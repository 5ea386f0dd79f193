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
#include <type_traits>
#include <vector>

#include "harness/catalogue/elem_type.hpp"
#include "harness/catalogue/host_tensor.hpp"
#include "harness/catalogue/plugin_source.hpp"
#include "harness/catalogue/types.hpp"

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
  // How the axis reads in tables (harness/catalogue/shape_label.hpp): "b" makes batch=4 read
  // "b4", "/" joins kv_heads to heads ("h32/8"). Empty on every axis of an op: the compact
  // "16384x4096" form, clear enough for rows x cols.
  std::string label = {};

  bool is_choice() const { return !choices.empty(); }
  bool is_flag() const { return choices == std::vector<std::string>{"0", "1"}; }  // a 0/1 switch
  AxisValue default_axis_value() const {
    return is_choice() ? AxisValue(choices.front()) : AxisValue(default_value);
  }
};

// A knob of one variant (block size, unroll), swept like an axis and part of the case identity.
// Only the default runs unless the sweep names values: --axis block=128,256. The default is the
// first value, or, where the best value depends on the shape (a ring depth that suits short rows
// but not long ones), what shape_default picks among the values; default_rule then says how in
// a few words (`kwb list`, the catalogue).
struct Tunable {
  std::string name;
  std::vector<std::int64_t> values;  // positive; the first is the default unless shape_default is set
  std::string help;
  std::function<std::int64_t(const Shape&, DType)> shape_default = {};
  std::string default_rule = {};
  // Why this value cannot run at a shape (a tile the mask's block does not divide), or nullopt: a
  // case asking for it is skipped with the reason, as a variant's refuse() skips a shape, so a
  // sweep over the tunable's values records a skip, not a failure. Unset: every value runs.
  std::function<std::optional<std::string>(const Shape&, DType, std::int64_t value)> refuse_value = {};
};

// How the generator fills one input tensor. Values are drawn on the device from a counter-based
// hash of (seed, tensor, element), so any element can be regenerated and nothing is zero-filled;
// a permutation, monotone offsets and doubly stochastic blocks need more than one element at once
// and are drawn on the host
// (seeded the same way) and copied. Build them with the named constructors below.
struct Distribution {
  enum class Kind {
    normal,        // a = mean, b = stddev                          (floating types)
    uniform,       // [a, b)                                         (floating types)
    integers,      // [a, b), a fraction `ignore_fraction` set to `ignore_value` (integer types)
    position_ids,  // i % period + a start drawn per sequence in [0, a]          (integer types)
    permutation,   // a random permutation of 0 .. count-1                       (integer types)
    offsets,       // count = B + 1 values 0 = o_0 < o_1 < ... < o_B = total      (integer types)
    mask,          // true (1) with probability a, else false (0)     (bool, integer, floating)
    // Consecutive n x n blocks (n = period), each a random convex combination of the n!
    // permutation matrices (Birkhoff: every doubly stochastic matrix is one): mixing matrices
    // whose rows and columns each sum to 1, as a hyper-connection's residual map. (floating)
    doubly_stochastic,
    // Not drawn: computed from the op's drawn inputs by Op::derive_inputs once they are on the
    // device, for an input that must agree with others (a backward op's forward output and
    // log-sum-exp, made from its Q, K and V).                                   (any type)
    derived,
  } kind = Kind::normal;
  double a = 0, b = 1;
  double ignore_fraction = 0;       // integers only
  std::int64_t ignore_value = -100;  // integers only: PyTorch's cross-entropy ignore_index
  std::int64_t period = 0;          // position_ids: the sequence length (elements per sequence)
  std::int64_t total = 0;           // offsets: o_B, the total length (cu_seqlens[-1])

  static Distribution normal(double mean, double stddev) { return {Kind::normal, mean, stddev}; }
  static Distribution uniform(double low, double high) { return {Kind::uniform, low, high}; }
  static Distribution integers(std::int64_t low, std::int64_t high, double ignore_fraction = 0,
                               std::int64_t ignore_value = -100) {
    return {Kind::integers, static_cast<double>(low), static_cast<double>(high), ignore_fraction,
            ignore_value};
  }
  static Distribution position_ids(std::int64_t period, std::int64_t max_start = 0) {
    return {.kind = Kind::position_ids, .a = static_cast<double>(max_start), .period = period};
  }
  static Distribution permutation() { return {.kind = Kind::permutation}; }
  static Distribution offsets(std::int64_t total) { return {.kind = Kind::offsets, .total = total}; }
  static Distribution mask(double true_fraction) { return {.kind = Kind::mask, .a = true_fraction}; }
  static Distribution doubly_stochastic(std::int64_t n) { return {.kind = Kind::doubly_stochastic, .period = n}; }
  static Distribution derived() { return {.kind = Kind::derived}; }
};

std::string_view to_string(Distribution::Kind kind);

// What an output element may differ from the fp64 oracle by (harness/catalogue/tolerance.hpp):
//   |got - ref| <= atol + rtol * |ref| + abs_sum_scale * A + root_sum_sq_scale * R
// where A = sum |term| and R = sqrt(sum term^2) are the magnitudes of the terms the oracle added
// to make that element (HostTensor::abs_sum, ::root_sum_sq). A flat tolerance sets only atol
// and rtol; an error bound sets the scales (c * u of the precision whose roundings they bound),
// so the check is as tight as the element's own arithmetic allows.
struct Tolerance {
  double atol = 0;
  double rtol = 0;
  double abs_sum_scale = 0;      // times A: roundings whose errors can add up (accumulation)
  double root_sum_sq_scale = 0;  // times R: independent roundings of each term (rounded inputs)
  bool is_error_bound() const { return abs_sum_scale > 0 || root_sum_sq_scale > 0; }
};

struct TensorSpec {
  std::string name;
  std::vector<std::int64_t> dims;  // row-major
  bool is_output = false;
  // Which dim runs along the op's sample_axis (-1: none). Element i of that dim belongs to
  // index i of the axis, so the verifier may check a sample of the axis by gathering just
  // those slabs (strided when the dim is not the outermost). An output with -1 (a weight
  // gradient summed over every row) makes the whole case verified in full.
  int sample_dim = -1;
  Distribution init;  // inputs only
  ElemType elem = ElemType::case_dtype;
  // Outputs: the tolerance this output is checked with, computed by the op from the shape and
  // dtype (harness/catalogue/tolerance.hpp has helpers that scale with a reduction length). Unset: the
  // default table for the output's element type.
  std::optional<Tolerance> tolerance;
  // Outputs where -inf is a value, not a fault: the log-sum-exp of a row that sees no key. The
  // elements compared must still equal the oracle's (-inf where it says -inf); the device scan
  // of a sampled output then counts only NaN and +inf outside the sample as faults.
  bool minus_inf_is_value = false;

  std::int64_t numel() const;
  ElemType elem_type(DType case_dtype) const { return resolve(elem, case_dtype); }
  std::size_t element_bytes(DType case_dtype) const { return elem_size(elem_type(case_dtype)); }
};

// Bytes of one tensor, or of all of them, each at its own element size: what a work model's
// "each input read once, each output written once" counts.
double bytes_of(const TensorSpec& spec, DType case_dtype);
double tensor_bytes(const std::vector<TensorSpec>& specs, DType case_dtype);

// The fewest bytes the op must move (each input read once, each output written once) and the
// arithmetic it must do. GB/s, TFLOP/s and roofline figures all derive from these.
struct WorkModel {
  double bytes = 0;
  double flops = 0;
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
  // The op's tensors at this shape, in the order of `tensors`: what tensor<T>(name) looks up.
  const std::vector<TensorSpec>* specs = nullptr;
  // The case's seed, which drew the inputs (and the rows verification samples).
  std::uint64_t seed = 0;

  // The value of a declared tunable; throws std::out_of_range naming it if it is not declared.
  std::int64_t tunable(std::string_view name) const;
  // The device buffer of the op's tensor `name` as T* (its storage type; const T for an input,
  // void for raw bytes): a.tensor<const T>("x"), a.tensor<T>("y"). Throws std::out_of_range
  // naming the op's tensors when none is called `name`, and std::logic_error when T is not the
  // tensor's element size: a variant names what it reads and writes, never a position.
  template <class T>
  T* tensor(std::string_view name) const {
    if constexpr (std::is_void_v<std::remove_cv_t<T>>)
      return static_cast<T*>(tensor_data(name, 0));
    else
      return static_cast<T*>(tensor_data(name, sizeof(T)));
  }

 private:
  // elem_bytes 0: any element size.
  void* tensor_data(std::string_view name, std::size_t elem_bytes) const;

 public:
  template <class T>
  T& state_as() const { return *static_cast<T*>(state); }
};

// What an op's device oracle for its unaligned outputs sees (Op::device_unaligned_oracle): the
// case, and every tensor as the device holds it, in the order of the op's tensors(shape, dtype).
struct DeviceOracleArgs {
  const Shape& shape;
  DType dtype;
  const std::vector<TensorSpec>& specs;
  const std::vector<const void*>& tensors;  // device pointers, one per spec
  cudaStream_t stream;
};

struct Op {
  std::string name;
  std::string description;
  std::vector<AxisSpec> axes;
  std::vector<DType> dtypes;
  std::function<std::vector<TensorSpec>(const Shape&, DType)> tensors;
  std::function<WorkModel(const Shape&, DType)> work;
  // fp64 oracle: fill `expected` (one per output tensor, preallocated to numel) from the inputs
  // as the device holds them (already rounded to their element types). When the verifier
  // samples, it calls the oracle on a sub-shape whose sample axis is the number of sampled
  // indices and whose aligned tensors hold just those slabs: the oracle never needs to know.
  std::function<void(const Shape&, const std::vector<HostTensor>& inputs,
                     std::vector<HostTensor>& expected)>
      oracle;
  // Optional, set instead of `oracle` by an op whose formula depends on where its indices sit
  // along the sample axis, which a sub-shape loses (causal attention masks key j of query i by
  // j <= i): the same call plus the sample axis's indices the sub-shape holds, sorted, one per
  // entry (0 .. n-1 when nothing is sampled). harness/worker/verify/sampling.hpp's run_sampled_oracle calls
  // whichever is set.
  std::function<void(const Shape&, const std::vector<std::int64_t>& sample_indices,
                     const std::vector<HostTensor>& inputs, std::vector<HostTensor>& expected)>
      positional_oracle;
  // Optional, for an op with outputs not aligned with its sample axis (sample_dim -1: a loss that
  // sums every row): those outputs' expected values and bound magnitudes, computed in fp64 on the
  // device the calling thread named for the oracles (harness/catalogue/oracle_device.hpp), from
  // the whole inputs as the device holds them. It fills, of `expected` (one tensor per output, at
  // the full shape for these outputs), the unaligned outputs alone. Where it is usable a large
  // case samples its aligned outputs (the host oracle runs on their slabs, and what it writes in
  // the unaligned outputs is replaced by this); where it is not (no device named, KWB_ORACLE_GPU=0)
  // the case is verified in full on the host, which stays the ground truth. A GPU test compares
  // the two at small shapes.
  std::function<void(const DeviceOracleArgs&, std::vector<HostTensor>& expected)> device_unaligned_oracle;
  // Set by an op whose positional_oracle reads every input whole (no input has a sample_dim) and
  // computes its unaligned outputs itself, over the whole axis (its size from the inputs' dims,
  // not from the sub-shape): then those outputs do not make a large case full; its aligned outputs
  // are sampled and the unaligned ones checked whole. linear_cross_entropy samples dW's vocabulary
  // rows so, with the loss and dh whole. Checked at registration (a positional oracle and a sample
  // axis) and when a case is planned (no aligned input).
  bool unaligned_from_whole_inputs = false;
  // Set by an op with inputs of Distribution::derived (and only by one): writes them on the stream
  // from the drawn inputs, read by name as a variant reads them (LaunchArgs, no workspace or
  // state; the outputs not yet written), after every input is drawn and before any is copied for the oracle,
  // which sees the derived values as it sees any input. A group with derived inputs is prepared
  // in its turn, never ahead (harness/worker/case_runner_prefetch.cpp).
  std::function<void(const LaunchArgs&)> derive_inputs;
  // Axis whose indices are independent, along which verification may sample (empty: verify
  // everything, never sample). Tensors say which of their dims runs along it (sample_dim).
  std::string sample_axis;
  // Which unit does the op's arithmetic: "fp32" (CUDA cores), "tensor_bf16", "tensor_fp16",
  // "tensor_tf32", or "tensor": the tensor cores in the case dtype, fp32 cases in tf32 (a matmul
  // op's fp32 contract is tf32 accuracy; variants that run it so carry "tf32" in their names).
  // Picks the compute roof of the roofline (compute_unit_for).
  std::string compute_unit = "fp32";
  // Shapes swept when the command line names no axis (the op's smoke set: realistic sizes).
  std::vector<Shape> default_shapes;
  // Small shapes at the edges of every axis (1, primes, sizes that are not a multiple of the
  // vector width, one past a block's reach): what `kwb run --shapes edge`, the GPU tests and
  // compute-sanitizer run, each verified in full. Empty: every axis at min(default, 256).
  std::vector<Shape> edge_shapes;
  // Optional: a reason why this shape is invalid for the op itself (e.g. cols == 0).
  std::function<std::optional<std::string>(const Shape&)> invalid;
  // Hidden from `list` and default sweeps (ops that exist to test the harness) unless
  // --include-test-variants; their variants are test-only too.
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
  // Libraries the launch calls ("cuBLASLt"): a variant that hands its GEMMs to a library says so,
  // and the tables show it beside the name. Empty: only the project's own kernels.
  std::vector<std::string> uses;
  // The arithmetic it runs where the op's compute unit at the case dtype does not say it: one label
  // for every dtype ("fp32") or "DTYPE: LABEL" entries separated by ';' ("fp32: fp32"). Labels,
  // defaults and syntax: harness/catalogue/math_label.hpp. Empty: the default at every dtype.
  std::string math;
  // The work the variant executes when it is less than the op's useful work (a symmetric product
  // computed once, blocks above a causal diagonal skipped). % of roof uses this; GB/s, TFLOP/s
  // and speedups keep the op's useful work. Unset: the op's work model.
  std::function<WorkModel(const Shape&, DType)> executed_work;
  // The output may differ between launches of the same inputs (atomics, split reductions in a
  // scheduling-dependent order): the timed launches are re-checked within tolerance instead of
  // bit for bit.
  bool varies_run_to_run = false;
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

// Whether the op takes the shape (its `invalid` says nothing). The planner asks before it sizes a
// case's tensors or work: an invalid shape is planned (the worker records it as skipped, with the
// op's reason) but never walked, since an op's tensors() or work() may cost in proportion to a
// size its invalid() exists to refuse (block_sparse_attention_fwd's mask).
inline bool op_takes_shape(const Op& op, const Shape& shape) { return !op.invalid || !op.invalid(shape); }

// The default of a tunable at a shape: shape_default's pick, else the first value.
std::int64_t default_value(const Tunable& t, const Shape& shape, DType dtype);
// Every tunable of v at its default for the shape.
TunableValues default_tunables(const Variant& v, const Shape& shape, DType dtype);
// "4" or "per shape: <rule>": how `kwb list` and the catalogue state a tunable's default.
std::string default_text(const Tunable& t);

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
  // For messages ("known: ..."): the test-only ops only when asked.
  std::vector<std::string> op_names(bool include_test_only = false) const;
  std::vector<std::string> variant_names(bool include_test_only) const;

  // A plugin's registrations (harness/catalogue/plugin_loader.hpp), made into a registry of their
  // own, join this one whole or not at all: returns every problem they bring (a name that clashes
  // with one already here, naming both sources; a bad op or variant, as problems() finds it) and
  // leaves this registry unchanged, or returns nothing and adds them, each tagged with `source`.
  std::vector<std::string> adopt(const Registry& plugin, const PluginSource& source);
  // The plugin an op or variant came from; null for those built into kwb.
  const PluginSource* source_of_op(std::string_view op) const;
  const PluginSource* source_of_variant(std::string_view op, std::string_view variant) const;
  // Every registration that came from a plugin, in load order: (op name, its plugin) and
  // ("op:variant", its plugin).
  const std::vector<std::pair<std::string, PluginSource>>& plugin_ops() const { return op_sources_; }
  const std::vector<std::pair<std::string, PluginSource>>& plugin_variants() const { return variant_sources_; }
  // The plugins adopted, in load order (what a worker must load, in this order, to match).
  const std::vector<PluginSource>& plugins() const { return plugins_; }

 private:
  std::vector<Op> ops_;
  std::vector<Variant> variants_;
  std::vector<std::string> add_problems_;  // found while adding (duplicates)
  // Keyed by op name and by "op:variant"; only registrations that came from a plugin.
  std::vector<std::pair<std::string, PluginSource>> op_sources_, variant_sources_;
  std::vector<PluginSource> plugins_;
};

namespace detail {
struct Registrar {
  template <class T>
  explicit Registrar(T item) { Registry::instance().add(std::move(item)); }
};

#ifdef KWB_BUILDING_PLUGIN
// In a plugin (the kwb::plugin CMake target defines KWB_BUILDING_PLUGIN), a registration waits in
// the plugin's own list until kwb has read the plugin's ABI tag and calls its kwb_plugin_register
// (harness/catalogue/plugin_abi.hpp): the static initialisers that dlopen runs then touch nothing
// of kwb's, so a plugin built for another kwb is refused before any of its objects reach kwb's
// code. Hidden visibility gives each plugin its own list, and a class of its own name keeps the
// executable's exported Registrar (which adds at once) from standing in for this one.
__attribute__((visibility("hidden"))) inline std::vector<std::function<void(Registry&)>>& pending_plugin_registrations() {
  static std::vector<std::function<void(Registry&)>> pending;
  return pending;
}
struct __attribute__((visibility("hidden"))) PluginRegistrar {
  template <class T>
  explicit PluginRegistrar(T item) {
    pending_plugin_registrations().push_back([item = std::move(item)](Registry& registry) { registry.add(item); });
  }
};
#define KWB_REGISTRAR_TYPE ::kwb::detail::PluginRegistrar
#else
#define KWB_REGISTRAR_TYPE ::kwb::detail::Registrar
#endif
}  // namespace detail

#define KWB_CONCAT_INNER(a, b) a##b
#define KWB_CONCAT(a, b) KWB_CONCAT_INNER(a, b)
#define KWB_REGISTER_OP(...) \
  static const KWB_REGISTRAR_TYPE KWB_CONCAT(kwb_registrar_, __LINE__){__VA_ARGS__}
#define KWB_REGISTER_VARIANT(...) KWB_REGISTER_OP(__VA_ARGS__)

}  // namespace kwb
