// Vocabulary shared by every part of the harness: dtypes, roles, shapes, dispositions.
//
// Host-only: nothing here needs the CUDA runtime, so the planner, the reports and the CLI
// build and run on machines without a GPU.
#pragma once

#include <concepts>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace kwb {

enum class DType { fp32, fp16, bf16 };

inline constexpr DType kAllDTypes[] = {DType::fp32, DType::fp16, DType::bf16};

std::string_view to_string(DType dtype);
std::optional<DType> parse_dtype(std::string_view text);  // "fp32"/"f32"/"float32", ...
std::size_t dtype_size(DType dtype);

// Role of a variant: what a speedup is quoted against.
enum class Role { fused, baseline, vendor };
std::string_view to_string(Role role);
std::optional<Role> parse_role(std::string_view text);

// Timing mode. cold: L2 flushed before every sample; hot: samples back to back.
enum class Mode { cold, hot };
std::string_view to_string(Mode mode);
std::optional<Mode> parse_mode(std::string_view text);

// Verdict of one case.
enum class Disposition { passed, failed, skipped, not_verified };
std::string_view to_string(Disposition d);
std::optional<Disposition> parse_disposition(std::string_view text);

// The value of one axis of a shape: an integer (rows=4096) or one of the op's named choices
// (layout=bshd, causal=1). A choice is kept as its name, never as an index, so records and
// command lines stay readable and survive a reordering of the op's choice list.
class AxisValue {
 public:
  AxisValue() = default;
  template <std::integral T>
  AxisValue(T value) : value_(static_cast<std::int64_t>(value)) {}  // NOLINT: implicit on purpose
  AxisValue(std::string choice) : value_(std::move(choice)) {}     // NOLINT
  AxisValue(const char* choice) : value_(std::string(choice)) {}   // NOLINT

  bool is_choice() const { return std::holds_alternative<std::string>(value_); }
  // Throws std::logic_error naming the value when it is of the other kind.
  std::int64_t integer() const;
  const std::string& choice() const;
  // "4096" or "bshd": the form written after NAME= on the command line.
  std::string text() const;
  bool operator==(const AxisValue&) const = default;

 private:
  std::variant<std::int64_t, std::string> value_;
};

std::ostream& operator<<(std::ostream& out, const AxisValue& value);  // for test failure messages

// A point in an op's axis space, in the op's axis order: {{"rows", 4096}, {"cols", 4100}} or
// {{"batch", 2}, {"seq", 128}, {"layout", "bshd"}}.
struct Shape {
  std::vector<std::pair<std::string, AxisValue>> axes;

  // Integer axes. at() throws std::out_of_range if absent and std::logic_error for a choice axis.
  std::int64_t at(std::string_view name) const;
  std::optional<std::int64_t> find(std::string_view name) const;  // nullopt if absent
  // Choice axes: the choice's name. Throws std::out_of_range if absent, std::logic_error for an
  // integer axis.
  const std::string& choice(std::string_view name) const;
  const AxisValue* value(std::string_view name) const;  // either kind; null if absent
  // "rows=4096,cols=4100" / "batch=2,layout=bshd": the CLI form, pasteable back as --axis values.
  std::string to_assignments() const;
  // "4096x4100": compact, used in NVTX names and tables. Choice axes follow the integers as
  // ",name=choice" so they stay readable: "2x128x8x64,layout=bshd,causal=1".
  std::string to_compact() const;
  bool operator==(const Shape&) const = default;
};

// The tunable values of one case, in the variant's declaration order: {{"block", 256}}.
using TunableValues = std::vector<std::pair<std::string, std::int64_t>>;

// "block=256,unroll=4": the CLI form, pasteable back as --axis values. Empty when none.
std::string to_assignments(const TunableValues& tunables);

}  // namespace kwb
