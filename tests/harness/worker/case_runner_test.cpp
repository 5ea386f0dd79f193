// What makes cases share their inputs and oracle: the worker keeps a group's inputs while the
// key stays, and the session keeps a group on one GPU, both by input_group_key(). (The rest of
// the case runner needs a GPU: tests/gpu.)
#include "harness/worker/case_runner.hpp"

#include <gtest/gtest.h>

#include "harness/catalogue/oracle_device.hpp"

namespace kwb {
namespace {

CaseRequest rmsnorm_case(std::string variant, std::int64_t rows) {
  CaseRequest c;
  c.op = "rmsnorm_fwd";
  c.variant = std::move(variant);
  c.dtype = DType::bf16;
  c.shape = Shape{{{"rows", rows}, {"cols", 4096}}};
  c.seed = 7;
  return c;
}

TEST(InputGroupKey, IsTheSameForEveryVariantTunableAndSettingOfOneInput) {
  const CaseRequest a = rmsnorm_case("fused_v2_vec16", 1024);
  CaseRequest b = rmsnorm_case("baseline_eager", 1024);
  b.index = 5;
  b.tunables = {{"block", 256}};
  b.mode = Mode::hot;
  b.preset = "quick";
  EXPECT_EQ(input_group_key(a), input_group_key(b));
  EXPECT_EQ(input_group_key(a), "rmsnorm_fwd|bf16|rows=1024,cols=4096|7|oracle on host")
      << "this thread named no device for the oracles";
}

// Whether a device may serve the oracles decides the sample plan (an op's unaligned outputs from
// the device, or everything on the host), so a group prepared one way is not reused the other.
TEST(InputGroupKey, DiffersWhenTheOraclesMayUseTheDevice) {
  const CaseRequest a = rmsnorm_case("fused_v2_vec16", 1024);
  const std::string host = input_group_key(a);
  set_oracle_gpu_device(0);
  const std::string device = input_group_key(a);
  set_oracle_gpu_device(-1);
  EXPECT_NE(host, device);
  EXPECT_EQ(device, "rmsnorm_fwd|bf16|rows=1024,cols=4096|7|oracle on device");
}

TEST(InputGroupKey, DiffersWhenTheOpDtypeShapeOrSeedDiffers) {
  const CaseRequest base = rmsnorm_case("fused_v2_vec16", 1024);
  CaseRequest op = base, dtype = base, shape = base, seed = base;
  op.op = "layernorm_fwd";
  dtype.dtype = DType::fp16;
  shape.shape = Shape{{{"rows", 2048}, {"cols", 4096}}};
  seed.seed = 8;
  for (const CaseRequest& other : {op, dtype, shape, seed})
    EXPECT_NE(input_group_key(base), input_group_key(other)) << input_group_key(other);
}

}  // namespace
}  // namespace kwb
