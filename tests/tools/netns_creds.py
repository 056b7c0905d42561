"""Run inside a private network namespace (`unshare --net`, as root) by
tests/integration/test_creds.py: puts the container endpoint's and the
instance metadata service's default addresses (169.254.170.2 and
169.254.169.254) on this namespace's own loopback, serves the awsstub
stand-ins there, and resolves credentials with edgeload (EDGELOAD_BIN) and
with botocore, with no endpoint override: the defaults are what is tested.
Nothing leaves the namespace: it has no other interface. Prints one JSON
line: {"relative_uri": {...}, "imds_default": {...}}.
"""
import json
import os
import subprocess
import sys

import awsstub


def sh(*args):
    subprocess.run(args, check=True)


def main():
    sh("ip", "link", "set", "lo", "up")
    sh("ip", "addr", "add", "169.254.170.2/32", "dev", "lo")
    sh("ip", "addr", "add", "169.254.169.254/32", "dev", "lo")
    issuer = awsstub.Issuer()
    ecs, _ = awsstub.serve(awsstub.Container, host="169.254.170.2", port=80, issuer=issuer)
    imds, _ = awsstub.serve(awsstub.Imds, host="169.254.169.254", port=80, issuer=issuer)
    cap, cap_url = awsstub.serve(awsstub.Capture)
    base = dict(os.environ)
    out = {}
    cases = {
        "relative_uri": {"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/credentials/task-1",
                         "AWS_EC2_METADATA_DISABLED": "true"},
        "imds_default": {},
    }
    for name, extra in cases.items():
        env = dict(base, **extra)
        cap.calls.clear()
        p = subprocess.run([os.environ["EDGELOAD_BIN"], "create-table", "--table", "T",
                            "--endpoint-url", cap_url, "--region", "us-east-1"], env=env,
                           capture_output=True, text=True, timeout=60)
        sys.stderr.write(p.stderr)
        ours = cap.calls[0]["access_key"] if cap.calls else None
        ref = awsstub.botocore_access_key(env)
        out[name] = {"rc": p.returncode, "edgeload": ours, "botocore": ref,
                     "stderr": p.stderr[-500:],
                     "source": (issuer.secret_of(ours)[1] or {}).get("source") if ours else None}
    for s in (ecs, imds, cap):
        awsstub.stop(s)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
