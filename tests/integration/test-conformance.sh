#!/bin/bash
# SPDX-License-Identifier: MIT
# GL ES conformance: piglit's quick GL ES list (bench/conformance/gles-quick.list)
# through mediatord and through virgl_test_server in the same run, with the
# clients on the system's Mesa and on Mesa 25 beside it. Every test that
# passes through the reference must pass through mediatord; and most of the
# list must pass through the reference, so that a broken set-up (every
# client failing both ways) cannot pass.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
require_cmd virgl_test_server virgl-server
require_cmd python3 python3
[ -d /usr/lib/x86_64-linux-gnu/piglit/bin ] || skip "piglit is not installed (Debian package piglit)"

# Out of every 10 tests of the list, at least this many pass through the
# reference on llvmpipe (the list holds tests that do).
MIN_REFERENCE_PASS_TENTHS=8

out=$("$SRCROOT/bench/conformance/run.sh" --list quick --mesa both 2>"$TMP/conformance.err") &&
  rc=0 || rc=$?
printf '%s\n' "$out" >"$TMP/conformance.log"
[ $rc -ne 77 ] || skip "$(tail -n 1 "$TMP/conformance.err")"
[ $rc -eq 0 ] || fail "$(grep -E '^ *Mesa|^Mesa' <<<"$out")
$(cat "$TMP/conformance.err")"
for mesa in 22 25; do
  line=$(grep -E "^Mesa $mesa: " <<<"$out") || fail "no summary for Mesa $mesa: $out"
  read -r total ref both < <(sed -E 's/^Mesa [0-9]+: ([0-9]+) tests, ([0-9]+) pass .*, ([0-9]+) of them .*/\1 \2 \3/' <<<"$line")
  [ $((ref * 10)) -ge $((total * MIN_REFERENCE_PASS_TENTHS)) ] ||
    fail "Mesa $mesa: only $ref of $total tests pass through virgl_test_server: $out"
  [ "$ref" = "$both" ] || fail "Mesa $mesa: $line"
  log "Mesa $mesa: $ref of $total pass through the reference, all of them through mediatord"
done
