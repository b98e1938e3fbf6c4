#!/usr/bin/env python3
"""Verify Fiscus's evidence without trusting Fiscus.

Needs only the Python standard library and `cryptography` (Ed25519), and the log's verifier key, obtained
once out of band (`fiscus evidence key`, or `/.well-known/fiscus-evidence-key`) and kept.

    verify_evidence.py checkpoint  KEY NOTE                  # a checkpoint's signature; prints what it says
    verify_evidence.py bundle      KEY BUNDLE.json           # every record of an evidence bundle
    verify_evidence.py consistency KEY OLD_NOTE NEW_NOTE [PROOF.json]
                                                             # the newer log extends the one you kept

KEY is the verifier key (`<name>+<key id>+<base64>`) or a file holding it; NOTE a file holding a checkpoint
note (C2SP tlog-checkpoint, signed-note); PROOF.json the answer of `GET /api/v2/evidence/consistency`. Two
validly signed checkpoints of the same size with different roots are a fork: proof that the log showed two
histories. Exit status 0 when everything verifies, 1 otherwise (with what failed).

The algorithms are RFC 9162 §2.1 (leaf SHA-256(0x00 || entry), node SHA-256(0x01 || left || right),
inclusion §2.1.3.2, consistency §2.1.4.2), written here from the RFC, not from Fiscus's code.
"""

import base64
import hashlib
import json
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


class Failed(Exception):
    pass


def read_key(arg):
    try:
        with open(arg, encoding="utf-8") as f:
            text = f.read().strip()
    except OSError:
        text = arg.strip()
    name, key_id, key = text.split("+", 2)
    raw = base64.b64decode(key)
    if raw[0] != 0x01 or len(raw) != 33:
        raise Failed("not an Ed25519 note verifier key")
    if hashlib.sha256(name.encode() + b"\n" + raw).digest()[:4].hex() != key_id:
        raise Failed("the verifier key's id does not match its name and key")
    return name, bytes.fromhex(key_id), Ed25519PublicKey.from_public_bytes(raw[1:])


def open_checkpoint(key, note):
    """The checkpoint's (origin, size, root) once its signature by `key` is checked."""
    name, key_id, public = key
    text, sep, signatures = note.rpartition("\n\n")
    if not sep:
        raise Failed("not a signed note")
    text += "\n"
    for line in signatures.rstrip("\n").split("\n"):
        if not line.startswith("\u2014 "):
            raise Failed("malformed signature line")
        signer, sig = line[2:].split(" ", 1)
        sig = base64.b64decode(sig)
        if signer == name and sig[:4] == key_id:
            try:
                public.verify(sig[4:], text.encode())
            except InvalidSignature:
                raise Failed("the checkpoint's signature does not verify")
            origin, size, root = text.split("\n")[:3]
            return origin, int(size), base64.b64decode(root)
    raise Failed(f"the checkpoint carries no signature by {name}")


def leaf_hash(entry):
    return hashlib.sha256(b"\x00" + entry).digest()


def node(left, right):
    return hashlib.sha256(b"\x01" + left + right).digest()


def verify_inclusion(leaf, index, size, path, root):
    if index >= size:
        raise Failed("leaf index beyond the tree")
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            raise Failed("inclusion proof too long")
        if fn & 1 or fn == sn:
            r = node(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0 or r != root:
        raise Failed("the inclusion proof does not lead to the checkpoint's root")


def verify_consistency(first, second, first_root, second_root, path):
    if first > second:
        raise Failed("the newer checkpoint is smaller than the one kept: the log was rolled back")
    if first == second:
        if first_root != second_root:
            raise Failed("FORK: two checkpoints of the same size with different roots")
        return
    if first == 0:
        return
    if not path:
        raise Failed("empty consistency proof")
    if first & (first - 1) == 0:
        path = [first_root] + path
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise Failed("consistency proof too long")
        if fn & 1 or fn == sn:
            fr, sr = node(c, fr), node(c, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0 or fr != first_root or sr != second_root:
        raise Failed("the newer log does not extend the one kept: a past record was rewritten or removed")


def verify_bundle(key, bundle):
    origin, size, root = open_checkpoint(key, bundle["checkpoint"]["note"])
    for record in bundle["records"]:
        content = record["content"].encode("utf-8")
        record_hash = "sha256:" + hashlib.sha256(content).hexdigest()
        if record_hash != record["record_hash"]:
            raise Failed(f"{record['kind']} {record['id']}: its content does not hash to its record hash")
        fields = json.loads(content)
        if record["kind"] == "audit_event":
            if f"aud_{fields['seq']}" != record["id"]:
                raise Failed(f"{record['id']}: the content is another event's")
        elif fields.get("id", fields.get("uid")) != record["id"]:
            raise Failed(f"{record['kind']} {record['id']}: the content is another record's")
        entry = f"fiscus-evidence/v1\n{record['kind']}\n{record['id']}\n{record_hash}\n".encode()
        path = [base64.b64decode(h) for h in record["hashes"]]
        try:
            verify_inclusion(leaf_hash(entry), record["leaf_index"], size, path, root)
        except Failed as e:
            raise Failed(f"{record['kind']} {record['id']}: {e}")
    return origin, size, len(bundle["records"])


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    command, key = argv[0], read_key(argv[1])
    if command == "checkpoint":
        origin, size, root = open_checkpoint(key, open(argv[2], encoding="utf-8").read())
        print(f"OK checkpoint {origin} size {size} root {base64.b64encode(root).decode()}")
    elif command == "bundle":
        origin, size, n = verify_bundle(key, json.load(open(argv[2], encoding="utf-8")))
        print(f"OK {n} records of {origin} proved against its signed checkpoint of size {size}")
    elif command == "consistency":
        old = open_checkpoint(key, open(argv[2], encoding="utf-8").read())
        new = open_checkpoint(key, open(argv[3], encoding="utf-8").read())
        if old[0] != new[0]:
            raise Failed("the checkpoints are of different logs")
        hashes = []
        if len(argv) > 4:
            proof = json.load(open(argv[4], encoding="utf-8"))
            if (proof["first"], proof["second"]) != (old[1], new[1]):
                raise Failed("the proof is between other tree sizes")
            hashes = [base64.b64decode(h) for h in proof["hashes"]]
        verify_consistency(old[1], new[1], old[2], new[2], hashes)
        print(f"OK {new[0]} of size {new[1]} extends the checkpoint of size {old[1]} you kept")
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Failed as e:
        print(f"FAILED {e}", file=sys.stderr)
        sys.exit(1)
