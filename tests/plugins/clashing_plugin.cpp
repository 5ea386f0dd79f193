// A plugin whose variant takes the name of one built into kwb (rmsnorm_fwd's first fused kernel).
#include "tests/plugins/test_plugin_op.hpp"

namespace {
using namespace kwb_test_plugin;
KWB_REGISTER_VARIANT(copy_variant("rmsnorm_fwd", "fused_v1_row_per_block"));
}  // namespace
