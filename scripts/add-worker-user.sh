#!/bin/bash
# SPDX-License-Identifier: MIT
# Creates the system users mediatord's workers run as (config key
# worker_user, in [mediator] and per domain; doc/design.md, "Workers'
# rights"): no home, no login shell, a group of its own, and the groups
# that may open GPU devices (render, video) where they exist. Usage:
#   add-worker-user.sh [NAME...]     default: gpu-mediator
# Idempotent; needs root.
set -euo pipefail
[ $# -gt 0 ] || set -- gpu-mediator

groups=()
for g in render video; do
  getent group "$g" >/dev/null && groups+=("$g")
done
for user_name in "$@"; do
  if getent passwd "$user_name" >/dev/null; then
    echo "add-worker-user: user $user_name exists"
    continue
  fi
  [ "$(id -u)" = 0 ] || { echo "add-worker-user: needs root to create user $user_name" >&2; exit 1; }
  useradd --system --user-group --no-create-home --home-dir /nonexistent \
    --shell /usr/sbin/nologin --comment "gpu-mediator workers" \
    ${groups[@]:+--groups "$(IFS=,; echo "${groups[*]}")"} "$user_name"
  echo "add-worker-user: created system user $user_name (groups: $(id -nG "$user_name"))"
done
