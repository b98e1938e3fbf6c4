//! Paying through a bank with ISO 20022 files, end to end in production: bank details a person approved,
//! a payment proposed by an application and approved by a person, executed into a `pain.001` file (valid
//! against the official XSD) published in the outbound directory, the bank's `pain.002` status and
//! `camt.054`/`camt.053` entries back (over the API and through the inbound directory), and the action
//! `completed`; a rejection, an amount mismatch, an entry matching nothing and a statement that does not
//! add up each end where they must.

use fiscus_apptest::bank::*;
use fiscus_apptest::console::{enrolled_operator, sign_in};
use fiscus_domain::people::Role;
use serde_json::{Value, json};

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
        fiscus_apptest::console::console_page(&app, &dan, &format!("/console/actions/{paid}?environment=production"))
            .await;
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

    // People see the bank side at the console: each file with its bytes, and what every message did.
    let files_page =
        fiscus_apptest::console::console_page(&app, &dan, "/console/payment-files?environment=production").await;
    assert!(
        files_page.contains(&format!("{}.xml", file_of[&paid])) && files_page.contains("published"),
        "{files_page}"
    );
    let download = fiscus_apptest::console::client()
        .get(app.url(&format!("/console/payment-files/{}/download?environment=production", file_of[&paid])))
        .header("cookie", &dan)
        .send()
        .await
        .expect("download");
    assert_eq!(download.status(), 200);
    let published = std::fs::read_to_string(
        dir.path().join("outbound").join(&app.workspace_id).join("production").join(format!("{}.xml", file_of[&paid])),
    )
    .expect("published");
    assert_eq!(download.text().await.expect("bytes"), published, "the download is the file the bank got");
    let messages_page =
        fiscus_apptest::console::console_page(&app, &dan, "/console/bank-messages?environment=production").await;
    for expected in ["NTF-1", paid.as_str(), "completed", "AC04", "rejected"] {
        assert!(messages_page.contains(expected), "{expected} is not on the bank messages page");
    }

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
    let page = fiscus_apptest::console::console_page(&app, &cookie, "/console/bank-entries").await;
    assert!(page.contains("act_01KBTA0000000000000000000Z") && page.contains("33.00"), "{page}");
    let entry = fiscus_apptest::console::between(&page, "/console/bank-entries/", "/resolution").to_string();
    let form = [
        ("csrf", fiscus_apptest::console::hidden(&page, "csrf")),
        ("environment", "production".to_string()),
        ("resolution", "a card payment made outside Fiscus; booked by hand".to_string()),
    ];
    let resolved = fiscus_apptest::console::client()
        .post(app.url(&format!("/console/bank-entries/{entry}/resolution")))
        .header("cookie", &cookie)
        .form(&form)
        .send()
        .await
        .expect("request");
    assert_eq!(resolved.status(), 303);
    assert_eq!(app.count("SELECT COUNT(*) FROM statement_entries WHERE state = 'resolved'").await, 1);
    let again = fiscus_apptest::console::console_page(&app, &cookie, "/console/bank-entries").await;
    assert!(again.contains("bank-entries-empty"), "{again}");

    // The supplier's bank sends the money back (a closed account): the return names the payment, which is
    // now `returned` with the bank's reason, and the message page says so.
    let back = notification("NTF-RTN-1", &[fiscus_apptest::bank::returned(&paid, "1250.00", "AC04")]);
    let (status, message) = import(&app, &key, &back).await;
    assert_eq!(status, 201, "{message}");
    assert_eq!(message["items"][0]["outcome"], "returned", "{message}");
    assert_eq!(
        (message["items"][0]["reason"].as_str(), message["items"][0]["action_id"].as_str()),
        (Some("AC04"), Some(paid.as_str()))
    );
    assert_eq!(state_of(&app, &key, &paid).await, "returned");
    let action: Value = app.get(&format!("/api/v2/actions/{paid}"), &key).await.json().await.expect("json");
    let last = action["history"].as_array().expect("history").last().expect("event").clone();
    assert_eq!(
        (last["event"].as_str(), last["detail"]["reason"].as_str()),
        (Some("action.returned"), Some("AC04")),
        "{last}"
    );
    // A credit naming nothing of ours changes nothing.
    let stray =
        notification("NTF-RTN-2", &[fiscus_apptest::bank::returned("act_01KBTA0000000000000000000Y", "10.00", "AC04")]);
    let (status, message) = import(&app, &key, &stray).await;
    assert_eq!((status, message["items"][0]["outcome"].as_str()), (201, Some("ignored")), "{message}");

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
    fiscus_apptest::problem(app.get(&format!("/api/v2/payment-files/{file_id}"), &key).await, 500, "integrity_failure")
        .await;

    // An instruction edited to another amount is refused when the bank's entry names it: nothing settles.
    app.execute("UPDATE payment_instructions SET body = replace(body, '125000', '1')").await;
    let (status, _) = import(&app, &key, &notification("NTF-9", &[entry(&id, "1250.00", "INV-2026-009")])).await;
    assert_eq!(status, 500);
    assert_eq!(state_of(&app, &key, &id).await, "executing");
}
