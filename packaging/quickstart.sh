#!/usr/bin/env bash
# One-step set-up on Debian 12: installs what is missing, builds, then
#   run  : opens the GUI on the default sample scenario (with no display: a headless CLI run on it)
#   test    : runs the whole test suite
#   package : builds the Debian package (build-package/shardplan_VERSION_ARCH.deb; install it with
#             apt install ./FILE)
set -euo pipefail
mode="${1:-run}"
case "$mode" in run|test|build|package) ;; *) echo "usage: $0 [run|test|build|package]" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.."

# libqt6opengl6-dev: Qt6Charts' CMake config needs Qt6OpenGL, which qt6-charts-dev only recommends.
packages=(build-essential cmake pkg-config qt6-base-dev qt6-base-dev-tools qt6-charts-dev qt6-svg-dev
          libqt6opengl6-dev libgl-dev libxkbcommon-dev libeigen3-dev nlohmann-json3-dev libyaml-cpp-dev)
# The package step: dpkg-shlibdeps (dpkg-dev) for the dependencies, file for CPack to find the binaries.
[ "$mode" = package ] && packages+=(dpkg-dev file)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing: ${missing[*]}"
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Built for this machine's CPU (SHARDPLAN_NATIVE, CMakeLists.txt), except the package, which must run on any
# x86-64 and has its own build directory (and no tests), so that neither build undoes the other.
build="${BUILD_DIR:-build}"
options=(-DCMAKE_BUILD_TYPE=Release -DSHARDPLAN_NATIVE=ON -DSHARDPLAN_BUILD_TESTS=ON)
if [ "$mode" = package ]; then
  build="${BUILD_DIR:-build-package}"
  options=(-DCMAKE_BUILD_TYPE=Release -DSHARDPLAN_NATIVE=OFF -DSHARDPLAN_BUILD_TESTS=OFF)
fi
# A compiler cache where one is installed (Debian's ccache) makes a rebuild after a small change fast.
if [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ] && command -v ccache >/dev/null; then
  options+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$build" "${options[@]}" >/dev/null
cmake --build "$build" -j"$(nproc)"

scenario=samples/scenarios/llama-3.1-8b-h100-1x8.yaml
case "$mode" in
  build) ;;
  package)
    (cd "$build" && cpack -G DEB)
    ls "$build"/shardplan_*.deb
    ;;
  test)
    ctest --test-dir "$build" --output-on-failure -j"$(nproc)"
    ;;
  run)
    if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
      exec "$build/app/shardplanner" "$scenario"
    else
      echo "No display: running the planner headless on $scenario"
      out="${TMPDIR:-/tmp}/shardplan-quickstart"
      mkdir -p "$out"
      "$build/app/shardplan" validate "$scenario"
      echo; echo "== The Megatron plan"
      "$build/app/shardplan" evaluate --scenario "$scenario" | head -6
      echo; echo "== Learn to Shard (rl), 2,000 evaluations"
      "$build/app/shardplan" search --scenario "$scenario" --searcher rl --budget 2000 --out "$out/best.json"
      "$build/app/shardplan" search --scenario "$scenario" --searcher megatron --out "$out/megatron.json" >/dev/null
      echo; echo "== Megatron (A) against the learned plan (B)"
      "$build/app/shardplan" compare --scenario "$scenario" "$out/megatron.json" "$out/best.json"
    fi
    ;;
esac
