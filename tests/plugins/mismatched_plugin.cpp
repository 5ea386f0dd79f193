// A plugin as another kwb would have built it: its entry symbols written by hand with another
// version in the ABI tag (it does not link kwb::plugin's entry file). Its register function must
// never be called: it aborts the process if it is.
#include <cstdlib>

extern "C" __attribute__((visibility("default"))) const char kwb_plugin_abi_tag[] =
    "kwb 0.0.1-older, api 0000000000000000, gcc 1, libstdc++ 1 cxx11-abi 1";

extern "C" __attribute__((visibility("default"))) void kwb_plugin_register(void*) { std::abort(); }
