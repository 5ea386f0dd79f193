#!/usr/bin/env bash
# What a plugin's author does, checked end to end on a CPU-only machine (CI): install kwb into a
# temporary prefix, configure and build examples/plugin against that prefix alone
# (find_package(kwb)), and check that `kwb list --plugin` shows its op and variants, that a suite
# naming the plugin plans its op, and that a file that is no shared library and a plugin built
# against a kwb of another version string are refused with exit 2 and the reason.
#   plugin_package_test.sh BUILD_DIR SOURCE_DIR GENERATOR CUDA_COMPILER CUDA_ARCHITECTURES
set -euo pipefail
unset KWB_PLUGINS  # only the plugins each step names
build=$1 source=$2 generator=$3 cuda_compiler=$4 cuda_archs=$5
work=$(mktemp -d "${TMPDIR:-/tmp}/kwb-plugin-package.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*" >&2; exit 1; }

# 1. Install kwb, as `cmake --install build --prefix DIR` does for a user.
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log" 2>&1 \
  || { cat "$work/install.log"; fail "cmake --install $build"; }
kwb=$work/prefix/bin/kwb
[ -x "$kwb" ] || fail "the install put no kwb in $work/prefix/bin"
for header in harness/catalogue/registry.hpp harness/catalogue/typed_launch.cuh harness/catalogue/plugin_api_version.hpp; do
  [ -f "$work/prefix/include/kwb/$header" ] || fail "the install has no include/kwb/$header"
done

# 2. The example plugin, against the installed package alone.
build_example() {  # PREFIX OUT
  cmake -S "$source/examples/plugin" -B "$2" -G "$generator" -DCMAKE_PREFIX_PATH="$1" \
        -DCMAKE_CUDA_COMPILER="$cuda_compiler" -DCMAKE_CUDA_ARCHITECTURES="$cuda_archs" > "$2.log" 2>&1 \
    && cmake --build "$2" >> "$2.log" 2>&1 \
    || { tail -40 "$2.log"; fail "building examples/plugin against $1"; }
}
build_example "$work/prefix" "$work/example"
plugin=$work/example/libkwb_example_kernels.so
[ -f "$plugin" ] || fail "the example's build made no $plugin"
# It exports its two entry symbols and none of kwb's: an exported copy of an inline kwb function
# would be bound to kwb's own by the dynamic linker (see kwb_plugin in CMakeLists.txt).
exported=$(nm -D --defined-only -C "$plugin" | grep -E ' [TWVDBR] .*kwb::' || true)
[ -z "$exported" ] || fail "the plugin exports kwb's symbols:
$exported"
nm -D --defined-only "$plugin" | grep -q ' kwb_plugin_abi_tag$' || fail "the plugin does not export kwb_plugin_abi_tag"
nm -D --defined-only "$plugin" | grep -q ' kwb_plugin_register$' || fail "the plugin does not export kwb_plugin_register"

# 3. Its op and variants in the catalogue, with the plugin's path and hash.
out=$("$kwb" list --plugin "$plugin") || fail "kwb list --plugin $plugin exited $?"
grep -q '^squared_relu_fwd ' <<<"$out" || fail "kwb list does not list the plugin's op squared_relu_fwd:
$out"
grep -q "plugin $plugin (sha256 $(sha256sum "$plugin" | cut -c1-16))" <<<"$out" \
  || fail "kwb list does not name the plugin with its SHA-256:
$out"
grep -q 'variants: squared_relu_fwd:fused_v1_grid_stride, rmsnorm_fwd:plugin_v1_warp_per_row' <<<"$out" \
  || fail "kwb list does not list the plugin's variants:
$out"
out=$("$kwb" list --plugin "$plugin" --op squared_relu_fwd,rmsnorm_fwd)
grep -q 'fused     fused_v1_grid_stride' <<<"$out" || fail "kwb list --op squared_relu_fwd shows no variant:
$out"
grep -q 'plugin_v1_warp_per_row' <<<"$out" || fail "rmsnorm_fwd does not show the plugin's variant:
$out"

# 4. A suite names it, relative to the suite file.
mkdir -p "$work/suites"
printf 'name: plugin-suite\nplugins: ../example/libkwb_example_kernels.so\nentries:\n  - ops: squared_relu_fwd\n    dtypes: bf16\n' \
  > "$work/suites/plugin.yaml"
out=$("$kwb" run --suite "$work/suites/plugin.yaml" --list-cases 2>&1) || fail "kwb run --suite (plugins:) exited $?:
$out"
grep -q '^squared_relu_fwd:fused_v1_grid_stride:bf16:16384x4096$' <<<"$out" || fail "the suite's plan lacks the plugin's op:
$out"

# 4b. A file of Python variants, through the bridge installed beside kwb (<prefix>/lib/kwb/), where
#     this build has one.
if [ -f "$build/lib/libkwb_python_bridge.so" ]; then
  [ -f "$work/prefix/lib/kwb/libkwb_python_bridge.so" ] || fail "the install has no lib/kwb/libkwb_python_bridge.so"
  out=$(KWB_PYTHON_BRIDGE= "$kwb" list --op rmsnorm_fwd --python "$source/examples/python/rmsnorm_variants.py" 2>&1) \
    || fail "the installed kwb list --python exited $?:
$out"
  grep -q 'triton_rmsnorm' <<<"$out" || fail "the installed kwb does not list the example's Python variant:
$out"
fi

# 5. Refusals: exit 2 and the reason.
expect_refusal() {  # WHAT EXPECTED-TEXT ARGS...
  local what=$1 expected=$2 rc=0
  shift 2
  out=$("$kwb" "$@" 2>&1) || rc=$?
  [ "$rc" -eq 2 ] || fail "$what: exit $rc, expected 2:
$out"
  grep -qF -- "$expected" <<<"$out" || fail "$what: the message does not say \"$expected\":
$out"
}
printf 'not a shared library\n' > "$work/not_a_library.so"
expect_refusal "a text file as a plugin" "cannot be loaded" list --plugin "$work/not_a_library.so"
expect_refusal "a missing plugin" "no such file" run --plugin "$work/missing.so" --list-cases

# A package whose version string differs (another kwb release): its plugin names both versions.
cp -a "$work/prefix" "$work/other-prefix"
version_header=$work/other-prefix/include/kwb/harness/catalogue/plugin_api_version.hpp
sed -i 's/^#define KWB_PLUGIN_KWB_VERSION ".*"/#define KWB_PLUGIN_KWB_VERSION "0.0.0-mismatch"/' "$version_header"
grep -q '"0.0.0-mismatch"' "$version_header" || fail "could not edit the version of $version_header"
build_example "$work/other-prefix" "$work/other-example"
this_version=$("$kwb" --version | cut -d' ' -f1)
expect_refusal "a plugin built for another version" "was built for kwb 0.0.0-mismatch" \
  list --plugin "$work/other-example/libkwb_example_kernels.so"
grep -qF "this is kwb $this_version" <<<"$out" || fail "the refusal does not name this kwb's version $this_version:
$out"
echo "plugin package: installed, built examples/plugin against it, listed its op and variants, refused 3 bad plugins"
