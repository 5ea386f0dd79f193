# kwb_add_plugin(TARGET SOURCE...): a kwb plugin, a MODULE library (loaded with dlopen, never
# linked against), built as kwb builds its own kernels:
# - kwb::plugin: the headers, KWB_BUILDING_PLUGIN, the entry symbols kwb reads, hidden visibility;
# - C++20 in .cpp and .cu files (registrations use designated initialisers);
# - the shared CUDA runtime: kwb's own CUDA calls go through it, and a plugin's kernels must
#   register with that runtime, not with a static copy of their own (they would not launch);
# - the CUDA options of kwb's catalogue (kwb_plugin_cuda_options: by_dtype's template lambdas).
# Included by kwb's own CMakeLists.txt (its test plugins) and by the installed package's
# kwbConfig.cmake (find_package(kwb)).

# The options, from a function rather than a variable: a variable set here would live only in the
# scope of the find_package(kwb) call, and a plugin declared elsewhere would lose them.
function(kwb_plugin_cuda_options out)
  set(${out} -lineinfo --expt-relaxed-constexpr --extended-lambda PARENT_SCOPE)
endfunction()

# CMake 3.25 (Debian 12) does not know nvcc 13's C++20 flag, which nvcc accepts: say it, for the
# directory that includes this file (kwb's own CMakeLists.txt does the same for itself).
if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
endif()

function(kwb_add_plugin target)
  add_library(${target} MODULE ${ARGN})
  target_link_libraries(${target} PRIVATE kwb::plugin)
  set_target_properties(${target} PROPERTIES CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON
                                             CUDA_STANDARD 20 CUDA_STANDARD_REQUIRED ON
                                             CUDA_RUNTIME_LIBRARY Shared)
  kwb_plugin_cuda_options(cuda_options)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${cuda_options}>)
endfunction()
