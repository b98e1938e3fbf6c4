//! Paying through a bank with ISO 20022 files, end to end in production: bank details a person approved,
//! a payment proposed by an application and approved by a person, executed into a `pain.001` file (valid
//! against the official XSD) published in the outbound directory, the bank's `pain.002` status and
//! `camt.054`/`camt.053` entries back (over the API and through the inbound directory), and the action
//! `completed`; a rejection, an amount mismatch, an entry matching nothing and a statement that does not
//! add up each end where they must.

use crate::console::{decide_in, enrolled_operator, production_move, sign_in};
use crate::helpers::{TestApp, spawn_app_with};
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

async fn state_of(app: &TestApp, key: &str, id: &str) -> String {
    let action: Value = app.get(&format!("/api/v2/actions/{id}"), key).await.json().await.expect("json");
    action["control_state"].as_str().expect("state").to_string()
}

async fn import(app: &TestApp, key: &str, xml: &str) -> (u16, Value) {
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

#[tokio::test]
async fn a_production_payment_goes_from_approval_to_a_bank_file_and_back_to_completed() {
    let dir = tempfile::tempdir().expect("dir");
    let app = bank_app(dir.path()).await;
    let key = production_key(&app).await;
    let supplier = accounts(&app, &key).await;

    // A payment to text the bank file cannot carry is refused at proposal.
    let mut loose = json!({ "kind": "payment", "amount_minor": 100, "currency": "EUR", "counterparty": "cp_acme",
        "connector": "iso20022", "execution_mode": "human_approved", "risk_tier": "T1", "reference": "X",
        "required_checks": [] });
    let refused = app.post_json("/api/v2/actions", &key, &loose, None).await;
    assert_eq!(refused.status(), 422);
    loose["connector"] = json!("sandbox");
    assert!(app.post_json("/api/v2/actions", &key, &loose, None).await.status().is_client_error(), "no sandbox here");

    let paid = propose(&app, &key, &supplier, 125_000, "INV-2026-001").await;
    let rejected = propose(&app, &key, &supplier, 9_900, "INV-2026-002").await;
    let short = propose(&app, &key, &supplier, 50_000, "INV-2026-003").await;
    let by_reference = propose(&app, &key, &supplier, 31_415, "INV-2026-004").await;
    let all = [paid.clone(), rejected.clone(), short.clone(), by_reference.clone()];
    approve_and_execute(&app, &key, &all).await;
    app.drain().await;

    // Files published whole (the worker files payments as they come: one file or several), valid against
    // the XSD, each payment in exactly one of them.
    let files: Value = app.get("/api/v2/payment-files", &key).await.json().await.expect("json");
    let listed = files["data"].as_array().expect("files");
    assert!(!listed.is_empty(), "{files}");
    let mut file_of = std::collections::BTreeMap::new();
    let mut paths = Vec::new();
    let mut total = 0;
    for f in listed {
        let file_id = f["id"].as_str().expect("id").to_string();
        let file: Value = app.get(&format!("/api/v2/payment-files/{file_id}"), &key).await.json().await.expect("json");
        assert_eq!(file["state"], "published", "{file}");
        total += file["control_sum_minor"].as_i64().expect("sum");
        let path =
            dir.path().join("outbound").join(&app.workspace_id).join("production").join(format!("{file_id}.xml"));
        let bytes = std::fs::read_to_string(&path).expect("the published file");
        assert_eq!(bytes, file["content"].as_str().expect("content"));
        assert_eq!(fiscus_domain::evidence::seal_bytes(bytes.as_bytes()), file["sha256"].as_str().expect("sha"));
        for id in file["action_ids"].as_array().expect("ids") {
            assert!(file_of.insert(id.as_str().expect("id").to_string(), file_id.clone()).is_none(), "in two files");
        }
        paths.push(path);
    }
    assert_eq!(total, 125_000 + 9_900 + 50_000 + 31_415);
    let read = xsd_valid(&paths);
    let mut found: Vec<String> = read
        .iter()
        .flat_map(|r| r["payments"].as_array().expect("payments").clone())
        .map(|p| p["end_to_end_id"].as_str().expect("e2e").to_string())
        .collect();
    found.sort();
    let mut expected = all.to_vec();
    expected.sort();
    assert_eq!(found, expected, "each payment once, in one file");
    for id in &all {
        assert_eq!(state_of(&app, &key, id).await, "executing");
    }
    let approver = enrolled_operator(&app, "dan@example.com", Role::Approver).await;
    let dan = sign_in(&app, &approver).await;
    let action_page =
        crate::console::console_page(&app, &dan, &format!("/console/actions/{paid}?environment=production")).await;
    assert!(
        action_page.contains(&format!("{}.xml", file_of[&paid])) && action_page.contains("published"),
        "{action_page}"
    );

    // The bank accepts three and rejects one (a report per file).
    let statuses = [
        (&paid, "ACCP", None),
        (&rejected, "RJCT", Some("AC04")),
        (&short, "ACCP", None),
        (&by_reference, "ACCP", None),
    ];
    let mut outcomes = std::collections::BTreeMap::new();
    for file_id in file_of.values().collect::<std::collections::BTreeSet<_>>() {
        let of_file: Vec<(&str, &str, Option<&str>)> = statuses
            .iter()
            .filter(|(id, _, _)| &file_of[id.as_str()] == file_id)
            .map(|(id, code, reason)| (id.as_str(), *code, *reason))
            .collect();
        let (status, message) = import(&app, &key, &status_report(file_id, &of_file)).await;
        assert_eq!(status, 201, "{message}");
        for item in message["items"].as_array().expect("items") {
            outcomes.insert(item["action_id"].as_str().expect("action").to_string(), item["outcome"].clone());
        }
    }
    assert_eq!(outcomes[&paid], "accepted");
    assert_eq!(outcomes[&rejected], "rejected");
    assert_eq!(state_of(&app, &key, &rejected).await, "failed");
    assert_eq!(state_of(&app, &key, &paid).await, "executing");

    // A notification books the payment: completed. The same bytes again change nothing.
    let booked = notification("NTF-1", &[entry(&paid, "1250.00", "INV-2026-001")]);
    let (status, message) = import(&app, &key, &booked).await;
    assert_eq!((status, message["items"][0]["outcome"].as_str()), (201, Some("completed")), "{message}");
    assert_eq!(state_of(&app, &key, &paid).await, "completed");
    let (status, again) = import(&app, &key, &booked).await;
    assert_eq!((status, again["duplicate"].as_bool(), again["id"].clone()), (200, Some(true), message["id"].clone()));

    // A statement that does not add up is refused whole.
    let unbalanced = statement("STM-0", "10000.00", "9000.00", &[entry(&short, "499.00", "INV-2026-003")]);
    let (status, problem) = import(&app, &key, &unbalanced).await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(state_of(&app, &key, &short).await, "executing", "nothing of it was applied");

    // The end-of-day statement, dropped in the inbound directory: one entry short (an exception), one
    // without its end-to-end id (matched by amount, account and reference), one no payment of ours, and
    // the payment booked already (it changes nothing).
    let day = statement(
        "STM-1",
        "10000.00",
        "7903.85",
        &[
            entry(&short, "499.00", "INV-2026-003"),
            entry("NOTPROVIDED", "314.15", "Rechnung INV-2026-004"),
            entry("act_01KBTA0000000000000000000Z", "33.00", "someone else's"),
            entry(&paid, "1250.00", "INV-2026-001"),
        ],
    );
    let inbound = dir.path().join("inbound").join(&app.workspace_id).join("production");
    std::fs::create_dir_all(&inbound).expect("inbound");
    std::fs::write(inbound.join("stm-1.xml"), &day).expect("drop");
    app.drain().await;
    assert!(inbound.join("processed").join("stm-1.xml").exists(), "the file was taken");
    assert_eq!(state_of(&app, &key, &short).await, "reconciliation_exception");
    assert_eq!(state_of(&app, &key, &by_reference).await, "completed");
    assert_eq!(state_of(&app, &key, &paid).await, "completed");
    let unmatched = app.count("SELECT COUNT(*) FROM statement_entries WHERE state = 'unmatched'").await;
    assert_eq!(unmatched, 1, "the entry no payment matched waits for a person");

    // A person resolves it at the console; nothing else moves.
    let carol = enrolled_operator(&app, "carol@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &carol).await;
    let page = crate::console::console_page(&app, &cookie, "/console/bank-entries").await;
    assert!(page.contains("act_01KBTA0000000000000000000Z") && page.contains("33.00"), "{page}");
    let entry = crate::console::between(&page, "/console/bank-entries/", "/resolution").to_string();
    let form = [
        ("csrf", crate::console::hidden(&page, "csrf")),
        ("environment", "production".to_string()),
        ("resolution", "a card payment made outside Fiscus; booked by hand".to_string()),
    ];
    let resolved = crate::console::client()
        .post(app.url(&format!("/console/bank-entries/{entry}/resolution")))
        .header("cookie", &cookie)
        .form(&form)
        .send()
        .await
        .expect("request");
    assert_eq!(resolved.status(), 303);
    assert_eq!(app.count("SELECT COUNT(*) FROM statement_entries WHERE state = 'resolved'").await, 1);
    let again = crate::console::console_page(&app, &cookie, "/console/bank-entries").await;
    assert!(again.contains("bank-entries-empty"), "{again}");

    // A file that is no bank message is set aside with its reason.
    std::fs::write(inbound.join("junk.xml"), "<hello/>").expect("drop");
    app.drain().await;
    let reason = std::fs::read_to_string(inbound.join("refused").join("junk.xml.reason")).expect("reason");
    assert!(!reason.is_empty());
}

#[tokio::test]
async fn an_edited_payment_file_or_instruction_is_refused_never_served_or_settled() {
    let dir = tempfile::tempdir().expect("dir");
    let app = bank_app(dir.path()).await;
    let key = production_key(&app).await;
    let supplier = accounts(&app, &key).await;
    let id = propose(&app, &key, &supplier, 125_000, "INV-2026-009").await;
    approve_and_execute(&app, &key, std::slice::from_ref(&id)).await;
    app.drain().await;
    let files: Value = app.get("/api/v2/payment-files", &key).await.json().await.expect("json");
    let file_id = files["data"][0]["id"].as_str().expect("file").to_string();

    // Bytes edited in the database are not what the sealed record hashed: refused, never served.
    app.execute(&format!("UPDATE payment_files SET content = content || ' ' WHERE id = '{file_id}'")).await;
    crate::helpers::problem(app.get(&format!("/api/v2/payment-files/{file_id}"), &key).await, 500, "integrity_failure")
        .await;

    // An instruction edited to another amount is refused when the bank's entry names it: nothing settles.
    app.execute("UPDATE payment_instructions SET body = replace(body, '125000', '1')").await;
    let (status, _) = import(&app, &key, &notification("NTF-9", &[entry(&id, "1250.00", "INV-2026-009")])).await;
    assert_eq!(status, 500);
    assert_eq!(state_of(&app, &key, &id).await, "executing");
}
