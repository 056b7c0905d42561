"""A Slurm job array of edgeload workers, one killed and requeued, equals one
process, item for item, counters included.

A one-node Slurm cluster (Debian's slurm-wlm and munge, installed by
scripts/test.sh with the suite's other packages) runs in a temporary
directory: munged on its own socket and key, slurmctld and slurmd on free
ports with a generated slurm.conf, no accounting (no slurmdbd), no cgroups,
as root, started directly (no systemd). The test stops every daemon it
started.

The job is the recipe of docs/scale-out.md: `sbatch --array=0-3 --requeue` of
`edgeload load --split auto/4` (the part from SLURM_ARRAY_TASK_ID) with a
checkpoint per task and --resume, and one `edgeload counters` job with
--dependency=afterok on the array. Task 2 is SIGKILLed once its checkpoint
holds acknowledged items; being killed, it FAILED and Slurm does not
requeue it on its own. It is requeued with `scontrol requeue`, its start
time reset (a requeued job is held about two minutes otherwise), and the
counters job's dependency set again on the tasks one by one (a failed task
leaves an afterok on the whole array never satisfied, even once the task is
requeued and succeeds). The requeued task resumes from its checkpoint.

Then a single-process load of the same mapping into another table; boto3
scans of both tables must hold the same items, counters included.

Needs root (slurmd, and munged's key checks) and the Slurm and munge
binaries; without them the test is skipped, unless EDGELOAD_REQUIRE_DDB or
CI is set (scripts/test.sh sets it), then it fails.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest

import edgeload_test as et
from edgeload_test import ENDPOINT, EdgeloadTestCase, free_port, main

DAEMONS = ("munged", "mungekey", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "scontrol", "squeue", "sinfo", "scancel")
TASKS = 4
KILLED = 2            # SLURM_ARRAY_TASK_ID of the task killed and requeued
USERS = 2000
EDGES = 16000         # 2 units an edge: about 8,500 units a task, 8 s at --max-wcu 1000


def pid_alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def read_pid(path):
    try:
        with open(path) as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0


def wait_for(what, check, timeout, interval=0.2):
    """check() until it returns something true; its value, or AssertionError."""
    end = time.time() + timeout
    while True:
        v = check()
        if v:
            return v
        if time.time() > end:
            raise AssertionError("timed out after %.0f s waiting for %s" % (timeout, what))
        time.sleep(interval)


class Cluster:
    """munged + slurmctld + slurmd in `root`, all stopped by stop()."""

    def __init__(self, root):
        self.root = root
        self.pidfiles = []
        os.chmod(root, 0o755)  # munged wants its socket's directories searchable by all
        self.munge_dir = os.path.join(root, "munge")
        os.mkdir(self.munge_dir, 0o755)
        for d in ("spool", "state", "log"):
            os.mkdir(os.path.join(root, d), 0o700)
        self.socket = os.path.join(self.munge_dir, "munge.socket")
        self.conf = os.path.join(root, "slurm.conf")
        self.node = "edgeload1"
        self.env = dict(os.environ, SLURM_CONF=self.conf)

    def run(self, *argv, check=True):
        p = subprocess.run(list(argv), env=self.env, capture_output=True, text=True,
                           timeout=60)
        if check and p.returncode != 0:
            raise AssertionError("%s exited %d: %s%s" % (" ".join(argv), p.returncode,
                                                         p.stdout, p.stderr))
        return p

    def start(self):
        key = os.path.join(self.munge_dir, "munge.key")
        self.run("mungekey", "--create", "--keyfile=" + key)
        pid = os.path.join(self.munge_dir, "munged.pid")
        self.pidfiles.append(pid)
        self.run("munged", "--socket=" + self.socket, "--key-file=" + key, "--pid-file=" + pid,
                 "--log-file=" + os.path.join(self.munge_dir, "munged.log"),
                 "--seed-file=" + os.path.join(self.munge_dir, "munged.seed"))
        host = socket.gethostname().split(".")[0]
        r = self.root
        conf = {
            "ClusterName": "edgeload",
            "SlurmctldHost": "%s(127.0.0.1)" % host,
            "SlurmctldPort": free_port(), "SlurmdPort": free_port(),
            "AuthType": "auth/munge", "CredType": "cred/munge",
            "AuthInfo": "socket=" + self.socket,
            "SlurmUser": "root", "SlurmdUser": "root",
            "StateSaveLocation": r + "/state", "SlurmdSpoolDir": r + "/spool",
            "SlurmctldPidFile": r + "/slurmctld.pid", "SlurmdPidFile": r + "/slurmd.pid",
            "SlurmctldLogFile": r + "/log/slurmctld.log", "SlurmdLogFile": r + "/log/slurmd.log",
            # no cgroups, no accounting: a container without systemd
            "ProctrackType": "proctrack/pgid", "TaskPlugin": "task/none",
            "JobAcctGatherType": "jobacct_gather/none",
            "AccountingStorageType": "accounting_storage/none", "JobCompType": "jobcomp/none",
            "SelectType": "select/cons_tres", "SelectTypeParameters": "CR_CPU",
            "SchedulerType": "sched/backfill", "MpiDefault": "none", "ReturnToService": "2",
            # four CPUs whatever the machine has: the four tasks run at once
            "SlurmdParameters": "config_overrides",
        }
        with open(self.conf, "w") as f:
            for k, v in conf.items():
                f.write("%s=%s\n" % (k, v))
            f.write("NodeName=%s NodeAddr=127.0.0.1 CPUs=%d State=UNKNOWN\n"
                    % (self.node, TASKS))
            f.write("PartitionName=edgeload Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n")
        self.pidfiles += [r + "/slurmctld.pid", r + "/slurmd.pid"]
        self.run("slurmctld", "-f", self.conf, "-i")
        self.run("slurmd", "-f", self.conf, "-N", self.node)
        wait_for("the node to be idle", lambda: "idle" in self.run(
            "sinfo", "-h", "-o", "%T", check=False).stdout, 30)

    def job_field(self, job, field):
        """A field of `scontrol show job` ("" when the job is unknown)."""
        out = self.run("scontrol", "show", "job", str(job), check=False).stdout
        m = re.search(r"\b%s=(\S*)" % field, out)
        return m.group(1) if m else ""

    def stop(self):
        """Cancels every job, then stops slurmd, slurmctld and munged (their
        pids, from their own pid files) and waits until they are gone."""
        if os.path.exists(self.conf):
            self.run("scancel", "--full", "--partition=edgeload", check=False)
        for path in reversed(self.pidfiles):
            pid = read_pid(path)
            if pid and pid_alive(pid):
                os.kill(pid, signal.SIGTERM)
                try:
                    wait_for("pid %d to end" % pid, lambda: not pid_alive(pid), 15)
                except AssertionError:
                    os.kill(pid, signal.SIGKILL)


class SlurmArrayTest(EdgeloadTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        missing = [b for b in DAEMONS + CLIENTS if not shutil.which(b)]
        why = None
        if missing:
            why = ("Slurm and munge are not installed (missing %s): apt-get install "
                   "slurm-wlm munge, as scripts/test.sh does" % ", ".join(missing))
        elif os.geteuid() != 0:
            why = "the one-node Slurm cluster needs root (slurmd, munged)"
        if why:
            if et.must_not_skip():
                raise RuntimeError(why)
            raise unittest.SkipTest(why)

    def setUp(self):
        # under /tmp, not TMPDIR: munged refuses a socket whose directories
        # anyone may write to, unless sticky (/tmp is)
        self.root = tempfile.mkdtemp(prefix="edgeload-slurm-", dir="/tmp")
        self.addCleanup(shutil.rmtree, self.root, True)
        self.cluster = Cluster(self.root)
        self.addCleanup(self.cluster.stop)
        self.cluster.start()

    def write_inputs(self, d):
        with open(os.path.join(d, "users.csv"), "w") as f:
            f.write("id,name\n")
            for u in range(USERS):
                f.write("u%d,User %d\n" % (u, u))
        with open(os.path.join(d, "follows.csv"), "w") as f:
            f.write("follower,followee\n")
            for i in range(EDGES):
                f.write("u%d,u%d\n" % (i % USERS, (i * 7 + i // USERS) % USERS))

    def mapping(self, d, name, table):
        path = os.path.join(d, name)
        with open(path, "w") as f:
            json.dump({
                "table": table,
                "sources": [
                    {"name": "users", "input": "users.csv", "pk": "USER#{id}", "sk": "PROFILE",
                     "index": False, "attributes": {"name": {"column": "name"}}},
                    {"name": "follows", "input": "follows.csv",
                     "pk": "ACTOR#{follower}", "sk": "TARGET#{followee}",
                     "counters": [
                         {"pk": "USER#{followee}", "sk": "PROFILE", "attribute": "followerCount"},
                         {"pk": "USER#{follower}", "sk": "PROFILE",
                          "attribute": "followingCount"}]}]}, f)
        return path

    def sbatch(self, *args):
        p = self.cluster.run("sbatch", "--parsable", "--chdir=" + self.root, *args)
        return p.stdout.strip().split(";")[0]

    def test_array_with_a_killed_task_equals_one_process(self):
        d = self.root
        self.write_inputs(d)
        table, single = self.unique_table("slurm"), self.unique_table("slurm1")
        mapping = self.mapping(d, "m.json", table)
        self.create_table_cli(table, "--mapping", mapping, "--progress", "none")
        binary = os.path.abspath(self.bin)
        common = ["--endpoint-url", ENDPOINT, "--region", et.REGION, "--progress", "plain"]
        script = os.path.join(d, "load.sh")
        with open(script, "w") as f:       # docs/scale-out.md's, with its #SBATCH lines
            f.write("#!/bin/sh\n"
                    "#SBATCH --array=0-%(last)d\n"
                    "#SBATCH --requeue\n"
                    "#SBATCH --open-mode=append\n"
                    "#SBATCH --output=%(d)s/load-%%a.out\n"
                    "echo \"$SLURM_ARRAY_TASK_ID ${SLURM_RESTART_COUNT:-0}\" >> %(d)s/runs\n"
                    "echo $$ > %(d)s/pid-$SLURM_ARRAY_TASK_ID\n"
                    "exec %(bin)s load --mapping %(m)s --split auto/%(n)d "
                    "--checkpoint %(d)s/ckpt-{i} --checkpoint-interval 1 --resume "
                    "--stats-json %(d)s/stats-{i}.json --max-wcu 1000 %(common)s\n"
                    % {"d": d, "bin": binary, "m": mapping, "n": TASKS, "last": TASKS - 1,
                       "common": " ".join(common)})
        os.chmod(script, 0o755)
        array = self.sbatch(script)
        counters = self.sbatch("--dependency=afterok:" + array, "--output=%s/counters.out" % d,
                               "--wrap", "exec %s counters --mapping %s %s"
                               % (binary, mapping, " ".join(common)))

        # kill task 2 a third of the way through its part (about 4,500 rows):
        # its checkpoint then holds a run of acknowledged rows from the start
        # of the part, which a resumed run does not send again (a checkpoint
        # of the first few items may not: it counts the items acknowledged,
        # and keeps the offset below which every row is)
        ckpt = os.path.join(d, "ckpt-%d" % (KILLED + 1))

        def progressed():
            try:
                with open(ckpt) as f:
                    return json.load(f)["items_written"] >= 1500
            except (OSError, ValueError, KeyError):
                return False
        wait_for("task %d's checkpoint" % KILLED, progressed, 60, 0.1)
        task = "%s_%d" % (array, KILLED)
        pid = read_pid(os.path.join(d, "pid-%d" % KILLED))
        self.assertTrue(pid and pid_alive(pid), "task %d ended before it could be killed" % KILLED)
        os.kill(pid, signal.SIGKILL)
        wait_for("task %d to fail" % KILLED,
                 lambda: self.cluster.job_field(task, "JobState") == "FAILED", 60)
        self.assertFalse(os.path.exists(os.path.join(d, "stats-%d.json" % (KILLED + 1))),
                         "the killed task had finished its part")
        # without accounting, a failed task stays failed: nothing requeues it
        time.sleep(2)
        self.assertEqual(self.cluster.job_field(task, "JobState"), "FAILED")
        self.cluster.run("scontrol", "requeue", task)
        self.assertEqual(self.cluster.job_field(task, "JobState"), "PENDING")
        eligible = self.cluster.job_field(task, "EligibleTime")
        held = time.mktime(time.strptime(eligible, "%Y-%m-%dT%H:%M:%S")) - time.time()
        self.assertGreater(held, 60, "a requeued task is held about two minutes: " + eligible)
        self.cluster.run("scontrol", "update", "JobId=" + task, "StartTime=now")
        self.cluster.run("scontrol", "update", "JobId=" + counters, "Dependency=afterok:" +
                         ":".join("%s_%d" % (array, i) for i in range(TASKS)))

        wait_for("the counters job", lambda: self.cluster.job_field(counters, "JobState")
                 in ("COMPLETED", "FAILED", "CANCELLED"), 180, 0.5)
        outputs = {}
        for name in ["load-%d.out" % i for i in range(TASKS)] + ["counters.out"]:
            with open(os.path.join(d, name), errors="replace") as f:
                outputs[name] = f.read()
            et.assert_no_sanitizer_report(outputs[name])
        self.assertEqual(self.cluster.job_field(counters, "JobState"), "COMPLETED",
                         outputs["counters.out"])
        for i in range(TASKS):
            t = "%s_%d" % (array, i)
            self.assertEqual((self.cluster.job_field(t, "JobState"),
                              self.cluster.job_field(t, "ExitCode")), ("COMPLETED", "0:0"),
                             outputs["load-%d.out" % i])
        with open(os.path.join(d, "runs")) as f:
            runs = sorted(line.split() for line in f)
        self.assertEqual(runs, sorted([[str(i), "0"] for i in range(TASKS)] +
                                      [[str(KILLED), "1"]]))
        # the requeued task went on from its checkpoint, it did not start over
        stats = []
        for i in range(TASKS):
            with open(os.path.join(d, "stats-%d.json" % (i + 1))) as f:
                stats.append(json.load(f))
        self.assertIn("counters are not set by split workers", outputs["load-0.out"])
        part = USERS + EDGES - sum(s["items_sent"] for k, s in enumerate(stats) if k != KILLED)
        self.assertGreater(stats[KILLED]["items_sent"], 0)
        self.assertLess(stats[KILLED]["items_sent"], part)

        # one process, the same mapping, another table
        one = self.mapping(d, "one.json", single)
        self.create_table_cli(single, "--mapping", one, "--progress", "none")
        proc = self.load("--mapping", one, "--progress", "none")
        self.assertExit(proc, 0, "the single-process load")
        got, want = self.scan_all(table, segments=4), self.scan_all(single, segments=4)
        self.assertEqual(len(want), USERS + EDGES)
        self.assertItems(got, want)
        counted = [i for i in got if "followerCount" in i or "followingCount" in i]
        self.assertEqual(len(counted), USERS)


if __name__ == "__main__":
    main()
