#!/usr/bin/env python3
"""check_layers.py - every source file includes only what its folder may.

The tables below are the two in docs/ARCHITECTURE.md ("May include": the
folders of the tree, then the folders of pipeline/); this script keeps
code and doc from drifting. It reads every .c and .h under the product's
folders, takes each `#include "folder/.../file.h"`, and fails with the file
and line of every include its folder may not make. It also fails when:
- a table in docs/ARCHITECTURE.md lists other folders or permissions than
  the table here;
- a folder of pipeline/ exists that no table lists, or a source file sits
  in pipeline/ itself (every file of it belongs to a folder by job);
- a folder's README.md says it may include other folders of pipeline/
  than the table here;
- two source files of the tree share a base name (a newcomer finds a
  module by its name alone);
- modules include each other in a circle. A module is a .c file and the
  .h of the same name; module A depends on B when a file of A includes
  B's header. A circle means no module of it can be read or tested alone.

usage: check_layers.py [SOURCE_DIR]     (default: the repository root)
exit 0 when every include is allowed, 1 otherwise.
"""
import os
import re
import sys

# The layers below pipeline/; each may include itself and what it lists.
LOWER = {
    "common": {"common"},
    "formats": {"common", "formats"},
    "aws": {"common", "aws"},
    "dynamo": {"common", "aws", "formats", "dynamo"},
    "s3": {"common", "aws", "formats", "s3"},
}

# pipeline/'s folders: each may include every layer below pipeline/, itself,
# and the pipeline/ folders listed. Machinery first, engines last; engines
# never include each other.
PIPELINE = {
    "flow": set(),
    "extmem": set(),
    "output": set(),
    "sharding": {"flow"},
    "rows": {"flow", "sharding"},
    "counters": {"flow", "sharding", "rows"},
    "load": {"flow", "extmem", "output", "sharding", "rows", "counters"},
    "verify": {"flow", "extmem", "output", "sharding", "rows", "counters"},
    "incremental": {"flow", "extmem", "output", "sharding", "rows", "counters"},
    "plan": {"flow", "extmem", "output", "sharding", "rows", "counters"},
}


def may_include():
    """folder key ("dynamo", "pipeline/rows", "cmd") -> the keys it may include."""
    table = {k: set(v) for k, v in LOWER.items()}
    for sub, deps in PIPELINE.items():
        table["pipeline/" + sub] = set(LOWER) | {"pipeline/" + d for d in deps} | {"pipeline/" + sub}
    table["cmd"] = set(table) | {"cmd"}
    return table


MAY_INCLUDE = may_include()
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCE_DIRS = sorted(set(k.split("/")[0] for k in MAY_INCLUDE))


def key_of(path):
    """The folder key a repository-relative path belongs to, or None."""
    parts = path.split("/")
    if len(parts) >= 3 and parts[0] == "pipeline" and "pipeline/" + parts[1] in MAY_INCLUDE:
        return "pipeline/" + parts[1]
    if len(parts) >= 2 and parts[0] in MAY_INCLUDE:
        return parts[0]
    return None


def sources(root):
    for top in SOURCE_DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if name.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(dirpath, name), root)


def violations(root):
    bad = []
    seen = {}
    for rel in sources(root):
        base = os.path.basename(rel)
        if base in seen:
            bad.append(f"{rel}: the base name {base} is also {seen[base]}")
        seen.setdefault(base, rel)
        folder = key_of(rel)
        if folder is None:
            bad.append(f"{rel}: in no folder of the layer table (pipeline/ files "
                       f"belong to one of its folders: {', '.join(sorted(PIPELINE))})")
            continue
        allowed = MAY_INCLUDE[folder]
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m or "/" not in m.group(1):
                    continue
                target = key_of(m.group(1))
                if target is None:
                    if m.group(1).split("/")[0] in SOURCE_DIRS:
                        bad.append(f"{rel}:{lineno}: includes {m.group(1)}, in no folder "
                                   f"of the layer table")
                    continue
                if target not in allowed:
                    bad.append(f"{rel}:{lineno}: {folder}/ may not include {target}/ "
                               f"(it may include: {', '.join(sorted(allowed))})")
    for entry in sorted(os.listdir(os.path.join(root, "pipeline"))):
        if os.path.isdir(os.path.join(root, "pipeline", entry)) and entry not in PIPELINE:
            bad.append(f"pipeline/{entry}/: a folder the layer table does not list")
    for sub, deps in sorted(PIPELINE.items()):
        said = readme_may_include(root, sub)
        if said != deps:
            bad.append(f"pipeline/{sub}/README.md: its 'May include:' line names "
                       f"{sorted(said) if said is not None else 'nothing (no such line)'} "
                       f"of pipeline/, this script says {sorted(deps)}")
    return bad


def readme_may_include(root, sub):
    """The pipeline/ folders a folder's README.md says it may include, or
    None when it has no 'May include:' line."""
    path = os.path.join(root, "pipeline", sub, "README.md")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("May include:"):
                return set(re.findall(r"`pipeline/(\w+)/`", line))
    return None


def circles(root):
    """Include circles between modules, each as a sorted list of names."""
    edges = {}
    for rel in sources(root):
        mod = rel.rsplit(".", 1)[0]
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            for line in f:
                m = INCLUDE.match(line)
                if m and os.path.exists(os.path.join(root, m.group(1))):
                    dep = m.group(1).rsplit(".", 1)[0]
                    if dep != mod:
                        edges.setdefault(mod, set()).add(dep)
    # Tarjan's strongly connected components, iteratively (no recursion limit)
    index, low, on, stack, found = {}, {}, set(), [], []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def doc_tables(root):
    """The 'May include' columns of docs/ARCHITECTURE.md, as folder -> set.

    Rows of the first table name a folder (`dynamo/`) and what it may
    include. Rows of the second name a folder of pipeline/ (`pipeline/rows/`)
    and the pipeline/ folders it may include; every folder of pipeline/ may
    also include the layers below pipeline/, which that table says once."""
    table = {}
    path = os.path.join(root, "docs", "ARCHITECTURE.md")
    with open(path, encoding="utf-8") as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) != 3:
                continue
            m = re.fullmatch(r"`([\w/]+)/`", cells[0])
            if not m:
                continue
            name = m.group(1)
            may = set(re.findall(r"`([\w/]+)/`", cells[2]))
            if name.startswith("pipeline/"):
                table[name] = may | set(LOWER) | {name}
            elif name == "pipeline":
                continue  # its folders have their own table
            elif cells[2].startswith("everything"):
                table[name] = set(MAY_INCLUDE)
            else:
                table[name] = may | {name}
    return table


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    problems = violations(root)
    for comp in circles(root):
        problems.append("include circle between modules: " + " -> ".join(comp))
    doc = doc_tables(root)
    for folder, allowed in MAY_INCLUDE.items():
        if doc.get(folder) != allowed:
            problems.append(f"docs/ARCHITECTURE.md: {folder}/ may include "
                            f"{sorted(doc.get(folder, set()))}, this script says {sorted(allowed)}")
    for folder in sorted(set(doc) - set(MAY_INCLUDE)):
        problems.append(f"docs/ARCHITECTURE.md lists {folder}/, which this script does not check")
    for p in problems:
        print(p)
    if not problems:
        print(f"layers: every include of {len(MAY_INCLUDE)} folders is allowed, "
              f"every base name is unique, and no modules include each other in a circle")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
