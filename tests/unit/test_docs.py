"""The documentation against the tree it describes: every relative link of
README.md and docs/**/*.md resolves (a file, and a heading when it names
one); every option a command's --help prints is in its man page
(docs/man/edgeload-COMMAND.1) and every option the page lists is in
--help; every command `edgeload --help` lists has its page, and the
overview page names it; the README stays a front page (under 300 lines);
its first two commands are the scripts that exist and .ci/run runs the test
one; each Debian package the build and the suite install beyond the basic
toolchain is named in the README's Building section.

Needs the built binary: $EDGELOAD_BIN (ctest sets it), else build/edgeload.
"""

import glob
import os
import re
import subprocess
import sys
import unittest

SRC = os.environ.get("EDGELOAD_SOURCE_DIR") or os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BIN = os.environ.get("EDGELOAD_BIN") or os.path.join(SRC, "build", "edgeload")

# Packages any C build or any script needs, not edgeload's own choices.
BASIC_PACKAGES = {"build-essential", "cmake", "pkg-config", "zstd", "python3",
                  "python3-boto3", "awscli", "curl", "ca-certificates", "time"}


def markdown_files():
    files = [os.path.join(SRC, "README.md")]
    files += sorted(glob.glob(os.path.join(SRC, "docs", "**", "*.md"), recursive=True))
    return files


def strip_code(text):
    """Markdown without fenced blocks and inline code, where [x](y) is text."""
    text = re.sub(r"(?ms)^\s*```.*?^\s*```[^\n]*$", "", text)
    return re.sub(r"`[^`\n]*`", "", text)


def slug(heading):
    """The anchor GitHub gives a heading."""
    h = re.sub(r"[`*_]", "", heading.strip().lower())
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"(?ms)^\s*```.*?^\s*```[^\n]*$", "", text)
    return {slug(m.group(1)) for m in re.finditer(r"(?m)^#{1,6} (.*)$", text)}


def run(*args):
    out = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise AssertionError("edgeload %s: exit %d: %s" % (" ".join(args), out.returncode,
                                                           out.stderr))
    return out.stdout


def commands():
    text = run("--help")
    block = text.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in block.splitlines() if line.startswith("  ")]


def help_options(cmd):
    """The options of `edgeload CMD --help`: each line that starts one."""
    return set(re.findall(r"(?m)^ {2}(--[a-z0-9][a-z0-9-]*)", run(cmd, "--help")))


def man_options(path):
    """The options a man page lists: the tag of each .TP entry."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    opts = set()
    for i, line in enumerate(lines[:-1]):
        if line == ".TP":
            m = re.match(r"^\\fB((?:\\-|-){2}[a-z0-9](?:[a-z0-9]|\\-|-)*)", lines[i + 1])
            if m:
                opts.add(m.group(1).replace("\\-", "-"))
    return opts


class DocsTest(unittest.TestCase):

    def test_relative_links_resolve(self):
        bad = []
        checked = 0
        for md in markdown_files():
            with open(md, encoding="utf-8") as f:
                text = strip_code(f.read())
            for target in re.findall(r"\]\(([^)\s]+)\)", text):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue  # http:, https:, mailto:
                checked += 1
                path, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
                rel = os.path.relpath(md, SRC)
                if not os.path.exists(dest):
                    bad.append("%s: %s: no such file" % (rel, target))
                elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                    bad.append("%s: %s: no such heading" % (rel, target))
        self.assertGreater(checked, 20, "too few links found: is the link pattern right?")
        self.assertEqual(bad, [])

    def test_every_command_has_its_man_page(self):
        cmds = commands()
        self.assertIn("load", cmds)
        with open(os.path.join(SRC, "docs", "man", "edgeload.1"), encoding="utf-8") as f:
            overview = f.read()
        for cmd in cmds:
            page = os.path.join(SRC, "docs", "man", "edgeload-%s.1" % cmd)
            self.assertTrue(os.path.exists(page), "%s has no man page %s" % (cmd, page))
            self.assertIn(".BR edgeload\\-%s (1)" % cmd.replace("-", "\\-"), overview,
                          "docs/man/edgeload.1 does not name edgeload-%s(1)" % cmd)
        pages = glob.glob(os.path.join(SRC, "docs", "man", "edgeload-*.1"))
        extra = sorted(os.path.basename(p) for p in pages
                       if os.path.basename(p)[len("edgeload-"):-2] not in cmds)
        self.assertEqual(extra, [], "man pages of commands edgeload --help does not list")

    def test_man_pages_list_the_options_of_help(self):
        for cmd in commands():
            with self.subTest(cmd=cmd):
                page = os.path.join(SRC, "docs", "man", "edgeload-%s.1" % cmd)
                in_help = help_options(cmd)
                in_man = man_options(page)
                self.assertGreater(len(in_help), 5, "options of %s --help not found" % cmd)
                self.assertEqual(sorted(in_help - in_man), [],
                                 "in `edgeload %s --help`, not in %s (rerun docs/man/mkman.py)"
                                 % (cmd, os.path.relpath(page, SRC)))
                self.assertEqual(sorted(in_man - in_help), [],
                                 "in %s, not in `edgeload %s --help`"
                                 % (os.path.relpath(page, SRC), cmd))

    def test_cmake_installs_every_man_page(self):
        with open(os.path.join(SRC, "CMakeLists.txt"), encoding="utf-8") as f:
            cmake = f.read()
        for page in glob.glob(os.path.join(SRC, "docs", "man", "*.1")):
            self.assertIn("docs/man/" + os.path.basename(page), cmake,
                          "CMakeLists.txt does not install %s" % page)

    def test_readme_is_a_front_page(self):
        with open(os.path.join(SRC, "README.md"), encoding="utf-8") as f:
            lines = f.read().splitlines()
        self.assertLess(len(lines), 300, "README.md has %d lines: move text to docs/" % len(lines))

    def test_readme_first_commands_are_the_scripts(self):
        with open(os.path.join(SRC, "README.md"), encoding="utf-8") as f:
            text = f.read()
        block = re.search(r"(?ms)^```sh\n(.*?)^```", text)
        self.assertIsNotNone(block, "README.md has no sh block")
        self.assertLess(text.index(block.group(0)), text.index("\n## "),
                        "the README's first commands come after its first section")
        cmds = [line.split("#", 1)[0].strip() for line in block.group(1).splitlines()]
        cmds = [c for c in cmds if c]
        self.assertEqual(len(cmds), 2, "the README's first block: %r" % cmds)
        for c in cmds:
            script = os.path.join(SRC, c.split()[0])
            self.assertTrue(os.access(script, os.X_OK), "%s is not an executable script" % script)
        quickstart, test_cmd = cmds
        with open(os.path.join(SRC, quickstart.split()[0]), encoding="utf-8") as f:
            qs = f.read()
        # it builds, starts DynamoDB Local, loads the samples, queries both ways
        for needed in ("el_build", "ddb-local.sh\" start", "create-table", "load --mapping",
                       "samples/", "--index-name GSI1"):
            self.assertTrue(needed in qs, "%s has no %r" % (quickstart, needed))
        with open(os.path.join(SRC, ".ci", "run"), encoding="utf-8") as f:
            ci = [l for l in f.read().splitlines() if l.strip() and not l.lstrip().startswith("#")]
        self.assertTrue(any(re.search(r"(^|\s)%s\s*$" % re.escape(test_cmd), l) for l in ci),
                        ".ci/run does not run the README's test command %r: %r" % (test_cmd, ci))

    def test_readme_says_why_each_package(self):
        with open(os.path.join(SRC, "scripts", "lib.sh"), encoding="utf-8") as f:
            lib = f.read()
        pkgs = set()
        for name in ("EL_BUILD_PACKAGES", "EL_TEST_PACKAGES"):
            m = re.search(r"(?ms)^%s=\((.*?)\)" % name, lib)
            self.assertIsNotNone(m, "scripts/lib.sh has no %s" % name)
            pkgs |= set(m.group(1).split())
        self.assertIn("libcsv-dev", pkgs)
        with open(os.path.join(SRC, "README.md"), encoding="utf-8") as f:
            text = f.read()
        building = text.split("\n## Building\n", 1)[1].split("\n## ", 1)[0]
        missing = sorted(p for p in pkgs - BASIC_PACKAGES if "`%s`" % p not in building)
        self.assertEqual(missing, [], "installed by scripts/, not explained in the README's Building")


if __name__ == "__main__":
    if not os.access(BIN, os.X_OK):
        sys.exit("%s: no edgeload binary (build first, or set EDGELOAD_BIN)" % BIN)
    unittest.main(verbosity=2)
