#!/bin/bash
# SPDX-License-Identifier: MIT
# The grant watchdog does not kill a healthy client whose group was
# mispredicted (doc/design.md, "The grant watchdog"): glmark2-es2's
# terrain scene compiles its shaders (LLVM on llvmpipe, hundreds of ms)
# inside groups predicted at a few ms, in the infotainment domain (policy
# budget, max_inflight 1). Such a group may be revoked at its deadline and
# its client suspended, but its late completion resumes the client: it
# must finish and score, with watchdog_kills 0 and no invariant broken.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
setup_rendering budget 1

start_glmark b "$SOCK_B" $((10 + GLMARK_SLACK_S)) -b terrain:duration=6
wait_glmark b
gm_assert_mediatord_alive

revokes=$(domain_field "$DOMAIN_B" watchdog_revokes)
kills=$(domain_field "$DOMAIN_B" watchdog_kills)
log "infotainment: watchdog_revokes $revokes, watchdog_kills $kills"
grep -E "domain $DOMAIN_B: .*grant revoked, client suspended" "$MEDIATORD_LOG" |
  while read -r line; do log "mediatord: ${line#*: }"; done || true
[ "$kills" = 0 ] || fail "the healthy glmark2 terrain client was killed by the watchdog"
json=$(budgets_json)
jq -e '.invariant_violations | type == "object" and length > 0 and all(.[]; . == 0)' \
  <<<"$json" >/dev/null || fail "an invariant broke: $(jq -c .invariant_violations <<<"$json")"
log "ok"
