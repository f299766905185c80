#!/usr/bin/env python3
"""A local checkpoint witness and RFC 3161 timestamp authority for tests (never for production).

  scripts/witness-test-server.py DIR [--fail-first N]

Makes a throwaway CA and a TSA certificate (extendedKeyUsage critical timeStamping) with openssl
in DIR/tsa, listens on a free loopback port and prints one JSON line: {"port": P, "ca": "<CA PEM>"}.
  POST /witness  stores the body as DIR/received/<Countersign-Checkpoint header>; 201
                 (the first N requests get 503, to exercise retries)
  POST /tsa      answers an application/timestamp-query with `openssl ts -reply` (PKIStatus granted)
Runs until killed or until its standard input closes.
"""
import http.server, json, os, subprocess, sys, tempfile, threading

root = os.path.abspath(sys.argv[1])
fail_first = int(sys.argv[sys.argv.index("--fail-first") + 1]) if "--fail-first" in sys.argv else 0
tsa = os.path.join(root, "tsa")
received = os.path.join(root, "received")
os.makedirs(tsa, exist_ok=True)
os.makedirs(received, exist_ok=True)


def openssl(*args):
    subprocess.run(["openssl", *args], cwd=tsa, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
        "-days", "2", "-subj", "/CN=Countersign test TSA CA", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign")
openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "tsa.key", "-out", "tsa.csr",
        "-subj", "/CN=Countersign test TSA")
with open(os.path.join(tsa, "tsa.ext"), "w") as f:
    f.write("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=critical,timeStamping\n")
openssl("x509", "-req", "-in", "tsa.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "tsa.pem", "-days", "2",
        "-extfile", "tsa.ext")
with open(os.path.join(tsa, "serial"), "w") as f:
    f.write("01\n")
with open(os.path.join(tsa, "tsa.cnf"), "w") as f:
    f.write(f"""[ tsa ]
default_tsa = tsa_config
[ tsa_config ]
dir = {tsa}
serial = {tsa}/serial
crypto_device = builtin
signer_cert = {tsa}/tsa.pem
certs = {tsa}/ca.pem
signer_key = {tsa}/tsa.key
signer_digest = sha256
default_policy = 1.3.6.1.4.1.4146.999.1
digests = sha256
accuracy = secs:1
ordering = no
tsa_name = no
ess_cert_id_chain = no
ess_cert_id_alg = sha256
""")

lock = threading.Lock()
state = {"witness_requests": 0}


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", content_type="text/plain"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path == "/witness":
            with lock:
                state["witness_requests"] += 1
                if state["witness_requests"] <= fail_first:
                    return self.answer(503, b"not yet")
            name = os.path.basename(self.headers.get("Countersign-Checkpoint", "unnamed"))
            with open(os.path.join(received, name), "wb") as f:
                f.write(body)
            return self.answer(201, b"stored")
        if self.path == "/tsa":
            with tempfile.TemporaryDirectory() as work, lock:
                query, reply = os.path.join(work, "q.tsq"), os.path.join(work, "r.tsr")
                with open(query, "wb") as f:
                    f.write(body)
                done = subprocess.run(["openssl", "ts", "-reply", "-config", os.path.join(tsa, "tsa.cnf"), "-queryfile", query,
                                       "-out", reply], capture_output=True)
                if done.returncode != 0:
                    return self.answer(400, done.stderr)
                with open(reply, "rb") as f:
                    return self.answer(200, f.read(), "application/timestamp-reply")
        self.answer(404)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(json.dumps({"port": server.server_address[1], "ca": os.path.join(tsa, "ca.pem")}), flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
sys.stdin.read()
server.shutdown()
