#!/bin/bash
# SPDX-License-Identifier: MIT
# Builds gpu-mediator and runs every test, the way CI does:
#  1. installs missing Debian packages (scripts/install-deps.sh),
#  2. build/: the normal build; all suites (unit, integration, package,
#     setup),
#  3. build-asan/: AddressSanitizer + UndefinedBehaviorSanitizer build;
#     the unit suite, then the integration suite but suite mesa25-plain
#     (doc/hacking.md says what runs shorter there, and that frames are
#     judged in step 2 only).
# Exits non-zero when anything fails (under CI=true, also when a test was
# skipped); names each test log and the tests skipped. Run it from
# anywhere; it works in the source tree. Set SKIP_ASAN=1 to skip step 3
# and SKIP_DEPS=1 to skip step 1.
set -euo pipefail

cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.."
jobs=$(nproc 2>/dev/null || echo 2)
started=$SECONDS

section() {
  echo
  echo "=== $* ($((SECONDS - started)) s)"
}

# setup DIR [MESON OPTIONS...]: configure DIR, or reconfigure it when it
# already exists, so that option changes always apply.
setup() {
  local dir=$1
  shift
  if [ -f "$dir/build.ninja" ]; then
    meson setup --reconfigure "$dir" "$@"
  else
    rm -rf -- "$dir"
    meson setup "$dir" "$@"
  fi
}

# skipped DIR: names the tests the last `meson test -C DIR` skipped (exit
# 77, each says which prerequisite it lacked) and where its log is. Under
# CI (CI=true) a skip fails the run: a machine like CI's has everything.
skipped() {
  local dir=$1 names
  names=$(python3 -c 'import json, sys
for line in open(sys.argv[1]):
    t = json.loads(line)
    if t["result"] == "SKIP":
        print(t["name"])' "$dir/meson-logs/testlog.json")
  echo "the log: $dir/meson-logs/testlog.txt"
  [ -n "$names" ] || return 0
  echo "skipped (their reasons are in the log):" $names
  [ "${CI:-}" != true ] || { echo "CI: no test may be skipped here" >&2; return 1; }
}

if [ "${SKIP_DEPS:-0}" != 1 ]; then
  section "dependencies"
  scripts/install-deps.sh
fi

section "sources: every code file names its license (SPDX)"
if [ -d .git ] && command -v git >/dev/null; then
  unlicensed=$(git ls-files -- '*.c' '*.h' '*.sh' '*meson.build' meson_options.txt |
    while read -r f; do head -n 3 -- "$f" | grep -q 'SPDX-License-Identifier:' || echo "$f"; done)
  [ -z "$unlicensed" ] || { echo "no SPDX-License-Identifier line in: $unlicensed" >&2; exit 1; }
fi

section "build: build/"
setup build
ninja -C build -j "$jobs"

section "tests: build/ (unit + integration)"
meson test -C build --print-errorlogs
skipped build

if [ "${SKIP_ASAN:-0}" != 1 ]; then
  section "build: build-asan/ (AddressSanitizer + UndefinedBehaviorSanitizer)"
  setup build-asan -Db_sanitize=address,undefined -Db_lundef=false
  ninja -C build-asan -j "$jobs"

  section "tests: build-asan/ unit"
  # meson sets halt_on_error/abort_on_error for both sanitizers by default.
  meson test -C build-asan --suite unit --print-errorlogs
  skipped build-asan

  section "tests: build-asan/ integration"
  # The worker embeds virglrenderer, which loads Mesa (llvmpipe) at run
  # time; leaks there are not ours, so leak detection is off for these.
  # Every other ASan/UBSan error still fails the test.
  ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:abort_on_error=1:print_summary=1 \
    UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_summary=1:print_stacktrace=1 \
    meson test -C build-asan --suite integration --no-suite mesa25-plain --print-errorlogs \
    --timeout-multiplier 3
  skipped build-asan
fi

section "all tests passed"
