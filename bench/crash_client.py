#!/usr/bin/env python3
"""Client side of bench/crash.sh (standard library only).

  crash_client.py load  BASE KEY OUT THREADS   keyed evidence POSTs until the server dies; every acknowledged
                                              (2xx) key is appended to OUT with its body and response
  crash_client.py check BASE KEY OUT          replays every recorded key: same status and body, and
                                              `Idempotent-Replayed: true`; prints the evidence ids, one a line
"""
import http.client
import json
import sys
import threading
import urllib.parse

PATH = "/api/v2/actions/autonomy/assessment-evidence"


def post(conn, key, idem, body):
    conn.request("POST", PATH, body=body, headers={
        "Authorization": "Bearer " + key, "Content-Type": "application/json", "Idempotency-Key": idem})
    r = conn.getresponse()
    return r.status, r.getheader("Idempotent-Replayed"), r.read().decode()


def load(base, key, out, threads):
    u = urllib.parse.urlsplit(base)
    lock = threading.Lock()
    sink = open(out, "a", buffering=1)

    def run(t):
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
        n = 0
        while True:
            n += 1
            idem = f"crash-{t}-{n}-{threading.get_ident()}"
            body = json.dumps({"domain": "security", "title": f"crash {t} {n}", "source_type": "crash",
                               "source_reference": f"crash://{t}/{n}",
                               "source_hash": "sha256:" + "ab" * 32})
            try:
                status, _, text = post(conn, key, idem, body)
            except Exception:
                return  # the server died: this request was not acknowledged
            if 200 <= status < 300:
                with lock:
                    sink.write(json.dumps({"key": idem, "body": body, "status": status, "response": text}) + "\n")
            else:
                print(f"unexpected status {status}: {text}", file=sys.stderr)
                return

    workers = [threading.Thread(target=run, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()


def check(base, key, out):
    u = urllib.parse.urlsplit(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    bad = 0
    with open(out) as f:
        records = [json.loads(line) for line in f if line.strip()]
    for rec in records:
        status, replayed, text = post(conn, key, rec["key"], rec["body"])
        if status != rec["status"] or text != rec["response"] or replayed != "true":
            bad += 1
            print(f"MISMATCH {rec['key']}: {status} replayed={replayed} {text[:200]}", file=sys.stderr)
        else:
            print(json.loads(text)["id"])
    print(f"checked {len(records)} acknowledged keys, {bad} not replayed identically", file=sys.stderr)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    if sys.argv[1] == "load":
        load(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    else:
        check(sys.argv[2], sys.argv[3], sys.argv[4])
