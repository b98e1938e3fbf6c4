#!/usr/bin/env python3
"""Helpers of bench/evidence.sh (standard library only).

    evidence_bench.py leaves sqlite DB WORKSPACE N     # appends N synthetic leaves to a workspace's log
    evidence_bench.py leaves postgres URL WORKSPACE N  # (through psql's COPY)
    evidence_bench.py leaves BACKEND TARGET WORKSPACE N mix  # every second leaf an audit event, as keyed
                                                            # writes make them (each with its event row)
    evidence_bench.py bundle BASE KEY N OUT LEAVES     # N of the LEAVES synthetic records' proofs, as a bundle

A synthetic record's content is `{"id":"bch_<i>"}` and its leaf names `sha256:` of exactly those bytes, so
the bundle the second command assembles from Fiscus's proofs is one `clients/verify_evidence.py` checks
like any other (each content hashes to its record hash and names its record).
"""

import hashlib
import json
import random
import sqlite3
import subprocess
import sys
import urllib.request


def content(i):
    return '{"id":"bch_%d"}' % i


def batches(first, n, per=1000, seq=None):
    """The synthetic leaves as the log stores them: batches of `per` leaves, three lines each (kind, id,
    record hash), as a commit group of `per` records would write them. With `seq` (the workspace's last
    event), every second leaf is an audit event's, numbered on from it."""
    for start in range(0, n, per):
        lines = []
        for i in range(start, min(n, start + per)):
            if seq is not None and i % 2 == 1:
                lines.append(f"audit_event\naud_{seq + i // 2 + 1}\n{event_hash(i)}\n")
                continue
            h = "sha256:" + hashlib.sha256(content(i).encode()).hexdigest()
            lines.append(f"bench\nbch_{i}\n{h}\n")
        yield first + start, len(lines), "".join(lines)


def event_hash(i):
    return "sha256:" + hashlib.sha256(b"event %d" % i).hexdigest()


EVENT_COLUMNS = "workspace_id, seq, prev_hash, hash, occurred_at, actor_kind, actor_id, action, details, leaf_index"


def events(workspace, first, n, seq):
    """The rows of the synthetic events `batches` names with `seq`: each names its leaf's index, as the
    chaining writes it (their chain is not a valid one; only the integrator reads them here)."""
    for i in range(1, n, 2):
        yield (workspace, seq + i // 2 + 1, "", event_hash(i), 0, "system", "bench", "bench", "{}", first + i)


def leaves(backend, target, workspace, n, mix=False):
    if backend == "sqlite":
        db = sqlite3.connect(target)
        (first, seq) = db.execute("SELECT leaves, seq FROM audit_heads WHERE workspace_id = ?", (workspace,)).fetchone()
        seq = seq if mix else None
        db.executemany(
            "INSERT INTO tlog_batches (workspace_id, first_leaf, leaf_count, leaves) VALUES (?, ?, ?, ?)",
            ((workspace, f, c, text) for f, c, text in batches(first, n, seq=seq)),
        )
        if mix:
            db.executemany(f"INSERT INTO audit_events ({EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           events(workspace, first, n, seq))
            db.execute("UPDATE audit_heads SET seq = seq + ? WHERE workspace_id = ?", (n // 2, workspace))
        db.execute("UPDATE audit_heads SET leaves = leaves + ? WHERE workspace_id = ?", (n, workspace))
        db.commit()
        return
    first, seq = (int(v) for v in subprocess.check_output(
        ["psql", target, "-tAc", f"SELECT leaves, seq FROM audit_heads WHERE workspace_id = '{workspace}'"],
        text=True).strip().split("|"))
    seq = seq if mix else None
    copy("tlog_batches (workspace_id, first_leaf, leaf_count, leaves)", target,
         (f"{workspace}\t{f}\t{c}\t{text.replace(chr(10), chr(92) + 'n')}\n" for f, c, text in batches(first, n, seq=seq)))
    if mix:
        copy(f"audit_events ({EVENT_COLUMNS})", target,
             ("\t".join(str(v) for v in row) + "\n" for row in events(workspace, first, n, seq)))
        subprocess.check_call(
            ["psql", target, "-qc", f"UPDATE audit_heads SET seq = seq + {n // 2} WHERE workspace_id = '{workspace}'"])
    subprocess.check_call(
        ["psql", target, "-qc", f"UPDATE audit_heads SET leaves = leaves + {n} WHERE workspace_id = '{workspace}'"])


def copy(into, target, lines):
    """`\\copy INTO FROM STDIN` of `lines` (COPY's text format: a newline inside a value written as
    backslash-n, which the caller does)."""
    proc = subprocess.Popen(["psql", target, "-qc", f"\\copy {into} FROM STDIN"], stdin=subprocess.PIPE, text=True)
    for line in lines:
        proc.stdin.write(line)
    proc.stdin.close()
    if proc.wait() != 0:
        sys.exit("COPY failed")


def get(base, key, path):
    request = urllib.request.Request(base + path, headers={"Authorization": "Bearer " + key})
    with urllib.request.urlopen(request) as response:
        return json.load(response)


def bundle(base, key, n, out, synthetic):
    checkpoint = get(base, key, "/api/v2/evidence/checkpoint")
    records = []
    ids = random.Random(7).sample(range(synthetic), n)
    size = checkpoint["tree_size"]
    for i in ids:
        p = get(base, key, f"/api/v2/evidence/records/bch_{i}/proof?tree_size={size}")
        records.append({
            "kind": p["kind"], "id": p["record_id"], "content": content(i), "record_hash": p["record_hash"],
            "leaf_index": p["leaf_index"], "hashes": p["hashes"],
        })
    with open(out, "w") as f:
        json.dump({"object": "evidence_bundle", "subject_kind": "bench", "subject_id": "bench",
                   "checkpoint": checkpoint, "verifier_key": "", "records": records}, f)


if __name__ == "__main__":
    if sys.argv[1] == "leaves":
        leaves(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6:] == ["mix"])
    else:
        bundle(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], int(sys.argv[6]))
