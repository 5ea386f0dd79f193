// A variant's launch written once, for its storage type T; the registration dispatches the case's
// dtype to it, so no kernel file switches on DType by hand:
//
//   template <class T> void launch(const LaunchArgs& a) { ... a.tensor<const T>("x") ... }
//   KWB_REGISTER_VARIANT(Variant{..., .launch = by_dtype([]<class T>(const LaunchArgs& a) { launch<T>(a); })});
//
// T is float, __half or __nv_bfloat16 (device_types.cuh's dispatch_dtype). A variant that runs only
// some dtypes (its refuse() turns the others away) names them, and no kernel is instantiated for the
// rest: .launch = by_dtype_of<DType::fp32, DType::bf16>([]<class T>(const LaunchArgs& a) { ... }).
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "harness/catalogue/device_types.cuh"
#include "harness/catalogue/registry.hpp"

// nvcc's front end warns (#445) that a captureless template lambda's conversion to a function
// pointer cannot deduce T: true, and never used here (by_dtype calls operator()<T> directly). The
// pragma holds for the rest of each file that includes this header, i.e. its registrations.
#pragma nv_diag_suppress 445

namespace kwb {

template <class Fn>
std::function<void(const LaunchArgs&)> by_dtype(Fn fn) {
  return [fn = std::move(fn)](const LaunchArgs& a) {
    dispatch_dtype(a.dtype, [&](auto tag) { fn.template operator()<decltype(tag)>(a); });
  };
}

// The DType whose storage type is T.
template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return DType::fp32;
  else if constexpr (std::is_same_v<T, __half>) return DType::fp16;
  else return DType::bf16;
}

template <DType... Dtypes, class Fn>
std::function<void(const LaunchArgs&)> by_dtype_of(Fn fn) {
  return [fn = std::move(fn)](const LaunchArgs& a) {
    dispatch_dtype(a.dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (((dtype_of<T>() == Dtypes) || ...))
        fn.template operator()<T>(a);
      else
        throw std::invalid_argument("this variant has no " + std::string(to_string(a.dtype)) +
                                    " launch: its refuse() must turn such cases away");
    });
  };
}

}  // namespace kwb
