#!/bin/bash
# SPDX-License-Identifier: MIT
# The per-group trace: `mediatorctl trace start FILE`, one glmark2-es2 run
# in one domain, `trace stop`. Every line is a JSON object with every
# documented member (doc/trace-format.md; frame records of the
# safety domain, "type": "frame", are checked apart), its times are ordered
# (dispatch <= start <= end), measured_ns == end_ns - start_ns, and there is
# exactly one record per command group the domain counted meanwhile.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
setup_rendering budget 1

trace=$TMP/trace.jsonl
groups_before=$(domain_field "$DOMAIN_A" groups)
ctl trace start "$trace" >&2 || fail "mediatorctl trace start failed"
run_glmark a "$SOCK_A" $((3 + GLMARK_SLACK_S)) -b build:duration=1.5 -b clear:duration=1.5
# Wait until the worker is gone, so that all of its records have arrived.
wait_field "$DOMAIN_A" clients 0 15
groups_after=$(domain_field "$DOMAIN_A" groups)
ctl trace stop >&2 || fail "mediatorctl trace stop failed"
gm_assert_mediatord_alive

[ -f "$trace" ] || fail "no trace file $trace"
# Frame records of the safety domain (type "frame") come with the groups;
# the group records are checked below on their own.
bad=$(jq -c --arg d "$DOMAIN_A" 'select(has("type")) | select(.type != "frame" or .domain != $d or
    ([.release_ns, .deadline_ns, .end_ns, .bound_ns] | any(type != "number")) or
    (.missed | type != "boolean") or (.alone | type != "boolean") or (.startup | type != "boolean") or
    .deadline_ns <= .release_ns)' "$trace" 2>&1) ||
  fail "trace is not JSON Lines: $bad"
[ -z "$bad" ] || fail "bad frame records: $(head -c 2000 <<<"$bad")"
frames=$(jq -c 'select(.type == "frame")' "$trace" | wc -l)
[ "$frames" -gt 0 ] || fail "the trace has no frame records of safety domain $DOMAIN_A"
# One domain only: every frame was alone, and so is every miss mediatord counted.
[ "$(jq -c 'select(.type == "frame" and .alone != true)' "$trace" | wc -l)" -eq 0 ] ||
  fail "frames of the only domain with work are not alone"
# Start-up frames (not judged) are late and alone, and come within the
# first 30 periods of the domain's first frame (one client, one start-up).
[ "$(jq -c 'select(.type == "frame" and .startup and (.alone != true or (.missed | not)))' "$trace" |
  wc -l)" -eq 0 ] || fail "a start-up frame was not late, or not alone"
[ "$(jq -s '[.[] | select(.type == "frame")] | (.[0].release_ns // 0) as $first |
  [.[] | select(.startup and .release_ns >= $first + 30 * (.deadline_ns - .release_ns))] | length' \
  "$trace")" -eq 0 ] || fail "a start-up frame came after the domain's start-up window"
json=$(ctl show-budgets --json)
[ "$(gm_budgets_field "$DOMAIN_A" deadline_misses_alone "$json")" -eq \
  "$(gm_budgets_field "$DOMAIN_A" deadline_misses "$json")" ] ||
  fail "misses of the only domain with work are not all alone"
jq -c 'select(has("type") | not)' "$trace" >"$TMP/groups.jsonl"
trace=$TMP/groups.jsonl
log "trace: $frames frame records"
records=$(wc -l <"$trace")
delta=$((groups_after - groups_before))
log "trace: $records records; $DOMAIN_A groups $groups_before -> $groups_after"
[ "$records" -gt 0 ] || fail "trace is empty"

# Every line: a JSON object with every member, of the right type.
bad=$(jq -c --arg d "$DOMAIN_A" '
  select(
    (type != "object") or
    (.domain != $d) or
    ([.ctx, .seq, .dispatch_ns, .start_ns, .end_ns, .measured_ns, .predicted_ns,
      .bound_ns] | any(type != "number")) or
    (has("client") | not) or
    (.model | type != "string") or
    (.cmds | type != "object") or
    (.cmds | to_entries | any(.value | type != "number")))' "$trace" 2>&1) ||
  fail "trace is not JSON Lines: $bad"
[ -z "$bad" ] || fail "trace records without every member: $(head -c 2000 <<<"$bad")"

# Times: integers compared exactly in bash (jq's doubles would round above 2^53).
n=0
while IFS=$'\t' read -r dispatch start end measured; do
  n=$((n + 1))
  [ "$start" -ge "$dispatch" ] || fail "record $n: start_ns $start < dispatch_ns $dispatch"
  [ "$end" -ge "$start" ] || fail "record $n: end_ns $end < start_ns $start"
  [ "$measured" -eq $((end - start)) ] ||
    fail "record $n: measured_ns $measured != end_ns - start_ns $((end - start))"
done < <(jq -r '[.dispatch_ns, .start_ns, .end_ns, .measured_ns] | map(tostring) | @tsv' "$trace")
[ "$n" -eq "$records" ] || fail "read $n of $records records"

# seq grows by one per record of a client.
jq -s -e 'group_by(.client) | all(map(.seq) as $s | $s == [range($s[0]; $s[0] + ($s | length))])' \
  "$trace" >/dev/null || fail "seq is not consecutive per client"

[ "$records" -eq "$delta" ] ||
  fail "$records trace records but $delta new groups in show-budgets"

# Every group was predicted before dispatch: a model name, a bound no
# lower than the prediction, and (once the model has seen a few groups)
# a non-zero prediction.
jq -s -e 'all(.model != "" and .bound_ns >= .predicted_ns)' "$trace" >/dev/null ||
  fail "a record has no model or a bound below its prediction"
jq -s -e '.[10:] | all(.predicted_ns > 0)' "$trace" >/dev/null ||
  fail "groups after the 10th have no prediction"
# Every group was granted, by a request or by taking the grant board's
# offer; a lone client finds the slot offered most of the time.
jq -s -e 'all(.grant == "request" or .grant == "offer")' "$trace" >/dev/null ||
  fail "a record does not say how it was granted"
offered=$(jq -s '[.[] | select(.grant == "offer")] | length' "$trace")
[ "$offered" -gt 0 ] || fail "no group took the grant board's offer"
log "$offered of $records groups took the grant board's offer"
# mediatorctl model shows the domain's model, its error and coefficients.
model_json=$(ctl model --json) || fail "mediatorctl model --json failed"
jq -e --arg d "$DOMAIN_A" '.domains[] | select(.name == $d) | .contexts | length >= 1 and
    all(.model != "" and .groups > 0 and .mae_us >= 0 and (.coefficients_ns | length) > 0)' \
  <<<"$model_json" >/dev/null || fail "mediatorctl model does not show domain A's model: $model_json"
# The worker measured fragment counts (its occlusion query around each
# drawing group) and scored the fragment estimators with them.
jq -e --arg d "$DOMAIN_A" '.domains[] | select(.name == $d) | .contexts |
    any(.fragments_measured > 20 and (.fragment_estimator == "bbox" or
        .fragment_estimator == "history"))' <<<"$model_json" >/dev/null ||
  fail "no measured fragment counts in mediatorctl model: $model_json"
ctl model >&2 || fail "mediatorctl model failed"
log "predictions: model $(jq -r -s '.[0].model' "$trace"), median |error| $(jq -s \
  '[.[10:][] | (.predicted_ns - .measured_ns) | fabs] | sort | .[length/2|floor] / 1000 | floor' \
  "$trace") us"
log "ok: $records records, all well-formed"
