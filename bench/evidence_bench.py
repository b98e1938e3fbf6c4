#!/usr/bin/env python3
"""Helpers of bench/evidence.sh (standard library only).

    evidence_bench.py leaves sqlite DB WORKSPACE N     # appends N synthetic leaves to a workspace's log
    evidence_bench.py leaves postgres URL WORKSPACE N  # (through psql's COPY)
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


def batches(first, n, per=1000):
    """The synthetic leaves as the log stores them: batches of `per` leaves, three lines each (kind, id,
    record hash), as a commit group of `per` records would write them."""
    for start in range(0, n, per):
        lines = []
        for i in range(start, min(n, start + per)):
            h = "sha256:" + hashlib.sha256(content(i).encode()).hexdigest()
            lines.append(f"bench\nbch_{i}\n{h}\n")
        yield first + start, len(lines), "".join(lines)


def leaves(backend, target, workspace, n):
    if backend == "sqlite":
        db = sqlite3.connect(target)
        (first,) = db.execute("SELECT leaves FROM audit_heads WHERE workspace_id = ?", (workspace,)).fetchone()
        db.executemany(
            "INSERT INTO tlog_batches (workspace_id, first_leaf, leaf_count, leaves) VALUES (?, ?, ?, ?)",
            ((workspace, f, c, text) for f, c, text in batches(first, n)),
        )
        db.execute("UPDATE audit_heads SET leaves = leaves + ? WHERE workspace_id = ?", (n, workspace))
        db.commit()
        return
    first = int(subprocess.check_output(
        ["psql", target, "-tAc", f"SELECT leaves FROM audit_heads WHERE workspace_id = '{workspace}'"]).strip())
    copy = subprocess.Popen(
        ["psql", target, "-qc", "\\copy tlog_batches (workspace_id, first_leaf, leaf_count, leaves) FROM STDIN"],
        stdin=subprocess.PIPE, text=True)
    for f, c, text in batches(first, n):
        # COPY's text format: a newline inside a value is written as backslash-n.
        copy.stdin.write(f"{workspace}\t{f}\t{c}\t{text.replace(chr(10), chr(92) + 'n')}\n")
    copy.stdin.close()
    if copy.wait() != 0:
        sys.exit("COPY failed")
    subprocess.check_call(
        ["psql", target, "-qc", f"UPDATE audit_heads SET leaves = leaves + {n} WHERE workspace_id = '{workspace}'"])


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
        leaves(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    else:
        bundle(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], int(sys.argv[6]))
