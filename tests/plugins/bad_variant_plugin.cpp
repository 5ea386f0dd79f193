// A plugin with registration mistakes the registry's check finds: a variant without a launch, and
// one of an op nobody registered.
#include "tests/plugins/test_plugin_op.hpp"

namespace {
using namespace kwb_test_plugin;
KWB_REGISTER_OP(copy_op("plugin_test_bad"));
KWB_REGISTER_VARIANT(kwb::Variant{.op = "plugin_test_bad", .name = "v1_without_launch"});
KWB_REGISTER_VARIANT(copy_variant("plugin_test_no_such_op", "v1"));
}  // namespace
