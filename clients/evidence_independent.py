#!/usr/bin/env python3
"""Checks Fiscus's transparency log with an independent, published RFC 9162 implementation: pymerkle
(https://pypi.org/project/pymerkle/, pinned in requirements.txt), whose hashing with `security=True` is RFC
6962/9162's (leaf 0x00 || data, node 0x01 || left || right).

Input (JSON on stdin): the log's entries as a mirror downloads them (`entries`, base64, from the tiles), the
checkpoints to check (`checkpoints`: size and base64 root), and Fiscus's inclusion proofs (`proofs`: leaf
index, tree size, entry and RFC 9162 path, base64). It

1. builds the tree with pymerkle from the entries and requires its root at every checkpoint's size to be the
   checkpoint's root;
2. verifies each of Fiscus's inclusion proofs with pymerkle's verifier (the path given as pymerkle's proof
   object: the leaf hash followed by Fiscus's path, with the resolution bits pymerkle itself derives from the
   leaf index and tree size, which its verifier checks again);
3. verifies, with pymerkle's consistency proofs between every pair of checkpoints, that the later root
   extends the earlier.

Prints one line per check; exits 1 on the first failure.
"""

import base64
import json
import sys

from pymerkle import InmemoryTree, verify_consistency, verify_inclusion
from pymerkle.core import _inclusion_path_layout
from pymerkle.proof import InclusionProof


def main():
    data = json.load(sys.stdin)
    # Security on (the default): the RFC 9162 domain prefixes.
    tree = InmemoryTree(algorithm="sha256", disable_security=False)
    for entry in data["entries"]:
        tree.append_entry(base64.b64decode(entry))
    checkpoints = [(c["size"], base64.b64decode(c["root"])) for c in data["checkpoints"]]
    for size, root in checkpoints:
        if tree.get_state(size) != root:
            sys.exit(f"FAILED pymerkle's root of the first {size} entries is not the checkpoint's")
        print(f"OK root at size {size}")
    for p in data["proofs"]:
        index, size = p["leaf_index"] + 1, p["tree_size"]
        leaf = tree.hash_buff(p["entry"].encode())
        path = [leaf] + [base64.b64decode(h) for h in p["hashes"]]
        rule, _ = _inclusion_path_layout(index, size)
        proof = InclusionProof("sha256", True, size, index, rule, path)
        root = dict(checkpoints)[size]
        verify_inclusion(leaf, root, proof, index=index, size=size)
        print(f"OK inclusion of leaf {p['leaf_index']} in size {size}")
    for i, (first, first_root) in enumerate(checkpoints):
        for second, second_root in checkpoints[i + 1:]:
            verify_consistency(first_root, second_root, tree.prove_consistency(first, second))
            print(f"OK consistency {first} -> {second}")


if __name__ == "__main__":
    main()
