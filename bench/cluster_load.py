#!/usr/bin/env python3
"""Client side of bench/cluster.sh (standard library only, so a CI machine needs nothing but Python).

  cluster_load.py receive PORT DIR
      A webhook receiver on 127.0.0.1:PORT. Endpoint N posts to /hook/N; its `whsec_` secret is read from
      DIR/secret-N (written by `setup`). Every request's Standard Webhooks signature is verified (HMAC-SHA256
      over "id.timestamp.body"); a request that fails verification is answered 401 and counted in DIR/bad.
      Each verified request appends its event's id to DIR/hook-N.log, in the order received.

  cluster_load.py setup BASE KEY HOOK_PORT ENROL_URL STATE
      Registers two webhook endpoints (every event type) pointing at the receiver, creates a one-step
      workflow, enrols an operator through the console (password, TOTP confirmed with a code computed here)
      and signs in; writes STATE (JSON) for the commands below.

  cluster_load.py load BASE STATE OUT SECONDS WRITERS READERS [STOP_FILE]
      Mixed load for SECONDS (or until STOP_FILE exists): keyed evidence POSTs (WRITERS threads), reads
      (READERS threads), and one thread starting compute jobs, workflow runs and Financial Actions (proposed,
      approved at the console by the operator, executed; the sandbox connector settles them). Records every
      acknowledged write in OUT/acked.jsonl and every created job, run and action in OUT/work.jsonl; prints a
      summary line (JSON) with the counts of requests, retries and failures.
      A keyed POST that fails without an answer, or with 502/503/504, is retried by this client with the same
      Idempotency-Key (that is what the key is for), as is one answered 409 `idempotency_key_in_use` (its
      first try still running, or its node died with it in flight); reads are never retried here, so a failed read is one
      the balancer could not save. A failure is a request that did not succeed after that.

  cluster_load.py check BASE STATE OUT RECEIVER_DIR TIMEOUT
      Replays every acknowledged key (same status and body, `Idempotent-Replayed: true`), waits up to TIMEOUT
      seconds for every compute job, workflow run and action of OUT to end, and for every event of the
      workspace to reach each endpoint; prints one line per check ("PASS|FAIL name: counts") and the evidence
      ids to OUT/evidence-ids. Exits 1 on any FAIL. The database-side counts (effects once) are in cluster.sh.

  cluster_load.py hooks RECEIVER_DIR TIMEOUT N:EXPECTED_FILE...
      Waits up to TIMEOUT seconds until endpoint N received every event id of its EXPECTED_FILE; checks that
      the first arrivals are in event order and that no request failed signature verification.

  cluster_load.py rate BASE KEY SECONDS THREADS read|write
      Requests per second of one kind with THREADS keep-alive clients (used when wrk is not installed).
"""
import base64
import hashlib
import hmac
import http.client
import json
import os
import random
import re
import struct
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

EVIDENCE = "/api/v2/actions/autonomy/assessment-evidence"
RETRY_STATUSES = (502, 503, 504)


class Client:
    """One keep-alive connection; reconnects after any failure."""

    def __init__(self, base, key=None, timeout=30):
        u = urllib.parse.urlsplit(base)
        self.host, self.port, self.key, self.timeout = u.hostname, u.port, key, timeout
        self.conn = None

    def request(self, method, path, body=None, headers=None):
        h = dict(headers or {})
        if self.key and "cookie" not in {k.lower() for k in h}:
            h["Authorization"] = "Bearer " + self.key
        if body is not None and "Content-Type" not in h:
            h["Content-Type"] = "application/json"
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            self.conn.request(method, path, body=body, headers=h)
            r = self.conn.getresponse()
            data = r.read().decode()
            if r.getheader("Connection", "").lower() == "close":
                self.close()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, data
        except Exception:
            self.close()
            raise

    def close(self):
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:
                pass
        self.conn = None


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.c = {}
        self.errors = []

    def add(self, name, n=1):
        with self.lock:
            self.c[name] = self.c.get(name, 0) + n

    def error(self, text):
        with self.lock:
            if len(self.errors) < 20:
                self.errors.append(text)


def keyed(client, stats, kind, path, body, idem, extra=None, deadline=90):
    """A keyed POST, retried with the same key on no answer or 502/503/504 until `deadline` seconds pass.
    Returns (status, headers, text) of the final answer, or None when it never got one."""
    start = time.time()
    tries = 0
    while True:
        tries += 1
        headers = {"Idempotency-Key": idem}
        headers.update(extra or {})
        try:
            status, h, text = client.request("POST", path, body, headers)
            # 409 idempotency_key_in_use: the first try is still running, or its node died with it in flight
            # (a retry takes the key over after idempotency_stale_seconds): asking again later is the protocol.
            in_use = status == 409 and "idempotency_key_in_use" in text
            if in_use:
                stats.add(kind + "_key_in_use")
            if status not in RETRY_STATUSES and not in_use:
                if tries > 1:
                    stats.add(kind + "_retried")
                return status, h, text
            why = f"{status} {text[:120]}"
        except Exception as e:  # no answer: the request may or may not have been done; the key decides
            why = repr(e)[:160]
        stats.add(kind + "_retries")
        if time.time() - start > deadline:
            stats.error(f"{kind} {idem}: gave up after {tries} tries: {why}")
            return None
        time.sleep(min(0.05 * tries, 1.0))


# --- TOTP (RFC 6238, what the console expects: HMAC-SHA1, 30 s steps, 6 digits)

def b32decode(s):
    s = re.sub(r"[^A-Z2-7]", "", s.upper())
    return base64.b32decode(s + "=" * (-len(s) % 8))


def totp(secret, unix_seconds):
    counter = int(unix_seconds) // 30
    digest = hmac.new(secret, struct.pack(">Q", counter), hashlib.sha1).digest()
    o = digest[19] & 0x0F
    value = (struct.unpack(">I", digest[o:o + 4])[0] & 0x7FFFFFFF) % 1000000
    return f"{value:06d}"


def between(text, start, end):
    i = text.index(start) + len(start)
    return text[i:text.index(end, i)]


def hidden(page, name):
    return between(page, f'name="{name}" value="', '"')


def form(fields):
    return urllib.parse.urlencode(fields)


FORM = {"Content-Type": "application/x-www-form-urlencoded"}


# --- webhook receiver

def receive(port, directory):
    lock = threading.Lock()

    class Hook(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            body = self.rfile.read(int(self.headers["content-length"]))
            m = re.fullmatch(r"/hook/(\d+)", self.path)
            ok = False
            if m:
                try:
                    secret = open(os.path.join(directory, f"secret-{m.group(1)}")).read().strip()
                    key = base64.b64decode(secret.split("_", 1)[1])
                    wid, ts = self.headers["webhook-id"], self.headers["webhook-timestamp"]
                    mac = base64.b64encode(hmac.new(key, f"{wid}.{ts}.".encode() + body, hashlib.sha256).digest())
                    given = [s.split(",", 1)[1].encode() for s in self.headers["webhook-signature"].split()
                             if s.startswith("v1,")]
                    payload = json.loads(body)
                    ok = any(hmac.compare_digest(mac, g) for g in given) and abs(time.time() - int(ts)) < 300
                    event = payload["id"]
                except Exception:
                    ok = False
            with lock:
                if ok:
                    with open(os.path.join(directory, f"hook-{m.group(1)}.log"), "a") as f:
                        f.write(f"{event}\n")
                else:
                    with open(os.path.join(directory, "bad"), "a") as f:
                        f.write(f"{self.path}\n")
            self.send_response(204 if ok else 401)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    ThreadingHTTPServer(("127.0.0.1", port), Hook).serve_forever()


# --- setup

def setup(base, key, hook_port, enrol_url, state_file):
    c = Client(base, key)
    receiver_dir = os.path.dirname(os.path.abspath(state_file))
    endpoints = []
    for n in (1, 2):
        status, _, text = c.request("POST", "/api/v2/agent-execution/webhooks",
                                    json.dumps({"url": f"http://127.0.0.1:{hook_port}/hook/{n}",
                                                "description": f"cluster receiver {n}"}),
                                    {"Idempotency-Key": f"hook-{n}-{time.time()}"})
        assert status == 201, f"webhook endpoint: {status} {text}"
        e = json.loads(text)
        with open(os.path.join(receiver_dir, "receiver", f"secret-{n}"), "w") as f:
            f.write(e["secret"])
        endpoints.append({"n": n, "id": e["id"]})
    # One wait step of a second: a run is queued, claimed, waits on its timer (claimed again when due) and
    # completes, each transition a worker's, with its events.
    status, _, text = c.request("POST", "/api/v2/workflow-studio/versions",
                                json.dumps({"name": "Cluster timer",
                                            "definition": {"steps": [{"kind": "wait", "id": "tick", "seconds": 1}]}}),
                                {"Idempotency-Key": f"wf-{time.time()}"})
    assert status == 201, f"workflow version: {status} {text}"
    version = json.loads(text)["id"]
    # The operator: the enrolment link, a password, the TOTP secret from the page, confirmed with the
    # previous step's code (one step of drift is accepted) so the sign-in can take the next one.
    console = Client(base)
    token = urllib.parse.parse_qs(urllib.parse.urlsplit(enrol_url).query)["token"][0]
    status, _, page = console.request("GET", f"/console/enroll?token={token}")
    assert status == 200, f"enrolment page: {status}"
    password = "correct horse battery staple"
    status, _, page = console.request("POST", "/console/enroll",
                                      form({"token": token, "password": password, "password_repeat": password}), FORM)
    secret = b32decode(between(page, '<code id="totp-secret">', "</code>"))
    status, _, page = console.request("POST", "/console/enroll/confirm",
                                      form({"token": token, "code": totp(secret, time.time() - 30)}), FORM)
    assert status == 303, f"enrolment: {status} {page[:300]}"
    status, h, page = console.request("POST", "/console/login",
                                      form({"email": "ops@cluster.test", "password": password,
                                            "code": totp(secret, time.time() + 30)}), FORM)
    assert status == 303, f"sign-in: {status} {page[:300]}"
    cookie = h["set-cookie"].split(";")[0]
    json.dump({"key": key, "endpoints": endpoints, "version": version, "cookie": cookie,
               "totp": base64.b32encode(secret).decode()}, open(state_file, "w"))


# --- load

def approve(console, stats, cookie, action_id):
    """The operator's decision through the console's own form; retried (page then form) when a node went
    away. A retry that finds the decision already made is the decision made."""
    for attempt in range(60):
        try:
            status, _, page = console.request("GET", f"/console/actions/{action_id}?environment=sandbox",
                                              headers={"cookie": cookie})
            if status != 200:
                raise RuntimeError(f"action page {status}")
            if 'name="envelope_hash"' not in page:
                return True  # decided already (no form left)
            fields = {"csrf": hidden(page, "csrf"), "environment": "sandbox",
                      "envelope_hash": hidden(page, "envelope_hash"),
                      "check_set_hash": hidden(page, "check_set_hash"), "decision": "approve"}
            status, _, text = console.request("POST", f"/console/actions/{action_id}/decision", form(fields),
                                              dict(FORM, cookie=cookie))
            if status == 303:
                return True
            if status == 409 and "already" in text:
                return True
            if status not in RETRY_STATUSES:
                stats.error(f"approve {action_id}: {status} {text[:200]}")
                return False
        except Exception as e:
            if attempt > 0:
                stats.error(f"approve {action_id}: {e!r}"[:200])
        stats.add("approve_retries")
        time.sleep(0.2)
    return False


def load(base, state_file, out, seconds, writers, readers, stop_file=None):
    state = json.load(open(state_file))
    key = state["key"]
    os.makedirs(out, exist_ok=True)
    stats = Stats()
    end = time.time() + seconds
    lock = threading.Lock()
    acked = open(os.path.join(out, "acked.jsonl"), "a", buffering=1)
    work = open(os.path.join(out, "work.jsonl"), "a", buffering=1)
    tag = f"{os.getpid()}-{int(time.time())}"

    def running():
        return time.time() < end and not (stop_file and os.path.exists(stop_file))

    def writer(t):
        c = Client(base, key)
        n = 0
        while running():
            n += 1
            idem = f"cl-{tag}-{t}-{n}"
            body = json.dumps({"domain": "security", "title": f"cluster {t} {n}", "source_type": "cluster",
                               "source_reference": f"cluster://{tag}/{t}/{n}",
                               "source_hash": "sha256:" + hashlib.sha256(idem.encode()).hexdigest()})
            stats.add("write")
            r = keyed(c, stats, "write", EVIDENCE, body, idem)
            if r is None:
                stats.add("write_failed")
                continue
            status, _, text = r
            if status == 201:
                with lock:
                    acked.write(json.dumps({"key": idem, "body": body, "status": status, "response": text}) + "\n")
            else:
                stats.add("write_failed")
                stats.error(f"write {idem}: {status} {text[:200]}")

    def reader(t):
        c = Client(base, key)
        while running():
            stats.add("read")
            try:
                status, _, text = c.request("GET", "/api/v2/workspace")
                if status != 200:
                    stats.add("read_failed")
                    stats.error(f"read: {status} {text[:200]}")
            except Exception as e:
                stats.add("read_failed")
                stats.error(f"read: {e!r}"[:200])

    def record(kind, ident):
        with lock:
            work.write(json.dumps({"kind": kind, "id": ident}) + "\n")

    def worker():
        c = Client(base, key)
        console = Client(base)
        n = 0
        while running():
            n += 1
            # A compute job, queued (respond-async), long enough to be running on a node when it is killed.
            body = json.dumps({"parameters": {"EQUITY": {"initial": 100.0, "drift": 0.06, "volatility": 0.2,
                                                         "correlations": {"GOLD": 0.1}},
                                              "GOLD": {"initial": 50.0, "drift": 0.02, "volatility": 0.15}},
                               "horizon_years": 1.0, "steps": 12, "paths": 20000, "seed": n,
                               "weights": {"EQUITY": 0.6, "GOLD": 0.4}})
            stats.add("job")
            r = keyed(c, stats, "job", "/api/v2/quant/compute/simulations", body, f"job-{tag}-{n}",
                      {"Prefer": "respond-async"})
            if r and r[0] in (201, 202):
                record("job", json.loads(r[2])["id"])
            else:
                stats.add("job_failed")
                stats.error(f"job: {r and r[0]} {r and r[2][:200]}")
            stats.add("run")
            r = keyed(c, stats, "run", "/api/v2/workflows/runs", json.dumps({"version_uid": state["version"]}),
                      f"run-{tag}-{n}")
            if r and r[0] == 202:
                record("run", json.loads(r[2])["id"])
            else:
                stats.add("run_failed")
                stats.error(f"run: {r and r[0]} {r and r[2][:200]}")
            # A Financial Action: proposed, approved by the operator at the console, executed; the sandbox
            # connector settles it (the settlement worker, on whichever node claims it).
            stats.add("action")
            proposal = json.dumps({"kind": "payment", "amount_minor": 1000 + n, "currency": "USD",
                                   "counterparty": "cp_acme", "connector": "sandbox",
                                   "execution_mode": "human_approved", "risk_tier": "T1",
                                   "reference": f"CL-{tag}-{n}", "required_checks": []})
            r = keyed(c, stats, "action", "/api/v2/actions", proposal, f"act-{tag}-{n}")
            if not (r and r[0] == 201):
                stats.add("action_failed")
                stats.error(f"propose: {r and r[0]} {r and r[2][:200]}")
                continue
            action = json.loads(r[2])["id"]
            record("action", action)
            if not approve(console, stats, state["cookie"], action):
                stats.add("action_failed")
                continue
            r = keyed(c, stats, "action", f"/api/v2/actions/{action}/execute", "{}", f"exe-{tag}-{n}")
            if not (r and r[0] == 200):
                stats.add("action_failed")
                stats.error(f"execute {action}: {r and r[0]} {r and r[2][:200]}")

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(writers)]
    threads += [threading.Thread(target=reader, args=(t,)) for t in range(readers)]
    threads.append(threading.Thread(target=worker))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    summary = dict(sorted(stats.c.items()))
    summary["errors"] = stats.errors
    print(json.dumps(summary))


# --- check

def check(base, state_file, out, receiver_dir, timeout):
    state = json.load(open(state_file))
    c = Client(base, state["key"])
    failed = False

    def verdict(ok, text):
        nonlocal failed
        failed |= not ok
        print(f"{'PASS' if ok else 'FAIL'} {text}", flush=True)

    # Every acknowledged write, replayed identically.
    records = [json.loads(line) for line in open(os.path.join(out, "acked.jsonl")) if line.strip()]
    bad = 0
    with open(os.path.join(out, "evidence-ids"), "w") as ids:
        for rec in records:
            status, h, text = c.request("POST", EVIDENCE, rec["body"], {"Idempotency-Key": rec["key"]})
            if status != rec["status"] or text != rec["response"] or h.get("idempotent-replayed") != "true":
                bad += 1
                if bad <= 5:
                    print(f"  mismatch {rec['key']}: {status} replayed={h.get('idempotent-replayed')} {text[:160]}")
            else:
                ids.write(json.loads(text)["id"] + "\n")
    verdict(bad == 0, f"acknowledged writes replayed identically: {len(records) - bad}/{len(records)}")

    work = [json.loads(line) for line in open(os.path.join(out, "work.jsonl")) if line.strip()]
    ends = {"job": ("/api/v2/quant/compute/jobs/{}", "status", {"succeeded"}, {"failed", "cancelled"}),
            "run": ("/api/v2/workflows/runs/{}", "state", {"completed"}, {"failed", "cancelled"}),
            "action": ("/api/v2/actions/{}", None, None, None)}
    deadline = time.time() + timeout
    for kind in ("job", "run", "action"):
        items = [w["id"] for w in work if w["kind"] == kind]
        path, field, good, bad_states = ends[kind]
        pending, wrong = set(items), {}
        while pending and time.time() < deadline:
            for ident in sorted(pending):
                status, _, text = c.request("GET", path.format(ident))
                if status != 200:
                    continue
                v = json.loads(text)
                if kind == "action":
                    st = v.get("control_state")
                    if st in ("denied", "failed", "returned", "reconciliation_exception"):
                        wrong[ident] = st
                        pending.discard(ident)
                    elif st in ("settled", "completed"):
                        pending.discard(ident)
                else:
                    if v[field] in good:
                        pending.discard(ident)
                    elif v[field] in bad_states:
                        wrong[ident] = v[field]
                        pending.discard(ident)
            if pending:
                time.sleep(0.5)
        name = {"job": "compute jobs ended (succeeded)", "run": "workflow runs completed",
                "action": "actions settled"}[kind]
        detail = f"{len(items) - len(pending) - len(wrong)}/{len(items)}"
        if pending:
            detail += f", {len(pending)} not ended within {timeout}s (e.g. {sorted(pending)[0]})"
        if wrong:
            detail += f", {len(wrong)} ended otherwise (e.g. {next(iter(wrong.items()))})"
        verdict(not pending and not wrong, f"{name}: {detail}")
        with open(os.path.join(out, f"{kind}-ids"), "w") as f:
            f.write("".join(i + "\n" for i in items))
    print(f"  (waited {timeout - max(0, deadline - time.time()):.1f}s for the work to end)", flush=True)
    sys.exit(1 if failed else 0)


def hooks(receiver_dir, timeout, expected_files):
    """Every expected event reached its endpoint at least once, and each endpoint heard each subject's events
    in event order (the first arrival of each; a redelivery after a crash repeats an event, which at-least-once
    allows). EXPECTED files are named N:path, one event id a line."""
    failed = False
    deadline = time.time() + timeout
    for spec in expected_files:
        n, path = spec.split(":", 1)
        rows = [line.strip().split("|") for line in open(path) if line.strip()]
        expected = [r[0] for r in rows]
        subject = {r[0]: r[1] for r in rows if len(r) > 1}
        log = os.path.join(receiver_dir, f"hook-{n}.log")
        while True:
            got = [line.strip() for line in open(log)] if os.path.exists(log) else []
            missing = set(expected) - set(got)
            if not missing or time.time() > deadline:
                break
            time.sleep(0.5)
        first, seen = [], set()
        for g in got:
            if g not in seen:
                seen.add(g)
                first.append(g)
        order = [g for g in first if g in set(expected)]
        inversions = [(a, b) for a, b in zip(order, order[1:]) if b < a]
        # The same, among the events of one subject (an action's, a run's): what a consumer following one
        # object relies on even where events of different subjects cross.
        last, subject_inversions = {}, 0
        for e in order:
            s = subject.get(e)
            if s in last and e < last[s]:
                subject_inversions += 1
            last[s] = max(e, last.get(s, e))
        again = len(got) - len(first)
        # The promise (README, "Webhooks"): each subject's events in event order, at least once. Between
        # subjects an event whose transaction committed after one with a later id may arrive after it (ids are
        # minted before the commit): counted and shown, not a failure.
        ok = not missing and subject_inversions == 0
        failed |= not ok
        print(f"{'PASS' if ok else 'FAIL'} webhooks to endpoint {n}: {len(expected) - len(missing)}/{len(expected)} "
              f"events delivered, {len(inversions)} out of event order ({subject_inversions} within one subject), "
              f"{again} redelivered" + (f" (missing e.g. {sorted(missing)[0]})" if missing else "")
              + (f" (e.g. {inversions[0][1]} after {inversions[0][0]})" if inversions else ""), flush=True)
    bad = os.path.join(receiver_dir, "bad")
    nbad = sum(1 for _ in open(bad)) if os.path.exists(bad) else 0
    if nbad:
        failed = True
        print(f"FAIL webhook signatures: {nbad} requests failed verification")
    sys.exit(1 if failed else 0)


# --- rate (fallback without wrk)

def rate(base, key, seconds, threads, kind):
    stats = Stats()
    end = time.time() + seconds

    def run(t):
        c = Client(base, key)
        n = 0
        while time.time() < end:
            n += 1
            if kind == "read":
                status, _, _ = c.request("GET", "/api/v2/workspace")
                ok = status == 200
            else:
                idem = f"rate-{os.getpid()}-{t}-{n}-{random.random()}"
                body = json.dumps({"domain": "security", "title": "rate", "source_type": "bench",
                                   "source_reference": "bench://1", "source_hash": "sha256:" + "9f" * 32})
                status, _, _ = c.request("POST", EVIDENCE, body, {"Idempotency-Key": idem})
                ok = status == 201
            stats.add("ok" if ok else "bad")

    ts = [threading.Thread(target=run, args=(t,)) for t in range(threads)]
    start = time.time()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(f"{stats.c.get('ok', 0) / (time.time() - start):.0f} {stats.c.get('bad', 0)}")


if __name__ == "__main__":
    cmd, a = sys.argv[1], sys.argv[2:]
    if cmd == "receive":
        receive(int(a[0]), a[1])
    elif cmd == "setup":
        setup(a[0], a[1], int(a[2]), a[3], a[4])
    elif cmd == "load":
        load(a[0], a[1], a[2], float(a[3]), int(a[4]), int(a[5]), a[6] if len(a) > 6 else None)
    elif cmd == "check":
        check(a[0], a[1], a[2], a[3], float(a[4]))
    elif cmd == "hooks":
        hooks(a[0], float(a[1]), a[2:])
    elif cmd == "rate":
        rate(a[0], a[1], float(a[2]), int(a[3]), a[4])
    else:
        sys.exit(__doc__)
