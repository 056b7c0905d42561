"""Hostile inputs end with a clear error or reject and bounded memory
(docs/LIMITS.md): decompression bombs, a 10 GB line, a 1 GB value, a
CREATE TABLE with 100,000 columns, deeply nested and huge mapping files.

Big inputs are streamed from a generator through standard input ("-") or
built by repeating one compressed frame/member, so nothing large is written
to disk. Each run is measured with os.wait4: the child's peak RSS must stay
under the bound (larger under a sanitizer, whose shadow memory and
quarantine count too). Runs with --dry-run: no DynamoDB needed.
"""

import gzip
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from edgeload_test import assert_no_sanitizer_report, edgeload_bin, sanitized  # noqa: E402

TIME = "/usr/bin/time"  # GNU time (Debian package "time")
MB = 1024 * 1024
GB = 1024 * MB


class Hostile(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.bin = edgeload_bin()
        if not cls.bin or not os.access(cls.bin, os.X_OK):
            raise unittest.SkipTest("edgeload binary not found (set EDGELOAD_BIN)")
        if not os.access(TIME, os.X_OK):
            raise RuntimeError("GNU time is needed to measure memory: apt-get install time")
        # plain build: a few MB; under ASan the quarantine alone is 256 MB
        cls.rss_bound_kb = (768 if sanitized(cls.bin) else 64) * 1024
        # a sanitized build is 5-20 times slower: stream a quarter as much
        # where the whole input must be read (the bound is the same)
        cls.scale = 4 if sanitized(cls.bin) else 1

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="edgeload-hostile-")
        self.addCleanup(subprocess.run, ["rm", "-rf", self.dir])

    def run_measured(self, args, feed=None, timeout=300):
        """Runs edgeload under GNU time; feed(write) streams stdin.
        Returns (exit, stderr, peak RSS in KB, seconds).

        GNU time forks edgeload from its own small process and reports that
        child's peak RSS; measuring a child forked from this Python process
        would count Python's own pages, which the child holds until exec."""
        err_path = os.path.join(self.dir, "stderr")
        rss_path = os.path.join(self.dir, "rss")
        with open(err_path, "wb") as err:
            start = time.monotonic()
            proc = subprocess.Popen([TIME, "-f", "%M", "-o", rss_path, self.bin] + args,
                                    cwd=self.dir,
                                    stdin=subprocess.PIPE if feed else subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=err)
            writer = None
            if feed:
                def pump():
                    try:
                        feed(proc.stdin.write)
                    except (BrokenPipeError, ValueError, OSError):
                        pass  # edgeload stopped reading: expected
                    finally:
                        try:
                            proc.stdin.close()
                        except OSError:
                            pass
                writer = threading.Thread(target=pump, daemon=True)
                writer.start()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                self.fail("edgeload %s hung for %d s" % (args, timeout))
            secs = time.monotonic() - start
            if writer:
                writer.join(10)
        with open(err_path, "rb") as f:
            stderr = f.read().decode("utf-8", "replace")
        assert_no_sanitizer_report(stderr)
        with open(rss_path) as f:
            rss = int(f.read().split()[-1])
        print("  %s: exit %d, peak RSS %d KB, %.1f s" % (self.id().split(".")[-1],
              proc.returncode, rss, secs), file=sys.stderr)
        return proc.returncode, stderr, rss, secs

    def dry_run(self, fmt, *extra, pk="A#{a}", sk="B#{b}"):
        return ["load", "--table", "T", "--pk", pk, "--sk", sk, "--dry-run",
                "--format", fmt, "--rejects", os.path.join(self.dir, "rejects.jsonl"),
                *extra]

    def assertBounded(self, rss_kb):
        self.assertLess(rss_kb, self.rss_bound_kb,
                        "peak RSS %d KB over the bound %d KB" % (rss_kb, self.rss_bound_kb))

    # ---- decompression bombs --------------------------------------------

    def bomb(self, kind, unit, copies):
        """A file of `copies` concatenated zstd frames / gzip members, each
        holding `unit` (bytes). Returns (path, compressed size)."""
        path = os.path.join(self.dir, "bomb.csv." + ("zst" if kind == "zstd" else "gz"))
        if kind == "zstd":
            one = subprocess.run(["zstd", "-c", "-q"], input=unit, check=True,
                                 capture_output=True).stdout
        else:
            one = gzip.compress(unit, 9)
        with open(path, "wb") as f:
            for _ in range(copies):
                f.write(one)
        return path, len(one) * copies

    def compress_one(self, kind, data):
        if kind == "zstd":
            return subprocess.run(["zstd", "-c", "-q"], input=data, check=True,
                                  capture_output=True).stdout
        return gzip.compress(data)

    def check_bomb_single_field(self, kind):
        # 1 GB (64 MB under a sanitizer) of one field with no newline: read
        # to the end with flat memory, the 400 KB field cap makes it a reject
        copies = 16 // (self.scale * self.scale)
        path, size = self.bomb(kind, b"x" * (64 * MB), copies)
        with open(path, "rb") as f:
            frames = f.read()
        with open(path, "wb") as f:  # the header and the field's start first
            f.write(self.compress_one(kind, b"a,b\n1,"))
            f.write(frames)
        code, err, rss, _ = self.run_measured(self.dry_run("csv", path), timeout=900)
        self.assertEqual(code, 3, err)
        self.assertIn("longer than 409600 bytes", err)
        self.assertIn("1 rejected", err)
        self.assertBounded(rss)
        print("  %s bomb: %d KB compressed, %d MB expanded" % (kind, size // 1024, 64 * copies),
              file=sys.stderr)

    def test_zstd_bomb_single_field(self):
        self.check_bomb_single_field("zstd")

    def test_gzip_bomb_single_field(self):
        self.check_bomb_single_field("gzip")

    def check_bomb_rows(self, kind):
        # 64 MB of valid rows (100 KB values) is streamed: memory stays flat
        # (tests/unit/test_input_bomb.c streams GBs through the input layer)
        row = b"1," + b"y" * (100 * 1024) + b"\n"
        unit = row * 160                               # 16 MB a frame/member
        copies = 4 // self.scale
        path, size = self.bomb(kind, unit, copies)     # 64 MB, 640 rows
        with open(path, "rb") as f:
            head = f.read()
        hdr = os.path.join(self.dir, "rows.csv." + ("zst" if kind == "zstd" else "gz"))
        with open(hdr, "wb") as f:  # a header member/frame first
            if kind == "zstd":
                f.write(subprocess.run(["zstd", "-c", "-q"], input=b"a,b\n", check=True,
                                       capture_output=True).stdout)
            else:
                f.write(gzip.compress(b"a,b\n"))
            f.write(head)
        code, err, rss, secs = self.run_measured(
            self.dry_run("csv", hdr, "--attr", "v=b", sk="B#{a}"), timeout=600)
        self.assertEqual(code, 0, err)
        self.assertIn("%d rows read" % (160 * copies), err)
        self.assertBounded(rss)

    def test_zstd_bomb_rows_streamed(self):
        self.check_bomb_rows("zstd")

    def test_gzip_bomb_rows_streamed(self):
        self.check_bomb_rows("gzip")

    # ---- a 10 GB line, a 1 GB value ---------------------------------------

    @staticmethod
    def endless(prefix, total, chunk=b"x" * MB, suffix=b""):
        def feed(write):
            write(prefix)
            sent = 0
            while sent < total:
                write(chunk)
                sent += len(chunk)
            write(suffix)
        return feed

    def test_10gb_single_line_csv(self):
        # 10 GB (640 MB under a sanitizer): the row is a reject, the next loads
        size = 10 * GB // (self.scale * self.scale)
        code, err, rss, _ = self.run_measured(
            self.dry_run("csv", "-"), feed=self.endless(b"a,b\n1,", size, suffix=b"\n2,3\n"),
            timeout=1200)
        self.assertEqual(code, 3, err)
        self.assertIn("longer than 409600 bytes", err)
        self.assertIn("1 items printed", err)
        self.assertBounded(rss)

    def test_unbalanced_quote(self):
        # an open quote never closed: 1 GB (256 MB under a sanitizer), then EOF
        code, err, rss, _ = self.run_measured(
            self.dry_run("csv", "-"), feed=self.endless(b'a,b\n1,"', GB // self.scale,
                                                         b"x,\n" * 4096))
        self.assertEqual(code, 1, err)
        self.assertIn("quoted field not closed before the end of input", err)
        self.assertBounded(rss)

    def test_1gb_value_csv(self):
        code, err, rss, _ = self.run_measured(
            self.dry_run("csv", "-"), feed=self.endless(b"a,b\n1,", GB // self.scale,
                                                        suffix=b"\n2,3\n"))
        self.assertEqual(code, 3, err)
        self.assertIn("longer than 409600 bytes", err)
        self.assertIn("1 items printed", err)
        self.assertBounded(rss)

    def test_1gb_value_mysql(self):
        # the row is rejected (value over 400 KB), the next row still loads
        feed = self.endless(b"CREATE TABLE `t` (\n  `a` int,\n  `b` text\n);\n"
                            b"INSERT INTO `t` VALUES (1,'", GB // self.scale,
                            suffix=b"'),(2,'y');\n")
        code, err, rss, _ = self.run_measured(self.dry_run("mysql", "-"), feed=feed,
                                              timeout=600)
        self.assertEqual(code, 3, err)
        self.assertIn("1 items printed", err)
        self.assertIn("1 rejected", err)
        self.assertBounded(rss)

    # ---- 100,000 columns -------------------------------------------------

    def test_create_table_100000_columns(self):
        sql = ("CREATE TABLE `t` (\n" +
               ",\n".join("  `c%d` int" % i for i in range(100000)) +
               "\n);\nINSERT INTO `t` VALUES (1,2);\n").encode()
        code, err, rss, secs = self.run_measured(
            self.dry_run("mysql", "-", pk="A#{c0}", sk="B#{c1}"),
            feed=lambda write: write(sql), timeout=120)
        self.assertEqual(code, 1, err)
        self.assertIn("table t has more than 4096 columns", err)
        self.assertBounded(rss)

    def test_csv_header_100000_columns(self):
        head = (",".join("c%d" % i for i in range(100000)) + "\n").encode()
        code, err, rss, _ = self.run_measured(
            self.dry_run("csv", "-", pk="A#{c0}", sk="B#{c1}"),
            feed=lambda write: write(head + b"1,2\n"))
        self.assertNotEqual(code, 0, err)
        self.assertIn("more than the 10000 allowed", err)
        self.assertBounded(rss)

    # ---- mapping files ---------------------------------------------------

    def mapping_run(self, data):
        path = os.path.join(self.dir, "mapping.json")
        with open(path, "wb") as f:
            f.write(data)
        csv = os.path.join(self.dir, "in.csv")
        with open(csv, "w") as f:
            f.write("a,b\n1,2\n")
        return self.run_measured(["load", "--mapping", path, "--dry-run", csv])

    def test_deeply_nested_mapping(self):
        # a million levels: yajl's recursive free would overflow the stack
        code, err, rss, _ = self.mapping_run(b'{"table":"T","x":' + b"[" * 1000000 +
                                             b"]" * 1000000 + b"}")
        self.assertEqual(code, 2, err)
        self.assertIn("JSON nested deeper than 32 levels", err)
        self.assertBounded(rss)

    def test_mapping_with_too_many_values(self):
        # 15 MB, under the size cap, but 7.5 million values
        code, err, rss, _ = self.mapping_run(b'{"table":"T","x":[' + b"1," * (15 * MB // 2) +
                                             b"1]}")
        self.assertEqual(code, 2, err)
        self.assertIn("more than 200000 values", err)
        self.assertBounded(rss)

    def test_1mb_templates(self):
        # A template's plan costs memory in proportion to its text (the unit
        # test test_template.c holds the plan of 1 MB under 10 MB). Through
        # the CLI the mapping file and its JSON tree come on top, and freed
        # memory stays in the heap (main.c's mallopt), so the bound here is
        # the RSS over a run with a small mapping: 16 MB (50-70 MB before).
        def mapping(template):
            return json.dumps({"table": "T", "sources": [{
                "name": "s", "pk": "A#{a}", "sk": "B#{b}",
                "attributes": {"x": {"template": template}}}]}).encode()
        _, _, base, _ = self.mapping_run(mapping("{a}"))
        for unit, code_want in (("{{", 2), ("{a}", 0), ("{b}x", 2)):
            template = unit * (MB // len(unit))
            code, err, rss, _ = self.mapping_run(mapping(template))
            self.assertEqual(code, code_want, err[-500:])
            if code_want == 2:
                self.assertIn("bytes of literal text, more than the 65536 allowed", err)
            if not sanitized(self.bin):
                self.assertLess(rss - base, 16 * 1024,
                                "%r x 1 MB: %d KB over the %d KB of a small mapping"
                                % (unit, rss - base, base))
            self.assertBounded(rss)

    def test_huge_mapping_file(self):
        code, err, rss, _ = self.mapping_run(b'{"table":"T","x":"' + b"z" * (20 * MB) + b'"}')
        self.assertEqual(code, 2, err)
        self.assertIn("larger than 16 MB", err)
        self.assertBounded(rss)


if __name__ == "__main__":
    unittest.main(verbosity=2)
