"""Validates lifecycle events read from Fiscus's outbox against the `Event` schema of the served OpenAPI
document, with jsonschema (Draft 2020-12, the dialect of OpenAPI 3.1): the envelope webhooks will deliver
must be exactly what the document promises.

Usage: validate_events.py BASE_URL EVENTS_JSON_FILE   (the file holds a JSON array of events)
"""
import json
import sys

import requests
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from validate_openapi import DOC_URI, _rebase


def main() -> int:
    doc = requests.get(f"{sys.argv[1]}/api/v2/openapi.json", timeout=10).json()
    with open(sys.argv[2], encoding="utf-8") as f:
        events = json.load(f)
    registry = Registry().with_resource(DOC_URI, Resource.opaque(doc))
    schema = _rebase({"$ref": "#/components/schemas/Event"})
    validator = Draft202012Validator({"$id": "urn:fiscus:event", **schema}, registry=registry)
    wrong = []
    for event in events:
        errors = sorted(validator.iter_errors(event), key=lambda e: list(e.path))
        if errors:
            wrong.append(f"{event.get('type')} {event.get('id')}: {errors[0].message} at {list(errors[0].path)}")
    for w in wrong:
        print(f"event does not match the Event schema: {w}")
    types = sorted({e["type"] for e in events})
    print(f"{len(events)} events checked, {len(wrong)} wrong; types: {', '.join(types)}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
