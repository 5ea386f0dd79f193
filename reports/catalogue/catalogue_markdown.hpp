// The catalogue page (docs/catalogue.md, `kwb list --markdown`): every op with its formula,
// axes, tensors, dtypes, bytes formula, shapes and variants, generated from the registry so that
// it cannot drift from the code (a CPU test regenerates the page and compares).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/catalogue/registry.hpp"

namespace kwb {

// The whole page, ordinary ops only (test-only ops and variants exist to test the harness).
std::string catalogue_markdown(const Registry& registry);

// The shape the page describes an op at: its first default shape, else every axis at its default.
Shape example_shape(const Op& op);

// The same dim of the same tensor at another shape (nullopt where the op cannot say): what tells a
// dim that follows an axis from one that only equals its value at the example.
using DimAt = std::function<std::optional<std::int64_t>(const Shape&)>;

// A dim written in the op's axis names where it is one ("cols"), a product of two ("rows·cols"),
// or half of one ("head_dim/2"), at `example`; otherwise the number itself. With `at`, a name is
// used only where the dim follows it: at the example with that axis doubled, the dim is what the
// name says (so heads = kv_heads = 32, or a block count equal to the block size, name nothing wrongly).
std::string symbolic_dim(std::int64_t dim, const Shape& example, const DimAt& at = {});

// Bytes of the tensors as a formula over the axes and the dtype size s: "(2·rows·cols + cols)·s"
// style, each integer or fp32 tensor at its own size ("+ 4·tokens"). With `op`, its dims are named
// only where they follow the axes (symbolic_dim's `at`, from op.tensors at `dtype`).
std::string bytes_formula(const std::vector<TensorSpec>& tensors, const Shape& example, const Op* op = nullptr,
                          DType dtype = DType::fp32);

}  // namespace kwb
