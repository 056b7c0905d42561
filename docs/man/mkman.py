#!/usr/bin/env python3
"""Writes docs/man/edgeload-COMMAND.1 from `edgeload COMMAND --help`.

Each page is the command's own --help turned into roff (its description,
its options grouped as --help groups them, the notes after them, its exit
status) plus what --help does not say: where the manual is, examples and
the related pages (EXTRA below). Rerun it after a command's options change;
tests/integration/test_docs.py fails while a page and --help disagree.

    python3 docs/man/mkman.py build/edgeload
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATE = "December 2026"

# What --help does not carry: the topic pages of the manual and examples.
EXTRA = {
    "load": {
        "docs": ["docs/loading.md", "docs/mapping.md", "docs/inputs.md",
                 "docs/counters.md", "docs/scale-out.md", "docs/aws.md"],
        "examples": [
            ("A first load of one join table:",
             "edgeload load --table Graph \\\n"
             "    --pk 'ACTOR#{follower_id}' --sk 'TARGET#{followee_id}' \\\n"
             "    --attr createdAt=created_at:epoch --const edgeType=FOLLOWS \\\n"
             "    follows.csv"),
            ("A rerun-safe nightly delta:",
             "edgeload load --mapping delta.json --incremental --op-column op \\\n"
             "    --rejects rejects.jsonl --stats-json stats.json --progress plain"),
            ("A long load that survives a crash:",
             "edgeload load --mapping graph.json --plan plan.json \\\n"
             "    --checkpoint graph.ckpt --resume --max-wcu 38000 --progress plain"),
        ],
        "see": ["edgeload-plan", "edgeload-create-table", "edgeload-verify",
                "edgeload-counters"],
    },
    "plan": {
        "docs": ["docs/mapping.md", "docs/scale-out.md", "docs/SHARDING.md"],
        "examples": [
            ("The fan-in report and the plan that load, verify and split workers reuse:",
             "edgeload plan --mapping mapping.json --plan-out plan.json"),
            ("The cost of each path, at the given prices:",
             "edgeload plan --mapping mapping.json --price-wru 0.625 --price-import-gb 0.15"),
        ],
        "see": ["edgeload-load", "edgeload-create-table"],
    },
    "verify": {
        "docs": ["docs/verify.md", "docs/counters.md", "docs/scale-out.md"],
        "examples": [
            ("Every item and every counter of a mapping:",
             "edgeload verify --mapping mapping.json"),
            ("A sample, and the index for 100 targets:",
             "edgeload verify --mapping mapping.json --sample 100000 --reverse 100"),
            ("The counters only, after edgeload counters:",
             "edgeload verify --mapping mapping.json --counters-only"),
        ],
        "see": ["edgeload-load", "edgeload-counters"],
    },
    "counters": {
        "docs": ["docs/counters.md"],
        "examples": [
            ("Backfill every counter of the mapping, then check them:",
             "edgeload counters --mapping mapping.json\n"
             "edgeload verify --mapping mapping.json --counters-only"),
        ],
        "see": ["edgeload-load", "edgeload-verify"],
    },
    "create-table": {
        "docs": ["docs/mapping.md", "docs/scale-out.md"],
        "examples": [
            ("The table of a mapping, warm for a load at 40,000 WCU/s:",
             "edgeload create-table --mapping graph.json --warm-throughput 40000"),
            ("A table by name, keys PK/SK and the index GSI1:",
             "edgeload create-table --table Graph"),
        ],
        "see": ["edgeload-load", "edgeload-plan"],
    },
}


def esc(text):
    """Roff-escapes running text: backslashes, hyphens, a leading dot."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    if text.startswith((".", "'")):
        text = "\\&" + text
    return text


def opt_roff(spec):
    """`--max-wcu N` as bold option, italic argument."""
    name, _, arg = spec.partition(" ")
    out = "\\fB" + esc(name) + "\\fR"
    if arg:
        out += " \\fI" + esc(arg) + "\\fR"
    return out


def parse_help(text):
    """Splits --help into usage, description paragraphs, option groups
    [(title, [(spec, desc)])] and the paragraphs after the options."""
    lines = text.rstrip("\n").split("\n")
    usage = lines[0][len("usage: "):]
    desc, groups, notes = [], [], []
    para = []
    i = 1
    state = "desc"
    cur = None

    def flush(into):
        if para:
            into.append(" ".join(s.strip() for s in para))
            para.clear()

    while i < len(lines):
        line = lines[i]
        i += 1
        nxt = lines[i] if i < len(lines) else ""
        if re.match(r"^[A-Z][^:]*:$", line) and nxt.startswith("  -"):
            flush(desc if state == "desc" else notes)
            state = "opts"
            cur = (line[:-1], [])
            groups.append(cur)
            continue
        m = re.match(r"^  (-[^ ].*?)(?: {2,}(.*))?$", line)
        if m and state in ("opts", "desc", "notes-maybe") and line.startswith("  -"):
            if cur is None:
                cur = ("Options", [])
                groups.append(cur)
            state = "opts"
            cur[1].append([m.group(1).strip(), m.group(2) or ""])
            continue
        if state == "opts" and line.startswith("    ") and cur and cur[1]:
            d = cur[1][-1]
            d[1] = (d[1] + " " + line.strip()).strip()
            continue
        if line.strip() == "":
            flush(desc if state == "desc" else notes)
            if state == "opts":
                state = "notes-maybe"
            continue
        if state == "notes-maybe":
            state = "notes"
        para.append(line)
    flush(desc if state == "desc" else notes)
    return usage, desc, groups, notes


def page(cmd, help_text, version):
    usage, desc, groups, notes = parse_help(help_text)
    extra = EXTRA.get(cmd, {})
    name = "edgeload-" + cmd
    summary = {
        "load": "transform rows and write them as DynamoDB items",
        "plan": "read only: fan-in report, hot targets, shard plan and estimate",
        "verify": "check that every expected item and counter is in the table",
        "counters": "backfill a mapping's counters without rewriting items",
        "create-table": "create the table with PK/SK and the inverted index",
    }.get(cmd, cmd)
    out = [
        '.\\" Generated by docs/man/mkman.py from `edgeload %s --help`; edit there.' % cmd,
        '.TH %s 1 "%s" "%s" "edgeload Manual"' % (name.upper(), DATE, esc(version)),
        ".SH NAME",
        "%s \\- %s" % (esc(name), esc(summary)),
        ".SH SYNOPSIS",
        ".B " + esc(usage.split(" [")[0].split(" --")[0]),
        esc(usage[len(usage.split(" [")[0].split(" --")[0]):].strip()),
        ".SH DESCRIPTION",
    ]
    for k, p in enumerate(desc):
        if k:
            out.append(".PP")
        out.append(esc(p))
    out.append(".SH OPTIONS")
    for title, opts in groups:
        out.append(".SS " + esc(title))
        for spec, d in opts:
            out.append(".TP")
            out.append(opt_roff(spec))
            out.append(esc(d))
    exit_notes = [n for n in notes if n.startswith("Exit status:")]
    other = [n for n in notes if not n.startswith("Exit status:")]
    if other:
        out.append(".SH NOTES")
        for k, p in enumerate(other):
            if k:
                out.append(".PP")
            out.append(esc(p))
    if exit_notes:
        out.append(".SH EXIT STATUS")
        out.append(esc(exit_notes[0][len("Exit status: "):]))
    if extra.get("examples"):
        out.append(".SH EXAMPLES")
        for what, code in extra["examples"]:
            out.append(".PP")
            out.append(esc(what))
            out.append(".PP")
            out.append(".nf")
            out.append(".RS 4")
            out.extend(esc(c) for c in code.split("\n"))
            out.append(".RE")
            out.append(".fi")
    out.append(".SH SEE ALSO")
    see = ["edgeload"] + extra.get("see", [])
    out.append(",\n".join(".BR %s (1)" % esc(s) for s in see))
    if extra.get("docs"):
        out.append(".PP")
        out.append("In the source tree: " + esc(", ".join(extra["docs"])) + ".")
    return "\n".join(out) + "\n"


def commands(binary):
    text = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    block = text.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    return [l.split()[0] for l in block.split("\n") if l.startswith("  ")]


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "build/edgeload"
    version = subprocess.run([binary, "--version"], capture_output=True,
                             text=True).stdout.strip() or "edgeload"
    for cmd in commands(binary):
        text = subprocess.run([binary, cmd, "--help"], capture_output=True,
                              text=True, check=True).stdout
        with open(os.path.join(HERE, "edgeload-%s.1" % cmd), "w") as f:
            f.write(page(cmd, text, version))


if __name__ == "__main__":
    main()
