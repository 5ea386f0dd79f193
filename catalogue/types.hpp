// Vocabulary shared by every part of the harness: dtypes, roles, shapes, dispositions.
//
// Host-only: nothing here needs the CUDA runtime, so the planner, the reports and the CLI
// build and run on machines without a GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
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

// A point in an op's axis space, in the op's axis order: {{"rows", 4096}, {"cols", 4100}}.
struct Shape {
  std::vector<std::pair<std::string, std::int64_t>> axes;

  std::int64_t at(std::string_view name) const;  // throws std::out_of_range if absent
  std::optional<std::int64_t> find(std::string_view name) const;
  // "rows=4096,cols=4100": the CLI form, pasteable back as --axis values.
  std::string to_assignments() const;
  // "4096x4100": compact, used in NVTX names and tables.
  std::string to_compact() const;
  bool operator==(const Shape&) const = default;
};

}  // namespace kwb
