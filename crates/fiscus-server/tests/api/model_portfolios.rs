//! From research's universe to a rebalance proposal, with a person in the middle: a universe handed off
//! (or announced and handed off later), a draft model portfolio with its content hash, an operator's
//! approval at the console (a credential with every scope cannot approve), a governed AI operation, and a
//! rebalance proposal that exists only for an approved, unchanged model portfolio and never executes.

use fiscus_apptest::console::{client, console_page, enrolled_operator, sign_in};
use fiscus_apptest::{TestApp, problem, spawn_app};
use fiscus_domain::actor::Actor;
use fiscus_domain::people::Role;
use serde_json::{Value, json};

async fn demo(app: &TestApp) {
    app.load_demo().await;
}

async fn post(app: &TestApp, path: &str, body: &Value) -> reqwest::Response {
    app.post_json(path, &app.key, body, None).await
}

async fn created(app: &TestApp, path: &str, body: &Value) -> Value {
    let r = post(app, path, body).await;
    assert_eq!(r.status(), 201, "{path}");
    r.json().await.expect("json")
}

fn quality() -> Value {
    json!({
        "name": "Quality compounders", "theme": "quality", "source": "Equity research, thematic desk",
        "members": [
            { "symbol": "MSFT", "relevance": 0.95, "rationale": "Recurring revenue" },
            { "symbol": "AAPL", "relevance": 0.9 }, { "symbol": "JNJ", "relevance": 0.8 },
            { "symbol": "PG", "relevance": 0.7 }, { "symbol": "KO", "relevance": 0.5 }
        ]
    })
}

/// Approves (or rejects) a model portfolio at the console as `cookie`'s operator, with the hash its page
/// shows.
pub async fn console_decision(app: &TestApp, cookie: &str, id: &str, decision: &str) -> reqwest::Response {
    let page = console_page(app, cookie, "/console/model-portfolios").await;
    assert!(page.contains(id), "the draft is listed:\n{page}");
    let form_start = page.find(&format!("action=\"/console/model-portfolios/{id}\"")).expect("a decision form");
    let form = &page[form_start..];
    let value =
        |name: &str| fiscus_apptest::console::between(form, &format!("name=\"{name}\" value=\""), "\"").to_string();
    client()
        .post(app.url(&format!("/console/model-portfolios/{id}")))
        .header("cookie", cookie)
        .form(&[
            ("csrf", value("csrf")),
            ("environment", "sandbox".to_string()),
            ("content_hash", value("content_hash")),
            ("decision", decision.to_string()),
        ])
        .send()
        .await
        .expect("request")
}

#[tokio::test]
async fn a_rebalance_exists_only_for_a_person_approved_unchanged_model_portfolio() {
    let app = spawn_app().await;
    demo(&app).await;
    let universe = created(&app, "/api/v2/investment/themes/universes", &quality()).await;
    assert_eq!(universe["status"], "handed_off");
    let u = universe["id"].as_i64().expect("id");

    // A draft: the four most relevant members, relevance-weighted to exactly one million parts.
    let path = format!("/api/v2/investment/themes/universes/{u}/model-portfolio");
    let model = created(&app, &path, &json!({ "limit": 4, "benchmark_symbol": "SPX" })).await;
    assert_eq!(model["state"], "approval_required");
    let weights: Vec<(String, i64)> = model["holdings"]
        .as_array()
        .expect("holdings")
        .iter()
        .map(|h| (h["symbol"].as_str().expect("symbol").to_string(), h["weight_ppm"].as_i64().expect("weight")))
        .collect();
    let expected = [("MSFT", 283_582), ("AAPL", 268_657), ("JNJ", 238_806), ("PG", 208_955)];
    assert_eq!(weights, expected.map(|(s, w)| (s.to_string(), w)));
    let model_id = model["id"].as_str().expect("id").to_string();
    let hash = model["content_hash"].as_str().expect("hash").to_string();

    // An operation opened on the draft cannot rebalance: no person approved it.
    let op = created(
        &app,
        "/api/v2/investment/governed-ai-operations",
        &json!({ "portfolio_id": 1, "model_portfolio": model_id, "objective": "Move GROWTH onto the quality model" }),
    )
    .await;
    assert_eq!(
        (op["status"].as_str(), op["model_portfolio_hash"].as_str()),
        (Some("governed_review"), Some(hash.as_str()))
    );
    let rebalance = format!("/api/v2/investment/governed-ai-operations/{}/rebalance", op["id"].as_str().expect("id"));
    let p = problem(post(&app, &rebalance, &json!({})).await, 422, "rebalance_refused").await;
    assert!(p["detail"].as_str().expect("detail").starts_with("model_portfolio_not_approved"), "{p}");
    // A credential holding every scope has no way to approve it.
    let r = post(&app, &format!("/api/v2/investment/model-portfolios/{model_id}/approve"), &json!({})).await;
    assert!(r.status() == 404 || r.status() == 405, "{}", r.status());

    // At the console: an auditor cannot decide; an approver approves the hash the page shows.
    let auditor = enrolled_operator(&app, "audrey@example.com", Role::Auditor).await;
    let cookie = sign_in(&app, &auditor).await;
    let page = console_page(&app, &cookie, "/console/model-portfolios").await;
    assert!(page.contains(&hash[..19]) && !page.contains("Approve sha256"), "an auditor sees no decision form");
    let approver = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &approver).await;
    assert_eq!(console_decision(&app, &cookie, &model_id, "approve").await.status(), 303);
    let approved: Value =
        app.get(&format!("/api/v2/investment/model-portfolios/{model_id}"), &app.key).await.json().await.expect("json");
    assert_eq!(approved["state"], "approved");
    assert_eq!(approved["decided_by"], format!("operator:{}", approver.id));
    // Decided once.
    let again = client()
        .post(app.url(&format!("/console/model-portfolios/{model_id}")))
        .header("cookie", &cookie)
        .form(&[
            (
                "csrf",
                fiscus_apptest::console::hidden(
                    &console_page(&app, &cookie, "/console/model-portfolios").await,
                    "csrf",
                ),
            ),
            ("environment", "sandbox".to_string()),
            ("content_hash", hash.clone()),
            ("decision", "reject".to_string()),
        ])
        .send()
        .await
        .expect("request");
    assert_eq!(again.status(), 409);

    // A caller who reviewed another hash is refused; the reviewed one gets the proposal.
    let stale = json!({ "expected_model_portfolio_hash": format!("sha256:{}", "0".repeat(64)) });
    let p = problem(post(&app, &rebalance, &stale).await, 422, "rebalance_refused").await;
    assert!(p["detail"].as_str().expect("detail").starts_with("stale_model_portfolio_hash"), "{p}");
    let proposal = created(&app, &rebalance, &json!({ "expected_model_portfolio_hash": hash, "cost_bps": 10 })).await;
    let out = &proposal["output"];
    assert_eq!((out["executable"].as_bool(), out["model_portfolio_hash"].as_str()), (Some(false), Some(hash.as_str())));
    let orders = out["orders"].as_array().expect("orders");
    let side =
        |s: &str| orders.iter().find(|o| o["symbol"] == s).map(|o| o["side"].as_str().expect("side").to_string());
    // What the model leaves out is sold whole; what it holds is bought up to its weight.
    for s in ["AMD", "XOM", "JPM", "UNH"] {
        assert_eq!(side(s).as_deref(), Some("sell"), "{s}");
    }
    for s in ["AAPL", "JNJ", "PG"] {
        assert_eq!(side(s).as_deref(), Some("buy"), "{s}");
    }
    let traded: i64 = orders.iter().map(|o| o["notional_minor"].as_i64().expect("notional")).sum();
    assert_eq!(out["traded_notional_minor"], traded);
    assert_eq!(out["estimated_costs_minor"], (traded as f64 * 0.001).round() as i64);
    // Holdings 193,195.20 at the marks plus 210,000.00 cash.
    assert_eq!(out["portfolio_value_minor"], 19_319_520 + 21_000_000);
    for o in orders.iter().filter(|o| o["side"] == "buy") {
        let target = weights.iter().find(|(s, _)| o["symbol"] == s.as_str()).expect("a model member").1;
        let after = o["weight_after_ppm"].as_i64().expect("after");
        assert!(after <= target && target - after < 2_000, "{o}: {after} vs {target}");
    }
    assert_eq!(app.count("SELECT COUNT(*) FROM investment_records WHERE kind = 'rebalance'").await, 1);

    // As an action, its checks are computed from the book: AAPL on the restricted list fails that check, and
    // MSFT at 28 % of the book fails concentration (25 %); execution would be refused on either.
    let cli = fiscus_kernel::governed::Caller::bare(Actor::cli());
    fiscus_investment::orders::restrict(
        &app.state.store,
        &cli,
        &app.workspace_id,
        "AAPL",
        "Material non-public information",
    )
    .await
    .expect("restrict");
    assert_eq!(
        app.count("SELECT COUNT(*) FROM audit_events WHERE action = 'investment.restricted_list.added'").await,
        1
    );
    let actions = format!("/api/v2/investment/rebalance-proposals/{}/actions", proposal["id"].as_str().expect("id"));
    let action = created(&app, &actions, &json!({ "risk_tier": "T1" })).await;
    let status = |key: &str| {
        action["checks"].as_array().expect("checks").iter().find(|c| c["check_key"] == key).expect(key)["status"]
            .as_str()
            .expect("status")
            .to_string()
    };
    assert_eq!(
        (status("pre_trade.limits"), status("pre_trade.restricted_list"), status("pre_trade.concentration")),
        ("passed".to_string(), "failed".to_string(), "failed".to_string())
    );
    assert_eq!(action["envelope"]["risk_tier"], "T1");
    assert_eq!(
        app.count("SELECT COUNT(*) FROM actions").await,
        1,
        "a proposal executes nothing; its action awaits approval"
    );

    // An edited model portfolio is never served or used.
    app.execute(&format!(
        "UPDATE model_portfolios SET holdings = REPLACE(holdings, '283582', '983582') WHERE id = '{model_id}'"
    ))
    .await;
    let r = app.get(&format!("/api/v2/investment/model-portfolios/{model_id}"), &app.key).await;
    assert_eq!(r.status(), 500);
    assert_eq!(post(&app, &rebalance, &json!({})).await.status(), 500);
}

#[tokio::test]
async fn a_universe_waits_for_its_handoff_and_bad_requests_change_nothing() {
    let app = spawn_app().await;
    demo(&app).await;
    let announced = created(
        &app,
        "/api/v2/investment/themes/universes",
        &json!({ "name": "Energy transition", "theme": "energy", "source": "Research" }),
    )
    .await;
    assert_eq!(announced["status"], "pending");
    let u = announced["id"].as_i64().expect("id");
    let draw = format!("/api/v2/investment/themes/universes/{u}/model-portfolio");
    let pending = problem(post(&app, &draw, &json!({})).await, 409, "handoff_unavailable").await;
    assert_eq!(pending["state"], "pending");
    let handoff = format!("/api/v2/investment/themes/universes/{u}/handoff");
    let members = json!({ "members": [{ "symbol": "XOM", "relevance": 0.4 }, { "symbol": "CVX", "relevance": 0.6 }] });
    let r = post(&app, &handoff, &members).await;
    assert_eq!(r.status(), 200);
    problem(post(&app, &handoff, &members).await, 409, "conflict").await;
    let equal = created(&app, &draw, &json!({ "weighting": "equal" })).await;
    assert_eq!(equal["holdings"][0]["weight_ppm"], 500_000);

    let before = app.count("SELECT COUNT(*) FROM model_portfolios").await;
    for (body, field) in [
        (json!({ "limit": 0 }), "limit"),
        (json!({ "limit": 10000 }), "limit"),
        (json!({ "weighting": "market_cap" }), "weighting"),
    ] {
        let p = problem(post(&app, &draw, &body).await, 422, "invalid_request").await;
        assert!(p["errors"].to_string().contains(field), "{p}");
    }
    let p = problem(post(&app, &draw, &json!({ "benchmark_symbol": "NOPE" })).await, 409, "reference_not_found").await;
    assert_eq!(p["errors"][0]["field"], "benchmark_symbol", "{p}");
    let unknown =
        json!({ "name": "x", "theme": "t", "source": "s", "members": [{ "symbol": "NOPE", "relevance": 0.5 }] });
    let p =
        problem(post(&app, "/api/v2/investment/themes/universes", &unknown).await, 409, "reference_not_found").await;
    assert_eq!(p["errors"][0]["field"], "members", "{p}");
    for (body, field) in [
        (
            json!({ "name": "x", "theme": "t", "source": "s", "members": [{ "symbol": "MSFT", "relevance": 1.5 }] }),
            "members",
        ),
        (json!({ "name": " ", "theme": "t", "source": "s" }), "name"),
    ] {
        let p = problem(post(&app, "/api/v2/investment/themes/universes", &body).await, 422, "invalid_request").await;
        assert!(p["errors"].to_string().contains(field), "{p}");
    }
    // Another workspace's universe and model portfolio are invisible.
    let (_, other) = app.other_workspace_key().await;
    problem(app.post_json(&draw, &other, &json!({}), None).await, 404, "not_found").await;
    let r =
        app.get(&format!("/api/v2/investment/model-portfolios/{}", equal["id"].as_str().expect("id")), &other).await;
    problem(r, 404, "not_found").await;
    let p = problem(
        app.post_json(
            "/api/v2/investment/governed-ai-operations",
            &other,
            &json!({ "portfolio_id": 1, "model_portfolio": equal["id"], "objective": "x" }),
            None,
        )
        .await,
        409,
        "reference_not_found",
    )
    .await;
    assert!(p["errors"].to_string().contains("portfolio_id"), "{p}");
    assert_eq!(app.count("SELECT COUNT(*) FROM model_portfolios").await, before);
    assert_eq!(app.count("SELECT COUNT(*) FROM governed_ai_operations").await, 0);
    let list: Value = app.get("/api/v2/investment/themes/universes", &app.key).await.json().await.expect("json");
    assert_eq!(list["data"].as_array().expect("data").len(), 1);
}

/// The whole chain: universe → draft model portfolio → approval at the console → governed operation →
/// rebalance proposal → investment Financial Action with computed checks → two approvals at the console →
/// execution → settlement into the book → reconciliation → tax lots moved; and the envelope's hashes lead
/// back to the model portfolio a person approved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebalance_becomes_an_approved_executed_reconciled_trade_that_moves_the_book() {
    let app = spawn_app().await;
    demo(&app).await;
    let u = created(&app, "/api/v2/investment/themes/universes", &quality()).await["id"].as_i64().expect("id");
    let model =
        created(&app, &format!("/api/v2/investment/themes/universes/{u}/model-portfolio"), &json!({ "limit": 5 }))
            .await;
    let model_id = model["id"].as_str().expect("id").to_string();
    let model_hash = model["content_hash"].as_str().expect("hash").to_string();
    let ada = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let ada_cookie = sign_in(&app, &ada).await;
    assert_eq!(console_decision(&app, &ada_cookie, &model_id, "approve").await.status(), 303);
    let op = created(
        &app,
        "/api/v2/investment/governed-ai-operations",
        &json!({ "portfolio_id": 1, "model_portfolio": model_id, "objective": "Onto the quality model" }),
    )
    .await;
    let rebalance = format!("/api/v2/investment/governed-ai-operations/{}/rebalance", op["id"].as_str().expect("id"));
    let proposal = created(&app, &rebalance, &json!({})).await;
    let proposal_id = proposal["id"].as_str().expect("id").to_string();

    // The proposal becomes an action awaiting two approvals, its checks computed from the book.
    let actions = format!("/api/v2/investment/rebalance-proposals/{proposal_id}/actions");
    let action = created(&app, &actions, &json!({})).await;
    let id = action["id"].as_str().expect("id").to_string();
    assert_eq!(
        (action["envelope"]["kind"].as_str(), action["control_state"].as_str()),
        (Some("investment_order"), Some("pending_approval"))
    );
    let meta = &action["envelope"]["metadata"];
    assert_eq!(
        (meta["model_portfolio_hash"].as_str(), meta["proposal_hash"].as_str()),
        (Some(model_hash.as_str()), proposal["content_hash"].as_str())
    );
    let full: Value = app.get(&format!("/api/v2/actions/{id}"), &app.key).await.json().await.expect("json");
    let checks = full["checks"].as_array().expect("checks");
    assert_eq!(checks.len(), 3, "{full}");
    assert!(checks.iter().all(|c| c["status"] == "passed"), "{checks:?}");
    problem(post(&app, &actions, &json!({})).await, 409, "conflict").await;
    // A credential holding every scope cannot execute what no person approved.
    let refused = post(&app, &format!("/api/v2/actions/{id}/execute"), &json!({})).await;
    let refused = problem(refused, 422, "execution_refused").await;
    assert_eq!(refused["failed_gates"][0]["gate"], "authorised");

    // Two distinct approvers (T2), then execution; the worker settles and reconciles.
    assert_eq!(fiscus_apptest::console::decide(&app, &ada_cookie, &id, "approve").await.status(), 303);
    let grace = enrolled_operator(&app, "grace@example.com", Role::Approver).await;
    let grace_cookie = sign_in(&app, &grace).await;
    assert_eq!(fiscus_apptest::console::decide(&app, &grace_cookie, &id, "approve").await.status(), 303);
    let executed = post(&app, &format!("/api/v2/actions/{id}/execute"), &json!({})).await;
    assert!(executed.status().is_success(), "{}", executed.text().await.unwrap_or_default());
    app.drain().await;
    let state: Value = app.get(&format!("/api/v2/actions/{id}"), &app.key).await.json().await.expect("json");
    assert_eq!(
        (state["control_state"].as_str(), state["reconciliation_status"].as_str()),
        (Some("completed"), Some("matched")),
        "{state}"
    );

    // The book moved: what the model leaves out is gone, its members are held by trade lots, and the book as
    // of today (the default) counts the settled buys, though the newest prices are years older.
    let lots: Value = app.get("/api/v2/investment/portfolios/1/tax-lots", &app.key).await.json().await.expect("json");
    let held: Vec<&str> =
        lots["lots"].as_array().expect("lots").iter().map(|l| l["symbol"].as_str().expect("symbol")).collect();
    for gone in ["AMD", "XOM", "JPM", "UNH"] {
        assert!(!held.contains(&gone), "{gone} was sold: {held:?}");
    }
    let trades: Vec<&Value> =
        lots["lots"].as_array().expect("lots").iter().filter(|l| l["origin"] == "trade").collect();
    assert!(!trades.is_empty());
    assert!(trades.iter().all(|l| l["lot"].as_str().expect("lot").starts_with(&id)));
    // The collateral snapshot of today's book holds what the trade bought, valued at the newest prices.
    let snapshot: Value = app
        .post_json("/api/v2/investment/portfolios/1/collateral-inventory", &app.key, &json!({}), None)
        .await
        .json()
        .await
        .expect("json");
    let positions: Vec<&str> =
        snapshot["output"]["lines"].as_array().expect("lines").iter().filter_map(|l| l["position"].as_str()).collect();
    for bought in trades.iter().filter_map(|l| l["symbol"].as_str()) {
        assert!(positions.contains(&bought), "{bought} is in the snapshot: {positions:?}");
    }
    assert!(app.count("SELECT COUNT(*) FROM lot_disposals").await > 0);
    // Production reads the book as imported: the sandbox trade never reached it.
    assert_eq!(app.count("SELECT COUNT(*) FROM tax_lots WHERE environment = 'production'").await, 0);
    // From the executed envelope back to the approved model portfolio.
    let approved: Value =
        app.get(&format!("/api/v2/investment/model-portfolios/{model_id}"), &app.key).await.json().await.expect("json");
    assert_eq!(
        (approved["state"].as_str(), approved["content_hash"].as_str()),
        (Some("approved"), Some(model_hash.as_str()))
    );
    assert_eq!(state["envelope"]["metadata"]["model_portfolio_hash"], model_hash);
}

/// An operator turns a proposal into its trade at the console (a form naming the proposal's hash); the
/// action is the operator's, awaits approvals like any other, and a proposal becomes one action only.
#[tokio::test]
async fn an_operator_proposes_the_trade_of_a_rebalance_at_the_console() {
    let app = spawn_app().await;
    demo(&app).await;
    let u = created(&app, "/api/v2/investment/themes/universes", &quality()).await["id"].as_i64().expect("id");
    let model =
        created(&app, &format!("/api/v2/investment/themes/universes/{u}/model-portfolio"), &json!({ "limit": 5 }))
            .await;
    let model_id = model["id"].as_str().expect("id").to_string();
    let ada = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &ada).await;
    assert_eq!(console_decision(&app, &cookie, &model_id, "approve").await.status(), 303);
    let op = created(
        &app,
        "/api/v2/investment/governed-ai-operations",
        &json!({ "portfolio_id": 1, "model_portfolio": model_id, "objective": "Onto the quality model" }),
    )
    .await;
    let proposal = created(
        &app,
        &format!("/api/v2/investment/governed-ai-operations/{}/rebalance", op["id"].as_str().expect("id")),
        &json!({}),
    )
    .await;
    let id = proposal["id"].as_str().expect("id").to_string();
    let page = console_page(&app, &cookie, "/console/rebalance-proposals").await;
    assert!(page.contains(&id) && page.contains("Propose the trade"), "{page}");
    let submit = |hash: String, cookie: String| {
        let app = &app;
        let id = id.clone();
        async move {
            let page = console_page(app, &cookie, "/console/rebalance-proposals").await;
            client()
                .post(app.url(&format!("/console/rebalance-proposals/{id}")))
                .header("cookie", &cookie)
                .form(&[
                    ("csrf", fiscus_apptest::console::hidden(&page, "csrf")),
                    ("environment", "sandbox".to_string()),
                    ("content_hash", hash),
                    ("risk_tier", "T2".to_string()),
                ])
                .send()
                .await
                .expect("request")
        }
    };
    // A page showing another proposal content proposes nothing.
    let stale = submit(format!("sha256:{}", "0".repeat(64)), cookie.clone()).await;
    assert_eq!(stale.status(), 409);
    let done = submit(proposal["content_hash"].as_str().expect("hash").to_string(), cookie.clone()).await;
    assert_eq!(done.status(), 303);
    let action_id = app.count("SELECT COUNT(*) FROM actions WHERE origin = 'operator'").await;
    assert_eq!(action_id, 1);
    let page = console_page(&app, &cookie, "/console/rebalance-proposals").await;
    assert!(!page.contains("Propose the trade"), "proposed once");
    let again = client()
        .post(app.url(&format!("/console/rebalance-proposals/{id}")))
        .header("cookie", &cookie)
        .form(&[
            ("csrf", fiscus_apptest::console::hidden(&page, "csrf")),
            ("environment", "sandbox".to_string()),
            ("content_hash", proposal["content_hash"].as_str().expect("hash").to_string()),
            ("risk_tier", "T2".to_string()),
        ])
        .send()
        .await
        .expect("request");
    assert_eq!(again.status(), 409);
}

/// A model portfolio's page draws its weights and each holding's share of its volatility from the
/// workspace's prices. Expected figures: the last 252 daily returns of MSFT and AAPL in
/// `data/market/us_large_caps_20_daily_adjclose.csv`, sample covariance, Euler allocation
/// w_i (Σw)_i / w'Σw, computed independently with Python's standard library (52.9438 % and 47.0562 %).
#[tokio::test]
async fn a_model_portfolio_s_page_draws_its_weights_and_risk_contributions() {
    let app = spawn_app().await;
    demo(&app).await;
    let universe = json!({ "name": "Pair", "theme": "quality", "source": "test",
        "members": [{ "symbol": "MSFT", "relevance": 0.9 }, { "symbol": "AAPL", "relevance": 0.8 }] });
    let u = created(&app, "/api/v2/investment/themes/universes", &universe).await;
    let model =
        created(&app, &format!("/api/v2/investment/themes/universes/{}/model-portfolio", u["id"]), &json!({})).await;
    let op = enrolled_operator(&app, "ada@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &op).await;
    let page = console_page(
        &app,
        &cookie,
        &format!("/console/model-portfolios/{}?environment=sandbox", model["id"].as_str().expect("id")),
    )
    .await;
    assert!(page.contains("Weights (% of the portfolio): MSFT 52.9412, AAPL 47.0588"), "{page}");
    assert!(
        page.contains("(% of the portfolio&#39;s volatility): MSFT 52.9438, AAPL 47.0562"),
        "risk contributions as the independent computation: {page}"
    );
    assert!(page.contains("Approve sha256:"), "the decision waits on the same page");
    let other =
        console_page(&app, &cookie, "/console/model-portfolios/mpf_0000000000000000000000000?environment=sandbox")
            .await;
    assert!(other.contains("No such model portfolio"), "{other}");
}

/// The body is optional, as the document says: no body at all draws the default portfolio, as `{}` does.
#[tokio::test]
async fn a_model_portfolio_is_drawn_without_a_body() {
    let app = spawn_app().await;
    demo(&app).await;
    let u = created(&app, "/api/v2/investment/themes/universes", &quality()).await["id"].as_i64().expect("id");
    let path = format!("/api/v2/investment/themes/universes/{u}/model-portfolio");
    let bare = app.http.post(app.url(&path)).bearer_auth(&app.key).send().await.expect("request");
    assert_eq!(bare.status(), 201);
    let bare: Value = bare.json().await.expect("json");
    let braces = created(&app, &path, &json!({})).await;
    assert_eq!(bare["holdings"], braces["holdings"]);
    assert_eq!(bare["holdings"].as_array().map(Vec::len), Some(5), "every member of five, the default being 20");
}
