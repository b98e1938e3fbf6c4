"""Real Fiscus webhook deliveries verified by the unmodified `standardwebhooks` and `svix` libraries.

Usage: webhook_verify.py SECRET DELIVERIES_JSON

DELIVERIES_JSON holds the requests a receiver got: [{"id", "timestamp", "signature", "body"}]. Each must
verify with both libraries, and the same request with its body changed must be refused by both.
Prints one line per delivery; exits non-zero on the first failure.
"""
import json
import sys

from standardwebhooks.webhooks import Webhook as StandardWebhook
from svix.webhooks import Webhook as SvixWebhook, WebhookVerificationError as SvixError
from standardwebhooks.webhooks import WebhookVerificationError as StandardError


def main() -> int:
    secret, path = sys.argv[1:3]
    with open(path) as f:
        deliveries = json.load(f)
    assert deliveries, "no deliveries"
    standard, svix = StandardWebhook(secret), SvixWebhook(secret)
    for d in deliveries:
        headers = {"webhook-id": d["id"], "webhook-timestamp": d["timestamp"], "webhook-signature": d["signature"]}
        event = standard.verify(d["body"], headers)
        assert event["id"] == d["id"], event
        svix_headers = {"svix-id": d["id"], "svix-timestamp": d["timestamp"], "svix-signature": d["signature"]}
        # svix raises on a bad signature (what it returns differs between its versions).
        svix.verify(d["body"], svix_headers)
        svix.verify(d["body"], headers)
        tampered = d["body"].replace('"sandbox"', '"production"')
        assert tampered != d["body"]
        for verifier, error in ((standard, StandardError), (svix, SvixError)):
            try:
                verifier.verify(tampered, headers)
                raise AssertionError("a changed body was accepted")
            except error:
                pass
        print(f"{d['id']} {event['type']}: verified by standardwebhooks and svix; a changed body refused by both")
    print("webhook verifiers: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
