// One case run inside the test process (no worker), as `kwb run` would plan it: the variant's
// tunables at their defaults for the shape, test-only variants allowed, hot, CUDA events.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "harness/catalogue/registry.hpp"
#include "harness/worker/case_runner.hpp"

namespace kwb::test {

inline CaseRunner& in_process_runner() {
  static int device = (cudaSetDevice(0), 0);
  (void)device;
  static CaseRunner r(TimerKind::events, std::size_t{64} << 20);
  return r;
}

// `preset`: a stopping preset ("quick") or kVerifyOnlyPreset (checked, not timed).
inline CaseRecord run_in_process(const std::string& op, const std::string& variant, DType dtype, const Shape& shape,
                                 const std::string& preset, std::uint64_t seed) {
  CaseRequest req;
  req.op = op;
  req.variant = variant;
  req.dtype = dtype;
  req.shape = shape;
  if (const Variant* v = Registry::instance().find_variant(op, variant))
    req.tunables = default_tunables(*v, req.shape, dtype);
  req.mode = Mode::hot;
  req.preset = preset;
  req.seed = seed;
  req.include_test_variants = true;
  return in_process_runner().run(req);
}

// The verification of one output of a verified case; throws when the case has none by that name.
inline const OutputCheck& output_named(const CaseRecord& rec, const std::string& name) {
  if (rec.verify)
    for (const auto& o : rec.verify->outputs)
      if (o.name == name) return o;
  throw std::runtime_error(rec.nvtx_range + ": no verified output '" + name + "'");
}

}  // namespace kwb::test
