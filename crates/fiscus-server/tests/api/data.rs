//! The data plane: every file in `data/` imported with its provenance (counts and published values),
//! re-import a no-op, each bad input refused with its line and column and nothing kept, and the reads'
//! filters, pages, 404 and 403.

use fiscus_apptest::{TestApp, problem, spawn_app};
use fiscus_data::import::{self, Failure, ImportRequest, Mapping, Silent};
use fiscus_data_core::rules::{Kind, Provenance};
use fiscus_domain::actor::Actor;
use fiscus_domain::credentials::Environment;
use fiscus_domain::scopes::ScopeSet;
use fiscus_kernel::governed::Caller;
use serde_json::{Value, json};

async fn demo(app: &TestApp) -> Vec<import::Outcome> {
    fiscus_server::demo_data::load(&app.state.store, &Caller::bare(Actor::demo()), &app.workspace_id, &Silent)
        .await
        .expect("demo data loads")
}

async fn json(app: &TestApp, path: &str) -> Value {
    let r = app.get(path, &app.key).await;
    assert_eq!(r.status(), 200, "{path}");
    r.json().await.expect("json")
}

#[tokio::test]
async fn every_shipped_file_imports_with_its_provenance_and_published_values() {
    let app = spawn_app().await;
    let outcomes = demo(&app).await;
    assert!(outcomes.iter().all(|o| o.created));
    let rows: Vec<(&str, i64)> = outcomes.iter().map(|o| (o.dataset.file_name.as_str(), o.dataset.row_count)).collect();
    for (file, expected) in [
        ("reference/instruments.csv", 26),
        // 20 symbols × 8,313 days, every cell observed.
        ("market/us_large_caps_20_daily_adjclose.csv", 166_260),
        ("market/sp500_ohlcv_daily_1999_2018.csv", 5_031),
        ("market/sp500_index_daily.csv", 8_313),
        ("market/factor_etfs_daily_adjclose.csv", 5 * 2_264),
        ("economics/fama_french_3factor_monthly.csv", 4 * 1_109),
        ("economics/us_core_cpi_monthly.csv", 743),
        ("economics/us_corporate_bond_yields_monthly.csv", 2 * 1_200),
        // FRED marks missing days with `.`: 290 of 8,611 are missing and stay missing.
        ("economics/wti_crude_daily.csv", 8_321),
        ("economics/us_employment_monthly_2006_2015.csv", 23 * 120),
        ("economics/us_macro_quarterly_1959_2009.csv", 12 * 203),
    ] {
        assert!(rows.contains(&(file, expected)), "{file}: {rows:?}");
    }
    let list = json(&app, "/api/v2/data/datasets?kind=prices").await;
    let large = &list["data"][0];
    assert_eq!(large["name"], "us_large_caps_20_daily_adjclose");
    assert_eq!(large["licence"], "BSD-3-Clause");
    assert_eq!(large["provenance"], "observed");
    assert_eq!(large["period_start"], "1990-01-02");
    assert_eq!(large["period_end"], "2022-12-28");
    assert!(large["file_sha256"].as_str().is_some_and(|h| h.starts_with("sha256:")));
    let sample = json(&app, "/api/v2/data/datasets?kind=journals").await;
    assert_eq!(sample["data"][0]["provenance"], "synthetic");

    // Published values on known dates.
    let aapl = json(&app, "/api/v2/data/instruments/AAPL/prices?start=2022-12-28&end=2022-12-28").await;
    assert_eq!(aapl["data"][0]["adj_close"], 125.674);
    let spx = json(&app, "/api/v2/data/instruments/SPX/prices?dataset=3&start=1999-01-04&end=1999-01-04").await;
    assert_eq!(spx["data"][0]["close"], 1228.099976);
    assert_eq!(spx["data"][0]["volume"], 877000000.0);
    assert_eq!(spx["dataset"]["name"], "sp500_ohlcv_daily_1999_2018");
    let cpi = json(&app, "/api/v2/data/economics/series/cpilfesl/observations?start=2018-11-01").await;
    assert_eq!(cpi["data"][0]["value"], 259.481);
    assert_eq!(cpi["frequency"], "monthly");
    let wti = json(&app, "/api/v2/data/economics/series/dcoilwtico/observations?limit=1").await;
    assert_eq!((wti["data"][0]["date"].as_str(), wti["data"][0]["value"].as_f64()), (Some("1986-01-02"), Some(25.56)));
    let ff = json(&app, "/api/v2/data/economics/series/ff3_mkt_rf/observations?limit=1").await;
    assert_eq!((ff["data"][0]["date"].as_str(), ff["data"][0]["value"].as_f64()), (Some("1926-07-01"), Some(2.96)));
    let gdp = json(&app, "/api/v2/data/economics/series/macro_realgdp").await;
    assert_eq!((gdp["frequency"].as_str(), gdp["first_date"].as_str()), (Some("quarterly"), Some("1959-01-01")));

    // The same files again: found by hash, nothing new.
    let before = app.count("SELECT COUNT(*) FROM prices").await;
    assert!(demo(&app).await.iter().all(|o| !o.created));
    assert_eq!(app.count("SELECT COUNT(*) FROM prices").await, before);
    assert_eq!(app.count("SELECT COUNT(*) FROM datasets").await, 20);
    // Every dataset's rows still hash to its sealed content hash; an edited price does not.
    let (checked, failing) =
        fiscus_kernel::verify::verify_datasets(&app.state.store, &app.workspace_id).await.expect("verify");
    assert_eq!((checked, failing.len()), (20, 0));
    app.execute("UPDATE prices SET adj_close = '1' WHERE date = '2020-03-16' AND dataset_number = 2").await;
    let (_, failing) =
        fiscus_kernel::verify::verify_datasets(&app.state.store, &app.workspace_id).await.expect("verify");
    assert_eq!(failing, vec![2]);
}

fn request(kind: Kind, csv: &str) -> ImportRequest {
    ImportRequest {
        kind,
        file_name: "input.csv".into(),
        input: csv.as_bytes().to_vec().into(),
        dataset: None,
        source: "test".into(),
        licence: "CC0-1.0".into(),
        provenance: Provenance::Observed,
        mapping: Mapping { delimiter: b',', ..Mapping::default() },
        dry_run: false,
    }
}

async fn refused(app: &TestApp, req: ImportRequest) -> Vec<(u64, Option<String>, String)> {
    match import::import(&app.state.store, &Caller::bare(Actor::cli()), &app.workspace_id, req, &Silent).await {
        Err(Failure::Invalid { file, errors }) => {
            assert_eq!(file, "input.csv");
            errors.into_iter().map(|e| (e.line, e.column, e.message)).collect()
        }
        Ok(o) => panic!("imported {:?}", o.dataset.name),
        Err(e) => panic!("{e}"),
    }
}

#[tokio::test]
async fn each_bad_input_is_refused_with_its_line_and_column_and_nothing_is_kept() {
    let app = spawn_app().await;
    let instruments = "symbol,name,asset_class,currency\nAAA,Alpha,equity,USD\n";
    import::import(
        &app.state.store,
        &Caller::bare(Actor::cli()),
        &app.workspace_id,
        request(Kind::Instruments, instruments),
        &Silent,
    )
    .await
    .expect("instruments");
    let cases: Vec<(Kind, String, u64, &str, &str)> = vec![
        (Kind::Prices, String::new(), 1, "", "empty"),
        (Kind::Prices, "symbol;date;close\nAAA;2020-01-02;1\n".into(), 1, "", "`;`"),
        (Kind::Prices, "symbol,date,close\nAAA,2020-01-02,1\nAAA,1/3/2020,2\n".into(), 3, "date", "format"),
        (Kind::Prices, "symbol,date,close\nAAA,2020-01-02,1\nAAA,2020-01-02,2\n".into(), 3, "date", "twice"),
        (Kind::Prices, "symbol,date,close\nAAA,2020-01-02,NaN\n".into(), 2, "close", "plain decimal"),
        (Kind::Prices, "symbol,date,close\nAAA,2020-01-02,-5\n".into(), 2, "close", "negative"),
        // Unknown symbols: all of them named first, then each line.
        (Kind::Prices, "symbol,date,close\nZZZ,2020-01-02,5\n".into(), 0, "", "does not have: ZZZ; import their"),
        (
            Kind::Instruments,
            "symbol,name,asset_class,currency\nBBB,Beta,equity,XXX\n".into(),
            2,
            "currency",
            "ISO 4217",
        ),
        (Kind::Prices, "symbol,date,close\nAAA,2020-01-02\n".into(), 2, "", "cells"),
        (Kind::Ledgers, "code,name,currency\nGL,Main,USD\nGL,Main,USD\n".into(), 3, "code", "twice"),
    ];
    for (kind, csv, line, column, message) in cases {
        let errors = refused(&app, request(kind, &csv)).await;
        let (l, c, m) = &errors[0];
        assert_eq!(*l, line, "{csv:?}: {errors:?}");
        if !column.is_empty() {
            assert_eq!(c.as_deref(), Some(column), "{csv:?}: {errors:?}");
        }
        assert!(m.contains(message), "{csv:?}: {m}");
    }
    // A byte-order mark is not part of the first header.
    let bom = "\u{feff}symbol,date,close\nAAA,2020-01-02,5\n";
    import::import(
        &app.state.store,
        &Caller::bare(Actor::cli()),
        &app.workspace_id,
        request(Kind::Prices, bom),
        &Silent,
    )
    .await
    .expect("a BOM is accepted");
    // Journals must balance per entry and currency, and their ledger and entity must exist.
    let ok = |kind, csv: &str| {
        let req = request(kind, csv);
        let app = &app;
        async move {
            import::import(&app.state.store, &Caller::bare(Actor::cli()), &app.workspace_id, req, &Silent)
                .await
                .expect("import")
        }
    };
    ok(Kind::Ledgers, "code,name,currency\nGL,Main,USD\n").await;
    ok(Kind::Entities, "code,name,ledger,currency\nE1,One,GL,USD\n").await;
    let unbalanced = "entry,date,ledger,entity,account,debit,credit,currency\nJ1,2024-01-31,GL,E1,1000,10.00,,USD\nJ1,2024-01-31,GL,E1,2000,,9.99,USD\n";
    let errors = refused(&app, request(Kind::Journals, unbalanced)).await;
    assert!(errors[0].2.contains("does not balance in USD: debits 1000 and credits 999"), "{errors:?}");
    let unknown = "entry,date,ledger,entity,account,debit,credit,currency\nJ1,2024-01-31,GL,E9,1000,10,,USD\nJ1,2024-01-31,GL,E9,2000,,10,USD\n";
    assert!(refused(&app, request(Kind::Journals, unknown)).await[0].2.contains("no entity `E9`"));
    let too_precise = "entry,date,ledger,entity,account,debit,credit,currency\nJ1,2024-01-31,GL,E1,1000,10.001,,USD\n";
    assert!(refused(&app, request(Kind::Journals, too_precise)).await[0].2.contains("more decimals"));
    // A file over the row limit is refused before it is parsed.
    let huge = format!("symbol,date,close\n{}", "AAA,2020-01-02,1\n".repeat(import::MAX_ROWS + 1));
    assert!(refused(&app, request(Kind::Prices, &huge)).await[0].2.contains("at most"));
    // Nothing of a refused file was kept: one price (the BOM file), one ledger, one entity, no journal.
    assert_eq!(app.count("SELECT COUNT(*) FROM prices").await, 1);
    assert_eq!(app.count("SELECT COUNT(*) FROM journals").await, 0);
    assert_eq!(app.count("SELECT COUNT(*) FROM datasets").await, 4);
    // A ledger row imported again unchanged is skipped; changed, refused.
    let again = ok(Kind::Ledgers, "code,name,currency\nGL,Main,USD\nGL2,Second,EUR\n").await;
    assert_eq!((again.dataset.row_count, again.dataset.skipped_count), (1, 1));
    assert!(
        refused(&app, request(Kind::Ledgers, "code,name,currency\nGL,Renamed,USD\n")).await[0]
            .2
            .contains("never changed")
    );
}

#[tokio::test]
async fn reads_filter_page_and_stay_inside_the_workspace() {
    let app = spawn_app().await;
    demo(&app).await;
    // Prices page by date.
    let first = json(&app, "/api/v2/data/instruments/MSFT/prices?start=2020-01-01&limit=2").await;
    assert_eq!(first["data"].as_array().map(Vec::len), Some(2));
    assert_eq!(first["has_more"], true);
    let cursor = first["next_after_id"].as_str().expect("cursor");
    let next =
        json(&app, &format!("/api/v2/data/instruments/MSFT/prices?start=2020-01-01&limit=2&after_id={cursor}")).await;
    assert!(next["data"][0]["date"].as_str() > Some(cursor));
    // Instruments filter exactly.
    let etfs = json(&app, "/api/v2/data/instruments?asset_class=etf&limit=100").await;
    assert_eq!(etfs["data"].as_array().map(Vec::len), Some(5));
    // Finance core: the seed's parameters.
    let entities = json(&app, "/api/v2/finance-core/entities?limit=2").await;
    assert_eq!(entities["data"].as_array().map(Vec::len), Some(2));
    let after = entities["next_after_id"].as_i64().expect("integer cursor");
    let rest = json(&app, &format!("/api/v2/finance-core/entities?after_id={after}")).await;
    assert_eq!(rest["data"].as_array().map(Vec::len), Some(2));
    let inactive = json(&app, "/api/v2/finance-core/entities?status=inactive").await;
    assert_eq!(inactive["data"][0]["code"], "SAMPLE-FR-SAS");
    let gl = inactive["data"][0]["general_ledger_id"].as_i64().expect("gl");
    let journals = json(&app, &format!("/api/v2/finance-core/journals?general_ledger_id={gl}")).await;
    for j in journals["data"].as_array().expect("journals") {
        assert_eq!(j["general_ledger_id"], gl);
        let (d, c) = j["lines"].as_array().expect("lines").iter().fold((0, 0), |(d, c), l| {
            (d + l["debit_minor"].as_i64().unwrap_or(0), c + l["credit_minor"].as_i64().unwrap_or(0))
        });
        assert_eq!(d, c, "a journal balances");
    }
    let uid = journals["data"][0]["uid"].as_str().expect("uid");
    let one = json(&app, &format!("/api/v2/finance-core/journals?uid={uid}")).await;
    assert_eq!(one["data"].as_array().map(Vec::len), Some(1));
    let snapshots =
        json(&app, "/api/v2/financial/snapshots?account=DE-OPERATING-001&balance_type=closing_booked").await;
    assert_eq!(snapshots["data"][1]["amount_minor"], 8_425_050);
    // An end before the start is an empty window, not an error.
    let reversed = json(&app, "/api/v2/data/instruments/AAPL/prices?start=2020-02-01&end=2020-01-01").await;
    assert_eq!(reversed["data"].as_array().map(Vec::len), Some(0), "{reversed}");
    // Bad dates and cursors: 422 naming the field.
    for (path, field) in [
        ("/api/v2/data/instruments/AAPL/prices?after_id=yesterday", "after_id"),
        ("/api/v2/data/instruments/AAPL/prices?limit=10001", "limit"),
        ("/api/v2/finance-core/entities?status=gone", "status"),
        ("/api/v2/data/economics/series/cpilfesl/observations?start=2019-13-01", "start"),
    ] {
        let body = problem(app.get(path, &app.key).await, 422, "invalid_parameter").await;
        assert_eq!(body["errors"][0]["field"], field, "{path}");
    }
    // Another workspace sees none of it.
    let (_, other_key) = app.other_workspace_key().await;
    problem(app.get("/api/v2/data/instruments/AAPL", &other_key).await, 404, "not_found").await;
    let none: Value = app.get("/api/v2/data/datasets", &other_key).await.json().await.expect("json");
    assert_eq!(none["data"].as_array().map(Vec::len), Some(0));
    // A missing scope, and a workspace not entitled to finance core: 403.
    let (_, reference_only) = app.new_app(Environment::Sandbox, "data:reference:read", None).await;
    problem(app.get("/api/v2/finance-core/entities", &reference_only).await, 403, "scope_missing").await;
    let others: Vec<&str> = ScopeSet::all().iter().filter(|s| *s != "finance-core:read").collect();
    let entitlement = ScopeSet::parse(&others.join(" ")).expect("scopes");
    app.admin().set_workspace_entitlement(&app.workspace_id, &entitlement).await.expect("entitle");
    let body = problem(app.get("/api/v2/finance-core/journals", &app.key).await, 403, "entitlement_missing").await;
    assert!(body.to_string().contains("finance-core:read"), "{body}");
}

#[tokio::test]
async fn features_are_computed_from_the_served_dataset_and_match_pandas() {
    let app = spawn_app().await;
    demo(&app).await;
    let list = json(&app, "/api/v2/quant/features").await;
    assert_eq!(list["data"].as_array().map(Vec::len), Some(5));
    let vol = json(&app, "/api/v2/quant/features/volatility_21d").await;
    assert_eq!(vol["pandas"], "p.pct_change().rolling(21).std() * np.sqrt(252)");
    problem(app.get("/api/v2/quant/features/alpha_42", &app.key).await, 404, "not_found").await;
    // The pandas reference (peers/generate.py → features.json) on the same series.
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let fx: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("crates/fiscus-quant/tests/fixtures/features.json")).expect("fixture"),
    )
    .expect("json");
    let aapl = &fx["series"]["AAPL"];
    let dates = aapl["dates"].as_array().expect("dates");
    for key in ["return_1d", "log_return_1d", "volatility_21d", "momentum_12_1", "drawdown"] {
        for k in [0usize, 21, 22, 252, 299, 300, 599] {
            let date = dates[k].as_str().expect("date");
            let page =
                json(&app, &format!("/api/v2/quant/features/{key}/values?instrument=AAPL&start={date}&end={date}"))
                    .await;
            assert_eq!(page["dataset"]["name"], "us_large_caps_20_daily_adjclose");
            match (page["data"].get(0).map(|v| v["value"].as_f64()), aapl["values"][key][k].as_f64()) {
                (None, None) => {}
                (Some(Some(got)), Some(want)) => {
                    assert!((got - want).abs() <= 1e-9 * want.abs().max(1e-12), "{key} {date}: {got} vs pandas {want}")
                }
                (got, want) => panic!("{key} {date}: served {got:?}, pandas {want:?}"),
            }
        }
    }
    // Values are computed over the whole series, then paged by date.
    let first = json(&app, "/api/v2/quant/features/drawdown/values?instrument=SPX&limit=2").await;
    assert_eq!(first["has_more"], true);
    assert_eq!(first["input"], "close");
    problem(app.get("/api/v2/quant/features/drawdown/values", &app.key).await, 422, "invalid_parameter").await;
    problem(app.get("/api/v2/quant/features/drawdown/values?instrument=NOPE", &app.key).await, 404, "not_found").await;
}

#[tokio::test]
async fn a_lineage_export_is_openlineage_sealed_and_kept() {
    let app = spawn_app().await;
    demo(&app).await;
    let post = |body: Value| {
        let app = &app;
        async move { app.post_json("/api/v2/infrastructure/lineage-exports", &app.key, &body, Some(&uuid_key())).await }
    };
    let r = post(serde_json::json!({ "datasets": [2, 7] })).await;
    assert_eq!(r.status(), 201);
    let export: Value = r.json().await.expect("json");
    // Two imports, and the features computed from the prices dataset.
    assert_eq!(export["event_count"], 3);
    let events = export["events"].as_array().expect("events");
    for e in events {
        assert_eq!(e["eventType"], "COMPLETE");
        assert_eq!(e["schemaURL"], "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent");
        assert!(uuid::Uuid::parse_str(e["run"]["runId"].as_str().expect("runId")).is_ok());
        assert!(e["job"]["namespace"].as_str().is_some_and(|n| n.ends_with(&app.workspace_id)));
    }
    let import =
        events.iter().find(|e| e["job"]["name"] == "import.prices.us_large_caps_20_daily_adjclose").expect("import");
    assert_eq!(import["inputs"][0]["name"], "market/us_large_caps_20_daily_adjclose.csv");
    assert!(
        import["outputs"][0]["facets"]["version"]["datasetVersion"].as_str().is_some_and(|v| v.starts_with("sha256:"))
    );
    let id = export["id"].as_str().expect("id");
    let again = json(&app, &format!("/api/v2/infrastructure/lineage-exports/{id}")).await;
    assert_eq!(again["document_hash"], export["document_hash"]);
    assert_eq!(
        again["document_hash"].as_str(),
        fiscus_domain::evidence::seal(&again["events"]).ok().as_deref(),
        "the hash is the RFC 8785 seal of the events"
    );
    problem(post(serde_json::json!({ "datasets": [999] })).await, 409, "reference_not_found").await;
    // An export edited in the database is refused, never served as evidence.
    app.execute(&format!("UPDATE lineage_exports SET document = '[]' WHERE id = '{id}'")).await;
    problem(app.get(&format!("/api/v2/infrastructure/lineage-exports/{id}"), &app.key).await, 500, "integrity_failure")
        .await;
}

fn uuid_key() -> String {
    uuid::Uuid::now_v7().to_string()
}

#[tokio::test]
async fn a_finance_system_imports_over_http_once_and_is_told_what_is_wrong() {
    let app = spawn_app().await;
    let body = |kind: &str, csv: &str| {
        serde_json::json!({
            "kind": kind, "file_name": format!("{kind}.csv"), "csv": csv, "source": "ERP export", "licence": "proprietary"
        })
    };
    let post = |b: Value| {
        let app = &app;
        async move { app.post_json("/api/v2/data/imports", &app.key, &b, Some(&uuid_key())).await }
    };
    let ledgers = body("ledgers", "code,name,currency\nGL-UK,UK General Ledger,GBP\n");
    let r = post(ledgers.clone()).await;
    let status = r.status();
    let created: Value = r.json().await.expect("json");
    assert_eq!(status, 201, "{created}");
    assert_eq!((created["status"].as_str(), created["rows"].as_i64()), (Some("imported"), Some(1)));
    assert!(created["dataset"]["imported_by"].as_str().is_some_and(|a| a == format!("application:{}", app.app_id)));
    let r = post(ledgers).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.expect("json")["status"], "already_imported");
    let mut dry = body("entities", "code,name,ledger,currency\nUK1,UK Ltd,GL-UK,GBP\n");
    dry["dry_run"] = Value::Bool(true);
    let r = post(dry).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.expect("json")["status"], "checked");
    assert_eq!(app.count("SELECT COUNT(*) FROM finance_entities").await, 0);
    // A refusal of the file's rows (which no schema states) is 409 naming the line and column; nothing is kept.
    let bad = post(body("entities", "code,name,ledger,currency\nUK1,UK Ltd,GL-UK,GBP\nUK2,UK Two,GL-XX,GBP\n")).await;
    let problem_body = problem(bad, 409, "file_rejected").await;
    assert_eq!(problem_body["errors"][0]["field"], "csv");
    assert!(problem_body["errors"][0]["message"].as_str().is_some_and(|m| m.starts_with("line 3, column `ledger`")));
    assert_eq!(app.count("SELECT COUNT(*) FROM finance_entities").await, 0);
    // Only the intake scope may import.
    let (_, reader) = app.new_app(Environment::Sandbox, "finance-core:read", None).await;
    let r =
        app.post_json("/api/v2/data/imports", &reader, &body("ledgers", "code,name,currency\nX,Y,USD\n"), None).await;
    problem(r, 403, "scope_missing").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn price_rows_edited_behind_the_service_are_refused_not_served_under_their_sealed_hash() {
    let app = spawn_app().await;
    demo(&app).await;
    app.execute("UPDATE prices SET close = '999.99' WHERE date = '2020-03-16'").await;
    let refused = app.get("/api/v2/data/instruments/AAPL/prices", &app.key).await;
    problem(refused, 500, "integrity_failure").await;
    // What computations read goes through the same check.
    let features = app.get("/api/v2/quant/features/return_1d/values?instrument=AAPL", &app.key).await;
    problem(features, 500, "integrity_failure").await;
}

/// A held-out monthly file dated `Jan 1 2000` (issue 34): refused without a format, with the first error
/// naming the pattern the cell looks like, then imported with that pattern as its `date_format`.
#[tokio::test]
async fn a_file_in_a_date_format_of_its_own_names_the_pattern_it_looks_like_and_imports_with_it() {
    let app = spawn_app().await;
    let csv = "date,brent\nJan 1 2000,25.51\nFeb 1 2000,27.78\nMar 1 2000,27.49\n";
    let errors = refused(&app, request(Kind::Economics, csv)).await;
    let (line, column, message) = &errors[0];
    assert_eq!((*line, column.as_deref()), (2, Some("date")), "{errors:?}");
    assert!(message.contains("`%b %-d %Y`"), "{message}");
    let mut req = request(Kind::Economics, csv);
    req.mapping.date_format =
        Some(fiscus_data_core::rules::values::DateFormat::parse_name("%b %-d %Y").expect("pattern"));
    let done = import::import(&app.state.store, &Caller::bare(Actor::cli()), &app.workspace_id, req, &Silent)
        .await
        .expect("imported with its format");
    assert_eq!(done.dataset.row_count, 3);
    assert_eq!(done.dataset.period_start.as_deref(), Some("2000-01-01"));
    assert_eq!(done.dataset.period_end.as_deref(), Some("2000-03-01"));
}

/// Market and economic data come in over HTTP too (issue 34): a prices file as a `text/csv` body with its
/// kind and options as query parameters, an economic series in the JSON form; a prices file naming
/// instruments the workspace lacks is refused with one first error naming them all, then imported with
/// `create_instruments`, which makes them an instruments dataset of their own whose source names the file.
#[tokio::test]
async fn market_and_economic_files_import_over_http_as_csv_bodies_and_unknown_symbols_are_named_once() {
    let app = spawn_app().await;
    let csv_post = |query: &str, csv: &'static str| {
        let url = app.url(&format!("/api/v2/data/imports?{query}"));
        let req = app.http.post(url).bearer_auth(&app.key).header("Content-Type", "text/csv").body(csv);
        async move { req.send().await.expect("request") }
    };
    let prices =
        "symbol,date,close\nBRN,2024-01-02,77.04\nWTI,2024-01-02,70.38\nBRN,2024-01-03,78.25\nWTI,2024-01-03,72.70\n";
    let q = "kind=prices&file_name=oil.csv&source=exchange%20file&licence=proprietary";
    let p = problem(csv_post(q, prices).await, 409, "file_rejected").await;
    let first = p["errors"][0]["message"].as_str().expect("message");
    assert!(first.starts_with("line 0: 4 row(s) name 2 instrument(s)") && first.contains("BRN, WTI"), "{p}");
    assert!(first.contains("--create-instruments") && first.contains("create_instruments"), "{first}");
    assert_eq!(app.count("SELECT COUNT(*) FROM instruments").await, 0, "nothing was created");

    // Required parameters and the two forms kept apart.
    let p = problem(csv_post("kind=prices", prices).await, 422, "invalid_parameter").await;
    for field in ["file_name", "source", "licence"] {
        assert!(p["errors"].to_string().contains(field), "{p}");
    }
    // With a JSON body a parameter fills what the body leaves out: here a dry run.
    let r = app
        .post_json(
            "/api/v2/data/imports?dry_run=true&kind=ledgers",
            &app.key,
            &serde_json::json!({"kind": "prices", "file_name": "a.csv", "csv": prices, "source": "s", "licence": "l"}),
            None,
        )
        .await;
    let p = problem(r, 409, "file_rejected").await;
    assert!(p["errors"][0]["message"].as_str().is_some_and(|m| m.contains("BRN, WTI")), "the body's kind: {p}");
    let r = csv_post(&format!("{q}&create_instruments=true&instrument_currency=XXX"), prices).await;
    assert_eq!(r.status(), 422);

    let r = csv_post(&format!("{q}&create_instruments=true&instrument_class=commodity"), prices).await;
    let status = r.status();
    let created: Value = r.json().await.expect("json");
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["rows"], 4);
    assert_eq!(created["quality"]["series"], 2);
    let list: Value = app.get("/api/v2/data/datasets?kind=instruments", &app.key).await.json().await.expect("json");
    let made = &list["data"][0];
    assert_eq!(made["name"], "oil_instruments");
    assert_eq!(made["source"], "created from the symbols of the prices file oil.csv");
    let wti: Value = app.get("/api/v2/data/instruments/WTI", &app.key).await.json().await.expect("json");
    assert_eq!(wti["asset_class"], "commodity", "{wti}");
    let bars: Value = app.get("/api/v2/data/instruments/BRN/prices", &app.key).await.json().await.expect("json");
    assert_eq!(bars["data"].as_array().map(Vec::len), Some(2));
    // The same file again finds both datasets and creates nothing.
    let r = csv_post(&format!("{q}&create_instruments=true&instrument_class=commodity"), prices).await;
    assert_eq!(r.status(), 200);
    assert_eq!(app.count("SELECT COUNT(*) FROM datasets").await, 2);

    // An economic series in the JSON form, with a date format of its own and its units.
    let body = serde_json::json!({
        "kind": "economics", "file_name": "brent_monthly.csv", "csv": "date,brent\nJan 1 2000,25.51\nFeb 1 2000,27.78\n",
        "source": "EIA", "licence": "public domain", "date_format": "%b %-d %Y", "units": "USD per barrel",
        "key_prefix": "eia."
    });
    let r = app.post_json("/api/v2/data/imports", &app.key, &body, None).await;
    let status = r.status();
    let created: Value = r.json().await.expect("json");
    assert_eq!(status, 201, "{created}");
    let series: Value = app.get("/api/v2/data/economics/series/eia.brent", &app.key).await.json().await.expect("json");
    assert_eq!(
        (series["units"].as_str(), series["observations"].as_i64()),
        (Some("USD per barrel"), Some(2)),
        "{series}"
    );
    // A body that is neither JSON nor CSV.
    let r = app
        .http
        .post(app.url("/api/v2/data/imports"))
        .bearer_auth(&app.key)
        .header("Content-Type", "application/xml")
        .body("<x/>")
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), 415);
}

/// A file large enough for PostgreSQL's bulk path (rows staged by COPY, moved by one INSERT … SELECT in the
/// import's transaction): every row lands with its values, text with quotes and a backslash intact,
/// the rows hash to the dataset's content hash as `fiscus verify records` recomputes it, and nothing is left
/// behind (the staging table is dropped). On SQLite the same file takes its multi-row INSERTs, with the same result.
#[tokio::test]
async fn a_large_file_lands_whole_by_the_bulk_path_and_hashes_to_its_content_hash() {
    let app = spawn_app().await;
    let caller = Caller::bare(Actor::cli());
    let mut instruments = String::from("symbol,name,asset_class,currency\n");
    // 20,000 instruments: their reference rows take the bulk path too, names with quotes and a backslash (COPY's escape).
    for s in 0..20_000 {
        instruments.push_str(&format!("S{s:05},\"Name with \"\"quotes\"\" \\ {s}\",equity,USD\n"));
    }
    let mut req = request(Kind::Instruments, &instruments);
    req.file_name = "instruments.csv".into();
    import::import(&app.state.store, &caller, &app.workspace_id, req, &Silent).await.expect("instruments");
    let mut csv = String::from("symbol,date,open,close,volume\n");
    let start = time::macros::date!(2000 - 01 - 03);
    let days = 1000;
    for s in 0..25 {
        for d in 0..days {
            let date = start + time::Duration::days(d);
            csv.push_str(&format!("S{s:05},{date},{}.25,{}.5,{}\n", 10 + d % 7, 10 + d % 5, 1000 + d));
        }
    }
    let mut req = request(Kind::Prices, &csv);
    req.file_name = "prices.csv".into();
    let o = import::import(&app.state.store, &caller, &app.workspace_id, req, &Silent).await.expect("prices");
    assert_eq!(o.dataset.row_count, 25_000);
    assert_eq!(app.count("SELECT COUNT(*) FROM prices").await, 25_000);
    assert_eq!(app.count("SELECT COUNT(*) FROM prices WHERE volume = '1999' AND close = '14.5'").await, 25);
    let staging = match app.state.store.backend() {
        fiscus_store::Backend::Postgres => "SELECT COUNT(*) FROM pg_tables WHERE tablename LIKE 'import\\_staging\\_%'",
        fiscus_store::Backend::Sqlite => "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'import_staging%'",
    };
    assert_eq!(app.count(staging).await, 0, "no staging table is left");
    let mut conn = app.state.store.read().await.expect("conn");
    fiscus_data_core::tables::datasets::verify(&mut conn, app.state.store.seal_key(), &app.workspace_id, &o.dataset)
        .await
        .expect("the stored rows hash to the content hash");
    let name: String = sqlx::query_scalar("SELECT name FROM instrument_refs WHERE symbol = 'S00007'")
        .fetch_one(&mut *conn)
        .await
        .expect("name");
    assert_eq!(name, "Name with \"quotes\" \\ 7");
}

#[tokio::test]
async fn a_streamed_file_refused_at_its_end_keeps_nothing_and_names_both_lines_of_a_repeated_bar() {
    let app = spawn_app().await;
    let caller = Caller::bare(Actor::cli());
    let instruments = "symbol,name,asset_class,currency\nAAA,A,equity,USD\nBBB,B,equity,USD\n";
    import::import(&app.state.store, &caller, &app.workspace_id, request(Kind::Instruments, instruments), &Silent)
        .await
        .expect("instruments");
    // 24,000 bars: several chunks, and on PostgreSQL enough for the COPY path; the first bar comes again
    // on the last line, long after the first chunks were written (SQLite's key refuses it there first).
    let start = time::macros::date!(1990 - 01 - 01);
    let mut csv = String::from("symbol,date,close\n");
    for s in ["AAA", "BBB"] {
        for d in 0..12_000 {
            csv.push_str(&format!("{s},{},{}.5\n", start + time::Duration::days(d), 10 + d % 9));
        }
    }
    csv.push_str("AAA,1990-01-01,99\n");
    let errors = refused(&app, request(Kind::Prices, &csv)).await;
    assert_eq!(errors, vec![(24_002, Some("date".into()), "AAA on 1990-01-01 appears twice (first on line 2)".into())]);
    // A symbol the workspace lacks, on the file's last line only.
    let mut unknown = csv.trim_end_matches("AAA,1990-01-01,99\n").to_string();
    unknown.push_str("ZZZ,1990-01-01,1\n");
    let errors = refused(&app, request(Kind::Prices, &unknown)).await;
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].0 == 0 && errors[0].2.contains("1 row(s) name 1 instrument(s)"), "{errors:?}");
    assert_eq!(errors[1].0, 24_002);
    assert_eq!(app.count("SELECT COUNT(*) FROM prices").await, 0, "nothing of a refused file is kept");
    assert_eq!(app.count("SELECT COUNT(*) FROM datasets WHERE kind = 'prices'").await, 0);
    // The same file without the repeated bar: imported whole, every row sealed into its content hash.
    let good = csv.trim_end_matches("AAA,1990-01-01,99\n").to_string();
    let o = import::import(&app.state.store, &caller, &app.workspace_id, request(Kind::Prices, &good), &Silent)
        .await
        .expect("prices");
    assert_eq!((o.dataset.row_count, o.dataset.importer_version.as_str()), (24_000, "fiscus-import/2"));
    assert_eq!(o.dataset.period_start.as_deref(), Some("1990-01-01"));
    assert_eq!(o.quality.as_ref().map(|q| q.series), Some(2));
    assert_eq!(app.count("SELECT COUNT(*) FROM prices").await, 24_000);
    let mut conn = app.state.store.read().await.expect("conn");
    fiscus_data_core::tables::datasets::verify(&mut conn, app.state.store.seal_key(), &app.workspace_id, &o.dataset)
        .await
        .expect("the stored rows hash to the content hash");
}

/// A file whose headers are not Fiscus's names (NASDAQ's historical-quotes header) is mapped over HTTP as the
/// command line's `--map` maps it; without the mapping, the refusal names the header's columns it did not
/// recognise, once, instead of refusing every row for a close it cannot have (issue 55).
#[tokio::test]
async fn an_http_import_maps_columns_and_a_missing_close_names_the_unrecognised_headers() {
    let app = spawn_app().await;
    let instruments = json!({"kind": "instruments", "file_name": "i.csv", "csv": "symbol,name,asset_class,currency\nNDQ,Nasdaq listing,equity,USD\n", "source": "s", "licence": "l"});
    assert_eq!(app.post_json("/api/v2/data/imports", &app.key, &instruments, None).await.status(), 201);
    let csv = "Date,Close/Last,Volume,Open,High,Low\n01/03/2024,184.25,58414460,184.22,185.88,183.43\n\
               01/02/2024,185.64,82488670,187.15,188.44,183.885\n";
    let file = |columns: Option<Value>| {
        let mut body = json!({"kind": "prices", "file_name": "HistoricalData.csv", "csv": csv, "source": "nasdaq.com",
                              "licence": "proprietary", "symbol": "NDQ", "dry_run": true});
        if let Some(c) = columns {
            body["columns"] = c;
        }
        body
    };
    let p =
        problem(app.post_json("/api/v2/data/imports", &app.key, &file(None), None).await, 409, "file_rejected").await;
    let message = p["errors"][0]["message"].as_str().unwrap_or("");
    assert_eq!(p["errors"].as_array().map(Vec::len), Some(1), "one refusal for the header, not one per row: {p}");
    assert!(message.contains("`Close/Last`") && message.contains("\"close\""), "{message}");
    // Mapped, the file reads (its M/D/Y dates detected as without a mapping).
    let mapped = file(Some(json!({"close": "Close/Last"})));
    let r = app.post_json("/api/v2/data/imports", &app.key, &mapped, None).await;
    let status = r.status();
    let body: Value = r.json().await.expect("json");
    assert_eq!(
        (status.as_u16(), &body["rows"], &body["status"]),
        (200, &json!(2), &json!("checked")),
        "a dry run: {body}"
    );
    // A field no kind has is refused by the schema's names; one of another kind is a conflict with the kind.
    let p = problem(
        app.post_json("/api/v2/data/imports", &app.key, &file(Some(json!({"booking_date": "Date"}))), None).await,
        409,
        "conflict",
    )
    .await;
    assert!(p["detail"].as_str().unwrap_or("").contains("booking_date"), "{p}");
    problem(
        app.post_json("/api/v2/data/imports", &app.key, &file(Some(json!({"nonsense": "Date"}))), None).await,
        422,
        "invalid_request",
    )
    .await;
}
