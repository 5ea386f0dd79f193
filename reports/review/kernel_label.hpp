// A kernel's name as a person reads it, from the demangled name a record keeps
// (KernelBreakdown::name): namespaces dropped, element types shortened (bf16, fp16, fp32) and a
// lambda named by its place ("eager_map_kernel<lambda #2 of launch_typed<bf16>>"). The record keeps
// the whole name; only what is shown changes.
#pragma once

#include <string>
#include <string_view>

namespace kwb::review {

std::string readable_kernel_name(std::string_view demangled);

}  // namespace kwb::review
