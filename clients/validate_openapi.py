"""Validates the served OpenAPI document as OpenAPI 3.1 with openapi-spec-validator, and every example it
carries (request bodies, responses, parameters) against its own schema with jsonschema (Draft 2020-12, the
dialect of OpenAPI 3.1), so that no example contradicts the contract it illustrates.

Usage: validate_openapi.py BASE_URL
"""
import sys

import requests
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate
from openapi_spec_validator.validation import OpenAPIV31SpecValidator
from referencing import Registry, Resource

DOC_URI = "urn:fiscus:openapi"


def examples(doc):
    """(where, schema, example) for every example in the document."""
    for path, item in doc["paths"].items():
        for method, op in item.items():
            where = f"{method.upper()} {path}"
            for content_type, media in op.get("requestBody", {}).get("content", {}).items():
                if "example" in media:
                    yield f"{where} request {content_type}", media["schema"], media["example"]
            for status, response in op.get("responses", {}).items():
                for content_type, media in response.get("content", {}).items():
                    if "example" in media:
                        yield f"{where} {status} {content_type}", media["schema"], media["example"]
            for parameter in op.get("parameters", []):
                if "example" in parameter and "schema" in parameter:
                    yield f"{where} parameter {parameter['name']}", parameter["schema"], parameter["example"]
    for name, schema in doc.get("components", {}).get("schemas", {}).items():
        if "example" in schema:
            yield f"components/schemas/{name}", {"$ref": f"#/components/schemas/{name}"}, schema["example"]


def main() -> int:
    doc = requests.get(f"{sys.argv[1]}/api/v2/openapi.json", timeout=10).json()
    assert doc["openapi"].startswith("3.1"), doc["openapi"]
    validate(doc, cls=OpenAPIV31SpecValidator)
    # The whole document is one resource, so `#/components/...` references inside schemas resolve in it.
    registry = Registry().with_resource(DOC_URI, Resource.opaque(doc))
    checked, wrong = 0, []
    for where, schema, example in examples(doc):
        validator = Draft202012Validator({"$id": "urn:fiscus:example", **_rebase(schema)}, registry=registry)
        errors = sorted(validator.iter_errors(example), key=lambda e: list(e.path))
        checked += 1
        if errors:
            wrong.append(f"{where}: {errors[0].message} at {list(errors[0].path)}")
    for w in wrong:
        print(f"example does not match its schema: {w}")
    print(f"openapi {doc['openapi']}: valid, {len(doc['paths'])} paths, {checked} examples checked")
    return 1 if wrong else 0


def _rebase(schema):
    """Points local `#/components/...` references at the document in the registry."""
    if isinstance(schema, dict):
        return {k: (DOC_URI + v if k == "$ref" and v.startswith("#/") else _rebase(v)) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_rebase(v) for v in schema]
    return schema


if __name__ == "__main__":
    sys.exit(main())
