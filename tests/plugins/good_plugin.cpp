// A sound plugin: an op of its own with one variant, and a variant of a catalogue op.
#include "tests/plugins/test_plugin_op.hpp"

namespace {
using namespace kwb_test_plugin;
KWB_REGISTER_OP(copy_op("plugin_test_copy"));
KWB_REGISTER_VARIANT(copy_variant("plugin_test_copy", "plugin_v1_copy"));
KWB_REGISTER_VARIANT(copy_variant("rmsnorm_fwd", "plugin_test_v1_noop"));
}  // namespace
