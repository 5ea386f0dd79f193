// The review report's two kinds of chart, drawn from the model as inline SVG: the roofline and
// the sweep charts. Shared by every sink that embeds SVG (the HTML report today).
#pragma once

#include <string>

#include "reports/review/review_model.hpp"

namespace kwb::review {

// Log-log roofline: FLOP/byte against TFLOP/s, every roof of the model (measured solid,
// datasheet dashed, each labelled), one point per case coloured by op, a legend. Sized so that
// it fits an A4 page's width when printed (the HTML scales it down with its viewBox).
std::string roofline_svg(const ReviewModel& model);

// One sweep: the chart's rate against its axis, one line per variant.
std::string sweep_svg(const SweepChart& chart);

}  // namespace kwb::review
