"""The command line as a user meets it: help, version, usage errors, mapping
and table errors (exit 2, nothing written), --dry-run, and bad rows (exit 3,
one record per bad row in the rejects file, good rows loaded)."""

import json
import os
import re

from edgeload_test import EdgeloadTestCase, follow_edge as edge, main, read_jsonl

HEADER = "follower_id,followee_id,created_at\n"
EDGE_FLAGS = ["--pk", "ACTOR#{follower_id}", "--sk", "TARGET#{followee_id}",
              "--attr", "createdAt=created_at:epoch", "--const", "edgeType=FOLLOWS"]


class HelpAndVersion(EdgeloadTestCase):

    def test_help(self):
        proc = self.run_edgeload("--help")
        self.assertExit(proc, 0)
        for word in ("load", "create-table", "--version", "--help"):
            self.assertIn(word, proc.stdout)

    def test_version(self):
        proc = self.run_edgeload("--version")
        self.assertExit(proc, 0)
        self.assertIn("edgeload", proc.stdout)
        self.assertRegex(proc.stdout, r"\d+\.\d+\.\d+")

    def test_load_help(self):
        proc = self.run_edgeload("load", "--help")
        self.assertExit(proc, 0)
        for opt in ("--mapping", "--table", "--pk", "--sk", "--index-pk", "--index-sk",
                    "--no-index", "--attr", "--const", "--format", "--delimiter", "--null",
                    "--columns", "--dry-run", "--rejects", "--max-rejects", "--concurrency",
                    "--endpoint-url", "--region", "--profile", "--quiet", "--stats-json"):
            self.assertIn(opt, proc.stdout, "load --help does not mention " + opt)

    def test_create_table_help(self):
        proc = self.run_edgeload("create-table", "--help")
        self.assertExit(proc, 0)
        for opt in ("--table", "--index-name", "--projection", "--endpoint-url", "--region"):
            self.assertIn(opt, proc.stdout, "create-table --help does not mention " + opt)


class UsageErrors(EdgeloadTestCase):

    def assertUsageError(self, *args):
        proc = self.run_edgeload(*args)
        self.assertExit(proc, 2, "edgeload " + " ".join(args))
        self.assertTrue(proc.stderr.strip(), "a usage error must say what is wrong on stderr")
        return proc

    def test_unknown_option(self):
        proc = self.assertUsageError("load", "--no-such-option", "x.csv")
        self.assertIn("--no-such-option", proc.stderr)
        self.assertUsageError("--no-such-option")
        self.assertUsageError("create-table", "--no-such-option")

    def test_unknown_command(self):
        self.assertUsageError("no-such-command")

    def test_create_table_needs_a_name(self):
        self.assertUsageError("create-table", *self.endpoint_args())

    def test_unknown_column_lists_the_inputs_columns(self):
        table = self.unique_table("cli-col")
        self.create_table_boto(table)
        d = self.tmpdir()
        path = self.write_file(d, "follows.csv", HEADER + "alice,bob,2024-06-20 16:13:20\n")
        proc = self.load("--table", table, "--pk", "ACTOR#{follower}",
                         "--sk", "TARGET#{followee_id}", path)
        self.assertExit(proc, 2)
        self.assertIn("follower", proc.stderr)
        for col in ("follower_id", "followee_id", "created_at"):
            self.assertIn(col, proc.stderr, "the message should list the input's columns")
        self.assertEqual(self.scan_all(table), [], "a usage error must write nothing")

    def test_missing_table_suggests_create_table(self):
        table = self.unique_table("cli-missing")
        d = self.tmpdir()
        path = self.write_file(d, "follows.csv", HEADER + "alice,bob,2024-06-20 16:13:20\n")
        proc = self.load("--table", table, *EDGE_FLAGS, path)
        self.assertExit(proc, 2)
        self.assertIn(table, proc.stderr)
        self.assertIn("edgeload create-table", proc.stderr)
        self.assertFalse(self.table_exists(table), "load must not create the table")


class DryRun(EdgeloadTestCase):

    def test_dry_run_prints_items_and_writes_nothing(self):
        table = self.unique_table("cli-dry")
        self.create_table_boto(table)
        d = self.tmpdir()
        path = self.write_file(d, "follows.csv", HEADER
                               + "alice,bob,2024-06-20 16:13:20\n"
                               + "alice,carol,2024-06-20T16:15:00Z\n"
                               + "dave,bob,2024-06-20 16:16:40\n")
        proc = self.load("--dry-run", "--table", table, *EDGE_FLAGS, path)
        self.assertExit(proc, 0)
        lines = [l for l in proc.stdout.splitlines() if l.strip()]
        items = []
        for line in lines:
            record = json.loads(line)
            self.assertEqual(list(record), ["Item"], "each line is {\"Item\": {...}}: " + line)
            items.append(record["Item"])
        self.assertItems(items, [edge("alice", "bob", 1718900000),
                                 edge("alice", "carol", 1718900100),
                                 edge("dave", "bob", 1718900200)])
        self.assertEqual(self.scan_all(table), [], "--dry-run must write nothing")


class BadRows(EdgeloadTestCase):
    """One bad row among good ones: exit 3, exactly that row rejected, the
    good rows loaded, and the messages say where and which column.

    The checks of the rejects record and the messages are collected and
    reported together, so one run shows every difference at once.
    """

    def load_with_bad_row(self, data, rejects_arg, column, good_items):
        table = self.unique_table("cli-bad")
        self.create_table_boto(table)
        d = self.tmpdir()
        path = self.write_file(d, "follows.csv", data)
        args = ["--table", table, *EDGE_FLAGS, path]
        if rejects_arg:
            rejects = os.path.join(d, "my-rejects.jsonl")
            args = ["--rejects", rejects] + args
        else:
            rejects = os.path.join(d, "edgeload-rejects.jsonl")
        proc = self.load(*args, cwd=d)
        self.assertExit(proc, 3)
        self.assertTrue(os.path.exists(rejects), "no rejects file at " + rejects
                        + "\n--- stderr ---\n" + proc.stderr)
        records = read_jsonl(rejects)
        self.assertEqual(len(records), 1, "exactly the bad row is rejected: %r" % records)
        record = records[0]
        self.assertEqual(record.get("line"), 3, record)
        self.assertTrue(str(record.get("input")).endswith("follows.csv"), record)
        self.assertItems(self.scan_all(table), good_items, "the good rows are loaded")

        problems = []
        for key in ("input", "line", "reason", "row"):
            if key not in record:
                problems.append("the rejects record has no %r key" % key)
        reason = str(record.get("reason", ""))
        message = proc.stderr + "\n" + reason
        if "follows.csv:3" not in message:
            problems.append("neither stderr nor the reason names follows.csv:3")
        if column not in message:
            problems.append("neither stderr nor the reason names the column %r" % column)
        if os.path.basename(rejects) not in proc.stderr:
            problems.append("the summary does not name the rejects file")
        return record, problems, proc

    def test_wrong_column_count(self):
        record, problems, proc = self.load_with_bad_row(
            HEADER + "alice,bob,2024-06-20 16:13:20\n"
            + "dave,bob\n"
            + "alice,carol,2024-06-20 16:15:00\n", rejects_arg=True, column="created_at",
            good_items=[edge("alice", "bob", 1718900000), edge("alice", "carol", 1718900100)])
        if "row" in record:
            values = record["row"]
            values = list(values.values()) if isinstance(values, dict) else values
            if [v for v in values if v is not None] != ["dave", "bob"]:
                problems.append("row %r does not hold the row's values ['dave', 'bob']"
                                % (record["row"],))
        self.assertFalse(problems, "\n".join(problems) + "\nrecord: %r\nstderr: %s"
                         % (record, proc.stderr))

    def test_invalid_utf8(self):
        record, problems, proc = self.load_with_bad_row(
            (HEADER + "alice,bob,2024-06-20 16:13:20\n").encode()
            + b"alice,b\xffob,2024-06-20 16:15:00\n"
            + b"dave,bob,2024-06-20 16:16:40\n", rejects_arg=False, column="followee_id",
            good_items=[edge("alice", "bob", 1718900000), edge("dave", "bob", 1718900200)])
        if not re.search("utf-?8", str(record.get("reason")), re.I):
            problems.append("the reason does not say UTF-8")
        if "row" in record and "alice" not in json.dumps(record["row"]):
            problems.append("row %r does not hold the row's values" % (record["row"],))
        self.assertFalse(problems, "\n".join(problems) + "\nrecord: %r\nstderr: %s"
                         % (record, proc.stderr))


class OutputPaths(EdgeloadTestCase):
    """A file a command would write where it cannot is a configuration
    error: exit 2 at once, one line naming the option and the path, nothing
    read or written, nothing said to be saved."""

    def setUp(self):
        self.d = self.tmpdir()
        self.csv = self.write_file(self.d, "follows.csv", HEADER
                                   + "alice,bob,2024-06-20 16:13:20\n"
                                   + ",bob,2024-06-20 16:13:20\n")  # a reject
        self.table = self.unique_table("cli-out")
        self.create_table_boto(self.table)
        self.nodir = os.path.join(self.d, "nodir")
        self.file = self.csv  # a file where a folder belongs

    def refused(self, command, option, path, *extra, what):
        args = [command, *self.endpoint_args(), "--table", self.table, *extra, option, path]
        if command != "create-table":
            args += [*EDGE_FLAGS, "--counter", "USER#{followee_id},PROFILE,n", self.csv]
        proc = self.run_edgeload(*args)
        self.assertExit(proc, 2, " ".join(args))
        lines = proc.stderr.splitlines()
        self.assertEqual(len(lines), 1, proc.stderr)
        self.assertTrue(lines[0].startswith("edgeload: %s %s: cannot write %s there: "
                                            % (option, path, what)), lines[0])
        self.assertEqual(proc.stdout, "")
        self.assertNotIn("saved", proc.stderr)
        return lines[0]

    def test_every_command_and_path_option(self):
        missing = lambda name: os.path.join(self.nodir, name)
        cases = [
            ("load", "--checkpoint", "the checkpoint"),
            ("load", "--rejects", "the rejects file"),
            ("load", "--stats-json", "the figures"),
            ("counters", "--checkpoint", "the checkpoint"),
            ("counters", "--rejects", "the rejects file"),
            ("counters", "--stats-json", "the figures"),
            ("plan", "--stats-json", "the figures"),
            ("plan", "--plan-out", "the plan"),
            ("verify", "--stats-json", "the figures"),
            ("verify", "--report", "the report file"),
            ("create-table", "--stats-json", "the figures"),
        ]
        for command, option, what in cases:
            with self.subTest(command=command, option=option):
                extra = ("--table", self.unique_table("cli-ct")) if command == "create-table" \
                    else ()
                line = self.refused(command, option, missing("x"), *extra, what=what)
                self.assertIn("folder %s does not exist" % self.nodir, line)
                if command == "create-table":
                    self.assertFalse(self.table_exists(extra[1]))
        # --output: a folder made with its parents, but not under a file
        line = self.refused("load", "--output", os.path.join(self.file, "out"),
                            what="the import files")
        self.assertIn("%s is not a folder" % self.file, line)
        # a folder where the file belongs
        line = self.refused("load", "--stats-json", self.d, what="the figures")
        self.assertIn("it is a folder", line)
        # nothing was written: no item, no file
        self.assertEqual(self.scan_all(self.table), [])
        self.assertFalse(os.path.exists(self.nodir))
        self.assertEqual(sorted(os.listdir(self.d)), ["follows.csv"])

    def test_saved_only_what_is_saved(self):
        # a run stopped by --max-rejects keeps its checkpoint, and says so
        ckpt = os.path.join(self.d, "c.ckpt")
        proc = self.load("--table", self.table, *EDGE_FLAGS, "--max-rejects", "0",
                         "--rejects", os.path.join(self.d, "r.jsonl"), "--checkpoint", ckpt,
                         self.csv)
        self.assertExit(proc, 1, "load --max-rejects 0")
        self.assertIn("checkpoint saved in %s" % ckpt, proc.stderr)
        self.assertTrue(os.path.exists(ckpt))
        # one whose checkpoint cannot be written is refused before it runs,
        # and does not say it saved one
        bad = os.path.join(self.nodir, "c.ckpt")
        proc = self.load("--table", self.table, *EDGE_FLAGS, "--max-rejects", "0",
                         "--checkpoint", bad, self.csv)
        self.assertExit(proc, 2, "load --checkpoint in a missing folder")
        self.assertNotIn("saved", proc.stderr)
        self.assertNotIn("rejected", proc.stderr)

if __name__ == "__main__":
    main()
