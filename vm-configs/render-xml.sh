#!/bin/bash
# SPDX-License-Identifier: MIT
# render-xml.sh TEMPLATE NAME=VALUE...: prints TEMPLATE (cluster-vm.xml,
# ivi-vm.xml) with its @NAME@ placeholders filled in. Every placeholder of
# the template must be given; values are XML-escaped.
#   vm-configs/render-xml.sh vm-configs/cluster-vm.xml NAME=cluster-vm MEMORY_MIB=1024 \
#     VCPUS=1 KERNEL=/var/lib/gpu-mediator/guest/vmlinuz INITRD=... CMDLINE= \
#     SERIAL_LOG=/var/log/gpu-mediator/cluster-vm.log VIRT_TYPE=qemu
# The VM's GPU is libvirt's vhost-user video device (the template's); with
# GPU_SOCKET=PATH it is the fallback for a libvirt older than 6.1 instead:
# no video device of libvirt's, QEMU's chardev on PATH (a domain's
# vhost_user_socket) and vhost-user-gpu-pci through <qemu:commandline>.
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
if "GPU_SOCKET" in values:
    video = re.compile(r"<video>.*?</video>", re.S)
    if len(video.findall(body)) != 1 or "</domain>" not in body:
        sys.exit("render-xml.sh: GPU_SOCKET: the template has not one <video> element")
    body = video.sub("<video>\n      <model type='none'/>\n    </video>", body)
    body = body.replace("<domain ", "<domain xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0' ", 1)
    body = body.replace("</domain>", """  <qemu:commandline>
    <qemu:arg value='-chardev'/>
    <qemu:arg value='socket,id=gm-gpu,path=@GPU_SOCKET@'/>
    <qemu:arg value='-device'/>
    <qemu:arg value='vhost-user-gpu-pci,chardev=gm-gpu'/>
  </qemu:commandline>
</domain>""")
wanted = set(re.findall(r"@([A-Z_]+)@", body))
missing = wanted - values.keys()
if missing:
    sys.exit("render-xml.sh: missing values for: %s" % ", ".join(sorted(missing)))
unknown = values.keys() - wanted
if unknown:
    sys.exit("render-xml.sh: the template has no: %s" % ", ".join(sorted(unknown)))
sys.stdout.write(re.sub(r"@([A-Z_]+)@", lambda m: values[m.group(1)], body))
PY
