"""Schemathesis (unmodified) against a live Fiscus: every check, phases examples, coverage, fuzzing and stateful,
on every operation of the server's own OpenAPI document (/api/v2/openapi.json).

Usage: schemathesis_run.py BASE_URL API_KEY CLIENT_ID CLIENT_SECRET [IDS_JSON]

  API_KEY          a sandbox key of an application holding every scope the document names
  CLIENT_ID/SECRET an OAuth client of that application (for /oauth/token, /oauth/revoke, /oauth/introspect)
  IDS_JSON         optional file of real ids: {"action_id", "checks_action_id", "execute_action_id",
                   "draft_action_id", "identity_id", "delegation_id", "agent_request_id", "evidence_id"};
                   every id it lacks is created here through the API with API_KEY (see `seed`).

Knobs (environment):
  FISCUS_ST_MAX_TIME      whole-run budget in seconds, default 180: examples and coverage run once, then
                          fuzzing and stateful repeat until it is spent (so the run takes about this long)
  FISCUS_ST_MAX_EXAMPLES  cases per operation and fuzzing/stateful round, default 30
  FISCUS_ST_WORKERS       concurrent workers, default 1: the server shares the 2 cores, and with 2 workers
                          CPython 3.11.7 (python3 here) fails Hypothesis's ast.parse now and then
                          ("AST constructor recursion depth mismatch", CPython gh-106905)
  FISCUS_ST_SEED          Hypothesis seed, for a reproducible run
  FISCUS_ST_RATE_LIMIT    client-side request rate, e.g. `5000/m` (Schemathesis syntax); unset = no limit
  FISCUS_ST_REPORT_DIR    where reports go (junit.xml, events.ndjson of about 50 MB, ids.json), default
                          target/schemathesis of this repository
  FISCUS_ST_SCHEMA        another OpenAPI document (path or URL) to test the server against, e.g. a
                          candidate fix of the served one; default BASE_URL/api/v2/openapi.json

Prints Schemathesis's own report, one `failure:` line per (operation, check, failure) with its count, then
  schemathesis: N requests, N failures, N errors, N answered 429, exit N, in N s
and exits non-zero on any failure or error (Schemathesis's exit code included).

This module is also the Schemathesis hooks module (`hooks = "schemathesis_run"` in schemathesis.toml): the
`before_call` hook below runs inside the Schemathesis process: a fresh Idempotency-Key on every POST, the
seeded ids in `uid` path parameters, the OAuth client's credentials (HTTP Basic, or the form fields when the
drawn form has them) and a live token on the OAuth endpoints, and the few rules JSON Schema cannot state (a
real Ed25519 point; a CSV file of its kind) applied to well-formed drawn values. The evidence record is seeded so that every list has rows to validate.
"""
import base64
import json
import math
import os
import re
import subprocess
import sys
import time
import uuid

import requests
import schemathesis

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, "schemathesis.toml")

# ----- hooks (run inside Schemathesis) ----------------------------------------------------------------------

# The server's rule for a usable key: 1 to 255 printable ASCII characters or spaces.
_VALID_KEY = re.compile(r"^[\x20-\x7e]{1,255}$")

# Which seeded id each object-addressing operation gets in its `uid` path parameter.
REAL_IDS = {
    ("GET", "/api/v2/actions/{uid}"): "action_id",
    ("GET", "/api/v2/agent-execution/actions/{uid}"): "action_id",
    ("GET", "/api/v2/agent-execution/actions/{uid}/assurance"): "action_id",
    ("GET", "/api/v2/agent-execution/actions/{uid}/reconciliation"): "action_id",
    # Its own action, so that new check versions never meet an action an execution has closed.
    ("POST", "/api/v2/actions/investment-execution/{uid}/checks"): "checks_action_id",
    ("POST", "/api/v2/actions/{uid}/execute"): "execute_action_id",
    ("POST", "/api/v2/agent-execution/actions/{uid}/execute"): "execute_action_id",
    ("POST", "/api/v2/agent-execution/actions/{uid}/submit"): "draft_action_id",
    ("GET", "/api/v2/actions/agentic/identities/{uid}"): "identity_id",
    ("POST", "/api/v2/actions/agentic/identities/{uid}/delegations"): "identity_id",
    ("GET", "/api/v2/actions/agentic/delegations/{uid}"): "delegation_id",
    ("GET", "/api/v2/agent-execution/requests/{uid}"): "agent_request_id",
    ("GET", "/api/v2/quant/compute/jobs/{uid}"): "compute_job_id",
    ("POST", "/api/v2/quant/compute/jobs/{uid}/cancel"): "compute_job_id",
    ("GET", "/api/v2/generative/runs/{uid}"): "generative_run_id",
    ("GET", "/api/v2/quant/model-tournaments/{uid}"): "tournament_id",
    ("GET", "/api/v2/quant/research/snapshots/{uid}"): "research_snapshot_id",
    ("GET", "/api/v2/investment/model-portfolios/{uid}"): "model_portfolio_id",
    ("GET", "/api/v2/investment/governed-ai-operations/{uid}"): "operation_id",
    ("POST", "/api/v2/investment/governed-ai-operations/{uid}/rebalance"): "operation_id",
    ("GET", "/api/v2/investment/risk-compliance/runs/{uid}"): "risk_compliance_run_id",
    ("GET", "/api/v2/lqm/models/{uid}"): "lqm_model_id",
    ("GET", "/api/v2/lqm/models/{uid}/developer-manifest"): "lqm_model_id",
    ("GET", "/api/v2/lqm/models/{uid}/promotions"): "lqm_model_id",
    ("POST", "/api/v2/lqm/models/{uid}/retraining-requests"): "lqm_model_id",
    ("GET", "/api/v2/lqm/contracts/{uid}"): "lqm_contract_id",
    ("GET", "/api/v2/workflow-studio/versions/{uid}"): "workflow_version_id",
    ("POST", "/api/v2/workflow-studio/versions/{uid}/validate"): "workflow_version_id",
    ("GET", "/api/v2/workflow-studio/campaigns/{uid}"): "workflow_campaign_id",
    ("GET", "/api/v2/workflows/runs/{uid}"): "workflow_run_id",
    ("POST", "/api/v2/workflows/runs/{uid}/cancel"): "workflow_run_id",
    ("GET", "/api/v2/agents/spaces/{uid}"): "agent_space_id",
    ("POST", "/api/v2/agents/spaces/{uid}/runs"): "agent_space_id",
    ("GET", "/api/v2/agents/executions/{uid}"): "agent_execution_id",
    ("GET", "/api/v2/client-intelligence/calls/{uid}"): "call_id",
    ("POST", "/api/v2/client-intelligence/calls/{uid}/recordings"): "call_id",
    ("POST", "/api/v2/client-intelligence/calls/{uid}/consent"): "call_id",
    ("POST", "/api/v2/client-intelligence/calls/{uid}/transcribe-recording"): "call_id",
}
# The same for operations whose path names its object otherwise: (parameter, seeded id).
REAL_PARAM_IDS = {
    # The seeded request was made by the run's own credential: a decision answers 403 (its maker may not
    # review it), training 409 (nothing approved it).
    ("GET", "/api/v2/lqm/retraining-requests/{requestUid}"): ("requestUid", "lqm_request_id"),
    ("POST", "/api/v2/lqm/retraining-requests/{requestUid}/decision"): ("requestUid", "lqm_request_id"),
    ("POST", "/api/v2/lqm/retraining-requests/{requestUid}/training"): ("requestUid", "lqm_request_id"),
    ("GET", "/api/v2/agents/runs/{runUid}"): ("runUid", "agent_run_id"),
}
_IDS = json.loads(os.environ.get("FISCUS_ST_IDS") or "{}")
# The data plane's path keys, from the demo data the test loads: (parameter, value).
DATA_KEYS = {
    ("GET", "/api/v2/data/instruments/{uid}"): ("uid", "AAPL"),
    ("GET", "/api/v2/data/instruments/{uid}/prices"): ("uid", "AAPL"),
    ("GET", "/api/v2/data/instruments/{uid}/corporate-actions"): ("uid", "AAPL"),
    ("GET", "/api/v2/data/instruments/{uid}/fundamentals"): ("uid", "AAPL"),
    ("GET", "/api/v2/data/economics/series/{key}"): ("key", "cpilfesl"),
    ("GET", "/api/v2/data/economics/series/{key}/observations"): ("key", "cpilfesl"),
    ("GET", "/api/v2/quant/features/{key}"): ("key", "volatility_21d"),
    ("GET", "/api/v2/quant/features/{key}/values"): ("key", "volatility_21d"),
    ("GET", "/api/v2/quant/models/{key}"): ("key", "holt_winters"),
    ("POST", "/api/v2/quant/models/{key}/run"): ("key", "robust_z"),
    # The demo book's first portfolio (GROWTH) and a held company.
    ("GET", "/api/v2/investment/portfolios/{portfolio}/tax-lots"): ("portfolio", 1),
    ("POST", "/api/v2/investment/portfolios/{portfolio}/tax-harvest"): ("portfolio", 1),
    ("POST", "/api/v2/investment/portfolios/{portfolio}/scenarios"): ("portfolio", 1),
    ("POST", "/api/v2/investment/portfolios/{portfolio}/construct"): ("portfolio", 1),
    ("POST", "/api/v2/investment/portfolios/{portfolio}/collateral-inventory"): ("portfolio", "GROWTH"),
    ("GET", "/api/v2/investment/companies/{symbol}"): ("symbol", "AAPL"),
    # The first universe, which the seed hands off (the demo data has none).
    ("GET", "/api/v2/investment/themes/universes/{universe}"): ("universe", 1),
    ("POST", "/api/v2/investment/themes/universes/{universe}/model-portfolio"): ("universe", 1),
    ("POST", "/api/v2/investment/themes/universes/{universe}/handoff"): ("universe", 1),
    # The demo's S&P 500 index closes, which models may learn from.
    ("POST", "/api/v2/lqm/datasets/{dataset}/contracts"): ("dataset", 4),
    # A library template (the seed installs another, so this one installs once, then is 409).
    ("POST", "/api/v2/workflows/library/{key}/install"): ("key", "liquidity_report"),
}
VALID_CSV = {
    "ledgers": "code,name,currency\nGL-ST,Schemathesis Ledger,USD\n",
    "entities": "code,name,ledger,currency\nST-ENTITY,Schemathesis Entity,GL-US,USD\n",
    "journals": "entry,date,ledger,entity,account,debit,credit,currency\n"
    "ST-1,2024-03-31,GL-US,SAMPLE-US-OPCO,1000,1.00,,USD\nST-1,2024-03-31,GL-US,SAMPLE-US-OPCO,2000,,1.00,USD\n",
    "transactions": "account,id,booking_date,amount,currency\nST-ACCOUNT,ST-1,2024-03-01,10.00,USD\n",
    "balances": "account,date,type,amount,currency\nST-ACCOUNT,2024-03-01,closing_booked,10.00,USD\n",
}
_SYMBOL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@schemathesis.hook
def before_call(context, case, kwargs):
    _real_id(case)
    _idempotency_key(case)
    _business_rules(case)
    _oauth_client(case)


def _oauth_client(case):
    """The OAuth client's real credentials: as the form fields when the drawn form has them (well-formed drawn
    values are replaced), else by HTTP Basic; and the live access token for a drawn `token`."""
    if not case.path.startswith("/api/v2/oauth/"):
        return
    client_id = os.environ.get("FISCUS_ST_CLIENT_ID", "")
    client_secret = os.environ.get("FISCUS_ST_CLIENT_SECRET", "")
    body = case.body
    in_form = isinstance(body, dict) and "client_secret" in body
    if isinstance(body, dict):
        changed = dict(body)
        for name, real in (
            ("client_id", client_id),
            ("client_secret", client_secret),
            ("token", os.environ.get("FISCUS_ST_ACCESS_TOKEN", "")),
        ):
            if isinstance(changed.get(name), str) and changed[name]:
                changed[name] = real
        if changed != body:
            case.body = changed
    headers = dict(case.headers or {})
    if not in_form and not any(k.lower() == "authorization" for k in headers):
        headers["Authorization"] = "Basic " + base64.b64encode(f"{client_id}:{client_secret}".encode()).decode()
        case.headers = headers


def _real_id(case):
    """A drawn `uid` is almost never an object of the workspace, so the operation would only ever answer 404.
    In the examples, coverage and fuzzing phases a well-formed drawn `uid` becomes the seeded id; a negative
    case about the path itself is sent as drawn. Stateful steps keep the id their link carried from a response
    (and a first step keeps its drawn one, which exercises the 404 answers)."""
    meta = case.meta
    if meta is None or meta.phase.name == "stateful":
        return
    data_key = DATA_KEYS.get((case.method.upper(), case.path))
    if data_key is not None:
        param, value = data_key
        path = next((c for loc, c in meta.components.items() if loc == "path"), None)
        if case.path_parameters and param in case.path_parameters and not (path is not None and path.mode.is_negative):
            case.path_parameters = {**case.path_parameters, param: value}
        return
    param_id = REAL_PARAM_IDS.get((case.method.upper(), case.path))
    if param_id is not None:
        param, name = param_id
        path = next((c for loc, c in meta.components.items() if loc == "path"), None)
        if name in _IDS and case.path_parameters and param in case.path_parameters \
                and not (path is not None and path.mode.is_negative):
            case.path_parameters = {**case.path_parameters, param: _IDS[name]}
        return
    name = REAL_IDS.get((case.method.upper(), case.path))
    if name is None or name not in _IDS or not case.path_parameters or "uid" not in case.path_parameters:
        return
    path = next((c for loc, c in meta.components.items() if loc == "path"), None)
    if path is not None and path.mode.is_negative:
        return
    case.path_parameters = {**case.path_parameters, "uid": _IDS[name]}


def _idempotency_key(case):
    """Every POST of the bearer API carries a fresh `Idempotency-Key`, as a client following the conventions
    would. Generated keys are few and short ("0", "00", …) and would repeat across different bodies, which
    the server rightly refuses (409 `idempotency_key_reused`); so a well-formed key is replaced by a new UUID,
    while a malformed one (a negative case about the header itself) is sent as drawn. The OAuth endpoints are
    outside the Idempotency-Key contract."""
    if case.method.upper() != "POST" or case.path.startswith("/api/v2/oauth/"):
        return
    headers = dict(case.headers or {})
    name = next((k for k in headers if k.lower() == "idempotency-key"), None)
    if name is None:
        headers["Idempotency-Key"] = str(uuid.uuid4())
    elif isinstance(headers[name], str) and _VALID_KEY.match(headers[name]):
        headers[name] = str(uuid.uuid4())
    else:
        return
    case.headers = headers


# Rules JSON Schema cannot state, which the server enforces (each is in the field's description). A drawn value
# that is well-formed is made to satisfy the rule, so positive cases stay positive; anything else is sent as
# drawn.
_CANONICAL_KEY = re.compile(r"^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _business_rules(case):
    query = case.query
    if case.method.upper() == "GET" and isinstance(query, dict):
        # A date range's `end` must not be before its `start` (the data plane's reads).
        start, end = query.get("start"), query.get("end")
        if isinstance(start, str) and isinstance(end, str) and _DATE.match(start) and _DATE.match(end) and end < start:
            query = {**query, "start": end, "end": start}
        # A feature's instrument: a well-formed drawn symbol becomes one the workspace holds.
        if case.path == "/api/v2/quant/features/{key}/values" and isinstance(query.get("instrument"), str) \
                and _SYMBOL.match(query["instrument"]):
            query = {**query, "instrument": "AAPL"}
        # Investment reads: a drawn portfolio id becomes the demo's first portfolio, and a well-formed drawn
        # benchmark a symbol the workspace holds prices for.
        if case.path in ("/api/v2/investment/risk", "/api/v2/benchmarking/comparisons"):
            if isinstance(query.get("portfolio_id"), int) and query["portfolio_id"] >= 1:
                query = {**query, "portfolio_id": 1}
            if isinstance(query.get("benchmark"), str) and _SYMBOL.match(query["benchmark"]):
                query = {**query, "benchmark": "SPX"}
        if query != case.query:
            case.query = query
    # A `text/csv` import needs its kind, file name, source and licence as query parameters; with a JSON body
    # they are members of the body, so the document cannot mark them required (parameters apply to every
    # media type of a body). A drawn CSV import lacking one gets the example's.
    if case.method.upper() == "POST" and case.path == "/api/v2/data/imports" and \
            (getattr(case, "media_type", "") or "").startswith("text/csv"):
        query = dict(case.query or {})
        for name, value in (("kind", "prices"), ("file_name", "prices.csv"),
                            ("source", "exchange end-of-day file"), ("licence", "proprietary")):
            query.setdefault(name, value)
        case.query = query
    # An import's strftime `date_format` must name a year, a month and a day with fields strftime has, which
    # no pattern without look-around can say: a drawn pattern becomes one that does.
    if case.method.upper() == "POST" and case.path == "/api/v2/data/imports":
        builtin = ("iso", "mdy", "yyyymm", "year+quarter")
        if isinstance(case.query, dict) and case.query.get("date_format") not in (None, *builtin):
            case.query = {**case.query, "date_format": "%b %-d %Y"}
        if isinstance(case.body, dict) and case.body.get("date_format") not in (None, *builtin):
            case.body = {**case.body, "date_format": "%b %-d %Y"}
    body = case.body
    if case.method.upper() != "POST" or not isinstance(body, dict):
        return
    changed = dict(body)
    if case.path in ("/api/v2/investment/themes/universes", "/api/v2/investment/themes/universes/{universe}/handoff"):
        # A drawn member's well-formed symbol becomes one the workspace holds (each once).
        members = changed.get("members")
        if isinstance(members, list):
            held = ["AAPL", "MSFT", "JNJ", "PG", "KO", "PEP", "XOM", "CVX", "JPM", "BAC"]
            fixed = []
            for i, m in enumerate(members):
                if isinstance(m, dict) and isinstance(m.get("symbol"), str) and _SYMBOL.match(m["symbol"]) and i < len(held):
                    m = {**m, "symbol": held[i]}
                fixed.append(m)
            changed["members"] = fixed
    if case.path in ("/api/v2/investment/risk-compliance/runs", "/api/v2/investment/generative-markets/runs",
                     "/api/v2/investment/reports"):
        if isinstance(changed.get("portfolio_id"), int) and changed["portfolio_id"] >= 1:
            changed["portfolio_id"] = 1
    if case.path == "/api/v2/investment/governed-ai-operations":
        if isinstance(changed.get("model_portfolio"), str) and "model_portfolio_id" in _IDS:
            changed["model_portfolio"] = _IDS["model_portfolio_id"]
        if isinstance(changed.get("portfolio_id"), int):
            changed["portfolio_id"] = 1
    if case.path == "/api/v2/lqm/datasets/{dataset}/contracts":
        # The seeded model, and a well-formed drawn symbol becomes the one the contracted dataset holds.
        if isinstance(changed.get("model_uid"), str) and "lqm_model_id" in _IDS:
            changed["model_uid"] = _IDS["lqm_model_id"]
        target = changed.get("target")
        if isinstance(target, dict) and isinstance(target.get("symbol"), str) and _SYMBOL.match(target["symbol"]):
            changed["target"] = {**target, "symbol": "SPX"}
    if case.path == "/api/v2/workflows/runs":
        # The seeded version: a well-formed drawn id becomes it.
        if isinstance(changed.get("version_uid"), str) and "workflow_version_id" in _IDS:
            changed["version_uid"] = _IDS["workflow_version_id"]
    if case.path == "/api/v2/workflows/proof-of-value":
        if isinstance(changed.get("workflow_uid"), str) and "workflow_id" in _IDS:
            changed["workflow_uid"] = _IDS["workflow_id"]
    if case.path == "/api/v2/lqm/models/{uid}/retraining-requests":
        if isinstance(changed.get("contract_uid"), str) and "lqm_contract_id" in _IDS:
            changed["contract_uid"] = _IDS["lqm_contract_id"]
    if case.path == "/api/v2/data/imports":
        # A drawn CSV is never a valid file of its kind: a drawn string becomes one that is (referring to the
        # demo data's ledgers and entities), so positive cases import, or find the same file imported.
        kind = changed.get("kind")
        csv = VALID_CSV.get(kind) if isinstance(kind, str) else None
        if csv is not None and isinstance(changed.get("csv"), str):
            changed["csv"] = csv
    if case.path == "/api/v2/actions/agentic/identities":
        # A valid Ed25519 key is a point on the curve: about half of all 32-byte strings are not.
        key = changed.get("public_key")
        if isinstance(key, str) and _CANONICAL_KEY.match(key):
            changed["public_key"] = ed25519_public_key()
    if changed != body:
        case.body = changed


# ----- seeding real ids -------------------------------------------------------------------------------------


class Api:
    def __init__(self, base, key):
        self.base = base.rstrip("/")
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {key}"

    def post(self, path, body):
        r = self.session.post(
            f"{self.base}{path}", json=body, headers={"Idempotency-Key": str(uuid.uuid4())}, timeout=30
        )
        if r.status_code not in (200, 201, 202):
            raise SystemExit(f"seeding: POST {path} answered {r.status_code}: {r.text}")
        return r

    def get(self, path):
        r = self.session.get(f"{self.base}{path}", timeout=30)
        if r.status_code != 200:
            raise SystemExit(f"seeding: GET {path} answered {r.status_code}: {r.text}")
        return r


def proposal(reference):
    return {
        "kind": "payment",
        "amount_minor": 125000,
        "currency": "USD",
        "counterparty": "cp_schemathesis",
        "connector": "sandbox",
        "execution_mode": "human_approved",
        "risk_tier": "T1",
        "reference": reference,
        "required_checks": [],
        "metadata": {"seeded_by": "schemathesis_run.py"},
    }


def ed25519_public_key():
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    raw = Ed25519PrivateKey.generate().public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    return base64.b64encode(raw).decode()


def seed(base, key, client_id, client_secret, given):
    """Fills in every id `given` lacks, with objects created through the API itself."""
    api = Api(base, key)
    ids = dict(given)
    run = uuid.uuid4().hex[:8]
    if "action_id" not in ids:
        ids["action_id"] = api.post("/api/v2/actions", proposal(f"ST-{run}-READ")).json()["id"]
    if "checks_action_id" not in ids:
        ids["checks_action_id"] = api.post("/api/v2/actions", proposal(f"ST-{run}-CHECKS")).json()["id"]
    if "execute_action_id" not in ids:
        # Pending approval: only an operator at the console can approve, which a credential cannot do.
        ids["execute_action_id"] = api.post("/api/v2/actions", proposal(f"ST-{run}-EXEC")).json()["id"]
    if "draft_action_id" not in ids:
        draft = api.post("/api/v2/agent-execution/proposals", proposal(f"ST-{run}-DRAFT"))
        ids["draft_action_id"] = draft.json()["id"]
    if "identity_id" not in ids:
        body = {"name": f"schemathesis-{run}", "public_key": ed25519_public_key()}
        ids["identity_id"] = api.post("/api/v2/actions/agentic/identities", body).json()["id"]
    if "delegation_id" not in ids:
        body = {
            "action": "payment",
            "counterparty": "cp_schemathesis",
            "connector": "sandbox",
            "currency": "USD",
            "execution_mode": "machine_delegated",
            "risk_tier": "T1",
            "per_action_budget_minor": 100000,
            "daily_budget_minor": 1000000,
            "monthly_budget_minor": 10000000,
            "valid_for_days": 30,
        }
        path = f"/api/v2/actions/agentic/identities/{ids['identity_id']}/delegations"
        ids["delegation_id"] = api.post(path, body).json()["id"]
    if "agent_request_id" not in ids:
        # Every agent-gateway request is sealed evidence, named in the response's Agent-Request-Id.
        r = api.get(f"/api/v2/agent-execution/actions/{ids['action_id']}")
        ids["agent_request_id"] = r.headers["Agent-Request-Id"]
    if "evidence_id" not in ids:
        body = {
            "domain": "security",
            "title": "Schemathesis seed",
            "source_type": "test_result",
            "source_reference": f"schemathesis://{run}",
            "source_hash": "sha256:" + "0" * 64,
        }
        ids["evidence_id"] = api.post("/api/v2/actions/autonomy/assessment-evidence", body).json()["id"]
    if "compute_job_id" not in ids:
        body = {"objective": "min_variance", "returns": {"A": [0.01, 0.0, -0.01], "B": [0.0, 0.02, 0.01]}}
        ids["compute_job_id"] = api.post("/api/v2/quant/compute/optimizations", body).json()["id"]
    if "generative_run_id" not in ids:
        body = {"generator": "gbm", "parameters": {"X": {"initial": 100.0, "drift": 0.05, "volatility": 0.2}},
                "steps": 3, "paths": 2, "seed": 1}
        ids["generative_run_id"] = api.post("/api/v2/generative/paths", body).json()["id"]
    if "tournament_id" not in ids:
        body = {"values": [float(100 + (t % 12) * 3 + t) for t in range(36)], "candidates": ["naive", "ses"], "horizon": 3}
        ids["tournament_id"] = api.post("/api/v2/quant/model-tournaments", body).json()["id"]
    if "model_portfolio_id" not in ids:
        universe = {"name": "Schemathesis quality", "theme": "quality", "source": "schemathesis",
                    "members": [{"symbol": "MSFT", "relevance": 0.9}, {"symbol": "AAPL", "relevance": 0.8}]}
        u = api.post("/api/v2/investment/themes/universes", universe).json()["id"]
        model = api.post(f"/api/v2/investment/themes/universes/{u}/model-portfolio", {"limit": 2}).json()
        ids["model_portfolio_id"] = model["id"]
        op = {"portfolio_id": 1, "model_portfolio": model["id"], "objective": "Schemathesis"}
        ids["operation_id"] = api.post("/api/v2/investment/governed-ai-operations", op).json()["id"]
    if "risk_compliance_run_id" not in ids:
        ids["risk_compliance_run_id"] = api.post("/api/v2/investment/risk-compliance/runs", {"portfolio_id": 1}).json()["id"]
    if "research_snapshot_id" not in ids:
        body = {"project": "schemathesis", "steps": [{"key": "z", "model_run": {"model": "robust_z", "input": {"values": [1.0, 2.0, 3.0, 9.0]}}}]}
        run_id = api.post("/api/v2/quant/research/runs", body).json()["id"]
        snapshot = {"run": run_id, "name": "Schemathesis seed"}
        ids["research_snapshot_id"] = api.post("/api/v2/quant/research/snapshots", snapshot).json()["id"]
    if "lqm_model_id" not in ids:
        body = {"name": f"Schemathesis forecaster {run}", "task_family": "forecasting", "license": "Apache-2.0",
                "intended_use": "Schemathesis seed"}
        ids["lqm_model_id"] = api.post("/api/v2/lqm/models", body).json()["id"]
        contract = {"model_uid": ids["lqm_model_id"], "target": {"kind": "instrument", "symbol": "SPX", "transform": "price"}}
        ids["lqm_contract_id"] = api.post("/api/v2/lqm/datasets/4/contracts", contract).json()["id"]
        request = {"contract_uid": ids["lqm_contract_id"], "reason": "Schemathesis seed"}
        path = f"/api/v2/lqm/models/{ids['lqm_model_id']}/retraining-requests"
        ids["lqm_request_id"] = api.post(path, request).json()["id"]
    if "workflow_version_id" not in ids:
        installed = api.post("/api/v2/workflows/library/model_monitoring/install", {}).json()
        ids["workflow_version_id"], ids["workflow_id"] = installed["id"], installed["workflow_id"]
        path = f"/api/v2/workflow-studio/versions/{ids['workflow_version_id']}/validate"
        ids["workflow_campaign_id"] = api.post(path, {"cases": [{"name": "approve every review"}]}).json()["id"]
        ids["workflow_run_id"] = api.post("/api/v2/workflows/runs", {"version_uid": ids["workflow_version_id"]}).json()["id"]
    if "agent_run_id" not in ids and "agent_space_id" in ids:
        # The space was promoted by an admin at the console before the run (no credential can promote one).
        path = f"/api/v2/agents/spaces/{ids['agent_space_id']}/runs"
        agent_run = api.post(path, {"prompt": "Show SPX prices", "execution_mode": "sync"}).json()
        ids["agent_run_id"], ids["agent_execution_id"] = agent_run["id"], agent_run["execution_id"]
    if "call_id" not in ids:
        # A call with a (short, synthetic) recording and captured consent, so that transcription can run.
        ids["call_id"] = api.post("/api/v2/client-intelligence/calls", {"title": f"Schemathesis call {run}"}).json()["id"]
        tone = b"".join(int(3000 * math.sin(2 * math.pi * 440 * i / 16000)).to_bytes(2, "little", signed=True) for i in range(8000))
        header = b"RIFF" + (36 + len(tone)).to_bytes(4, "little") + b"WAVEfmt " + bytes.fromhex("1000000001000100") \
            + (16000).to_bytes(4, "little") + (32000).to_bytes(4, "little") + bytes.fromhex("02001000") + b"data" \
            + len(tone).to_bytes(4, "little")
        wav = base64.b64encode(header + tone).decode()
        api.post(f"/api/v2/client-intelligence/calls/{ids['call_id']}/recordings", {"media_type": "audio/wav", "content_base64": wav})
        consent = {"basis": "captured", "method": "verbal", "captured_at": "2026-11-26T00:00:00Z"}
        api.post(f"/api/v2/client-intelligence/calls/{ids['call_id']}/consent", consent)
    # A live access token for /oauth/revoke and /oauth/introspect (never written to ids.json).
    r = requests.post(
        f"{base}/api/v2/oauth/token",
        data={"grant_type": "client_credentials", "scope": "workspace:read"},
        auth=(client_id, client_secret),
        timeout=30,
    )
    if r.status_code != 200:
        raise SystemExit(f"seeding: POST /api/v2/oauth/token answered {r.status_code}: {r.text}")
    return ids, r.json()["access_token"]


# ----- the run ----------------------------------------------------------------------------------------------


def summarise(ndjson_path):
    """What the run did, from Schemathesis's NDJSON event stream: requests sent, statuses, and failures grouped
    by operation, check and failure title (the way Schemathesis counts unique failures)."""
    requests_sent, throttled = 0, 0
    failures, errors = {}, set()
    with open(ndjson_path) as f:
        for line in f:
            event = json.loads(line)
            if "NonFatalError" in event:
                error = event["NonFatalError"]
                errors.add((error.get("label"), error["value"]["type"]))
            finished = event.get("ScenarioFinished")
            if not finished:
                continue
            recorder = finished["recorder"]
            for interaction in (recorder.get("interactions") or {}).values():
                requests_sent += 1
                response = interaction.get("response") or {}
                throttled += response.get("status_code") == 429
            for checks in (recorder.get("checks") or {}).values():
                for check in checks:
                    if check["status"] == "failure":
                        failure = check["failure_info"]["failure"]
                        # Stateful scenarios are labelled as a whole; the failure names its operation.
                        key = (failure.get("operation") or recorder["label"], check["name"], failure["title"])
                        failures[key] = failures.get(key, 0) + 1
    return requests_sent, throttled, sorted(errors, key=str), failures


def main() -> int:
    if len(sys.argv) not in (5, 6):
        print(__doc__, file=sys.stderr)
        return 2
    base, api_key, client_id, client_secret = sys.argv[1:5]
    base = base.rstrip("/")
    given = {}
    if len(sys.argv) == 6:
        with open(sys.argv[5]) as f:
            given = {k: v for k, v in json.load(f).items() if v}
    report_dir = os.path.abspath(
        os.environ.get("FISCUS_ST_REPORT_DIR") or os.path.join(HERE, os.pardir, "target", "schemathesis")
    )
    os.makedirs(report_dir, exist_ok=True)

    ids, access_token = seed(base, api_key, client_id, client_secret, given)
    with open(os.path.join(report_dir, "ids.json"), "w") as f:
        json.dump(ids, f, indent=2)
    print("ids: " + ", ".join(f"{k}={v}" for k, v in sorted(ids.items())), flush=True)

    env = dict(os.environ)
    env.update(
        {
            "FISCUS_ST_IDS": json.dumps(ids),
            "FISCUS_ST_API_KEY": api_key,
            "FISCUS_ST_CLIENT_ID": client_id,
            "FISCUS_ST_CLIENT_SECRET": client_secret,
            "FISCUS_ST_ACCESS_TOKEN": access_token,
            # The hooks module is this file.
            "PYTHONPATH": os.pathsep.join(p for p in (HERE, env.get("PYTHONPATH")) if p),
        }
    )
    ndjson = os.path.join(report_dir, "events.ndjson")
    args = [
        sys.executable,
        "-m",
        "schemathesis.cli",
        "--config-file",
        CONFIG,
        "--no-color",
        "run",
        os.environ.get("FISCUS_ST_SCHEMA") or f"{base}/api/v2/openapi.json",
        "--url",
        base,
        "--checks",
        "all",
        "--phases",
        "examples,coverage,fuzzing,stateful",
        "--max-time",
        os.environ.get("FISCUS_ST_MAX_TIME", "180"),
        "--max-examples",
        os.environ.get("FISCUS_ST_MAX_EXAMPLES", "30"),
        "--workers",
        os.environ.get("FISCUS_ST_WORKERS", "1"),
        "--report",
        "junit,ndjson",
        "--report-dir",
        report_dir,
        "--report-junit-path",
        os.path.join(report_dir, "junit.xml"),
        "--report-ndjson-path",
        ndjson,
    ]
    if os.environ.get("FISCUS_ST_SEED"):
        args += ["--seed", os.environ["FISCUS_ST_SEED"]]
    if os.environ.get("FISCUS_ST_RATE_LIMIT"):
        args += ["--rate-limit", os.environ["FISCUS_ST_RATE_LIMIT"]]

    if os.path.exists(ndjson):
        os.remove(ndjson)
    started = time.monotonic()
    code = subprocess.call(args, env=env, cwd=report_dir)
    elapsed = time.monotonic() - started
    if not os.path.exists(ndjson):
        print(f"schemathesis: no report (exit {code}) after {elapsed:.0f} s", flush=True)
        return 1
    requests_sent, throttled, errors, failures = summarise(ndjson)
    for (operation, check, title), count in sorted(failures.items()):
        print(f"failure: {operation}: {check} ({title}) x{count}")
    for label, kind in errors:
        print(f"error: {label}: {kind}")
    print(
        f"schemathesis: {requests_sent} requests, {len(failures)} failures, {len(errors)} errors, "
        f"{throttled} answered 429, exit {code}, in {elapsed:.0f} s",
        flush=True,
    )
    return 0 if code == 0 and not failures and not errors else 1


if __name__ == "__main__":
    sys.exit(main())
