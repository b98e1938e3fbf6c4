//! A bank channel in a test: a server with ISO 20022 folders, production access and keys, counterparties
//! with approved bank details, payments proposed and approved, and the bank's messages (pain.002, camt.054,
//! camt.053) written as a bank would; files checked against the official XSD.

use crate::console::{decide_in, enrolled_operator, production_move, sign_in};
use crate::{TestApp, spawn_app_with};
use fiscus_actions::steps::bank_accounts::decide;
use fiscus_domain::actor::Actor;
use fiscus_domain::credentials::Environment;
use fiscus_domain::people::Role;
use fiscus_domain::tenancy::Tenant;
use fiscus_kernel::governed::Caller;
use fiscus_kernel::settings::BankFiles;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// A server whose `iso20022` connector writes under `dir`.
pub async fn bank_app(dir: &Path) -> TestApp {
    bank_app_with(dir, |_| {}).await
}

/// [`bank_app`] with other settings changed too.
pub async fn bank_app_with(dir: &Path, configure: impl FnOnce(&mut fiscus_kernel::Settings)) -> TestApp {
    let files = BankFiles {
        outbound_dir: dir.join("outbound"),
        staging_dir: dir.join("staging"),
        inbound_dir: Some(dir.join("inbound")),
        inbound_max_bytes: 8 * 1024 * 1024,
        initiating_party: "Fiscus Test Treasury".into(),
        sandbox: false,
    };
    spawn_app_with(move |s| {
        s.iso20022 = Some(files);
        configure(s);
    })
    .await
}

/// Production access on (two admins), and a production key that proposes, reads and executes.
pub async fn production_key(app: &TestApp) -> String {
    let ada = enrolled_operator(app, "ada@example.com", Role::Admin).await;
    let bob = enrolled_operator(app, "bob@example.com", Role::Admin).await;
    assert_eq!(production_move(app, &sign_in(app, &ada).await, "enable").await, 303);
    assert_eq!(production_move(app, &sign_in(app, &bob).await, "enable").await, 303);
    app.new_app(Environment::Production, "actions:create actions:read actions:execute", None).await.1
}

/// Proposes an account over the API and has a person approve its first version.
async fn approved_account(app: &TestApp, key: &str, details: Value) -> Value {
    let created = app.post_json("/api/v2/bank-accounts", key, &details, None).await;
    assert_eq!(created.status(), 201);
    let account: Value = created.json().await.expect("json");
    let version = &account["versions"][0];
    let tenant = Tenant { workspace_id: app.workspace_id.clone(), environment: Environment::Production };
    let mut tx = app.state.store.begin().await.expect("begin");
    let person = Caller::bare(Actor::operator("opr_treasury"));
    let (id, hash) = (version["id"].as_str().expect("id"), version["content_hash"].as_str().expect("hash"));
    decide(&mut tx, &tenant, &person, Role::Approver, id, true, None, hash).await.expect("approve");
    tx.commit().await.expect("commit");
    account
}

/// The workspace's own EUR account and a supplier with an approved EUR account: the supplier's id.
pub async fn accounts(app: &TestApp, key: &str) -> String {
    approved_account(
        app,
        key,
        json!({ "owner": "own", "currency": "EUR", "holder_name": "Fiscus Test GmbH",
                "iban": "FR1420041010050500013M02606", "bic": "PSSTFRPPXXX" }),
    )
    .await;
    let cp: Value = app
        .post_json("/api/v2/counterparties", key, &json!({ "name": "Lieferant GmbH" }), None)
        .await
        .json()
        .await
        .expect("json");
    approved_account(
        app,
        key,
        json!({ "owner": "counterparty", "counterparty_id": cp["id"], "currency": "EUR",
                "holder_name": "Lieferant GmbH", "iban": "DE89370400440532013000", "bic": "COBADEFFXXX",
                "address": { "street": "Königstraße", "building": "12a", "postcode": "70173",
                             "town": "Stuttgart", "country": "DE" } }),
    )
    .await;
    cp["id"].as_str().expect("cp").to_string()
}

/// A bank-file payment to `counterparty`, proposed by the application.
pub async fn propose(app: &TestApp, key: &str, counterparty: &str, amount_minor: i64, reference: &str) -> String {
    let body = json!({
        "kind": "payment", "amount_minor": amount_minor, "currency": "EUR", "counterparty": counterparty,
        "connector": "iso20022", "execution_mode": "human_approved", "risk_tier": "T1",
        "reference": reference, "required_checks": [],
    });
    let created = app.post_json("/api/v2/actions", key, &body, None).await;
    let status = created.status();
    let action: Value = created.json().await.expect("json");
    assert_eq!(status, 201, "{action}");
    let keys: Vec<&str> =
        action["checks"].as_array().expect("checks").iter().filter_map(|c| c["check_key"].as_str()).collect();
    assert_eq!(keys, ["creditor_account", "debtor_account"], "both accounts are bound: {action}");
    action["id"].as_str().expect("id").to_string()
}

/// A person approves each action at the console, then the application executes them.
pub async fn approve_and_execute(app: &TestApp, key: &str, ids: &[String]) {
    let eve = enrolled_operator(app, &format!("eve{}@example.com", ids.len()), Role::Approver).await;
    let cookie = sign_in(app, &eve).await;
    for id in ids {
        assert_eq!(decide_in(app, &cookie, id, "approve", "production").await.status(), 303);
        let executed = app.post_json(&format!("/api/v2/actions/{id}/execute"), key, &json!({}), None).await;
        assert!(executed.status().is_success(), "{}", executed.text().await.unwrap_or_default());
    }
}

pub async fn state_of(app: &TestApp, key: &str, id: &str) -> String {
    let action: Value = app.get(&format!("/api/v2/actions/{id}"), key).await.json().await.expect("json");
    action["control_state"].as_str().expect("state").to_string()
}

pub async fn import(app: &TestApp, key: &str, xml: &str) -> (u16, Value) {
    let r = app.post_json("/api/v2/bank-messages", key, &json!({ "document": xml }), None).await;
    (r.status().as_u16(), r.json().await.expect("json"))
}

pub fn status_report(file_id: &str, statuses: &[(&str, &str, Option<&str>)]) -> String {
    let txs: String = statuses
        .iter()
        .map(|(e2e, code, reason)| {
            let reason = reason.map(|r| format!("<StsRsnInf><Rsn><Cd>{r}</Cd></Rsn></StsRsnInf>")).unwrap_or_default();
            format!("<TxInfAndSts><OrgnlEndToEndId>{e2e}</OrgnlEndToEndId><TxSts>{code}</TxSts>{reason}</TxInfAndSts>")
        })
        .collect();
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.002.001.10"><CstmrPmtStsRpt>
<GrpHdr><MsgId>STS-{file_id}</MsgId><CreDtTm>2026-12-01T09:15:00Z</CreDtTm></GrpHdr>
<OrgnlGrpInfAndSts><OrgnlMsgId>{file_id}</OrgnlMsgId><OrgnlMsgNmId>pain.001.001.09</OrgnlMsgNmId></OrgnlGrpInfAndSts>
<OrgnlPmtInfAndSts><OrgnlPmtInfId>{file_id}</OrgnlPmtInfId>{txs}</OrgnlPmtInfAndSts>
</CstmrPmtStsRpt></Document>"#
    )
}

/// A booked debit entry: (end-to-end id or `NOTPROVIDED`, amount as the bank writes it, remittance).
pub fn entry(e2e: &str, amount: &str, remittance: &str) -> String {
    format!(
        r#"<Ntry><Amt Ccy="EUR">{amount}</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts>
<BookgDt><Dt>2026-12-01</Dt></BookgDt><ValDt><Dt>2026-12-01</Dt></ValDt><AcctSvcrRef>BANK-{e2e}</AcctSvcrRef>
<BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>ICDT</Cd><SubFmlyCd>ESCT</SubFmlyCd></Fmly></Domn></BkTxCd>
<NtryDtls><TxDtls><Refs><EndToEndId>{e2e}</EndToEndId></Refs><Amt Ccy="EUR">{amount}</Amt><CdtDbtInd>DBIT</CdtDbtInd>
<RmtInf><Ustrd>{remittance}</Ustrd></RmtInf></TxDtls></NtryDtls></Ntry>"#
    )
}

/// A booked credit entry returning the payment `e2e` (ISO 20022 return information with `reason`).
pub fn returned(e2e: &str, amount: &str, reason: &str) -> String {
    format!(
        r#"<Ntry><Amt Ccy="EUR">{amount}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts>
<BookgDt><Dt>2026-12-03</Dt></BookgDt><ValDt><Dt>2026-12-03</Dt></ValDt><AcctSvcrRef>BANK-RTN-{e2e}</AcctSvcrRef>
<BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>ICDT</Cd><SubFmlyCd>RRTN</SubFmlyCd></Fmly></Domn></BkTxCd>
<NtryDtls><TxDtls><Refs><EndToEndId>{e2e}</EndToEndId></Refs><Amt Ccy="EUR">{amount}</Amt><CdtDbtInd>CRDT</CdtDbtInd>
<RtrInf><Rsn><Cd>{reason}</Cd></Rsn></RtrInf></TxDtls></NtryDtls></Ntry>"#
    )
}

pub fn notification(id: &str, entries: &[String]) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08"><BkToCstmrDbtCdtNtfctn>
<GrpHdr><MsgId>{id}</MsgId><CreDtTm>2026-12-01T11:30:00Z</CreDtTm></GrpHdr>
<Ntfctn><Id>{id}-1</Id><Acct><Id><IBAN>FR1420041010050500013M02606</IBAN></Id><Ccy>EUR</Ccy></Acct>{}</Ntfctn>
</BkToCstmrDbtCdtNtfctn></Document>"#,
        entries.concat()
    )
}

/// A statement with opening and closing balances (major units as the bank writes them).
pub fn statement(id: &str, opening: &str, closing: &str, entries: &[String]) -> String {
    let balance = |code: &str, amount: &str| {
        format!(
            r#"<Bal><Tp><CdOrPrtry><Cd>{code}</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">{amount}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-12-01</Dt></Dt></Bal>"#
        )
    };
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt>
<GrpHdr><MsgId>{id}</MsgId><CreDtTm>2026-12-01T23:00:00Z</CreDtTm></GrpHdr>
<Stmt><Id>{id}-1</Id><Acct><Id><IBAN>FR1420041010050500013M02606</IBAN></Id><Ccy>EUR</Ccy></Acct>{}{}{}</Stmt>
</BkToCstmrStmt></Document>"#,
        balance("OPBD", opening),
        balance("CLBD", closing),
        entries.concat()
    )
}

fn python() -> PathBuf {
    std::env::var("FISCUS_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/clients-venv/bin/python"))
}

/// The official XSD's verdict on a file (`clients/iso20022_validate.py`), with what an independent reader
/// found in it.
pub fn xsd_valid(paths: &[PathBuf]) -> Vec<Value> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../clients/iso20022_validate.py");
    let out = std::process::Command::new(python()).arg(script).arg("pain.001").args(paths).output().expect("validator");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).expect("json line")).collect()
}

/// A live path and body for a documented bank-account example: the counterparty it names created here, and
/// for a change, the account it changes.
pub async fn example_path(app: &crate::TestApp, path: &str, example: &mut serde_json::Value) -> String {
    let cp: serde_json::Value = app
        .post_json("/api/v2/counterparties", &app.key, &serde_json::json!({ "name": "Example supplier" }), None)
        .await
        .json()
        .await
        .expect("json");
    example["counterparty_id"] = cp["id"].clone();
    if !path.contains("{id}") {
        return path.to_string();
    }
    let mut first = example.clone();
    first["iban"] = serde_json::json!("DE89370400440532013000");
    let account: serde_json::Value =
        app.post_json("/api/v2/bank-accounts", &app.key, &first, None).await.json().await.expect("json");
    approve_first_version(app, &account).await;
    path.replace("{id}", account["id"].as_str().expect("account id"))
}

/// A person approves an account's first version (what the console's decision does), so that a change has
/// an active version beside it.
pub async fn approve_first_version(app: &crate::TestApp, account: &serde_json::Value) {
    let version = &account["versions"][0];
    let tenant = Tenant { workspace_id: app.workspace_id.clone(), environment: Environment::Sandbox };
    let mut tx = app.state.store.begin().await.expect("begin");
    let person = Caller::bare(Actor::operator("opr_example"));
    let (id, hash) = (version["id"].as_str().expect("id"), version["content_hash"].as_str().expect("hash"));
    decide(&mut tx, &tenant, &person, Role::Approver, id, true, None, hash).await.expect("approve");
    tx.commit().await.expect("commit");
}

/// A counterparty with one approved EUR account, over the API (the approval as the console gives it): its
/// id, the account's id and the active version's hash.
pub async fn approved_supplier(app: &crate::TestApp) -> (String, String, serde_json::Value) {
    let cp: serde_json::Value = app
        .post_json("/api/v2/counterparties", &app.key, &serde_json::json!({ "name": "Lieferant GmbH" }), None)
        .await
        .json()
        .await
        .expect("json");
    let details = serde_json::json!({ "owner": "counterparty", "counterparty_id": cp["id"], "currency": "EUR",
        "holder_name": "Lieferant GmbH", "iban": "DE89370400440532013000", "bic": "COBADEFFXXX" });
    let account: serde_json::Value =
        app.post_json("/api/v2/bank-accounts", &app.key, &details, None).await.json().await.expect("json");
    approve_first_version(app, &account).await;
    (cp["id"].as_str().expect("cp").to_string(), account["id"].as_str().expect("account").to_string(), details)
}

/// An approved counterparty account with a change of its details pending: the change's version id.
pub async fn pending_change(app: &crate::TestApp) -> String {
    let (_, account, mut details) = approved_supplier(app).await;
    details["iban"] = serde_json::json!("GB29NWBK60161331926819");
    details["bic"] = serde_json::json!("NWBKGB2L");
    change(app, &account, &details).await["pending_version"].as_str().expect("pending").to_string()
}

/// Proposes `details` as the next version of `account`: the account as the API answers.
pub async fn change(app: &crate::TestApp, account: &str, details: &serde_json::Value) -> serde_json::Value {
    let response = app.post_json(&format!("/api/v2/bank-accounts/{account}/versions"), &app.key, details, None).await;
    assert_eq!(response.status(), 201);
    response.json().await.expect("json")
}
