#!/usr/bin/env python3
"""check_layers.py - every source file includes only what its folder may.

The table below is the one in docs/ARCHITECTURE.md ("May include"); this
script keeps the two from drifting: it reads every .c and .h under the
product's folders, takes each `#include "folder/file.h"`, and fails with
the file and line of every include its folder may not make. It also checks
that the table in docs/ARCHITECTURE.md lists the same folders and the same
permissions as the table here.

usage: check_layers.py [SOURCE_DIR]     (default: the repository root)
exit 0 when every include is allowed, 1 otherwise.
"""
import os
import re
import sys

# folder -> the folders its files may include (its own always)
MAY_INCLUDE = {
    "common": {"common"},
    "formats": {"common", "formats"},
    "aws": {"common", "aws"},
    "dynamo": {"common", "aws", "formats", "dynamo"},
    "s3": {"common", "aws", "formats", "s3"},
    "pipeline": {"common", "formats", "aws", "dynamo", "s3", "pipeline"},
    "cmd": {"common", "formats", "aws", "dynamo", "s3", "pipeline", "cmd"},
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)/[^"]+"')


def violations(root):
    bad = []
    for folder, allowed in MAY_INCLUDE.items():
        top = os.path.join(root, folder)
        for dirpath, _, files in os.walk(top):
            for name in sorted(files):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if m and m.group(1) in MAY_INCLUDE and m.group(1) not in allowed:
                            rel = os.path.relpath(path, root)
                            bad.append(f"{rel}:{lineno}: {folder}/ may not include "
                                       f"{m.group(1)}/ (it may include: "
                                       f"{', '.join(sorted(allowed))})")
    return bad


def doc_table(root):
    """The 'May include' column of docs/ARCHITECTURE.md, as folder -> set."""
    table = {}
    path = os.path.join(root, "docs", "ARCHITECTURE.md")
    with open(path, encoding="utf-8") as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) != 3:
                continue
            m = re.fullmatch(r"`(\w+)/`", cells[0])
            if not m:
                continue
            may = set(re.findall(r"`(\w+)/`", cells[2]))
            if "everything above but `cmd/`" in cells[2]:
                may = set(MAY_INCLUDE) - {"cmd"}
            elif cells[2].startswith("everything"):
                may = set(MAY_INCLUDE)
            table[m.group(1)] = may | {m.group(1)}
    return table


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    problems = violations(root)
    doc = doc_table(root)
    for folder, allowed in MAY_INCLUDE.items():
        if doc.get(folder) != allowed:
            problems.append(f"docs/ARCHITECTURE.md: {folder}/ may include "
                            f"{sorted(doc.get(folder, set()))}, this script says {sorted(allowed)}")
    for folder in sorted(set(doc) - set(MAY_INCLUDE)):
        problems.append(f"docs/ARCHITECTURE.md lists {folder}/, which this script does not check")
    for p in problems:
        print(p)
    if not problems:
        print(f"layers: every include of {', '.join(f + '/' for f in MAY_INCLUDE)} is allowed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
