// The case identity string (see case_identity.hpp).
#include "harness/catalogue/case_identity.hpp"

namespace kwb {

std::string case_identity(std::string_view op, std::string_view variant, DType dtype,
                          const Shape& shape, const TunableValues& tunables) {
  std::string out = std::string(op) + ":" + std::string(variant) + ":" +
                    std::string(to_string(dtype)) + ":" + shape.to_compact();
  if (!tunables.empty()) out += ":" + to_assignments(tunables);
  return out;
}

}  // namespace kwb
