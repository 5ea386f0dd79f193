// The catalogue page (docs/catalogue.md, `kwb list --markdown`): every op with its formula,
// axes, tensors, dtypes, bytes formula, shapes and variants, generated from the registry so that
// it cannot drift from the code (a CPU test regenerates the page and compares).
#pragma once

#include <string>
#include <vector>

#include "harness/catalogue/registry.hpp"

namespace kwb {

// The whole page, ordinary ops only (test-only ops and variants exist to test the harness).
std::string catalogue_markdown(const Registry& registry);

// The shape the page describes an op at: its first default shape, else every axis at its default.
Shape example_shape(const Op& op);

// A dim written in the op's axis names where it is one ("cols"), a product of two ("rows·cols"),
// or half of one ("head_dim/2"), at `example`; otherwise the number itself.
std::string symbolic_dim(std::int64_t dim, const Shape& example);

// Bytes of the tensors as a formula over the axes and the dtype size s: "(2·rows·cols + cols)·s"
// style, each integer or fp32 tensor at its own size ("+ 4·tokens").
std::string bytes_formula(const std::vector<TensorSpec>& tensors, const Shape& example);

}  // namespace kwb
