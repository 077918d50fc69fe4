#!/usr/bin/env bash
# The README's set-up and the Debian package, tried as a new user meets them, in clean Debian 12 roots:
#   1. a minbase bookworm root plus git: clone this repository's committed HEAD, then
#      ./packaging/quickstart.sh run (headless), ./packaging/quickstart.sh test, ./packaging/quickstart.sh package
#   2. a second minbase root: apt install ./shardplan_*.deb, then the installed shardplan validate and search on
#      an installed sample, and shardplanner --version (offscreen).
# A package missing from the quick start's list, or from the .deb's dependencies, fails here.
#
# Needs root, chroot, mmdebstrap and the Debian mirrors. The base tarballs, downloaded .debs and a compiler
# cache are kept in CLEANROOM_CACHE (default /var/cache/shardplan-cleanroom), so a repeat run is fast; the
# roots themselves are made fresh each time and always removed.
set -euo pipefail

start=$(date +%s)
repo="$(cd "$(dirname "$0")/.." && pwd)"
cache="${CLEANROOM_CACHE:-/var/cache/shardplan-cleanroom}"
suite=bookworm
max_age_days=7

if [ "$(id -u)" -ne 0 ]; then echo "clean-room.sh: needs root (chroot, mounts)" >&2; exit 2; fi
# What is missing is installed, as the quick start does (root and the mirrors are needed anyway).
need=()
for tool in mmdebstrap chroot git mount; do command -v "$tool" >/dev/null || need+=("$tool"); done
if [ ${#need[@]} -gt 0 ] && command -v apt-get >/dev/null; then
  echo "clean-room.sh: installing ${need[*]}" >&2
  apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    $(for t in "${need[@]}"; do case "$t" in chroot) echo coreutils ;; *) echo "$t" ;; esac; done) >&2 || true
fi
for tool in mmdebstrap chroot git mount; do
  command -v "$tool" >/dev/null || { echo "clean-room.sh: needs $tool (apt-get install $tool)" >&2; exit 2; }
done

mkdir -p "$cache/archives" "$cache/ccache"
work="$(mktemp -d "${TMPDIR:-/tmp}/shardplan-cleanroom.XXXXXX")"
mounts=()

cleanup() {
  local rc=$?
  set +e
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[$i]}" 2>/dev/null; done
  rm -rf --one-file-system "$work"
  [ $rc -eq 0 ] || echo "clean-room.sh: FAILED (exit $rc) after $(( $(date +%s) - start )) s" >&2
  exit $rc
}
trap cleanup EXIT INT TERM

step() { echo; echo "== [$(( $(date +%s) - start ))s] $*"; }

# A cached mmdebstrap tarball: minbase bookworm plus the given packages, rebuilt when older than a week.
base_tarball() {
  local name="$1" include="$2"
  local tar="$cache/$name.tar.zst"
  if [ ! -s "$tar" ] || [ -n "$(find "$tar" -mtime +$max_age_days)" ]; then
    step "mmdebstrap --variant=minbase $suite ($name${include:+: $include})" >&2
    # mmdebstrap picks the format from the name's ending, so the partial file ends in .tar.zst too.
    rm -rf "$cache/$name.part.tar.zst"
    mmdebstrap --quiet --variant=minbase ${include:+--include="$include"} "$suite" "$cache/$name.part.tar.zst" >&2
    mv "$cache/$name.part.tar.zst" "$tar"
  fi
  echo "$tar"
}

# A fresh root from a tarball, with /proc, /sys, /dev, the apt download cache and the compiler cache mounted.
make_root() {
  local root="$1" tar="$2"
  mkdir -p "$root"
  tar -C "$root" --zstd -xf "$tar"
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  # Keep downloaded .debs (shared, so a repeat run does not fetch them again).
  echo 'Binary::apt::APT::Keep-Downloaded-Packages "true";' >"$root/etc/apt/apt.conf.d/90keep"
  rm -f "$root/etc/apt/apt.conf.d/docker-clean"
  mkdir -p "$root/var/cache/apt/archives" "$root/root/.ccache"
  mount -t proc proc "$root/proc"
  mounts+=("$root/proc")
  # rslave: unmounting the root's copies must never propagate back to the host's /sys and /dev.
  mount --rbind /sys "$root/sys"
  mounts+=("$root/sys")
  mount --make-rslave "$root/sys"
  mount --rbind /dev "$root/dev"
  mounts+=("$root/dev")
  mount --make-rslave "$root/dev"
  mount --bind "$cache/archives" "$root/var/cache/apt/archives"
  mounts+=("$root/var/cache/apt/archives")
  mount --bind "$cache/ccache" "$root/root/.ccache"
  mounts+=("$root/root/.ccache")
}

in_root() {
  local root="$1"
  shift
  chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

# ---------------------------------------------------------------- 1. the README's commands from a clone
build_tar="$(base_tarball bookworm-minbase-git git,ca-certificates,ccache)"
root1="$work/build-root"
step "root 1: extract, mount"
make_root "$root1" "$build_tar"

step "root 1: clone the committed HEAD"
head="$(git -C "$repo" rev-parse HEAD)"
git -C "$repo" bundle create --quiet "$root1/tmp/repo.bundle" HEAD
in_root "$root1" git clone --quiet /tmp/repo.bundle /src
in_root "$root1" git -C /src checkout --quiet --detach "$head"
echo "cloned $head"
if [ -n "$(git -C "$repo" status --porcelain --untracked-files=no)" ]; then
  echo "note: the working tree has uncommitted changes; the clean room tests the committed HEAD only"
fi

# The compiler cache is the one thing the user would not have; it only makes a repeat run faster.
quick() {
  in_root "$root1" /bin/sh -c "cd /src && CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_DIR=/root/.ccache \
    ./packaging/quickstart.sh $1"
}
step "root 1: ./packaging/quickstart.sh run (headless)"
quick run
step "root 1: ./packaging/quickstart.sh test"
quick test
step "root 1: ./packaging/quickstart.sh package"
quick package
deb="$(ls "$root1"/src/build-package/shardplan_*.deb | head -1)"
cp "$deb" "$work/"
deb="$work/$(basename "$deb")"
echo "package: $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"

# ---------------------------------------------------------------- 2. the package in a second clean root
run_tar="$(base_tarball bookworm-minbase "")"
root2="$work/run-root"
step "root 2: extract, mount, apt install ./$(basename "$deb")"
make_root "$root2" "$run_tar"
cp "$deb" "$root2/tmp/"
in_root "$root2" apt-get update -q
in_root "$root2" /bin/sh -c "cd /tmp && apt-get install -y -q --no-install-recommends ./$(basename "$deb")"

step "root 2: the installed programs"
samples=/usr/share/shardplan/samples
check() { echo "\$ $*"; in_root "$root2" /bin/sh -c "cd /tmp && $*"; }
check shardplan --version
check shardplan validate $samples/scenarios/llama-3.1-8b-h100-1x8.yaml $samples/models/deepseek-v3.yaml
check shardplan search --scenario $samples/scenarios/llama-3.1-8b-h100-1x8.yaml --searcher sa --budget 300 \
  --out /tmp/best.json
check shardplan validate /tmp/best.json
check "shardplan calibrate >/tmp/calibration.txt && tail -2 /tmp/calibration.txt"
check QT_QPA_PLATFORM=offscreen shardplanner --version
check "test -f /usr/share/man/man1/shardplan.1.gz && test -f /usr/share/bash-completion/completions/shardplan \
  && test -f /usr/share/applications/io.github.shardplanner.ShardPlanner.desktop \
  && test -f /usr/share/icons/hicolor/scalable/apps/shardplanner.svg \
  && test -f /usr/share/metainfo/io.github.shardplanner.ShardPlanner.metainfo.xml && echo 'data files: ok'"

step "clean room passed"
echo "clean-room.sh: wall time $(( $(date +%s) - start )) s"
