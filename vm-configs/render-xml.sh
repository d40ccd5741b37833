#!/bin/bash
# SPDX-License-Identifier: MIT
# render-xml.sh TEMPLATE NAME=VALUE...: prints TEMPLATE (cluster-vm.xml,
# ivi-vm.xml) with its @NAME@ placeholders filled in. Every placeholder of
# the template must be given; values are XML-escaped.
#   vm-configs/render-xml.sh vm-configs/cluster-vm.xml NAME=cluster-vm MEMORY_MIB=1024 \
#     VCPUS=1 KERNEL=/var/lib/gpu-mediator/guest/vmlinuz INITRD=... CMDLINE= \
#     SERIAL_LOG=/var/log/gpu-mediator/cluster-vm.log GPU_SOCKET=/run/gpu-mediator/cluster.vhost
set -euo pipefail
[ $# -ge 1 ] && [ -f "$1" ] || { echo "usage: render-xml.sh TEMPLATE NAME=VALUE..." >&2; exit 2; }
template=$1
shift
python3 - "$template" "$@" <<'PY'
import re, sys
from xml.sax.saxutils import escape
text = open(sys.argv[1]).read()
values = {}
for arg in sys.argv[2:]:
    if "=" not in arg:
        sys.exit("render-xml.sh: not NAME=VALUE: %s" % arg)
    k, v = arg.split("=", 1)
    values[k] = escape(v, {"'": "&apos;", '"': "&quot;"})
body = re.sub(r"<!--.*?-->", "", text, flags=re.S)
wanted = set(re.findall(r"@([A-Z_]+)@", body))
missing = wanted - values.keys()
if missing:
    sys.exit("render-xml.sh: missing values for: %s" % ", ".join(sorted(missing)))
unknown = values.keys() - wanted
if unknown:
    sys.exit("render-xml.sh: the template has no: %s" % ", ".join(sorted(unknown)))
sys.stdout.write(re.sub(r"@([A-Z_]+)@", lambda m: values[m.group(1)], body))
PY
