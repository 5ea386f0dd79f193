// A tiny op for the test plugins: host code only (its variant launches nothing), so that the CPU
// tests can build, load and list plugins without nvcc or a GPU. Not a real kernel: these plugins
// are never run.
#pragma once

#include <algorithm>

#include "harness/catalogue/registry.hpp"

namespace kwb_test_plugin {

inline std::vector<kwb::TensorSpec> copy_tensors(const kwb::Shape& s, kwb::DType) {
  return {{.name = "x", .dims = {s.at("n")}, .init = kwb::Distribution::normal(0, 1)},
          {.name = "y", .dims = {s.at("n")}, .is_output = true}};
}

inline kwb::Op copy_op(const std::string& name) {
  return kwb::Op{
      .name = name,
      .description = "y = x (a test plugin's op)",
      .axes = {{"n", 1024, {}, "elements"}},
      .dtypes = {kwb::DType::fp32},
      .tensors = copy_tensors,
      .work = [](const kwb::Shape& s, kwb::DType) { return kwb::WorkModel{8.0 * s.at("n"), 0}; },
      .oracle = [](const kwb::Shape&, const std::vector<kwb::HostTensor>& in,
                   std::vector<kwb::HostTensor>& out) { out[0].values = in[0].values; },
      .default_shapes = {kwb::Shape{{{"n", 1024}}}},
  };
}

inline kwb::Variant copy_variant(const std::string& op, const std::string& name) {
  return kwb::Variant{.op = op, .name = name, .description = "a test plugin's variant", .launch = [](const kwb::LaunchArgs&) {}};
}

}  // namespace kwb_test_plugin
