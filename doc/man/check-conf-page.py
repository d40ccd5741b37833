#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks mediatord.conf(5) against the parser: every key of [mediator]
and of [domain NAME] that mediator/config/config.c knows is documented
exactly once as a key in its section of the page conf2scd.py makes from
the example configuration, and nothing else is (a line of prose taken for
a key once put "policy = budget: a group whose bound ..." on the page).

    check-conf-page.py SOURCE_ROOT
"""
import re
import subprocess
import sys


def parser_keys(config_c, array):
    """The key names of @array (mediator_keys or domain_keys) in config.c."""
    text = open(config_c).read()
    start = text.index("static const struct key_desc %s[" % array)
    body = text[start:text.index("\n};", start)]
    return re.findall(r'\.name = "([a-z_]+)"', body)


def page_keys(scd, heading, next_heading):
    """The keys documented as terms ("*key* = default") between two headings."""
    part = scd[scd.index(heading):scd.index(next_heading)]
    return [k.replace("\\_", "_") for k in re.findall(r"^\*([a-z\\_]+)\* = ", part, re.M)]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check-conf-page.py SOURCE_ROOT")
    root = sys.argv[1]
    scd = subprocess.run([sys.executable, root + "/doc/man/conf2scd.py",
                          root + "/data/mediatord.example.conf"],
                         check=True, capture_output=True, text=True).stdout
    bad = []
    for array, heading, next_heading in (
            ("mediator_keys", "# THE [mediator] SECTION", "# THE [domain NAME] SECTIONS"),
            ("domain_keys", "# THE [domain NAME] SECTIONS", "# EXAMPLE")):
        known = parser_keys(root + "/mediator/config/config.c", array)
        documented = page_keys(scd, heading, next_heading)
        for key in known:
            if documented.count(key) != 1:
                bad.append("%s: key %s documented %d times" % (heading, key, documented.count(key)))
        for key in sorted(set(documented) - set(known)):
            bad.append("%s: '%s' is not a key of the parser" % (heading, key))
        print("%s: %d keys, each documented once" % (heading, len(known))
              if not bad else "%s: checked" % heading)
    if bad:
        sys.exit("mediatord.conf(5):\n  " + "\n  ".join(bad))


if __name__ == "__main__":
    main()
