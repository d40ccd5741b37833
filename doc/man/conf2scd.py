#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turns the example configuration into mediatord.conf(5), in scdoc(5).

data/mediatord.example.conf is the one source of the key reference:
its opening comment is the description; in [mediator] and in the
commented-out "[domain NAME]" block, each run of comment lines ending in
"; key = default" lines documents those keys; the domain sections at the
end are the example. A "; key = ..." line is a key's only where it ends
its run: followed by a blank line, by ";" alone or by another key's line
(prose such as "; policy = budget: a group whose ..." continues instead).

    conf2scd.py mediatord.example.conf > mediatord.conf.5.scd
"""
import re
import sys

KEY = re.compile(r"; ([a-z_]+) = (.*)$")


def escape(text):
    return re.sub(r"([*_\\])", r"\\\1", text)


def prose(line):
    return line[1:].strip() if line.startswith(";") else line.strip()


def key_lines(lines):
    """For each line, its (key, default) where it is a key's line, else None."""
    found = [None] * len(lines)
    ends_run = True  # what follows the last line
    for i in range(len(lines) - 1, -1, -1):
        m = KEY.match(lines[i])
        if m and ends_run:
            found[i] = (m.group(1), m.group(2))
        ends_run = found[i] is not None or lines[i].strip() in ("", ";")
    return found


def key_groups(lines, out):
    """Each run of comment lines and the key lines that end it, as a term list."""
    text, keys = [], []

    def flush():
        if keys:
            out.append(" ++\n".join("*%s* = %s" % (escape(k), escape(v)) for k, v in keys))
            out.append("\t" + escape(" ".join(t for t in text if t)))
            out.append("")
        elif any(text):
            out.append(escape(" ".join(t for t in text if t)))
            out.append("")
        text.clear()
        keys.clear()

    for line, key in zip(lines, key_lines(lines)):
        if key:
            keys.append(key)
            continue
        if keys or not line.strip() or line.strip() == ";":
            flush()
        if line.strip() and line.strip() != ";":
            text.append(prose(line))
    flush()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: conf2scd.py mediatord.example.conf")
    lines = open(sys.argv[1]).read().splitlines()
    lines = [l for l in lines if "SPDX-License-Identifier" not in l]
    start = lines.index("[mediator]")
    domain_marker = lines.index("; [domain NAME]")
    first_domain = next(i for i, l in enumerate(lines) if l.startswith("[domain "))
    # The example starts with the comment above its first domain.
    while lines[first_domain - 1].startswith(";"):
        first_domain -= 1
    # The domain block's introduction: its comment lines before the marker.
    intro_start = domain_marker
    while intro_start > 0 and lines[intro_start - 1].startswith(";"):
        intro_start -= 1
    out = ["mediatord.conf(5)", "", "# NAME", "",
           "mediatord.conf - configuration of mediatord(8)", "", "# DESCRIPTION", ""]
    desc = [prose(l) for l in lines[:start] if l.startswith(";")]
    out.append(escape(" ".join(d for d in desc[1:] if d)))
    out += ["", "The installed configuration is /etc/gpu-mediator/mediatord.conf.", ""]
    out += ["# THE [mediator] SECTION", ""]
    key_groups(lines[start + 1:intro_start], out)
    out += ["# THE [domain NAME] SECTIONS", ""]
    out.append(escape(" ".join(prose(l) for l in lines[intro_start:domain_marker] if prose(l))))
    out.append("")
    key_groups(lines[domain_marker + 1:first_domain], out)
    out += ["# EXAMPLE", "", "The two domains of the shipped configuration:", "", "```"]
    out += lines[first_domain:]
    while out[-1] == "":
        out.pop()
    out += ["```", "", "# SEE ALSO", "", "mediatord(8), mediatorctl(1), mediator-sim(1)"]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(out))
    sys.stdout.write(text + "\n")


if __name__ == "__main__":
    main()
