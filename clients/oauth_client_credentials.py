"""An unmodified OAuth 2.0 client library (Authlib) against Fiscus.

Usage: oauth_client_credentials.py BASE_URL CLIENT_ID CLIENT_SECRET

Discovers the token endpoint from the RFC 8414 metadata, obtains a token with the client credentials grant
(HTTP Basic, Authlib's default, then form-field authentication), calls the API with it, and revokes it.
Prints one line per step; exits non-zero on the first failure.
"""
import sys

import requests
from authlib.integrations.requests_client import OAuth2Session


def main() -> int:
    base, client_id, client_secret = sys.argv[1:4]
    meta = requests.get(f"{base}/.well-known/oauth-authorization-server", timeout=10).json()
    token_endpoint = meta["token_endpoint"]
    print(f"discovered {token_endpoint}")

    for auth_method in ("client_secret_basic", "client_secret_post"):
        session = OAuth2Session(
            client_id,
            client_secret,
            scope="workspace:read trust:read",
            token_endpoint_auth_method=auth_method,
        )
        token = session.fetch_token(token_endpoint, grant_type="client_credentials")
        assert token["token_type"] == "Bearer", token
        assert token["scope"] == "trust:read workspace:read", token
        print(f"{auth_method}: token expires in {token['expires_in']} s, scope {token['scope']}")

        workspace = session.get(f"{base}/api/v2/workspace", timeout=10)
        workspace.raise_for_status()
        body = workspace.json()
        assert body["caller"]["credential_kind"] == "access_token", body
        print(f"{auth_method}: read workspace {body['id']}")

        refused = session.get(f"{base}/api/v2/ai-credits/balance", timeout=10)
        assert refused.status_code == 403, refused.status_code
        assert refused.json()["required_scope"] == "ai:credits:read"

        session.revoke_token(meta["revocation_endpoint"], token=token["access_token"])
        after = session.get(f"{base}/api/v2/workspace", timeout=10)
        assert after.status_code == 401, after.status_code
        print(f"{auth_method}: revoked token refused")
    print("authlib: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
