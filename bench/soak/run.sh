#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/soak: the piece paths under the sanitizers, for as long as asked
# (issue 29: pieces are on by default once the SIGSEGV seen once is found
# or ruled out). Not a test; hours long.
#
# Builds BUILD_DIR (default build-asan/: AddressSanitizer and
# UndefinedBehaviorSanitizer, as scripts/test.sh builds it) and runs the
# integration tests that cut groups into pieces, scissor tiles and clear
# bands, one after the other, round after round, until DURATION seconds
# have passed:
#   test-pieces            vtest and vhost-user groups in pieces, a clear
#                          in bands, a malformed group refused whole
#   test-isolation         single long draws in scissor tiles beside the
#                          cluster
#   test-memory-flood      64 MiB clears in bands, workers ended past the
#                          domain's total
#   test-deceiving-client  tiles revoked, workers killed at every stage
#   test-conformance       piglit's quick GL ES list with a piece length of
#                          1 us (tens of thousands of tiles a run)
# They run as scripts/test.sh runs them: halt_on_error and abort_on_error
# for both sanitizers (a report ends the process that made it, and its
# round fails), leak detection off (the worker loads Mesa, whose leaks are
# not ours; LeakSanitizer's exit check would also call what the worker's
# system-call filter forbids), timeouts 3 times the plain build's.
# Prints per test: rounds, passes, failures, sanitizer reports found in
# the round's log (AddressSanitizer's, UBSan's "runtime error"), and
# workers that died of a signal; keeps each failing round's
# log in OUT. Exits 1 when any round failed or any report was found.
#
# Environment: DURATION (seconds, default 3600), TESTS (default the five
# above), BUILD_DIR (default build-asan/), OUT (default bench-soak-out/).
set -euo pipefail

cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.."
SRCROOT=$PWD
DURATION=${DURATION:-3600}
TESTS=${TESTS:-test-pieces test-isolation test-memory-flood test-deceiving-client test-conformance}
BUILD_DIR=${BUILD_DIR:-$SRCROOT/build-asan}
OUT=$(mkdir -p "${OUT:-bench-soak-out}" && cd "${OUT:-bench-soak-out}" && pwd)

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  meson setup "$BUILD_DIR" -Db_sanitize=address,undefined -Db_lundef=false >"$OUT/setup.log"
fi
ninja -C "$BUILD_DIR" >"$OUT/build.log" 2>&1 ||
  { tail -20 "$OUT/build.log" >&2; echo "bench/soak: the build failed ($OUT/build.log)" >&2; exit 1; }

declare -A rounds passes fails reports signals
for t in $TESTS; do rounds[$t]=0 passes[$t]=0 fails[$t]=0 reports[$t]=0 signals[$t]=0; done
echo "gpu-mediator soak (sanitizers): $TESTS for ${DURATION} s, $(nproc) CPUs, build $BUILD_DIR"
start=$SECONDS
round=0
while [ $((SECONDS - start)) -lt "$DURATION" ]; do
  round=$((round + 1))
  for t in $TESTS; do
    [ $((SECONDS - start)) -lt "$DURATION" ] || break
    rounds[$t]=$((rounds[$t] + 1))
    rc=0
    ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:abort_on_error=1:print_summary=1 \
      UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_summary=1:print_stacktrace=1 \
      meson test -C "$BUILD_DIR" --suite integration "$t" --logbase "soak-$t" \
      --timeout-multiplier 3 >/dev/null 2>&1 || rc=$?
    log=$BUILD_DIR/meson-logs/soak-$t.txt
    n=$(grep -cE "ERROR: AddressSanitizer|runtime error:" "$log" || true)
    k=$(grep -cE "worker [0-9]+ killed by signal (6|11|7|4)" "$log" || true)
    reports[$t]=$((reports[$t] + n))
    signals[$t]=$((signals[$t] + k))
    if [ "$rc" = 0 ] && [ "$n" = 0 ]; then
      passes[$t]=$((passes[$t] + 1))
    else
      fails[$t]=$((fails[$t] + 1))
      cp "$log" "$OUT/round-$round-$t.txt"
      echo "round $round: $t failed (rc $rc, $n sanitizer reports): $OUT/round-$round-$t.txt"
    fi
  done
done
printf '%-24s %7s %7s %7s %9s %24s\n' test rounds passed failed reports "workers ended by SIGABRT/SEGV/BUS/ILL"
bad=0
for t in $TESTS; do
  printf '%-24s %7d %7d %7d %9d %24d\n' "$t" "${rounds[$t]}" "${passes[$t]}" "${fails[$t]}" \
    "${reports[$t]}" "${signals[$t]}"
  [ "${fails[$t]}" = 0 ] && [ "${reports[$t]}" = 0 ] || bad=1
done
echo "$round rounds in $((SECONDS - start)) s"
exit "$bad"
