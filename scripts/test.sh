#!/usr/bin/env bash
# All tests: configure, build everything (CUDA code included), run the CPU and GPU tests.
# Without a GPU the GPU tests report themselves as skipped, with the reason. Missing build and
# test packages are installed first (scripts/ensure_deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ensure_deps.sh
kwb_ensure_deps --tests || exit 2
cmake --preset default
cmake --build --preset default -j "$(nproc)"
# Why each GPU test is skipped, when it is (ctest lists skipped tests but not their reason).
if ! ./build/tests/kwb_gpu_tests --gtest_brief=1 --gtest_filter='TimerAgreement.TinyKernel*' > /tmp/kwb-gpu-probe.txt 2>&1 \
   || grep -q SKIPPED /tmp/kwb-gpu-probe.txt; then
  grep -m1 -o 'needs a CUDA GPU.*' /tmp/kwb-gpu-probe.txt | sed 's/^/GPU tests will be skipped: /' || true
fi
ctest --preset default -j 2
