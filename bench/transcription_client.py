"""Drives bench/transcription.sh: uploads each LibriVox recording, records consent, transcribes it through the
API, and scores the transcripts (standard library only)."""

import base64
import json
import sys
import time
import urllib.request


def words(text):
    out = []
    for w in text.split():
        if w in ("<s>", "</s>"):
            continue
        w = "".join(c for c in w if c.isalnum() or c == "'").lower()
        if w:
            out.append(w)
    return out


def edits(reference, hypothesis):
    """Word-level Levenshtein distance and the reference's word count (the scorer fiscus_speech::wer uses)."""
    r, h = words(reference), words(hypothesis)
    row = list(range(len(h) + 1))
    for i, rw in enumerate(r):
        diagonal, row[0] = row[0], i + 1
        for j, hw in enumerate(h):
            substitution = diagonal + (rw != hw)
            diagonal = row[j + 1]
            row[j + 1] = min(substitution, row[j] + 1, row[j + 1] + 1)
    return row[len(h)], len(r)


def by_id(path):
    out = {}
    for line in open(path, encoding="utf-8"):
        if "(" not in line:
            continue
        text, rest = line.rsplit("(", 1)
        out[rest.strip(" )\n").split()[0]] = text.strip()
    return out


def call(base, key, method, path, body):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), method=method,
                                 headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=300) as r:
        return json.loads(r.read())


def main(base, key, data):
    reference = by_id(f"{data}/transcription")
    documented = by_id(f"{data}/test-lm.match")
    ours = theirs = total = 0
    audio_ms = busy = 0.0
    print(f"{'recording':44} {'errors':>7} {'documented':>10} {'words':>6}  transcript")
    for rid, text in sorted(reference.items()):
        c = call(base, key, "POST", "/api/v2/client-intelligence/calls", {"title": f"LibriVox {rid}"})
        audio = base64.b64encode(open(f"{data}/{rid}.wav", "rb").read()).decode()
        rec = call(base, key, "POST", f"/api/v2/client-intelligence/calls/{c['id']}/recordings",
                   {"media_type": "audio/wav", "content_base64": audio})
        call(base, key, "POST", f"/api/v2/client-intelligence/calls/{c['id']}/consent",
             {"basis": "captured", "method": "recorded_notice", "captured_at": "2026-11-26T00:00:00Z"})
        started = time.monotonic()
        t = call(base, key, "POST", f"/api/v2/client-intelligence/calls/{c['id']}/transcribe-recording", {"language": "en"})
        busy += time.monotonic() - started
        audio_ms += rec["duration_ms"]
        e, n = edits(text, t["text"])
        d, _ = edits(text, documented[rid])
        ours, theirs, total = ours + e, theirs + d, total + n
        print(f"{rid:44} {e:>7} {d:>10} {n:>6}  {t['text']}")
    wer, documented_wer = ours / total, theirs / total
    print()
    print(f"WER {wer:.4f} ({ours}/{total} words); documented for this model: {documented_wer:.4f} ({theirs}/{total})")
    print(f"real-time factor {busy / (audio_ms / 1000):.3f} ({busy:.2f} s for {audio_ms / 1000:.1f} s of audio, "
          "the first transcription includes loading the model)")
    verdict = "PASS" if ours <= theirs else "FAIL"
    print(f"{verdict}: WER at or below the documented one")
    sys.exit(0 if verdict == "PASS" else 1)


if __name__ == "__main__":
    main(*sys.argv[1:4])
