#!/usr/bin/env bash
# Installs the Debian 12 packages berth builds, runs and tests with, when missing.
set -euo pipefail

BUILD_PKGS=(cmake ninja-build g++ ccache pkg-config libcaf-dev libboost1.81-dev rapidjson-dev
  libspdlog-dev libgtest-dev googletest libgrpc++-dev protobuf-compiler-grpc protobuf-compiler
  libprotobuf-dev libssl-dev libyaml-cpp-dev libcli11-dev libsystemd-dev
  libjemalloc-dev)
# libjemalloc-dev: berthd's allocator, which gives the pages of a burst back where glibc's
# arenas keep them (docs/benchmarks.md, "jemalloc"); the package then depends on libjemalloc2.
RUN_PKGS=(util-linux mount nfs-common)
# prometheus: tests/metrics runs its promtool (`check metrics`) on the writer's output.
# On a host with systemd the package also enables its own server on :9090; the tests
# never use that one. tmux: tests/e2e/top_e2e.sh runs `berthctl top` in a real terminal.
# systemd: systemd-socket-activate and systemd-analyze, for the socket activation tests and
# the units' check (deploy/systemd).
# help2man, lintian: the Debian package's man pages and its check (tests/deploy/package_test.sh).
# openssl: the Kubernetes API stand-in makes its CA and certificate with it (tests/kube_apiserver).
TEST_PKGS=(docker.io busybox-static e2fsprogs xfsprogs procps curl python3 iproute2
  python3-yaml prometheus tmux systemd help2man lintian openssl)
# debootstrap: scripts/debian-base.sh makes the Debian base the image and the managed plugin
# are built on, from Debian's packages, since no image registry may be reachable.
TEST_PKGS+=(debootstrap)
# tests/deploy renders deploy/kubernetes with `kubectl kustomize`. Debian's kubernetes-client
# (kubectl 1.20, kustomize v2.0.3) is installed only when no kubectl is on PATH: a newer one
# from elsewhere is kept, and the two packages would collide on /usr/bin/kubectl.
# scripts/fuzz.sh: libFuzzer and the sanitizers' runtimes come with clang, not g++;
# llvm-14 brings llvm-symbolizer for the stack traces of a finding.
FUZZ_PKGS=(clang-14 libclang-rt-14-dev llvm-14)
TEST_PKGS+=("${FUZZ_PKGS[@]}")
# The house habits' check (scripts/check-style.sh): git-clang-format-14 comes with
# clang-format-14; git, which a clone has, is named for a tree that came without it.
TEST_PKGS+=(clang-format-14 clang-tidy-14 git)
if ! command -v kubectl >/dev/null 2>&1; then
  TEST_PKGS+=(kubernetes-client)
fi

want=("${BUILD_PKGS[@]}" "${RUN_PKGS[@]}")
if [[ "${1:-}" == "--test" ]]; then
  want+=("${TEST_PKGS[@]}")
fi

missing=()
for p in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
