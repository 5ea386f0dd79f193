// Running an op's fp64 oracle on the host, and checking a backward op's oracle against finite
// differences of its forward op's oracle.
//
//   const Op& bwd = registered_op("rmsnorm_bwd");
//   auto in = host_inputs(bwd.tensors(shape, DType::fp32), 7);   // x, weight, dy
//   auto grads = run_oracle(bwd, shape, in);                      // dx, dweight
//   // d/dx[e] of L = sum(dy * rmsnorm_fwd(x, weight)):
//   double fd = finite_difference_vjp(registered_op("rmsnorm_fwd"), shape, {in[0], in[1]}, 0, e, {in[2]});
//   EXPECT_NEAR(grads[0].values[e], fd, 1e-6 * (1 + std::abs(fd)));
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/catalogue/host_tensor.hpp"
#include "harness/catalogue/registry.hpp"
#include "harness/worker/verify/sampling.hpp"
#include "harness/worker/prepare/draws.hpp"
#include "harness/worker/prepare/host_generators.hpp"

namespace kwb {

inline const Op& registered_op(const std::string& name) {
  const Op* found = Registry::instance().find_op(name);
  if (!found) throw std::runtime_error("no op " + name);
  return *found;
}

// Host inputs for `specs`: floating tensors drawn from their own distribution (normal or
// uniform, seeded), integer and bool tensors with the device's own draws (labels with their
// ignore fraction, position ids, masks, permutations, offsets) and doubly stochastic blocks, so the oracle sees what a
// case would give it. A derived input (made on the device by the op's derive_inputs) is drawn
// normal(0, 1) here: a test that needs it consistent with the others computes it itself.
inline std::vector<HostTensor> host_inputs(const std::vector<TensorSpec>& specs, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<HostTensor> out;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const auto& t = specs[i];
    if (t.is_output) continue;
    HostTensor h{t.name, t.dims, std::vector<double>(static_cast<std::size_t>(t.numel()))};
    const std::uint64_t key = draws::fill_key(seed, i);
    const auto& d = t.init;
    using K = Distribution::Kind;
    if (d.kind == K::permutation || d.kind == K::offsets) {
      const auto v = d.kind == K::permutation ? random_permutation(t.numel(), key)
                                              : random_offsets(t.numel(), d.total, key);
      for (std::size_t e = 0; e < v.size(); ++e) h.values[e] = static_cast<double>(v[e]);
    } else if (d.kind == K::doubly_stochastic) {
      h.values = random_doubly_stochastic(t.numel(), d.period, key);
    } else {
      std::normal_distribution<double> normal(d.a, d.b);
      std::uniform_real_distribution<double> uniform(d.a, d.b);
      for (std::int64_t e = 0; e < t.numel(); ++e) {
        switch (d.kind) {
          case K::position_ids:
            h.values[e] = static_cast<double>(draws::position_id(key, e, d.period, static_cast<std::int64_t>(d.a)));
            break;
          case K::mask: h.values[e] = draws::mask(key, e, d.a) ? 1 : 0; break;
          case K::integers:
            h.values[e] = static_cast<double>(draws::integer(key, e, static_cast<std::int64_t>(d.a),
                                                             static_cast<std::int64_t>(d.b), d.ignore_fraction,
                                                             d.ignore_value));
            break;
          case K::uniform: h.values[e] = uniform(rng); break;
          default: h.values[e] = normal(rng); break;
        }
      }
    }
    out.push_back(std::move(h));
  }
  return out;
}

// One NaN-filled host tensor per output of `specs`, as the verifier hands them to an oracle.
inline std::vector<HostTensor> empty_outputs(const std::vector<TensorSpec>& specs) {
  std::vector<HostTensor> out;
  for (const auto& t : specs)
    if (t.is_output) out.push_back({t.name, t.dims, std::vector<double>(static_cast<std::size_t>(t.numel()), NAN)});
  return out;
}

// The op's oracle on `inputs` (fp32 specs give the output shapes).
inline std::vector<HostTensor> run_oracle(const Op& op, const Shape& shape, const std::vector<HostTensor>& inputs) {
  auto outputs = empty_outputs(op.tensors(shape, DType::fp32));
  run_full_oracle(op, shape, inputs, outputs);
  return outputs;
}

// d/d(inputs[input][element]) of L = sum over outputs k of sum(cotangents[k] * output_k), by a
// central difference of the forward oracle (step h relative to the element's magnitude): the
// vector-Jacobian product a backward op computes, element by element. `cotangents` has one
// tensor per forward output (dy, or dloss for a scalar loss).
inline double finite_difference_vjp(const Op& forward, const Shape& shape, std::vector<HostTensor> inputs,
                                    std::size_t input, std::int64_t element,
                                    const std::vector<HostTensor>& cotangents, double h = 1e-6) {
  auto loss = [&](double value) {
    inputs[input].values[static_cast<std::size_t>(element)] = value;
    const auto out = run_oracle(forward, shape, inputs);
    double l = 0;
    for (std::size_t k = 0; k < out.size() && k < cotangents.size(); ++k)
      for (std::size_t e = 0; e < out[k].values.size(); ++e) l += cotangents[k].values[e] * out[k].values[e];
    return l;
  };
  const double x0 = inputs[input].values[static_cast<std::size_t>(element)];
  const double step = h * std::max(1.0, std::abs(x0));
  return (loss(x0 + step) - loss(x0 - step)) / (2 * step);
}

}  // namespace kwb
