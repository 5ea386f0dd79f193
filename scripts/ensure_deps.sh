#!/usr/bin/env bash
# Sourced by run.sh, test.sh and .ci/run: makes sure this Debian/Ubuntu machine has what the build
# needs, installing what is missing when it can.
#
# The CUDA toolkit (nvcc, cudart, CUPTI, cuBLASLt, NVTX3) is not a Debian package here: it must
# already be installed (/usr/local/cuda). Everything else comes from apt-get: as root directly,
# with sudo when it needs no password, otherwise the script stops and prints the one line to run.
#
#   KWB_BUILD_PACKAGES   the packages every build needs (libsqlite3-dev is optional: without it
#                        the build succeeds and `kwb history` says how to get it)
#   KWB_TEST_PACKAGES    the packages the tests need on top (GoogleTest; Chromium and stb_image
#                        for the review report's screenshot test; Dear ImGui, GLFW, Xvfb and
#                        Mesa's software OpenGL so that kwb-gui is built and its views rendered;
#                        pybind11, the Python headers, pytest and pandas for the Python module and its tests;
#                        DLPack's header for Python variants)

KWB_BUILD_PACKAGES="cmake ninja-build g++ nlohmann-json3-dev libcli11-dev libfmt-dev libyaml-cpp-dev libsqlite3-dev"
KWB_TEST_PACKAGES="libgtest-dev chromium libstb-dev libimgui-dev libglfw3-dev xvfb xauth libgl1-mesa-dri pybind11-dev python3-dev python3-pytest python3-pandas libdlpack-dev"

# What each package provides, checked directly: a tool installed another way (pip's cmake, a
# hand-built GoogleTest) counts as present, and a machine without network is not asked to install it.
kwb_provided() {
  local header
  case "$1" in
    cmake) command -v cmake > /dev/null ;;
    ninja-build) command -v ninja > /dev/null ;;
    g++) command -v g++ > /dev/null ;;
    nlohmann-json3-dev) header=nlohmann/json.hpp ;;
    libcli11-dev) header=CLI/CLI.hpp ;;
    libfmt-dev) header=fmt/format.h ;;
    libyaml-cpp-dev) header=yaml-cpp/yaml.h ;;
    libsqlite3-dev) header=sqlite3.h ;;
    libgtest-dev) header=gtest/gtest.h ;;
    chromium) command -v chromium > /dev/null || command -v chromium-browser > /dev/null ;;
    libstb-dev) header=stb/stb_image.h ;;
    libimgui-dev) header=imgui/imgui.h ;;
    libglfw3-dev) header=GLFW/glfw3.h ;;
    pybind11-dev) header=pybind11/pybind11.h ;;
    libdlpack-dev) header=dlpack/dlpack.h ;;
    python3-dev) compgen -G "/usr/include/python3*/Python.h" > /dev/null ;;
    python3-pytest) /usr/bin/python3 -c "import pytest" 2> /dev/null ;;
    python3-pandas) /usr/bin/python3 -c "import pandas" 2> /dev/null ;;
    xvfb) command -v Xvfb > /dev/null ;;
    xauth) command -v xauth > /dev/null ;;
    # Mesa's DRI drivers (swrast/llvmpipe) give Xvfb an OpenGL 3.3 context.
    libgl1-mesa-dri) compgen -G "/usr/lib/*/dri/swrast_dri.so" > /dev/null || compgen -G "/usr/lib/*/dri/*_dri.so" > /dev/null ;;
    *) return 1 ;;
  esac || return 1
  [ -z "${header:-}" ] && return 0
  local dir
  for dir in /usr/include /usr/local/include /opt/conda/include; do
    [ -e "$dir/$header" ] && return 0
  done
  return 1
}

kwb_missing_packages() {  # prints the packages of "$@" neither dpkg nor a direct check finds
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" && continue
    kwb_provided "$p" || printf '%s ' "$p"
  done
}

# kwb_ensure_deps [--tests]: returns 0 when everything is there (after installing it if needed).
kwb_ensure_deps() {
  local packages=$KWB_BUILD_PACKAGES
  [ "${1:-}" = "--tests" ] && packages="$packages $KWB_TEST_PACKAGES"

  # 1. The CUDA toolkit: found on the PATH or in its usual place, never installed from here.
  if ! command -v nvcc > /dev/null 2>&1; then
    for dir in /usr/local/cuda/bin /usr/local/cuda-13*/bin; do
      [ -x "$dir/nvcc" ] && export PATH="$dir:$PATH" && break
    done
  fi
  if ! command -v nvcc > /dev/null 2>&1; then
    echo "kwb: the CUDA toolkit (nvcc) was not found on the PATH or in /usr/local/cuda." >&2
    echo "     Install CUDA 13 (https://developer.nvidia.com/cuda-downloads), then run this again." >&2
    return 1
  fi

  # 2. Debian packages.
  local missing
  missing=$(kwb_missing_packages $packages)
  [ -z "$missing" ] && return 0
  if ! command -v apt-get > /dev/null 2>&1; then
    echo "kwb: not a Debian/Ubuntu machine; install the equivalents of: $missing" >&2
    return 0  # CMake will name anything still missing
  fi
  local install="apt-get install -y --no-install-recommends $missing"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo > /dev/null 2>&1 && sudo -n true 2> /dev/null; then
      sudo="sudo"
    else
      echo "kwb: missing packages: $missing" >&2
      echo "     Install them with:  sudo apt-get update && sudo $install" >&2
      return 1
    fi
  fi
  echo "kwb: installing missing packages: $missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  # A failed install (no network, say) is not fatal: the build may still find what it needs
  # elsewhere, and CMake names whatever is really missing.
  $sudo apt-get update -qq > /dev/null 2>&1
  $sudo $install > /dev/null 2>&1 || \
    echo "kwb: apt-get could not install: $missing (run '$install' to see why); trying the build anyway" >&2
  return 0
}
