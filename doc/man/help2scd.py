#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turns a program's --help, shaped like a man page, into scdoc(5) source.

The help is the one source of the program's man page (mediatord(8),
mediatorctl(1), mediator-sim(1)). Its shape: section headers in capitals
at column 0; text at column 4; a line at column 4 followed by lines at
column 8 is a term (an option, a command) and its description. SYNOPSIS
and EXAMPLES keep their lines as they are; EXIT STATUS lines start with the
status.

    PROGRAM --help | help2scd.py NAME SECTION > NAME.SECTION.scd
    help2scd.py NAME SECTION PROGRAM > NAME.SECTION.scd   (runs PROGRAM --help)
"""
import re
import subprocess
import sys

VERBATIM = {"SYNOPSIS", "EXAMPLES"}


def escape(text):
    return re.sub(r"([*_\\])", r"\\\1", text)


def indent(line):
    return len(line) - len(line.lstrip(" "))


def section_body(name, lines, out):
    if name in VERBATIM:
        out.append("```")
        # scdoc reads backslashes as escapes even there.
        out.extend(line[4:].replace("\\", "\\\\") for line in lines if line.strip())
        out.append("```")
        return
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            out.append("")
            i += 1
            continue
        body = []
        j = i + 1
        while j < len(lines) and lines[j].strip() and indent(lines[j]) >= 8:
            body.append(lines[j].strip())
            j += 1
        text = line.strip()
        status = re.match(r"(\d+)\s+(.*)", text) if name == "EXIT STATUS" else None
        if status:
            out.append("*%s*" % status.group(1))
            out.append("\t" + escape(" ".join([status.group(2)] + body)))
            out.append("")
        elif body:
            out.append("*%s*" % escape(text))
            out.append("\t" + escape(" ".join(body)))
            out.append("")
        else:
            out.append(escape(text))
        i = j


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: PROGRAM --help | help2scd.py NAME SECTION, or help2scd.py NAME SECTION PROGRAM")
    name, section = sys.argv[1], sys.argv[2]
    if len(sys.argv) == 4:
        help_text = subprocess.run([sys.argv[3], "--help"], check=True, capture_output=True,
                                   text=True).stdout
    else:
        help_text = sys.stdin.read()
    sections, current = [], None
    for raw in help_text.splitlines():
        if raw and not raw.startswith(" ") and re.fullmatch(r"[A-Z][A-Z ]*", raw):
            current = (raw, [])
            sections.append(current)
        elif current is None:
            if raw.strip():
                sys.exit("help2scd: text before the first section: %r" % raw)
        else:
            current[1].append(raw)
    if not sections or sections[0][0] != "NAME":
        sys.exit("help2scd: the help does not start with NAME")
    out = ["%s(%s)" % (name, section), ""]
    for title, lines in sections:
        out.append("# " + title)
        out.append("")
        section_body(title, lines, out)
        out.append("")
    text = "\n".join(out)
    text = re.sub(r"\n{3,}", "\n\n", text)
    sys.stdout.write(text.rstrip("\n") + "\n")


if __name__ == "__main__":
    main()
