"""Validates the served OpenAPI document as OpenAPI 3.1 with openapi-spec-validator.

Usage: validate_openapi.py BASE_URL
"""
import sys

import requests
from openapi_spec_validator import validate
from openapi_spec_validator.validation import OpenAPIV31SpecValidator


def main() -> int:
    doc = requests.get(f"{sys.argv[1]}/api/v2/openapi.json", timeout=10).json()
    assert doc["openapi"].startswith("3.1"), doc["openapi"]
    validate(doc, cls=OpenAPIV31SpecValidator)
    print(f"openapi {doc['openapi']}: valid, {len(doc['paths'])} paths")
    return 0


if __name__ == "__main__":
    sys.exit(main())
