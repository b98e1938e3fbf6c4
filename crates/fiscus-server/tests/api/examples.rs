//! The document's response examples are real: `src/openapi/examples.json` holds one response of every
//! documented success, captured from a live server walking through a whole workflow. This test walks the
//! same workflow and checks that every documented success has an example of the same shape (the same members,
//! recursively) as what the server answers now; `FISCUS_WRITE_EXAMPLES=1` rewrites the file from the walk.

use fiscus_apptest::console::{decide, enrolled_operator, sign_in};
use fiscus_apptest::{TestApp, spawn_app_with};
use fiscus_domain::people::Role;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/openapi/examples.json");

/// Every member name, recursively (array items merged), so that two values of the same type compare equal.
fn shape(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), shape(v))).collect()),
        Value::Array(items) => {
            let mut merged = Map::new();
            for item in items {
                if let Value::Object(m) = shape(item) {
                    merged.extend(m);
                }
            }
            json!([merged])
        }
        _ => Value::Null,
    }
}

/// Replaces the value of every `secret` and `access_token` member with a placeholder that names its kind.
fn redact_secrets(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, inner) in m.iter_mut() {
                match (k.as_str(), inner.as_str()) {
                    ("secret", Some(s)) => {
                        *inner = json!(format!("{}_shown_once", s.split('_').next().unwrap_or("secret")))
                    }
                    ("access_token", Some(s)) => {
                        *inner = json!(format!("{}_shown_once", s.split('_').next().unwrap_or("token")))
                    }
                    _ => redact_secrets(inner),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_secrets),
        _ => {}
    }
}

struct Walk<'a> {
    app: &'a TestApp,
    seen: BTreeMap<String, Value>,
}

impl Walk<'_> {
    async fn record(&mut self, operation: &str, response: reqwest::Response) -> Value {
        let status = response.status().as_u16();
        assert!((200..300).contains(&status), "{operation} answered {status}");
        let body: Value = response.json().await.unwrap_or(Value::Null);
        self.seen.insert(format!("{operation} {status}"), body.clone());
        body
    }

    async fn get(&mut self, operation: &str, path: &str) -> Value {
        let response = self.app.get(path, &self.app.key).await;
        self.record(operation, response).await
    }

    async fn post(&mut self, operation: &str, path: &str, body: &Value) -> Value {
        let response = self.app.post_json(path, &self.app.key, body, Some(&fiscus_domain::ids::new_id("idk"))).await;
        self.record(operation, response).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_documented_success_has_a_real_example() {
    // No compute worker: a queued job stays queued, so its cancel is shown. The bank file connector serves
    // the sandbox, so a payment file and a bank message are shown.
    let bank = tempfile::tempdir().expect("bank directories");
    let files = fiscus_kernel::settings::BankFiles {
        outbound_dir: bank.path().join("outbound"),
        staging_dir: bank.path().join("staging"),
        inbound_dir: None,
        inbound_max_bytes: 8 * 1024 * 1024,
        initiating_party: "Example Treasury GmbH".into(),
        sandbox: true,
    };
    let app = spawn_app_with(|s| {
        s.compute_worker = false;
        s.iso20022 = Some(files);
    })
    .await;
    let mut walk = Walk { app: &app, seen: BTreeMap::new() };
    let evidence = fiscus_apptest::evidence_body("SOC 2 Type II report 2026");
    walk.post("post_actions_autonomy_assessment_evidence", fiscus_apptest::EVIDENCE, &evidence).await;
    walk.get("get_actions_autonomy_assessment_evidence", fiscus_apptest::EVIDENCE).await;
    let supplier = json!({ "name": "Lieferant GmbH", "reference": "SUP-0042" });
    let cp = walk.post("post_counterparties", "/api/v2/counterparties", &supplier).await;
    let cp_id = cp["id"].as_str().expect("counterparty").to_string();
    let mut details = json!({ "owner": "counterparty", "counterparty_id": cp_id, "currency": "EUR",
        "holder_name": "Lieferant GmbH", "iban": "DE89 3704 0044 0532 0130 00", "bic": "COBADEFFXXX",
        "address": { "street": "Königstraße", "building": "12a", "postcode": "70173", "town": "Stuttgart", "country": "DE" } });
    let account = walk.post("post_bank_accounts", "/api/v2/bank-accounts", &details).await;
    let account_id = account["id"].as_str().expect("account").to_string();
    fiscus_apptest::bank::approve_first_version(&app, &account).await;
    details["iban"] = json!("GB29 NWBK 6016 1331 9268 19");
    details["bic"] = json!("NWBKGB2L");
    let versions = format!("/api/v2/bank-accounts/{account_id}/versions");
    walk.post("post_bank_accounts_id_versions", &versions, &details).await;
    walk.get("get_bank_accounts_id", &format!("/api/v2/bank-accounts/{account_id}")).await;
    walk.get("get_counterparties_id", &format!("/api/v2/counterparties/{cp_id}")).await;
    walk.get("get_counterparties", "/api/v2/counterparties?limit=1").await;
    let mut proposal = fiscus_apptest::actions::proposal();
    let action = walk.post("post_actions", "/api/v2/actions", &proposal).await;
    let id = action["id"].as_str().expect("id").to_string();
    let checks = format!("/api/v2/actions/investment-execution/{id}/checks");
    walk.post("post_actions_investment_execution_uid_checks", &checks, &fiscus_apptest::actions::check("passed")).await;
    let op = enrolled_operator(&app, "examples@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &op).await;
    assert_eq!(decide(&app, &cookie, &id, "approve").await.status(), 303);
    walk.post("post_actions_uid_execute", &format!("/api/v2/actions/{id}/execute"), &json!({})).await;
    app.drain().await;
    walk.get("get_actions_uid", &format!("/api/v2/actions/{id}")).await;
    walk.get("get_actions_uid_checks", &format!("/api/v2/actions/{id}/checks")).await;
    walk.get("get_actions", "/api/v2/actions?limit=1").await;
    let agent = format!("/api/v2/agent-execution/actions/{id}");
    let response = app.get(&agent, &app.key).await;
    let request_id = response.headers()["agent-request-id"].to_str().expect("header").to_string();
    walk.record("get_agent_execution_actions_uid", response).await;
    walk.get("get_agent_execution_actions_uid_assurance", &format!("{agent}/assurance")).await;
    walk.get("get_agent_execution_actions_uid_reconciliation", &format!("{agent}/reconciliation")).await;
    walk.get("get_agent_execution_requests_uid", &format!("/api/v2/agent-execution/requests/{request_id}")).await;
    proposal["reference"] = json!("INV-2026-0043");
    let draft = walk.post("post_agent_execution_proposals", "/api/v2/agent-execution/proposals", &proposal).await;
    let draft_id = draft["id"].as_str().expect("id");
    let submit = format!("/api/v2/agent-execution/actions/{draft_id}/submit");
    walk.post("post_agent_execution_actions_uid_submit", &submit, &json!({})).await;
    let mut second = fiscus_apptest::actions::proposal();
    second["required_checks"] = json!([]);
    second["reference"] = json!("INV-2026-0044");
    let second_id =
        app.post_json("/api/v2/actions", &app.key, &second, None).await.json::<Value>().await.expect("json")["id"]
            .as_str()
            .expect("id")
            .to_string();
    assert_eq!(decide(&app, &cookie, &second_id, "approve").await.status(), 303);
    let agent_execute = format!("/api/v2/agent-execution/actions/{second_id}/execute");
    walk.post("post_agent_execution_actions_uid_execute", &agent_execute, &json!({})).await;
    let key = ed25519_dalek::SigningKey::from_bytes(&[42; 32]);
    let public_key = fiscus_apptest::b64(&key.verifying_key().to_bytes());
    let identity_body = json!({ "name": "treasury-agent", "public_key": public_key });
    let identity =
        walk.post("post_actions_agentic_identities", "/api/v2/actions/agentic/identities", &identity_body).await;
    let identity_id = identity["id"].as_str().expect("id");
    walk.get("get_actions_agentic_identities", "/api/v2/actions/agentic/identities").await;
    walk.get("get_actions_agentic_identities_uid", &format!("/api/v2/actions/agentic/identities/{identity_id}")).await;
    let terms = json!({
        "action": "payment", "counterparty": "cp_acme_supplies", "connector": "sandbox", "currency": "USD",
        "execution_mode": "machine_delegated", "risk_tier": "T1", "per_action_budget_minor": 100000,
        "daily_budget_minor": 500000, "monthly_budget_minor": 2000000, "valid_for_days": 30
    });
    let delegations = format!("/api/v2/actions/agentic/identities/{identity_id}/delegations");
    let delegation = walk.post("post_actions_agentic_identities_uid_delegations", &delegations, &terms).await;
    let delegation_id = delegation["id"].as_str().expect("id");
    walk.get("get_actions_agentic_delegations_uid", &format!("/api/v2/actions/agentic/delegations/{delegation_id}"))
        .await;
    // The gateway describing a signed execution client to itself.
    let signer = crate::signed_clients::granted_client(
        &app,
        &[
            "post_agent_execution_proposals",
            "post_agent_execution_actions_uid_submit",
            "get_agent_execution_actions_uid",
        ],
        &["payment"],
        (600, 100_000),
    )
    .await;
    for (operation, path) in [
        ("get_agent_execution_capabilities", "/api/v2/agent-execution/capabilities"),
        ("get_agent_execution_service_level", "/api/v2/agent-execution/service-level"),
        ("get_agent_execution_usage", "/api/v2/agent-execution/usage?limit=2"),
    ] {
        if operation == "get_agent_execution_usage" {
            // The two reads above counted in the usage the example shows, not whenever the recorder flushes.
            app.state.usage.flush(&app.state.store).await.expect("flush usage");
        }
        let response = crate::signed_clients::Signed::get(path).send(&app, &signer).await;
        walk.record(operation, response).await;
    }
    let ping = json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" });
    let response = crate::signed_clients::Signed::post("/api/v2/agent-execution/mcp", &ping).send(&app, &signer).await;
    walk.record("post_agent_execution_mcp", response).await;
    let listed = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "get_workspace", "arguments": {} } });
    walk.post("post_root_mcp", "/api/mcp", &listed).await;
    let sent = json!({ "jsonrpc": "2.0", "id": 3, "method": "SendMessage", "params": { "message": {
        "messageId": "msg-example-1", "role": "ROLE_USER",
        "parts": [{ "data": { "skill": "get_workspace", "arguments": {} } }] } } });
    let response = app
        .http
        .post(app.url("/api/v2/agent-execution/a2a"))
        .bearer_auth(&app.key)
        .header("A2A-Version", "1.0")
        .json(&sent)
        .send()
        .await
        .expect("request");
    walk.record("post_agent_execution_a2a", response).await;
    walk.get("get_agents_tools", "/api/v2/agents/tools").await;
    let hook = json!({ "url": "https://hooks.example.com/fiscus", "event_types": ["action.approved"], "description": "Treasury agent" });
    let endpoint = walk.post("post_agent_execution_webhooks", "/api/v2/agent-execution/webhooks", &hook).await;
    walk.get("get_agent_execution_webhooks", "/api/v2/agent-execution/webhooks").await;
    let endpoint_path = format!("/api/v2/agent-execution/webhooks/{}", endpoint["id"].as_str().expect("id"));
    let revoked = app.http.delete(app.url(&endpoint_path)).bearer_auth(&app.key).send().await.expect("request");
    walk.record("delete_agent_execution_webhooks_uid", revoked).await;
    walk.get("get_agents_invocations", "/api/v2/agents/invocations?limit=1").await;
    for (operation, path) in [
        ("get_workspace", "/api/v2/workspace"),
        ("get_trust_audit_head", "/api/v2/trust/audit-head"),
        ("get_catalogue", "/api/v2/catalogue"),
        ("get_catalogue_ledger", "/api/v2/catalogue/ledger"),
        ("get_ai_credits_balance", "/api/v2/ai-credits/balance"),
        ("get_infrastructure_posture", "/api/v2/infrastructure/posture"),
        ("get_infrastructure_regions", "/api/v2/infrastructure/regions"),
        ("get_infrastructure_service_classes", "/api/v2/infrastructure/service-classes"),
        ("get_infrastructure_data_entitlements", "/api/v2/infrastructure/data-entitlements"),
        ("get_infrastructure_usage", "/api/v2/infrastructure/usage"),
    ] {
        walk.get(operation, path).await;
    }
    let client = app.admin().create_oauth_client(&app.app_id).await.expect("client");
    let oauth = |path: &str, form: Vec<(&'static str, String)>| {
        app.http.post(app.url(path)).basic_auth(&client.id, Some(&client.secret)).form(&form).send()
    };
    let token = oauth(
        "/api/v2/oauth/token",
        vec![("grant_type", "client_credentials".into()), ("scope", "workspace:read".into())],
    )
    .await
    .expect("request");
    let token = walk.record("post_oauth_token", token).await;
    let access = token["access_token"].as_str().expect("token").to_string();
    let introspected = oauth("/api/v2/oauth/introspect", vec![("token", access.clone())]).await.expect("request");
    walk.record("post_oauth_introspect", introspected).await;
    let revoked = oauth("/api/v2/oauth/revoke", vec![("token", access)]).await.expect("request");
    walk.record("post_oauth_revoke", revoked).await;
    app.load_demo().await;
    for (operation, path) in [
        ("get_data_datasets", "/api/v2/data/datasets?limit=1"),
        ("get_data_instruments", "/api/v2/data/instruments?limit=1"),
        ("get_data_instruments_uid", "/api/v2/data/instruments/AAPL"),
        ("get_data_instruments_uid_prices", "/api/v2/data/instruments/SPX/prices?dataset=3&limit=2"),
        ("get_data_instruments_uid_corporate_actions", "/api/v2/data/instruments/AAPL/corporate-actions"),
        ("get_data_instruments_uid_fundamentals", "/api/v2/data/instruments/AAPL/fundamentals"),
        ("get_data_economics_series", "/api/v2/data/economics/series?limit=1"),
        ("get_data_economics_series_key", "/api/v2/data/economics/series/cpilfesl"),
        ("get_data_economics_series_key_observations", "/api/v2/data/economics/series/cpilfesl/observations?limit=2"),
        ("get_finance_core_entities", "/api/v2/finance-core/entities?limit=1"),
        ("get_finance_core_journals", "/api/v2/finance-core/journals?limit=1"),
        ("get_financial_transactions", "/api/v2/financial/transactions?limit=1"),
        ("get_financial_snapshots", "/api/v2/financial/snapshots?limit=1"),
        ("get_quant_features", "/api/v2/quant/features"),
        ("get_quant_features_key", "/api/v2/quant/features/volatility_21d"),
        ("get_quant_features_key_values", "/api/v2/quant/features/volatility_21d/values?instrument=AAPL&limit=2"),
    ] {
        walk.get(operation, path).await;
    }
    let import = json!({
        "kind": "ledgers", "file_name": "ledgers.csv", "csv": "code,name,currency\nGL-UK,UK General Ledger,GBP\n",
        "source": "ERP general ledger export", "licence": "proprietary"
    });
    walk.post("post_data_imports", "/api/v2/data/imports", &import).await;
    // The same file again: found by its hash, nothing written (200).
    walk.post("post_data_imports", "/api/v2/data/imports", &import).await;
    let lineage = walk
        .post(
            "post_infrastructure_lineage_exports",
            "/api/v2/infrastructure/lineage-exports",
            &json!({ "datasets": [7] }),
        )
        .await;
    let lineage_id = lineage["id"].as_str().expect("id").to_string();
    walk.get("get_infrastructure_lineage_exports_uid", &format!("/api/v2/infrastructure/lineage-exports/{lineage_id}"))
        .await;
    let sandbox = fiscus_domain::tenancy::Tenant {
        workspace_id: app.workspace_id.clone(),
        environment: fiscus_domain::credentials::Environment::Sandbox,
    };
    app.admin().grant_credits(&sandbox, 100, "examples").await.expect("grant");
    let optimization = json!({
        "objective": "min_variance", "instruments": ["AAPL", "MSFT", "JPM"], "start": "2015-01-01", "end": "2017-12-31"
    });
    let job = walk.post("post_quant_compute_optimizations", "/api/v2/quant/compute/optimizations", &optimization).await;
    let job_id = job["id"].as_str().expect("id").to_string();
    walk.get("get_quant_compute_jobs_uid", &format!("/api/v2/quant/compute/jobs/{job_id}")).await;
    let queued = app
        .http
        .post(app.url("/api/v2/quant/compute/optimizations"))
        .bearer_auth(&app.key)
        .header("Prefer", "respond-async")
        .json(&optimization)
        .send()
        .await
        .expect("request");
    let queued = walk.record("post_quant_compute_optimizations", queued).await;
    let simulation = json!({
        "instruments": ["AAPL", "MSFT"], "start": "2015-01-01", "end": "2017-12-31", "horizon_years": 1.0,
        "steps": 52, "paths": 2000, "seed": 7, "weights": {"AAPL": 0.5, "MSFT": 0.5}
    });
    walk.post("post_quant_compute_simulations", "/api/v2/quant/compute/simulations", &simulation).await;
    let backtest = json!({
        "weights": {"AAPL": 0.4, "MSFT": 0.3, "JPM": 0.3}, "start": "2017-10-01",
        "end": "2017-12-31", "rebalance_every": 21, "initial_cash": 1000000, "fee_rate": 0.001
    });
    walk.post("post_quant_compute_backtests", "/api/v2/quant/compute/backtests", &backtest).await;
    for (operation, path, body) in [
        ("post_quant_compute_simulations", "/api/v2/quant/compute/simulations", &simulation),
        ("post_quant_compute_backtests", "/api/v2/quant/compute/backtests", &backtest),
    ] {
        let queued = app
            .http
            .post(app.url(path))
            .bearer_auth(&app.key)
            .header("Prefer", "respond-async")
            .json(body)
            .send()
            .await
            .expect("request");
        walk.record(operation, queued).await;
    }
    walk.get("get_quant_models", "/api/v2/quant/models").await;
    walk.get("get_quant_statistical_models", "/api/v2/quant/statistical-models").await;
    walk.get("get_quant_models_key", "/api/v2/quant/models/holt_winters").await;
    let model_run = json!({
        "input": { "instruments": ["AAPL"], "transform": "return", "start": "2017-01-01", "end": "2017-12-31" },
        "parameters": { "threshold": 4.0 }
    });
    walk.post("post_quant_models_key_run", "/api/v2/quant/models/robust_z/run", &model_run).await;
    let arima = json!({
        "input": { "instruments": ["AAPL"], "start": "2017-01-01", "end": "2017-12-31" },
        "parameters": { "p": 1, "d": 1, "q": 0, "horizon": 5 }
    });
    walk.post("post_quant_models_key_run", "/api/v2/quant/models/arima/run", &arima).await;
    walk.get("get_quant_model_runs", "/api/v2/quant/model-runs?limit=1").await;
    let forecast = json!({ "series": "cpilfesl", "start": "2012-01-01", "model": "arima", "horizon": 12 });
    walk.post("post_planning_forecasts", "/api/v2/planning/forecasts", &forecast).await;
    let automatic = json!({ "series": "cpilfesl", "start": "2012-01-01", "horizon": 12 });
    walk.post("post_planning_forecasts", "/api/v2/planning/forecasts", &automatic).await;
    walk.get("get_planning_forecasts", "/api/v2/planning/forecasts?limit=1").await;
    walk.get("get_generative_models", "/api/v2/generative/models").await;
    let generated = json!({
        "generator": "block_bootstrap", "instruments": ["AAPL"], "start": "2017-01-01", "end": "2017-12-31",
        "steps": 5, "paths": 3, "block_length": 2, "seed": 42
    });
    let run = walk.post("post_generative_paths", "/api/v2/generative/paths", &generated).await;
    let fans = json!({
        "generator": "gbm", "instruments": ["AAPL", "MSFT"], "start": "2015-01-01", "end": "2017-12-31",
        "steps": 5, "paths": 200, "seed": 42
    });
    walk.post("post_generative_scenarios", "/api/v2/generative/scenarios", &fans).await;
    for (operation, path, body) in [
        ("post_generative_paths", "/api/v2/generative/paths", &generated),
        ("post_generative_scenarios", "/api/v2/generative/scenarios", &fans),
    ] {
        let queued = app
            .http
            .post(app.url(path))
            .bearer_auth(&app.key)
            .header("Prefer", "respond-async")
            .json(body)
            .send()
            .await
            .expect("request");
        walk.record(operation, queued).await;
    }
    walk.get("get_generative_runs", "/api/v2/generative/runs?limit=1").await;
    walk.get("get_generative_runs_uid", &format!("/api/v2/generative/runs/{}", run["id"].as_str().expect("id"))).await;
    let tournament = json!({
        "series": "cpilfesl", "start": "2006-01-01", "candidates": ["naive", "ses", "holt", "damped"],
        "horizon": 6, "origins": 4, "seasonal_period": 12
    });
    let ranked = walk.post("post_quant_model_tournaments", "/api/v2/quant/model-tournaments", &tournament).await;
    let with_arima =
        json!({ "series": "cpilfesl", "start": "2006-01-01", "candidates": ["naive", "arima"], "horizon": 6 });
    walk.post("post_quant_model_tournaments", "/api/v2/quant/model-tournaments", &with_arima).await;
    walk.get("get_quant_model_tournaments", "/api/v2/quant/model-tournaments?limit=1").await;
    walk.get(
        "get_quant_model_tournaments_uid",
        &format!("/api/v2/quant/model-tournaments/{}", ranked["id"].as_str().expect("id")),
    )
    .await;
    let research = json!({
        "project": "low-volatility", "name": "Minimum variance and outliers",
        "steps": [
            {"key": "weights", "optimization": {"objective": "min_variance", "instruments": ["AAPL", "MSFT", "JPM"],
                                                "start": "2015-01-01", "end": "2016-12-31"}},
            {"key": "outliers", "model_run": {"model": "robust_z", "input": {"values": [1.0, 1.2, 0.9, 1.1, 9.5, 1.0]}}}
        ]
    });
    let research_run = walk.post("post_quant_research_runs", "/api/v2/quant/research/runs", &research).await;
    let snapshot = json!({"run": research_run["id"], "name": "Low-volatility study, as presented to the committee"});
    let frozen = walk.post("post_quant_research_snapshots", "/api/v2/quant/research/snapshots", &snapshot).await;
    let frozen_id = frozen["id"].as_str().expect("id");
    walk.post("post_quant_research_runs", "/api/v2/quant/research/runs", &json!({"snapshot": frozen_id})).await;
    let queued_research = app
        .http
        .post(app.url("/api/v2/quant/research/runs"))
        .bearer_auth(&app.key)
        .header("Prefer", "respond-async")
        .json(&research)
        .send()
        .await
        .expect("request");
    walk.record("post_quant_research_runs", queued_research).await;
    walk.get("get_quant_research_snapshots_uid", &format!("/api/v2/quant/research/snapshots/{frozen_id}")).await;
    walk.get("get_quant_research_snapshots", "/api/v2/quant/research/snapshots?project=low-volatility").await;
    walk.get("get_quant_projects", "/api/v2/quant/projects").await;
    walk.get("get_ml_models", "/api/v2/ml/models").await;
    let anomaly = json!({
        "method": "isolation_forest",
        "input": { "instruments": ["AAPL"], "transform": "return", "start": "2017-01-01", "end": "2017-12-31" },
        "parameters": { "trees": 100, "seed": 1, "top": 3 }
    });
    let scenarios = json!({
        "method": "block_bootstrap", "instruments": ["AAPL", "MSFT"], "start": "2015-01-01", "end": "2017-12-31",
        "weights": {"AAPL": 0.5, "MSFT": 0.5}, "steps": 21, "paths": 500, "block_length": 5, "seed": 11
    });
    for (operation, path, body) in
        [("post_ml_anomaly", "/api/v2/ml/anomaly", &anomaly), ("post_ml_scenarios", "/api/v2/ml/scenarios", &scenarios)]
    {
        walk.post(operation, path, body).await;
        let queued = app
            .http
            .post(app.url(path))
            .bearer_auth(&app.key)
            .header("Prefer", "respond-async")
            .json(body)
            .send()
            .await
            .expect("request");
        walk.record(operation, queued).await;
    }
    // Investment on the demo book (GROWTH is portfolio 1 of this database).
    walk.get("get_investment_portfolios", "/api/v2/investment/portfolios").await;
    walk.get("get_investment_portfolios_portfolio_tax_lots", "/api/v2/investment/portfolios/1/tax-lots").await;
    let harvest = json!({ "as_of": "2022-12-28", "planned_purchases": [{ "symbol": "MSFT", "date": "2023-01-10" }] });
    walk.post(
        "post_investment_portfolios_portfolio_tax_harvest",
        "/api/v2/investment/portfolios/1/tax-harvest",
        &harvest,
    )
    .await;
    let stress = json!({ "historical": { "preset": "covid_crash_2020" } });
    walk.post("post_investment_portfolios_portfolio_scenarios", "/api/v2/investment/portfolios/1/scenarios", &stress)
        .await;
    let construct = json!({ "objective": "min_variance", "max_weight": 0.3 });
    walk.post(
        "post_investment_portfolios_portfolio_construct",
        "/api/v2/investment/portfolios/1/construct",
        &construct,
    )
    .await;
    walk.post(
        "post_investment_portfolios_portfolio_collateral_inventory",
        "/api/v2/investment/portfolios/GROWTH/collateral-inventory",
        &json!({ "as_of": "2022-12-28" }),
    )
    .await;
    let limits = json!({ "portfolio_id": 1, "limits": { "max_weight": 0.25, "max_var_1d": 0.03 } });
    let run =
        walk.post("post_investment_risk_compliance_runs", "/api/v2/investment/risk-compliance/runs", &limits).await;
    walk.get(
        "get_investment_risk_compliance_runs_uid",
        &format!("/api/v2/investment/risk-compliance/runs/{}", run["id"].as_str().expect("run")),
    )
    .await;
    let markets = json!({ "portfolio_id": 1, "horizon_days": 21, "paths": 500, "seed": 7 });
    walk.post("post_investment_generative_markets_runs", "/api/v2/investment/generative-markets/runs", &markets).await;
    walk.get("get_investment_generative_markets_runs", "/api/v2/investment/generative-markets/runs?portfolio_id=1")
        .await;
    let report = json!({ "portfolio_id": 1, "start": "2022-01-03", "end": "2022-12-28" });
    walk.post("post_investment_reports", "/api/v2/investment/reports", &report).await;
    walk.get("get_investment_reports", "/api/v2/investment/reports?portfolio_id=1").await;
    walk.get("get_investment_risk", "/api/v2/investment/risk?portfolio_id=1").await;
    walk.get("get_benchmarking_comparisons", "/api/v2/benchmarking/comparisons?portfolio_id=1").await;
    walk.get("get_investment_companies_symbol", "/api/v2/investment/companies/AAPL").await;
    // Research's universe, a model portfolio approved at the console, an operation and its rebalance.
    let universe = json!({
        "name": "Quality compounders", "theme": "quality", "source": "Equity research, thematic desk",
        "members": [{ "symbol": "MSFT", "relevance": 0.95, "rationale": "Recurring revenue, net cash" },
                    { "symbol": "AAPL", "relevance": 0.9 }, { "symbol": "JNJ", "relevance": 0.8 }, { "symbol": "PG", "relevance": 0.7 }]
    });
    let u = walk.post("post_investment_themes_universes", "/api/v2/investment/themes/universes", &universe).await;
    let u = u["id"].as_i64().expect("universe");
    let announced = json!({ "name": "Energy transition", "theme": "energy", "source": "Equity research" });
    let pending =
        walk.post("post_investment_themes_universes", "/api/v2/investment/themes/universes", &announced).await;
    let handoff = json!({ "members": [{ "symbol": "CVX", "relevance": 0.6 }, { "symbol": "XOM", "relevance": 0.4 }] });
    walk.post(
        "post_investment_themes_universes_universe_handoff",
        &format!("/api/v2/investment/themes/universes/{}/handoff", pending["id"]),
        &handoff,
    )
    .await;
    walk.get("get_investment_themes_universes", "/api/v2/investment/themes/universes").await;
    walk.get("get_investment_themes_universes_universe", &format!("/api/v2/investment/themes/universes/{u}")).await;
    let model = walk
        .post(
            "post_investment_themes_universes_universe_model_portfolio",
            &format!("/api/v2/investment/themes/universes/{u}/model-portfolio"),
            &json!({ "limit": 4, "weighting": "relevance", "benchmark_symbol": "SPX" }),
        )
        .await;
    let model_id = model["id"].as_str().expect("model").to_string();
    let approved = crate::model_portfolios::console_decision(&app, &cookie, &model_id, "approve").await;
    assert_eq!(approved.status(), 303);
    walk.get("get_investment_model_portfolios", "/api/v2/investment/model-portfolios").await;
    walk.get("get_investment_model_portfolios_uid", &format!("/api/v2/investment/model-portfolios/{model_id}")).await;
    let operation = json!({ "portfolio_id": 1, "model_portfolio": model_id,
        "objective": "Move the growth book onto the approved quality model", "agent": "portfolio-copilot v2" });
    let operation = walk
        .post("post_investment_governed_ai_operations", "/api/v2/investment/governed-ai-operations", &operation)
        .await;
    let operation = operation["id"].as_str().expect("operation").to_string();
    walk.get(
        "get_investment_governed_ai_operations_uid",
        &format!("/api/v2/investment/governed-ai-operations/{operation}"),
    )
    .await;
    let proposal = walk
        .post(
            "post_investment_governed_ai_operations_uid_rebalance",
            &format!("/api/v2/investment/governed-ai-operations/{operation}/rebalance"),
            &json!({ "cost_bps": 10 }),
        )
        .await;
    walk.post(
        "post_investment_rebalance_proposals_uid_actions",
        &format!("/api/v2/investment/rebalance-proposals/{}/actions", proposal["id"].as_str().expect("proposal")),
        &json!({ "risk_tier": "T2" }),
    )
    .await;
    // LQM Builder: a model from registration to an evaluated checkpoint, its request reviewed by a
    // credential other than the one that made it.
    let reviewer = app
        .new_app(fiscus_domain::credentials::Environment::Sandbox, "lqm:build:read lqm:build:write lqm:build:run", None)
        .await
        .1;
    let registration = json!({ "name": "S&P 500 level forecaster", "task_family": "forecasting", "license": "Apache-2.0",
        "intended_use": "Next-day S&P 500 level forecasts for treasury liquidity planning; not for trading." });
    let lqm = walk.post("post_lqm_models", "/api/v2/lqm/models", &registration).await;
    let lqm = lqm["id"].as_str().expect("model").to_string();
    let contract = json!({ "model_uid": lqm, "target": { "kind": "instrument", "symbol": "SPX", "transform": "price" },
                           "holdout_fraction": 0.2 });
    let contract =
        walk.post("post_lqm_datasets_dataset_contracts", "/api/v2/lqm/datasets/4/contracts", &contract).await;
    let contract = contract["id"].as_str().expect("contract").to_string();
    walk.get("get_lqm_contracts_uid", &format!("/api/v2/lqm/contracts/{contract}")).await;
    let requests = format!("/api/v2/lqm/models/{lqm}/retraining-requests");
    let retrain = json!({ "contract_uid": contract, "algorithm": "holt_winters", "hyperparameters": { "trend": true },
                          "reason": "Quarterly recalibration on the latest observed data" });
    walk.post("post_lqm_models_uid_retraining_requests", &requests, &retrain).await;
    let theirs: Value = app.post_json(&requests, &reviewer, &retrain, None).await.json().await.expect("json");
    let theirs = theirs["id"].as_str().expect("request").to_string();
    let review =
        json!({ "decision": "approve", "note": "Data contract and scope reviewed; candidate training authorised" });
    walk.post(
        "post_lqm_retraining_requests_requestuid_decision",
        &format!("/api/v2/lqm/retraining-requests/{theirs}/decision"),
        &review,
    )
    .await;
    crate::lqm::approved_by_a_person(&app, &theirs).await;
    let checkpoint = walk
        .post(
            "post_lqm_retraining_requests_requestuid_training",
            &format!("/api/v2/lqm/retraining-requests/{theirs}/training"),
            &json!({}),
        )
        .await;
    walk.get("get_lqm_retraining_requests_requestuid", &format!("/api/v2/lqm/retraining-requests/{theirs}")).await;
    let checkpoint = checkpoint["id"].as_str().expect("checkpoint").to_string();
    walk.post(
        "post_lqm_checkpoints_uid_evaluation",
        &format!("/api/v2/lqm/checkpoints/{checkpoint}/evaluation"),
        &json!({ "criteria": { "max_relative_mae": 1.1 } }),
    )
    .await;
    walk.get("get_lqm_checkpoints_uid", &format!("/api/v2/lqm/checkpoints/{checkpoint}")).await;
    walk.post(
        "post_lqm_checkpoints_uid_evidence_packet",
        &format!("/api/v2/lqm/checkpoints/{checkpoint}/evidence-packet"),
        &json!({}),
    )
    .await;
    let publication = walk
        .post(
            "post_lqm_checkpoints_uid_publication",
            &format!("/api/v2/lqm/checkpoints/{checkpoint}/publication"),
            &json!({}),
        )
        .await;
    walk.get(
        "get_lqm_publications_publicationuid",
        &format!("/api/v2/lqm/publications/{}", publication["id"].as_str().expect("publication")),
    )
    .await;
    walk.get(
        "get_lqm_publications_publicationuid_evidence_bundle",
        &format!("/api/v2/lqm/publications/{}/evidence-bundle", publication["id"].as_str().expect("publication")),
    )
    .await;
    let promotion = walk
        .post(
            "post_lqm_checkpoints_uid_promotion_requests",
            &format!("/api/v2/lqm/checkpoints/{checkpoint}/promotion-requests"),
            &json!({ "note": "Passed holdout evaluation; first checkpoint of this model" }),
        )
        .await;
    let promoted =
        crate::lqm::console_promotion(&app, &cookie, promotion["id"].as_str().expect("promotion"), "approve").await;
    assert_eq!(promoted.status(), 303);
    walk.get("get_lqm_models_uid_promotions", &format!("/api/v2/lqm/models/{lqm}/promotions")).await;
    // The catalogue again, now with the promoted model beside the engine's families.
    walk.get("get_quant_models", "/api/v2/quant/models").await;
    let composed = json!({ "name": "Treasury liquidity profile", "description": "S&P 500 level forecasts for liquidity planning",
                           "components": { "forecast": { "model_uid": lqm } } });
    let qlm = walk.post("post_qlms", "/api/v2/qlms", &composed).await;
    let qlm = qlm["id"].as_str().expect("qlm").to_string();
    walk.get("get_qlms", "/api/v2/qlms").await;
    walk.get("get_qlms_uid", &format!("/api/v2/qlms/{qlm}")).await;
    walk.get("get_qlms_uid_versions", &format!("/api/v2/qlms/{qlm}/versions")).await;
    let values = json!({ "values": [4012.5, 4030.1, 4018.9, 4055.0, 4071.3, 4066.2], "horizon": 5 });
    walk.post("post_qlms_uid_invoke", &format!("/api/v2/qlms/{qlm}/invoke"), &values).await;
    walk.post("post_qlms_uid_evaluate", &format!("/api/v2/qlms/{qlm}/evaluate"), &json!({ "contract_uid": contract }))
        .await;
    walk.get("get_lqm_models", "/api/v2/lqm/models").await;
    walk.get("get_lqm_models_uid", &format!("/api/v2/lqm/models/{lqm}")).await;
    walk.get("get_lqm_models_uid_developer_manifest", &format!("/api/v2/lqm/models/{lqm}/developer-manifest")).await;
    // Workflows: a template installed, a studio version validated, a run reviewed by a person and completed,
    // another cancelled while it awaited review.
    walk.get("get_workflows_library", "/api/v2/workflows/library").await;
    let template = walk
        .post("post_workflows_library_key_install", "/api/v2/workflows/library/model_monitoring/install", &json!({}))
        .await;
    let template = template["id"].as_str().expect("version").to_string();
    let studio = json!({ "name": "Daily VaR watch", "definition": { "steps": [
        { "kind": "read_prices", "id": "prices", "instrument": "SPX", "observations": 250 },
        { "kind": "measure", "id": "var_95", "after": ["prices"], "input": "prices", "measure": "value_at_risk95" },
        { "kind": "check", "id": "within_appetite", "after": ["var_95"], "input": "var_95", "comparison": "le", "limit": 0.05 },
        { "kind": "review", "id": "sign_off", "after": ["within_appetite"], "title": "Sign off the daily VaR" },
        { "kind": "report", "id": "report", "after": ["sign_off"], "title": "Daily VaR", "include": ["var_95", "within_appetite"] }
    ]}});
    let studio = walk.post("post_workflow_studio_versions", "/api/v2/workflow-studio/versions", &studio).await;
    let studio = studio["id"].as_str().expect("version").to_string();
    walk.get("get_workflow_studio_versions_uid", &format!("/api/v2/workflow-studio/versions/{studio}")).await;
    let suite = json!({ "cases": [
        { "name": "approved", "expect": "completed" },
        { "name": "rejected", "reviews": { "sign_off": "reject" }, "expect": "cancelled" }
    ]});
    let campaign = walk
        .post(
            "post_workflow_studio_versions_uid_validate",
            &format!("/api/v2/workflow-studio/versions/{studio}/validate"),
            &suite,
        )
        .await;
    let campaign = campaign["id"].as_str().expect("campaign").to_string();
    walk.get("get_workflow_studio_campaigns_uid", &format!("/api/v2/workflow-studio/campaigns/{campaign}")).await;
    let reviewer = enrolled_operator(&app, "workflow-reviewer@example.com", Role::Approver).await;
    let reviewer = sign_in(&app, &reviewer).await;
    let run = walk.post("post_workflows_runs", "/api/v2/workflows/runs", &json!({ "version_uid": template })).await;
    let run = run["id"].as_str().expect("run").to_string();
    crate::workflows::reaches(&app, &run, "awaiting_review").await;
    crate::workflows::console_review(&app, &reviewer, &run, "approve").await;
    crate::workflows::reaches(&app, &run, "completed").await;
    walk.get("get_workflows_runs_uid", &format!("/api/v2/workflows/runs/{run}")).await;
    let second = walk.post("post_workflows_runs", "/api/v2/workflows/runs", &json!({ "version_uid": template })).await;
    let second = second["id"].as_str().expect("run").to_string();
    crate::workflows::reaches(&app, &second, "awaiting_review").await;
    walk.post("post_workflows_runs_uid_cancel", &format!("/api/v2/workflows/runs/{second}/cancel"), &json!({})).await;
    walk.get("get_workflows_runs", "/api/v2/workflows/runs?limit=1").await;
    // The workflow gateway: a report that ends at once (200), a monitoring run that waits for a person (202).
    crate::workflows::demo(&app).await;
    let report = crate::workflows::installed(&app, "liquidity_report").await;
    let admin = crate::workflow_gateway::admin_cookie(&app).await;
    assert_eq!(crate::workflow_gateway::allowlist(&app, &admin, &[&report, &template]).await.status(), 303);
    for (message, version) in [("msg-liquidity-1", &report), ("msg-monitoring-1", &template)] {
        let sent = json!({ "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": { "message": {
            "messageId": message, "role": "ROLE_USER", "parts": [{ "data": { "skill": version } }] } } });
        let response = app
            .http
            .post(app.url("/api/v2/agent-execution/workflows/a2a"))
            .bearer_auth(&app.key)
            .header("A2A-Version", "1.0")
            .json(&sent)
            .send()
            .await
            .expect("request");
        walk.record("post_agent_execution_workflows_a2a", response).await;
    }
    let workflow = walk.seen["post_workflows_library_key_install 201"]["workflow_id"].clone();
    let baseline =
        json!({ "minutes_per_run": 90, "minutes_per_review": 15, "hourly_cost_minor": 12000, "currency": "USD" });
    walk.post(
        "post_workflows_proof_of_value",
        "/api/v2/workflows/proof-of-value",
        &json!({ "workflow_uid": workflow, "baseline": baseline }),
    )
    .await;
    walk.get("get_workflows_proof_of_value", "/api/v2/workflows/proof-of-value").await;
    // Agent Spaces: promoted at the console, run in the request and on the queue.
    let space = crate::agent_spaces::promoted(&app, "market_watch").await;
    let briefing = crate::agent_spaces::promoted(&app, "treasury_briefing").await;
    walk.get("get_agents_spaces", "/api/v2/agents/spaces").await;
    walk.get("get_agents_spaces_uid", &format!("/api/v2/agents/spaces/{space}")).await;
    let body = json!({ "prompt": "How did AAPL move? Show its prices.", "execution_mode": "sync", "model_selection": "auto_native" });
    let ran = walk.post("post_agents_spaces_uid_runs", &format!("/api/v2/agents/spaces/{space}/runs"), &body).await;
    let briefed =
        json!({ "prompt": "Morning briefing, please", "execution_mode": "async", "model_selection": "auto_native" });
    walk.post("post_agents_spaces_uid_runs", &format!("/api/v2/agents/spaces/{briefing}/runs"), &briefed).await;
    walk.get("get_agents_runs_runuid", &format!("/api/v2/agents/runs/{}", ran["id"].as_str().expect("run"))).await;
    let execution = format!("/api/v2/agents/executions/{}", ran["execution_id"].as_str().expect("execution"));
    walk.get("get_agents_executions_uid", &execution).await;
    // Client calls: a call recorded, its recording uploaded, consent captured, the recording transcribed.
    let call = walk
        .post("post_client_intelligence_calls", "/api/v2/client-intelligence/calls", &json!({ "title": "Quarterly review", "counterparty": "cp_acme_supplies", "occurred_at": "2026-11-20T15:00:00Z" }))
        .await;
    let call = format!("/api/v2/client-intelligence/calls/{}", call["id"].as_str().expect("call"));
    let audio = crate::calls::recording(&crate::calls::librivox("sense_and_sensibility_01_austen_64kb-0930"));
    walk.post("post_client_intelligence_calls_uid_recordings", &format!("{call}/recordings"), &audio).await;
    walk.post("post_client_intelligence_calls_uid_consent", &format!("{call}/consent"), &crate::calls::captured())
        .await;
    walk.post(
        "post_client_intelligence_calls_uid_transcribe_recording",
        &format!("{call}/transcribe-recording"),
        &json!({ "language": "en" }),
    )
    .await;
    walk.get("get_client_intelligence_calls_uid", &call).await;
    walk.get("get_marketplace_listings", "/api/v2/marketplace/listings").await;
    walk.get("get_intelligence_summary", "/api/v2/intelligence/summary").await;
    walk.get("get_quant_compute_jobs", "/api/v2/quant/compute/jobs?limit=1").await;
    let cancel = format!("/api/v2/quant/compute/jobs/{}/cancel", queued["id"].as_str().expect("id"));
    walk.post("post_quant_compute_jobs_uid_cancel", &cancel, &json!({})).await;

    let doc: Value =
        app.http.get(app.url("/api/v2/openapi.json")).send().await.expect("request").json().await.expect("json");
    let mut documented = Vec::new();
    for item in doc["paths"].as_object().expect("paths").values() {
        for op in item.as_object().expect("item").values() {
            for (status, response) in op["responses"].as_object().expect("responses") {
                if status.starts_with('2') && response.pointer("/content/application~1json").is_some() {
                    documented.push(format!("{} {status}", op["operationId"].as_str().expect("id")));
                }
            }
        }
    }
    // A payment through a bank file: the workspace's own account approved, the payment to the supplier
    // approved by a person and executed, its file written, and the bank's notification of it imported twice.
    let own = json!({ "owner": "own", "currency": "EUR", "holder_name": "Example Treasury GmbH",
        "iban": "FR1420041010050500013M02606", "bic": "PSSTFRPPXXX" });
    let own = app.post_json("/api/v2/bank-accounts", &app.key, &own, None).await.json::<Value>().await.expect("json");
    fiscus_apptest::bank::approve_first_version(&app, &own).await;
    let payment = json!({ "kind": "payment", "amount_minor": 125000, "currency": "EUR", "counterparty": cp_id,
        "connector": "iso20022", "execution_mode": "human_approved", "risk_tier": "T1",
        "reference": "INV-2026-0107", "required_checks": [] });
    let paid = app.post_json("/api/v2/actions", &app.key, &payment, None).await.json::<Value>().await.expect("json");
    let paid = paid["id"].as_str().expect("id").to_string();
    assert_eq!(decide(&app, &cookie, &paid, "approve").await.status(), 303);
    let executed = app.post_json(&format!("/api/v2/actions/{paid}/execute"), &app.key, &json!({}), None).await;
    assert!(executed.status().is_success());
    app.drain().await;
    let files = walk.get("get_payment_files", "/api/v2/payment-files?limit=1").await;
    let file_id = files["data"][0]["id"].as_str().expect("a payment file").to_string();
    walk.get("get_payment_files_id", &format!("/api/v2/payment-files/{file_id}")).await;
    let booked = fiscus_apptest::bank::notification(
        "NTF-2026-1201",
        &[fiscus_apptest::bank::entry(&paid, "1250.00", "INV-2026-0107")],
    );
    let message = walk.post("post_bank_messages", "/api/v2/bank-messages", &json!({ "document": booked })).await;
    walk.post("post_bank_messages", "/api/v2/bank-messages", &json!({ "document": booked })).await;
    walk.get("get_bank_messages_id", &format!("/api/v2/bank-messages/{}", message["id"].as_str().expect("id"))).await;
    // The approval policy: two admins put the documented example's first rule in force (as the console does),
    // then machines read it and dry-run a proposal against it.
    {
        use fiscus_domain::actor::Actor;
        use fiscus_domain::people::Role;
        use fiscus_kernel::governed::Caller;
        let tenant = fiscus_domain::tenancy::Tenant {
            workspace_id: app.workspace_id.clone(),
            environment: fiscus_domain::credentials::Environment::Sandbox,
        };
        let mut tx = app.state.store.begin().await.expect("begin");
        let now = fiscus_domain::clock::now_micros();
        for (name, about) in [("treasury", "Treasury operations"), ("cfo", "The CFO's office")] {
            fiscus_actions::tables::approver_groups::create(
                &mut tx,
                &app.workspace_id,
                name,
                Some(about),
                "operator:opr_ada",
                now,
            )
            .await
            .expect("group");
        }
        let policy = serde_json::from_value(json!({ "rules": [
            { "name": "large-payments", "description": "Payments of 1m or more need treasury and the CFO",
              "when": { "kinds": ["payment", "transfer"], "amount_at_least_minor": { "USD": 100000000, "EUR": 100000000 } },
              "require": { "groups": [ { "group": "treasury", "count": 2 }, { "group": "cfo", "count": 1 } ],
                           "approval_expires_after_hours": 48 } } ] }))
        .expect("policy");
        let ada = Caller::bare(Actor::operator("opr_01KBTA0C4GZ2Q5R8V1XWJ3N6M9"));
        let bob = Caller::bare(Actor::operator("opr_01KBTA0C4GZ2Q5R8V1XWJ3N6MA"));
        let v = fiscus_actions::steps::policies::propose(&mut tx, &tenant, &ada, Role::Admin, policy)
            .await
            .expect("propose");
        let hash = v.record.content_hash.clone();
        fiscus_actions::steps::policies::decide(
            &mut tx,
            &app.state.settings,
            &tenant,
            &bob,
            Role::Admin,
            &v.record.id,
            true,
            None,
            &hash,
        )
        .await
        .expect("in force");
        tx.commit().await.expect("commit");
    }
    walk.get("get_actions_approval_policies", "/api/v2/actions/approval-policies").await;
    let large = json!({ "kind": "payment", "amount_minor": 1_000_000_000, "currency": "USD", "counterparty": cp_id,
        "connector": "sandbox", "execution_mode": "human_approved", "risk_tier": "T1", "reference": "INV-2026-0108" });
    walk.post("post_actions_approval_policies_dry_run", "/api/v2/actions/approval-policies/dry-run", &large).await;
    // The transparency log over everything the walk wrote: every sealed row and audit event has its leaf,
    // and the paid action's proof is shown against a fresh checkpoint that extends an earlier one.
    let mut conn = app.state.store.read().await.expect("conn");
    let mut ev = app.state.store.evidence_read().await.expect("evidence");
    let (checked, unlogged) =
        fiscus_store::sealed_tables::unlogged(&mut conn, &mut ev, &app.workspace_id).await.expect("log check");
    drop((conn, ev));
    assert!(checked > 100, "{checked}");
    assert_eq!(unlogged, vec![], "every sealed record and audit event is in the log");
    let first = walk.post("post_evidence_checkpoints", "/api/v2/evidence/checkpoints", &json!({})).await;
    walk.post("post_evidence_checkpoints", "/api/v2/evidence/checkpoints", &json!({})).await;
    walk.get("get_evidence_checkpoint", "/api/v2/evidence/checkpoint").await;
    walk.get("get_evidence_checkpoints", "/api/v2/evidence/checkpoints?limit=2").await;
    walk.get("get_evidence_key", "/api/v2/evidence/key").await;
    walk.get("get_evidence_records_id_proof", &format!("/api/v2/evidence/records/{paid}/proof")).await;
    walk.get("get_actions_uid_evidence_bundle", &format!("/api/v2/actions/{paid}/evidence-bundle")).await;
    let earlier = first["tree_size"].as_i64().expect("size") / 2;
    walk.get("get_evidence_consistency", &format!("/api/v2/evidence/consistency?first={earlier}")).await;
    let mut live: BTreeMap<String, Value> = walk.seen.into_iter().filter(|(k, _)| documented.contains(k)).collect();
    // Secrets the walk was shown once are never committed, not even from a throwaway server: each becomes an
    // obvious placeholder of its kind (the shape check compares member names only).
    for example in live.values_mut() {
        redact_secrets(example);
    }
    if std::env::var("FISCUS_WRITE_EXAMPLES").is_ok() {
        let mut text = serde_json::to_string_pretty(&live).expect("json");
        text.push('\n');
        std::fs::write(EXAMPLES, text).expect("write examples");
    }
    let committed: BTreeMap<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(EXAMPLES).expect("examples file")).expect("examples json");
    for key in &documented {
        let (Some(example), Some(now)) = (committed.get(key), live.get(key)) else {
            panic!("{key}: no example (or the walk does not reach it); FISCUS_WRITE_EXAMPLES=1 rewrites them");
        };
        assert_eq!(shape(example), shape(now), "{key}: the example's shape is stale; FISCUS_WRITE_EXAMPLES=1");
        let served = doc["paths"]
            .as_object()
            .expect("paths")
            .values()
            .flat_map(|item| item.as_object().expect("item").values())
            .find(|op| key.starts_with(&format!("{} ", op["operationId"].as_str().unwrap_or(""))))
            .and_then(|op| {
                op.pointer(&format!("/responses/{}/content/application~1json/example", &key[key.len() - 3..]))
            });
        assert_eq!(served, Some(example), "{key}: the document serves the committed example");
    }
}
