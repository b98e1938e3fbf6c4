"""An unmodified RFC 9421 signing library (`http-message-signatures`) against Fiscus's agent gateway.

Usage: http_signatures.py BASE_URL CLIENT_ID PRIVATE_KEY_HEX

The client was registered with the public half of the Ed25519 key and granted at the console (the Rust test
does both). Signs requests the way an agent developer would with the library's documented API, adding the
RFC 9530 Content-Digest through the library itself, and checks that Fiscus accepts them and refuses a
replay, a body changed after signing and a signature by another key. Prints one line per step; exits
non-zero on the first failure.
"""
import datetime
import secrets
import sys

import requests
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from http_message_signatures import HTTPMessageSigner, algorithms
from signing import Keys


def signed(keys: Keys, method: str, url: str, body=None) -> requests.PreparedRequest:
    request = requests.Request(method, url, json=body).prepare()
    components = ("@method", "@target-uri", "@authority")
    extra = {}
    if body is not None:
        components += ("content-type",)
        extra["body"] = request.body  # the library adds and covers Content-Digest: sha-256=:…:
    HTTPMessageSigner(signature_algorithm=algorithms.ED25519, key_resolver=keys).sign(
        request,
        key_id=keys.key_id,
        created=datetime.datetime.now(datetime.timezone.utc),
        nonce=secrets.token_urlsafe(16),
        covered_component_ids=components,
        **extra,
    )
    return request


def expect(response: requests.Response, status: int, code=None) -> dict:
    body = response.json()
    assert response.status_code == status, (response.status_code, body)
    if code is not None:
        assert body["code"] == code, body
    return body


def main() -> int:
    base, client_id, key_hex = sys.argv[1:4]
    keys = Keys.from_hex(client_id, key_hex)
    http = requests.Session()

    caps = expect(http.send(signed(keys, "GET", f"{base}/api/v2/agent-execution/capabilities")), 200)
    assert caps["authentication"] == "signature" and caps["client_id"] == client_id, caps
    print(f"capabilities: {len(caps['operations'])} operations, kinds {caps['action_kinds']}")

    proposal = {
        "kind": "payment", "amount_minor": 125000, "currency": "USD", "counterparty": "cp_acme",
        "connector": "sandbox", "execution_mode": "human_approved", "risk_tier": "T1",
        "reference": "INV-PY-1", "required_checks": [],
    }
    request = signed(keys, "POST", f"{base}/api/v2/agent-execution/proposals", proposal)
    print(f"Signature-Input: {request.headers['Signature-Input']}")
    draft = expect(http.send(request), 201)
    assert draft["control_state"] == "draft", draft
    print(f"proposal {draft['id']} recorded as a draft")

    expect(http.send(request), 401, "signature_replayed")
    print("the same signed request again: refused as a replay")

    tampered = signed(keys, "POST", f"{base}/api/v2/agent-execution/proposals", proposal)
    tampered.body = tampered.body.replace(b"125000", b"999999")
    expect(http.send(tampered), 401, "invalid_signature")
    print("a body changed after signing: refused")

    stranger = Keys(client_id, Ed25519PrivateKey.generate())
    expect(http.send(signed(stranger, "GET", f"{base}/api/v2/agent-execution/capabilities")), 401, "invalid_signature")
    print("another key under the same keyid: refused")
    print("http-message-signatures: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
