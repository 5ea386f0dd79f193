// Shortening demangled kernel names (see kernel_label.hpp).
#include "reports/review/kernel_label.hpp"

#include <regex>

namespace kwb::review {

std::string readable_kernel_name(std::string_view demangled) {
  std::string name(demangled);
  // An eager step's kernel, "eager_map_kernel<kwb::step::times_weight, <its lambda>>", reads as its
  // step: "eager_map_kernel<times_weight>" (kernels/common/eager_ops.cuh), whether CUPTI named it
  // or Nsight Compute did ("void ...<...>(long, T2)", with the return type and parameters).
  static const std::regex step(R"(^(?:void )?([^<(]*)<kwb::step::(\w+)\b.*>(?:\(.*\))?$)");
  name = std::regex_replace(name, step, "$1<$2>");
  // "f(args)::{lambda(long)#2}" -> "lambda #2 of f": the enclosing function names the lambda.
  static const std::regex lambda(R"(([A-Za-z_][\w:]*(?:<[^()<>]*>)?)\([^()]*\)::\{lambda\([^()]*\)#(\d+)\})");
  name = std::regex_replace(name, lambda, "lambda #$2 of $1");
  static const std::regex anonymous(R"(\(anonymous namespace\)::)");
  name = std::regex_replace(name, anonymous, "");
  static const std::regex qualifier(R"(\b[A-Za-z_]\w*::)");
  name = std::regex_replace(name, qualifier, "");
  static const std::regex bf16(R"(\b__nv_bfloat16\b)"), fp16(R"(\b__half\b)"), fp32(R"(\bfloat\b)");
  name = std::regex_replace(name, bf16, "bf16");
  name = std::regex_replace(name, fp16, "fp16");
  name = std::regex_replace(name, fp32, "fp32");
  if (name.empty()) return "(no name: recorded by a kwb that cut names at '(anonymous namespace)')";
  return name;
}

}  // namespace kwb::review
