"""RFC 9421 request signing (Ed25519) with the unmodified `http-message-signatures` package, shared by the
client scripts: the key resolver, and an auth hook for the `httpx`-style client an SDK is given.
"""
import datetime
import secrets

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from http_message_signatures import HTTPMessageSigner, HTTPSignatureKeyResolver, algorithms


class Keys(HTTPSignatureKeyResolver):
    """One signed client's key: its id (the `keyid`) and its Ed25519 private key."""

    def __init__(self, key_id: str, private_key: Ed25519PrivateKey):
        self.key_id, self.private_key = key_id, private_key

    @classmethod
    def from_hex(cls, key_id: str, private_key_hex: str) -> "Keys":
        return cls(key_id, Ed25519PrivateKey.from_private_bytes(bytes.fromhex(private_key_hex)))

    def resolve_private_key(self, key_id: str):
        assert key_id == self.key_id, key_id
        return self.private_key

    def resolve_public_key(self, key_id: str):
        return self.private_key.public_key() if key_id == self.key_id else None


def sign_every_request(auth_base, keys: Keys):
    """An auth hook (a subclass of `auth_base`: `httpx.Auth` or the MCP SDK's `httpx2.Auth`) that signs each
    request: method, target URI and, with a body, its Content-Digest; a fresh nonce each time."""
    signer = HTTPMessageSigner(signature_algorithm=algorithms.ED25519, key_resolver=keys)

    class SignEveryRequest(auth_base):
        requires_request_body = True

        def auth_flow(self, request):
            body = request.content
            signer.sign(
                request,
                key_id=keys.key_id,
                created=datetime.datetime.now(datetime.timezone.utc),
                nonce=secrets.token_urlsafe(16),
                covered_component_ids=("@method", "@target-uri"),
                **({"body": body} if body else {}),
            )
            yield request

    return SignEveryRequest()
