// A plugin built without any registration (its kernel files left out of the library).
#include "harness/catalogue/registry.hpp"
