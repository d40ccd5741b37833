#!/bin/bash
# Creates the system user mediatord's workers run as (config key
# worker_user, default gpu-mediator; doc/design.md, "Workers' rights"): no
# home, no login shell, its own group, and the groups that may open GPU
# devices (render, video) where they exist. Idempotent; needs root.
set -euo pipefail
USER_NAME=${1:-gpu-mediator}

if getent passwd "$USER_NAME" >/dev/null; then
  echo "add-worker-user: user $USER_NAME exists"
  exit 0
fi
[ "$(id -u)" = 0 ] || { echo "add-worker-user: needs root to create user $USER_NAME" >&2; exit 1; }
groups=()
for g in render video; do
  getent group "$g" >/dev/null && groups+=("$g")
done
useradd --system --user-group --no-create-home --home-dir /nonexistent \
  --shell /usr/sbin/nologin --comment "gpu-mediator workers" \
  ${groups[@]:+--groups "$(IFS=,; echo "${groups[*]}")"} "$USER_NAME"
echo "add-worker-user: created system user $USER_NAME (groups: $(id -nG "$USER_NAME"))"
