"""A TLS endpoint for the tests: a CA made on the spot with openssl, and
stunnel (Debian's stunnel4) terminating TLS in front of plain-HTTP
services (DynamoDB Local, s3rver), with a log that tells how many TLS
handshakes each service took (one per connection: stunnel logs each
accepted connection).

    ca = make_ca(directory)              # ca.pem, server.pem (127.0.0.1, localhost)
    with Stunnel(ca, {"ddb": ("127.0.0.1", 8000)}) as st:
        url = st.url("ddb")              # https://127.0.0.1:PORT
        ...
        st.handshakes("ddb")             # connections accepted so far

Also a small HTTP proxy (`ConnectProxy`): CONNECT tunnels for https://
URLs and absolute-URI forwarding for http:// ones, optionally requiring
Basic proxy credentials, counting what it carried.
"""
import base64
import os
import re
import select
import shutil
import socket
import subprocess
import threading
import time


def stunnel_bin():
    for name in ("stunnel4", "stunnel"):
        p = shutil.which(name)
        if p:
            return p
    return None


def _run(*args, cwd):
    subprocess.run(args, cwd=cwd, check=True, capture_output=True)


def make_ca(directory, name="edgeload test CA"):
    """Makes ca.pem/ca.key and a server certificate for 127.0.0.1 and
    localhost signed by it (server.pem holds key and certificate). Returns
    the paths as a dict."""
    os.makedirs(directory, exist_ok=True)
    _run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
         "-subj", "/CN=" + name, "-keyout", "ca.key", "-out", "ca.pem",
         "-addext", "basicConstraints=critical,CA:TRUE",
         "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=directory)
    _run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
         "-keyout", "server.key", "-out", "server.csr", cwd=directory)
    with open(os.path.join(directory, "ext.cnf"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                "extendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n")
    _run("openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
         "-CAcreateserial", "-days", "2", "-extfile", "ext.cnf", "-out", "server.crt",
         cwd=directory)
    with open(os.path.join(directory, "server.pem"), "w") as out:
        for part in ("server.key", "server.crt"):
            with open(os.path.join(directory, part)) as f:
                out.write(f.read())
    return {"ca": os.path.join(directory, "ca.pem"),
            "server": os.path.join(directory, "server.pem"), "dir": directory}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Stunnel:
    """stunnel in the foreground, one service per backend."""

    def __init__(self, ca, backends):
        self.ca = ca
        self.backends = backends
        self.ports = {name: free_port() for name in backends}
        self.log = os.path.join(ca["dir"], "stunnel-%d.log" % os.getpid())
        self.proc = None

    def __enter__(self):
        conf = os.path.join(self.ca["dir"], "stunnel-%d.conf" % os.getpid())
        lines = ["foreground = yes", "pid =", "output = " + self.log, "debug = info",
                 "cert = " + self.ca["server"]]
        for name, (host, port) in self.backends.items():
            lines += ["[%s]" % name, "accept = 127.0.0.1:%d" % self.ports[name],
                      "connect = %s:%d" % (host, port)]
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        open(self.log, "w").close()
        self.proc = subprocess.Popen([stunnel_bin(), conf], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        deadline = time.time() + 15
        for port in self.ports.values():
            while True:
                if self.proc.poll() is not None:
                    raise RuntimeError("stunnel exited: " + open(self.log).read()[-2000:])
                try:
                    socket.create_connection(("127.0.0.1", port), 0.5).close()
                    break
                except OSError:
                    if time.time() > deadline:
                        raise RuntimeError("stunnel does not listen on %d" % port)
                    time.sleep(0.1)
        time.sleep(0.2)
        self.reset_counts()
        return self

    def __exit__(self, *exc):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def url(self, name):
        return "https://127.0.0.1:%d" % self.ports[name]

    def _count(self, name):
        with open(self.log, errors="replace") as f:
            return len(re.findall(r"Service \[%s\] accepted connection" % re.escape(name),
                                  f.read()))

    def reset_counts(self):
        """Connections counted from now on (the readiness probes excluded)."""
        self._base = {name: self._count(name) for name in self.backends}

    def handshakes(self, name):
        return self._count(name) - self._base[name]


class ConnectProxy:
    """An HTTP proxy on 127.0.0.1: CONNECT host:port tunnels, and requests
    with an absolute URI forwarded (one per connection). With user/password
    set, answers 407 to any request without those Basic credentials."""

    def __init__(self, user=None, password=None):
        self.user, self.password = user, password
        self.lock = threading.Lock()
        self.connects = []     # "host:port" of each CONNECT tunnel
        self.forwards = []     # absolute URIs forwarded
        self.refused = 0
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.stopping = False
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, with_credentials=True):
        cred = "%s:%s@" % (self.user, self.password) if self.user and with_credentials else ""
        return "http://%s127.0.0.1:%d" % (cred, self.port)

    def close(self):
        self.stopping = True
        self.sock.close()

    def _accept(self):
        while not self.stopping:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    @staticmethod
    def _read_head(c):
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = c.recv(65536)
            if not chunk:
                return None, b""
            data += chunk
        head, rest = data.split(b"\r\n\r\n", 1)
        return head.decode("latin-1"), rest

    def _authorized(self, head):
        if not self.user:
            return True
        want = "Basic " + base64.b64encode(
            ("%s:%s" % (self.user, self.password)).encode()).decode()
        for line in head.split("\r\n")[1:]:
            k, _, v = line.partition(":")
            if k.strip().lower() == "proxy-authorization" and v.strip() == want:
                return True
        return False

    def _serve(self, c):
        try:
            head, rest = self._read_head(c)
            if head is None:
                return
            method, target, _ = head.split("\r\n")[0].split(" ", 2)
            if not self._authorized(head):
                with self.lock:
                    self.refused += 1
                c.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\n"
                          b"Proxy-Authenticate: Basic realm=\"test\"\r\n"
                          b"Content-Length: 0\r\nConnection: close\r\n\r\n")
                return
            if method == "CONNECT":
                host, port = target.rsplit(":", 1)
                up = socket.create_connection((host, int(port)), 10)
                with self.lock:
                    self.connects.append(target)
                c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                if rest:
                    up.sendall(rest)
                self._pipe(c, up)
                return
            m = re.match(r"http://([^/:]+):?(\d*)(/.*)?$", target)
            if not m:
                c.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                return
            host, port, path = m.group(1), int(m.group(2) or 80), m.group(3) or "/"
            with self.lock:
                self.forwards.append(target)
            lines = head.split("\r\n")
            out = ["%s %s HTTP/1.1" % (method, path)]
            out += [ln for ln in lines[1:] if not ln.lower().startswith(
                ("proxy-authorization:", "proxy-connection:", "connection:"))]
            out.append("Connection: close")
            up = socket.create_connection((host, port), 10)
            up.sendall(("\r\n".join(out) + "\r\n\r\n").encode("latin-1") + rest)
            self._pipe(c, up)
        except OSError:
            pass
        finally:
            c.close()

    @staticmethod
    def _pipe(a, b):
        try:
            while True:
                r, _, _ = select.select([a, b], [], [], 60)
                if not r:
                    return
                for s in r:
                    data = s.recv(65536)
                    if not data:
                        return
                    (b if s is a else a).sendall(data)
        finally:
            b.close()
