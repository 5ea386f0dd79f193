// A shape as a person reads it in a table: "b4 s4096 h32/8 d128 causal w256" rather than the
// identity's "4x4096x32x8x128x256,causal=1,softcap=0". Built from the labels the op gives its
// axes (AxisSpec::label); an op that labels none keeps the compact form ("16384x4096").
//
// Per axis, in the op's order:
//   - an integer axis reads label + value ("s4096"), and is left out when it is 0 and 0 is its
//     default: a switch that is off (window=0);
//   - a choice axis is left out at its first choice (its default: causal=0, positions=index);
//     a 0/1 choice at 1 reads as its label alone ("causal"); any other reads label + choice
//     ("cap30", "pos=ids");
//   - a label that starts with "/" joins the token before it ("h32" + "/8" = "h32/8").
// The identity, the CSV/JSON and the repro lines keep the compact and assignment forms: this one
// is for reading only and is never parsed back.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "harness/catalogue/registry.hpp"
#include "harness/catalogue/types.hpp"

namespace kwb {

std::string shape_label(const Shape& shape, const std::vector<AxisSpec>& axes);

// Whether an op gives any of its axes a label (then it must label every integer and 0/1 axis).
bool any_labelled(const std::vector<AxisSpec>& axes);

// The op's own labels from this build's registry; the compact form for an op it does not know
// (a report from another build) or a shape that does not match the op's axes.
std::string shape_label(std::string_view op, const Shape& shape);

// What a record keeps (CaseRecord::shape_label): the labelled form where this build's op labels
// its axes and the shape matches them, else empty, so that the compact form is never frozen into
// a report as if it were a label (a reader of a later build then applies that build's labels).
std::string recorded_shape_label(std::string_view op, const Shape& shape);

}  // namespace kwb
