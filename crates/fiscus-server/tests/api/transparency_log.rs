//! The transparency log over HTTP, checked the way an outsider would: a checkpoint's signature with the
//! published key, a record's inclusion proof and a consistency proof between two checkpoints with the RFC
//! 9162 verification algorithms (not Fiscus's prover), and the tiles a mirror downloads giving the same root.

use crate::webhook_delivery::propose;
use fiscus_apptest::{EVIDENCE, TestApp, evidence_body, spawn_app};
use fiscus_domain::credentials::Environment;
use fiscus_domain::tlog::note::{NoteVerifier, open_checkpoint};
use fiscus_domain::tlog::{self, Hash, Leaf, from_b64};
use serde_json::Value;

async fn trust_key(app: &TestApp) -> String {
    app.new_app(Environment::Sandbox, "trust:read trust:write", None).await.1
}

async fn fresh_checkpoint(app: &TestApp, key: &str) -> Value {
    let r = app.post_json("/api/v2/evidence/checkpoints", key, &serde_json::json!({}), None).await;
    assert_eq!(r.status(), 201);
    r.json().await.expect("json")
}

fn hashes(v: &Value) -> Vec<Hash> {
    v.as_array().expect("hashes").iter().map(|h| from_b64(h.as_str().expect("b64")).expect("hash")).collect()
}

#[tokio::test]
async fn every_record_is_logged_and_proved_against_a_signed_checkpoint() {
    let app = spawn_app().await;
    let key = trust_key(&app).await;
    let action = propose(&app).await;
    let evidence: Value =
        app.post_json(EVIDENCE, &app.key, &evidence_body("SOC 2"), None).await.json().await.expect("json");

    // Every sealed row and audit event has its leaf, naming its current content.
    let mut conn = app.state.store.read().await.expect("conn");
    let mut ev = app.state.store.evidence_read().await.expect("evidence");
    let (checked, missing) =
        fiscus_store::sealed_tables::unlogged(&mut conn, &mut ev, &app.workspace_id).await.expect("check");
    drop((conn, ev));
    assert!(checked >= 4, "{checked}");
    assert_eq!(missing, vec![]);

    let checkpoint = fresh_checkpoint(&app, &key).await;
    let published: Value = app.get("/api/v2/evidence/key", &key).await.json().await.expect("json");
    let well_known =
        reqwest::get(app.url("/.well-known/fiscus-evidence-key")).await.expect("get").text().await.expect("text");
    assert_eq!(well_known.trim(), published["verifier_key"].as_str().expect("key"));
    let verifier = NoteVerifier::parse(&well_known).unwrap_or_else(|e| panic!("{e}: {well_known}"));
    let signed = open_checkpoint(&verifier, checkpoint["note"].as_str().expect("note")).expect("signed");
    assert_eq!(signed.origin, format!("{}/{}", app.state.settings.log_name(), app.workspace_id));
    assert_eq!(signed.size as i64, checkpoint["tree_size"].as_i64().expect("size"));

    for id in [action.as_str(), evidence["id"].as_str().expect("id"), "aud_1"] {
        let proof: Value =
            app.get(&format!("/api/v2/evidence/records/{id}/proof"), &key).await.json().await.expect("json");
        assert_eq!(proof["tree_size"].as_u64(), Some(signed.size), "{proof}");
        let entry = proof["entry"].as_str().expect("entry");
        let leaf = Leaf::parse(entry).expect("entry");
        assert_eq!(leaf.id, id);
        assert_eq!(leaf.record_hash, proof["record_hash"].as_str().expect("hash"));
        tlog::verify_inclusion(
            &tlog::leaf_hash(entry.as_bytes()),
            proof["leaf_index"].as_u64().expect("index"),
            signed.size,
            &hashes(&proof["hashes"]),
            &signed.root,
        )
        .expect("the proof leads to the signed root");
    }

    // A mirror's view: the tiles give the same root, and the entry bundle the same leaves.
    let size = signed.size;
    assert!(size < 256, "one partial tile");
    let tile = app.get(&format!("/api/v2/evidence/tiles/tile/0/000.p/{size}"), &key).await;
    assert_eq!(tile.status(), 200);
    let bytes = tile.bytes().await.expect("bytes");
    let leaves: Vec<Hash> = bytes.chunks(32).map(|c| c.try_into().expect("32")).collect();
    assert_eq!(leaves.len() as u64, size);
    assert_eq!(tlog::root(&mut tlog::Leaves(&leaves), size).expect("root"), signed.root);
    let bundle = app.get(&format!("/api/v2/evidence/tiles/tile/entries/000.p/{size}"), &key).await;
    let bundle = bundle.bytes().await.expect("bytes");
    let (mut at, mut i) = (0usize, 0usize);
    while at < bundle.len() {
        let len = u16::from_be_bytes([bundle[at], bundle[at + 1]]) as usize;
        assert_eq!(tlog::leaf_hash(&bundle[at + 2..at + 2 + len]), leaves[i]);
        at += 2 + len;
        i += 1;
    }
    assert_eq!(i as u64, size);
    let note = app.get("/api/v2/evidence/tiles/checkpoint", &key).await.text().await.expect("text");
    assert_eq!(note, checkpoint["note"].as_str().expect("note"));
    // A tile index no tree reaches (u64::MAX, whose leaves would overflow) is simply not there.
    let far = app.get("/api/v2/evidence/tiles/tile/0/x018/x446/x744/x073/x709/x551/615", &key).await;
    assert_eq!(far.status(), 404);
    // A tile beyond the integrated tree does not exist yet.
    assert_eq!(app.get(&format!("/api/v2/evidence/tiles/tile/0/000.p/{}", size + 1), &key).await.status(), 404);

    // The log grows; the new checkpoint extends the one kept.
    propose(&app).await;
    let later = fresh_checkpoint(&app, &key).await;
    let second = open_checkpoint(&verifier, later["note"].as_str().expect("note")).expect("signed");
    assert!(second.size > signed.size);
    let proof: Value = app
        .get(&format!("/api/v2/evidence/consistency?first={}&second={}", signed.size, second.size), &key)
        .await
        .json()
        .await
        .expect("json");
    tlog::verify_consistency(signed.size, second.size, &signed.root, &second.root, &hashes(&proof["hashes"]))
        .expect("the later log extends the earlier");
    let history: Value = app.get("/api/v2/evidence/checkpoints", &key).await.json().await.expect("json");
    let sizes: Vec<u64> =
        history["data"].as_array().expect("data").iter().map(|c| c["tree_size"].as_u64().expect("size")).collect();
    // Newest first (the node's evidence worker may have signed smaller ones of its own before).
    assert_eq!(sizes[..2], [second.size, signed.size]);
    assert!(sizes.windows(2).all(|w| w[0] > w[1]), "{sizes:?}");
}

fn python() -> String {
    std::env::var("FISCUS_PYTHON").expect(
        "the verifier tests need the Python clients: run scripts/test (it creates target/clients-venv), or set FISCUS_PYTHON",
    )
}

fn client(script: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../clients").join(script)
}

/// Runs `clients/verify_evidence.py` with `args`; returns (success, stdout + stderr).
fn verify_py(args: &[&str]) -> (bool, String) {
    let out =
        std::process::Command::new(python()).arg(client("verify_evidence.py")).args(args).output().expect("python");
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

/// An action approved by a person, executed and settled through the sandbox connector, and that person's
/// console session.
pub async fn settled_action(app: &TestApp) -> (String, String) {
    use fiscus_domain::people::Role;
    let id = propose(app).await;
    let check = app
        .post_json(
            &format!("/api/v2/actions/investment-execution/{id}/checks"),
            &app.key,
            &fiscus_apptest::actions::check("passed"),
            None,
        )
        .await;
    assert!(check.status().is_success(), "{}", check.text().await.unwrap_or_default());
    let eve = fiscus_apptest::console::enrolled_operator(app, "eve@example.com", Role::Approver).await;
    let cookie = fiscus_apptest::console::sign_in(app, &eve).await;
    assert_eq!(fiscus_apptest::console::decide(app, &cookie, &id, "approve").await.status(), 303);
    let executed =
        app.post_json(&format!("/api/v2/actions/{id}/execute"), &app.key, &serde_json::json!({}), None).await;
    assert!(executed.status().is_success(), "{}", executed.text().await.unwrap_or_default());
    app.drain().await;
    (id, cookie)
}

#[tokio::test]
async fn an_event_s_leaf_is_named_by_its_row_and_every_other_leaf_by_the_index_which_verification_holds_to_the_log() {
    let app = spawn_app().await;
    let key = trust_key(&app).await;
    let action = propose(&app).await;
    let checkpoint = fresh_checkpoint(&app, &key).await;
    let size = checkpoint["tree_size"].as_i64().expect("size");
    let ws = &app.workspace_id;
    let mut conn = app.state.store.read().await.expect("conn");
    let log = fiscus_store::tlog::leaves(&mut conn, ws, 0, size).await.expect("log");
    let mut ev = app.state.store.evidence_read().await.expect("evidence");
    let named = fiscus_store::tlog::indexed_positions(&mut ev, ws, &log).await.expect("positions");
    drop((conn, ev));
    // The index names exactly the leaves that are not events; every event's row names its leaf.
    let others: Vec<_> = log.iter().filter(|l| l.leaf.kind != tlog::AUDIT_EVENT).cloned().collect();
    assert!(others.iter().any(|l| l.leaf.id == action), "{others:?}");
    assert_eq!(named, others.iter().map(|l| l.index).collect());
    let services = &app.state.services;
    let report = fiscus_kernel::evidence::verify_log(services, ws).await.expect("verify");
    assert_eq!(report.failures, Vec::<String>::new());

    // An index that no longer names where the action is, and an event's row that names another leaf: both
    // named, the first by comparing the index with the log, the second because the event is then in
    // neither the index nor the leaf its row names; and the action has no proof any more.
    app.execute_evidence(&format!("DELETE FROM tlog_positions WHERE workspace_id = '{ws}' AND record_id = '{action}'"))
        .await;
    app.execute(&format!(
        "UPDATE audit_events SET leaf_index = leaf_index + 1 WHERE workspace_id = '{ws}' AND seq = 1"
    ))
    .await;
    let proof = app.get(&format!("/api/v2/evidence/records/{action}/proof"), &key).await;
    assert_eq!(proof.status(), 404);
    let report = fiscus_kernel::evidence::verify_log(services, ws).await.expect("verify");
    let at = others.iter().find(|l| l.leaf.id == action).expect("the action's leaf").index;
    assert!(
        report.failures.contains(&format!("leaf {at}: the index by record does not name it")),
        "{:?}",
        report.failures
    );
    assert!(
        report.failures.contains(&"audit_event aud_1: not in the log as it is stored".to_string()),
        "{:?}",
        report.failures
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_s_bundle_verifies_without_fiscus_and_an_independent_implementation_agrees() {
    let app = spawn_app().await;
    let key = trust_key(&app).await;
    // The demo's data too (datasets, the book, lineage): the log spans several full tiles.
    app.load_demo().await;
    let mut conn = app.state.store.read().await.expect("conn");
    let mut ev = app.state.store.evidence_read().await.expect("evidence");
    let (_, unlogged) =
        fiscus_store::sealed_tables::unlogged(&mut conn, &mut ev, &app.workspace_id).await.expect("check");
    drop((conn, ev));
    assert_eq!(unlogged, vec![], "every record of the demo's data is in the log");
    let before = fresh_checkpoint(&app, &key).await;
    let (action, cookie) = settled_action(&app).await;
    let page =
        fiscus_apptest::console::console_page(&app, &cookie, &format!("/console/actions/{action}?environment=sandbox"))
            .await;
    assert!(page.contains("id=\"evidence-bundle\""), "the action's page links its bundle");
    let download = fiscus_apptest::console::console_page(
        &app,
        &cookie,
        &format!("/console/actions/{action}/evidence-bundle?environment=sandbox"),
    )
    .await;
    let download: Value = serde_json::from_str(&download).expect("the console's download is the bundle");
    assert_eq!(download["subject_id"], action.as_str());
    let response = app.get(&format!("/api/v2/actions/{action}/evidence-bundle"), &app.key).await;
    assert_eq!(response.status(), 200);
    let bundle: Value = response.json().await.expect("json");
    let kinds: std::collections::BTreeSet<&str> =
        bundle["records"].as_array().expect("records").iter().map(|r| r["kind"].as_str().expect("kind")).collect();
    for kind in ["actions", "action_checks", "action_decisions", "settlement_records", "audit_event"] {
        assert!(kinds.contains(kind), "{kind} missing from {kinds:?}");
    }
    let dir = tempfile::tempdir().expect("dir");
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write");
        path.display().to_string()
    };
    let verifier_key =
        reqwest::get(app.url("/.well-known/fiscus-evidence-key")).await.expect("get").text().await.expect("text");
    let key_file = write("key.txt", &verifier_key);
    let bundle_file = write("bundle.json", &bundle.to_string());
    let (ok, out) = verify_py(&["bundle", &key_file, &bundle_file]);
    assert!(ok, "{out}");
    // The CLI's offline check reads the same bundle the same way.
    let view: fiscus_kernel::evidence::views::EvidenceBundleView =
        serde_json::from_value(bundle.clone()).expect("bundle");
    let verifier = NoteVerifier::parse(&verifier_key).expect("key");
    let (_, proved) = fiscus_kernel::evidence::offline::verify_bundle(&verifier, &view).expect("the bundle verifies");
    assert_eq!(proved, view.records.len());

    // An edited record, an edited proof and another key are each refused.
    let mut edited = bundle.clone();
    let content =
        edited["records"][0]["content"].as_str().expect("content").replace("\"amount_minor\":", "\"amount_minor\":1");
    edited["records"][0]["content"] = Value::String(content);
    let (ok, out) = verify_py(&["bundle", &key_file, &write("edited.json", &edited.to_string())]);
    assert!(!ok && out.contains("does not hash"), "{out}");
    let edited: fiscus_kernel::evidence::views::EvidenceBundleView = serde_json::from_value(edited).expect("bundle");
    assert!(fiscus_kernel::evidence::offline::verify_bundle(&verifier, &edited).is_err());
    let mut moved = bundle.clone();
    moved["records"][0]["leaf_index"] =
        serde_json::json!(moved["records"][0]["leaf_index"].as_i64().expect("index") + 1);
    let (ok, out) = verify_py(&["bundle", &key_file, &write("moved.json", &moved.to_string())]);
    assert!(!ok && out.contains("root"), "{out}");
    let stranger =
        fiscus_domain::tlog::note::NoteSigner::new(&app.state.settings.log_name(), [9; 32]).verifier().encode();
    let (ok, out) = verify_py(&["bundle", &write("other.txt", &stranger), &bundle_file]);
    assert!(!ok, "{out}");

    // The checkpoint kept before the action, and the bundle's: the later extends the earlier.
    let old = write("old.note", before["note"].as_str().expect("note"));
    let new_note = bundle["checkpoint"]["note"].as_str().expect("note");
    let new = write("new.note", new_note);
    let (first, second) =
        (before["tree_size"].as_i64().expect("size"), bundle["checkpoint"]["tree_size"].as_i64().expect("size"));
    let proof: Value = app
        .get(&format!("/api/v2/evidence/consistency?first={first}&second={second}"), &key)
        .await
        .json()
        .await
        .expect("json");
    let proof_file = write("proof.json", &proof.to_string());
    let (ok, out) = verify_py(&["consistency", &key_file, &old, &new, &proof_file]);
    assert!(ok, "{out}");
    let (ok, out) = verify_py(&["checkpoint", &key_file, &new]);
    assert!(ok && out.contains(&format!("size {second}")), "{out}");

    // pymerkle, an independent RFC 9162 implementation, builds the tree from the entries a mirror downloads,
    // finds both checkpoints' roots, and accepts Fiscus's inclusion proofs and the growth between them.
    let mut entries = Vec::new();
    let mut tile = 0;
    while (entries.len() as i64) < second {
        let width = (second - tile * 256).min(256);
        let path =
            if width == 256 { format!("tile/entries/{tile:03}") } else { format!("tile/entries/{tile:03}.p/{width}") };
        let bytes = app.get(&format!("/api/v2/evidence/tiles/{path}"), &key).await.bytes().await.expect("bytes");
        let mut at = 0;
        while at < bytes.len() {
            let len = u16::from_be_bytes([bytes[at], bytes[at + 1]]) as usize;
            use base64::Engine as _;
            entries.push(base64::engine::general_purpose::STANDARD.encode(&bytes[at + 2..at + 2 + len]));
            at += 2 + len;
        }
        tile += 1;
    }
    let proofs: Vec<Value> = bundle["records"]
        .as_array()
        .expect("records")
        .iter()
        .map(|r| {
            let entry = format!(
                "fiscus-evidence/v1\n{}\n{}\n{}\n",
                r["kind"].as_str().expect("kind"),
                r["id"].as_str().expect("id"),
                r["record_hash"].as_str().expect("hash")
            );
            serde_json::json!({ "leaf_index": r["leaf_index"], "tree_size": second, "entry": entry, "hashes": r["hashes"] })
        })
        .collect();
    let input = serde_json::json!({
        "entries": entries,
        "checkpoints": [
            { "size": first, "root": before["root_hash"] },
            { "size": second, "root": bundle["checkpoint"]["root_hash"] },
        ],
        "proofs": proofs,
    });
    let mut child = std::process::Command::new(python())
        .arg(client("evidence_independent.py"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python");
    use std::io::Write as _;
    child.stdin.take().expect("stdin").write_all(input.to_string().as_bytes()).expect("write");
    let out = child.wait_with_output().expect("wait");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    assert!(text.contains(&format!("OK consistency {first} -> {second}")), "{text}");
}

/// The key holder's rewrite of the whole log: every tile, tree and checkpoint row gone, so the next
/// checkpoint is integrated afresh from the leaves as they now stand and signed with the deployment's key.
async fn rebuild_log(app: &TestApp) {
    for table in ["tlog_tiles", "tlog_trees", "tlog_checkpoints", "tlog_leaves", "tlog_positions"] {
        app.execute_evidence(&format!("DELETE FROM {table} WHERE workspace_id = '{}'", app.workspace_id)).await;
    }
}

/// Rewrites the workspace's leaves as someone holding the database would: every leaf read, `edit` applied,
/// the leaves written back as the storage holds them (one batch, three lines a leaf) and the head's count
/// set to match; then the log is rebuilt (`rebuild_log`). The workers are drained before and after, so no
/// integration overlaps the rewrite.
async fn rewrite_leaves(app: &TestApp, edit: impl FnOnce(&mut Vec<Leaf>)) {
    // The log's integrator first works off what is due (a reseal's correction leaf, say): an integration
    // still running on the leaves as they were would write their index back after the rewrite below, and
    // the test would then see its own race, not the log.
    app.drain().await;
    let ws = &app.workspace_id;
    let mut conn = app.state.store.read().await.expect("conn");
    let size = fiscus_store::tlog::size(&mut conn, ws).await.expect("size");
    let stored = fiscus_store::tlog::leaves(&mut conn, ws, 0, size).await.expect("leaves");
    drop(conn);
    let mut leaves: Vec<Leaf> = stored.into_iter().map(|l| l.leaf).collect();
    edit(&mut leaves);
    let text: String = leaves.iter().map(|l| format!("{}\n{}\n{}\n", l.kind, l.id, l.record_hash)).collect();
    app.execute(&format!("DELETE FROM tlog_batches WHERE workspace_id = '{ws}'")).await;
    if !leaves.is_empty() {
        sqlx::query("INSERT INTO tlog_batches (workspace_id, first_leaf, leaf_count, leaves) VALUES ($1, 0, $2, $3)")
            .bind(ws)
            .bind(leaves.len() as i64)
            .bind(text)
            .execute(app.state.store.pool())
            .await
            .expect("write the leaves back");
    }
    app.execute(&format!("UPDATE audit_heads SET leaves = {} WHERE workspace_id = '{ws}'", leaves.len())).await;
    rebuild_log(app).await;
    app.drain().await;
}

/// What an outsider who kept `kept` concludes about `later` (its checkpoint and, when it is larger, the
/// consistency proof the service gives): the verifier's verdict.
async fn outsider(app: &TestApp, key: &str, kept: &Value, later: &Value) -> (bool, String) {
    let dir = tempfile::tempdir().expect("dir");
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write");
        path.display().to_string()
    };
    let verifier_key = app.get("/api/v2/evidence/key", key).await.json::<Value>().await.expect("json");
    let key_file = write("key.txt", verifier_key["verifier_key"].as_str().expect("key"));
    let old = write("old.note", kept["note"].as_str().expect("note"));
    let new = write("new.note", later["note"].as_str().expect("note"));
    let (first, second) = (kept["tree_size"].as_i64().expect("size"), later["tree_size"].as_i64().expect("size"));
    if first < second {
        let proof: Value = app
            .get(&format!("/api/v2/evidence/consistency?first={first}&second={second}"), key)
            .await
            .json()
            .await
            .expect("json");
        return verify_py(&["consistency", &key_file, &old, &new, &write("proof.json", &proof.to_string())]);
    }
    verify_py(&["consistency", &key_file, &old, &new])
}

#[tokio::test]
async fn a_past_record_rewritten_even_with_the_server_key_is_caught_by_a_checkpoint_an_outsider_kept() {
    let app = spawn_app().await;
    let key = trust_key(&app).await;
    let action = propose(&app).await;
    propose(&app).await;
    let kept = fresh_checkpoint(&app, &key).await;

    // Someone holding the server key changes the amount and re-seals the row with a valid MAC; the
    // correction's leaf is then removed and the original leaf made to name the new content, so the database
    // looks as if the action had always said so, and the log is rebuilt and signed again.
    app.execute(&format!("UPDATE actions SET amount_minor = 1 WHERE id = '{action}'")).await;
    app.reseal(&fiscus_store::seals::ACTIONS, &action).await;
    rewrite_leaves(&app, |leaves| {
        let correction = leaves.pop().expect("the correction's leaf");
        assert_eq!(correction.id, action);
        let original = leaves.iter_mut().find(|l| l.id == action && l.kind == "actions").expect("the action's leaf");
        original.record_hash = correction.record_hash;
    })
    .await;
    let ws = &app.workspace_id;
    // Inside the database everything agrees: the row's seal, and its leaf.
    let mut conn = app.state.store.read().await.expect("conn");
    let mut ev = app.state.store.evidence_read().await.expect("evidence");
    let (_, unlogged) = fiscus_store::sealed_tables::unlogged(&mut conn, &mut ev, ws).await.expect("check");
    drop((conn, ev));
    assert_eq!(unlogged, vec![]);

    // A checkpoint of the same size with another root: a fork, shown by the outsider's verifier.
    let same_size = fresh_checkpoint(&app, &key).await;
    assert_eq!(same_size["tree_size"], kept["tree_size"]);
    let (ok, out) = outsider(&app, &key, &kept, &same_size).await;
    assert!(!ok && out.contains("FORK"), "{out}");
    // And once the log grew, no consistency proof joins the kept checkpoint to the rewritten log.
    propose(&app).await;
    let later = fresh_checkpoint(&app, &key).await;
    let (ok, out) = outsider(&app, &key, &kept, &later).await;
    assert!(!ok && out.contains("rewritten"), "{out}");
    // The untouched log would have passed: the verifier is not simply refusing.
    let (ok, out) = outsider(&app, &key, &kept, &kept).await;
    assert!(ok, "{out}");
}

#[tokio::test]
async fn a_rollback_of_the_database_is_caught_by_a_checkpoint_an_outsider_kept() {
    let app = spawn_app().await;
    let key = trust_key(&app).await;
    propose(&app).await;
    propose(&app).await;
    let kept = fresh_checkpoint(&app, &key).await;
    let size = kept["tree_size"].as_i64().expect("size");

    // The database (anchor file and all) put back to an earlier copy: the last two leaves gone.
    rewrite_leaves(&app, |leaves| leaves.truncate(size as usize - 2)).await;
    let rolled_back = fresh_checkpoint(&app, &key).await;
    assert_eq!(rolled_back["tree_size"].as_i64(), Some(size - 2));
    let (ok, out) = outsider(&app, &key, &kept, &rolled_back).await;
    assert!(!ok && out.contains("rolled back"), "{out}");

    // New writes grow it past the kept size again, over a different past: still caught.
    propose(&app).await;
    propose(&app).await;
    let regrown = fresh_checkpoint(&app, &key).await;
    assert!(regrown["tree_size"].as_i64().expect("size") > size);
    let (ok, out) = outsider(&app, &key, &kept, &regrown).await;
    assert!(!ok && out.contains("rewritten"), "{out}");
}

#[tokio::test]
async fn records_written_before_the_log_existed_are_logged_once_at_the_upgrade() {
    let app = spawn_app().await;
    propose(&app).await;
    // A database migrated from the release before the log: records and events, and not one leaf.
    let ws = &app.workspace_id;
    rewrite_leaves(&app, Vec::clear).await;
    let unlogged = || async {
        let mut conn = app.state.store.read().await.expect("conn");
        let mut ev = app.state.store.evidence_read().await.expect("evidence");
        fiscus_store::sealed_tables::unlogged(&mut conn, &mut ev, ws).await.expect("check").1
    };
    // (The node's evidence worker may do it first; either way it is done once.)
    fiscus_kernel::evidence::backfill(&app.state).await.expect("backfill");
    assert_eq!(unlogged().await, vec![]);
    assert_eq!(fiscus_kernel::evidence::backfill(&app.state).await.expect("again"), 0);
    let leaves = app
        .count(&format!("SELECT CAST(SUM(leaf_count) AS BIGINT) FROM tlog_batches WHERE workspace_id = '{ws}'"))
        .await;
    let key = trust_key(&app).await;
    let checkpoint = fresh_checkpoint(&app, &key).await;
    assert!(checkpoint["tree_size"].as_i64().expect("size") >= leaves);
}

/// A witness for the suite, speaking C2SP `tlog-witness`: `POST /add-checkpoint` with `old <size>`, the
/// consistency proof from there, a blank line and the note. It checks the log's signature (with the key it
/// is given once the log exists) and that the new checkpoint extends the last it cosigned, then cosigns;
/// 409 with its size when `old` is not it, 422 when the proof fails.
async fn witness(
    log_key: std::sync::Arc<std::sync::Mutex<Option<NoteVerifier>>>,
) -> (String, fiscus_domain::tlog::note::NoteVerifier) {
    use axum::http::StatusCode;
    use fiscus_domain::tlog::note::NoteSigner;
    type Seen = std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, (u64, Hash)>>>;
    let signer = std::sync::Arc::new(NoteSigner::new("witness.test", [42; 32]));
    let verifier = signer.verifier();
    let seen: Seen = Default::default();
    let handler = move |body: String| {
        let (signer, seen, log_key) = (signer.clone(), seen.clone(), log_key.clone());
        async move {
            let Some((head, note)) = body.split_once("\n\n") else { return (StatusCode::BAD_REQUEST, String::new()) };
            let mut lines = head.lines();
            let old: u64 =
                lines.next().and_then(|l| l.strip_prefix("old ")).and_then(|n| n.parse().ok()).unwrap_or(u64::MAX);
            let proof: Vec<Hash> = lines.filter_map(from_b64).collect();
            let Some(key) = log_key.lock().expect("key").clone() else { return (StatusCode::NOT_FOUND, String::new()) };
            let Ok(c) = open_checkpoint(&key, note) else { return (StatusCode::FORBIDDEN, String::new()) };
            let mut seen = seen.lock().expect("seen");
            let (size, root) = seen.get(&c.origin).copied().unwrap_or((0, tlog::empty_root()));
            if old != size {
                return (StatusCode::CONFLICT, format!("{size}\n"));
            }
            if size > 0 && tlog::verify_consistency(size, c.size, &root, &c.root, &proof).is_err() {
                return (StatusCode::UNPROCESSABLE_ENTITY, String::new());
            }
            seen.insert(c.origin.clone(), (c.size, c.root));
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("time").as_secs();
            (StatusCode::OK, signer.cosign(&c.body(), now))
        }
    };
    let router = axum::Router::new().route("/add-checkpoint", axum::routing::post(handler));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, router).await });
    (url, verifier)
}

/// A fresh checkpoint once the witness cosigned it: a checkpoint it did not cosign when first offered (its
/// answer raced another offer of the same size on a loaded machine) is offered again at the next ask.
async fn cosigned(app: &TestApp, key: &str, witness: &NoteVerifier) -> Value {
    let mut checkpoint = fresh_checkpoint(app, key).await;
    for _ in 0..10 {
        if witness.cosigned_at(checkpoint["note"].as_str().expect("note")).is_some() {
            break;
        }
        checkpoint = fresh_checkpoint(app, key).await;
    }
    checkpoint
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_witness_cosigns_each_checkpoint_that_extends_the_last_and_not_a_rewritten_one() {
    let log_key = std::sync::Arc::new(std::sync::Mutex::new(None));
    let (url, witness_key) = witness(log_key.clone()).await;
    // Configured with the key a witness publishes for its cosignatures (type 0x04).
    let cosigning = witness_key.encode_cosigning();
    let app = fiscus_apptest::spawn_app_with(move |s| {
        s.evidence.witnesses = vec![fiscus_kernel::settings::Witness { url, key: cosigning }];
    })
    .await;
    *log_key.lock().expect("key") = Some(fiscus_kernel::evidence::verifier(&app.state));
    let key = trust_key(&app).await;
    propose(&app).await;
    let first = cosigned(&app, &key, &witness_key).await;
    assert!(witness_key.cosigned_at(first["note"].as_str().expect("note")).is_some(), "{first}");
    propose(&app).await;
    let second = cosigned(&app, &key, &witness_key).await;
    assert!(first["tree_size"].as_u64() < second["tree_size"].as_u64(), "{first} {second}");
    assert!(witness_key.cosigned_at(second["note"].as_str().expect("note")).is_some(), "{second}");
    // The stored checkpoint carries the cosignature too.
    let served: Value = app.get("/api/v2/evidence/checkpoint", &key).await.json().await.expect("json");
    assert_eq!(served["note"], second["note"]);

    // A rewritten log: the witness refuses to cosign, and the checkpoint stands with the log's signature only.
    rewrite_leaves(&app, |leaves| leaves[0].record_hash = "sha256:00".into()).await;
    propose(&app).await;
    let forged = fresh_checkpoint(&app, &key).await;
    let note = forged["note"].as_str().expect("note");
    assert!(witness_key.cosigned_at(note).is_none(), "{note}");
    assert!(open_checkpoint(&fiscus_kernel::evidence::verifier(&app.state), note).is_ok());
}

#[tokio::test]
async fn an_edited_tile_or_leaf_is_refused_never_served_nor_proved_from() {
    let app = spawn_app().await;
    let key = trust_key(&app).await;
    let action = propose(&app).await;
    propose(&app).await;
    let checkpoint = fresh_checkpoint(&app, &key).await;
    let size = checkpoint["tree_size"].as_u64().expect("size");
    assert!(size < 256, "one partial tile: {size}");
    let tile = format!("/api/v2/evidence/tiles/tile/0/000.p/{size}");
    let entries = format!("/api/v2/evidence/tiles/tile/entries/000.p/{size}");
    let proof = format!("/api/v2/evidence/records/{action}/proof");
    for path in [&tile, &entries, &proof] {
        assert_eq!(app.get(path, &key).await.status(), 200, "{path}");
    }
    // A hash of the stored tile edited (every digit 0 made 1): the tile and proofs read from it are refused.
    let ws = &app.workspace_id;
    app.execute_evidence(&format!(
        "UPDATE tlog_tiles SET hashes = replace(hashes, '0', '1') WHERE workspace_id = '{ws}' AND level = 0"
    ))
    .await;
    fiscus_apptest::problem(app.get(&tile, &key).await, 500, "integrity_failure").await;
    fiscus_apptest::problem(app.get(&proof, &key).await, 500, "integrity_failure").await;
    let consistency = format!("/api/v2/evidence/consistency?first=3&second={size}");
    fiscus_apptest::problem(app.get(&consistency, &key).await, 500, "integrity_failure").await;
    // The entries do not come from the tile, and still give the signed root: served.
    assert_eq!(app.get(&entries, &key).await.status(), 200);
    // The leaves rewritten where they are stored (every record hash given another first digit), the log's
    // checkpoint kept: the entry bundle no longer gives the signed root.
    app.execute(&format!(
        "UPDATE tlog_batches SET leaves = replace(leaves, 'sha256:', 'sha256:f') WHERE workspace_id = '{ws}'"
    ))
    .await;
    fiscus_apptest::problem(app.get(&entries, &key).await, 500, "integrity_failure").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_witness_answer_without_end_is_read_no_further_than_a_cosignature_needs() {
    use std::sync::atomic::{AtomicU64, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // A witness that answers 200 and then 200 MB, counting what it managed to send before the peer let go.
    let sent = std::sync::Arc::new(AtomicU64::new(0));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let counter = sent.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let counter = counter.clone();
            tokio::spawn(async move {
                let mut request = vec![0u8; 64 * 1024];
                let _ = socket.read(&mut request).await;
                if socket
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n")
                    .await
                    .is_err()
                {
                    return;
                }
                let chunk = vec![b'a'; 64 * 1024];
                for _ in 0..(200 * 1024 * 1024 / chunk.len()) {
                    if socket.write_all(&chunk).await.is_err() {
                        return;
                    }
                    counter.fetch_add(chunk.len() as u64, Ordering::Relaxed);
                }
            });
        }
    });
    let signer = fiscus_domain::tlog::note::NoteSigner::new("witness.test", [42; 32]);
    let cosigning = signer.verifier().encode_cosigning();
    let app = fiscus_apptest::spawn_app_with(move |s| {
        s.evidence.witnesses = vec![fiscus_kernel::settings::Witness { url, key: cosigning }];
    })
    .await;
    let key = trust_key(&app).await;
    propose(&app).await;
    // The checkpoint is signed and served, without the witness's cosignature (its answer was refused).
    let checkpoint = fresh_checkpoint(&app, &key).await;
    assert!(
        open_checkpoint(&fiscus_kernel::evidence::verifier(&app.state), checkpoint["note"].as_str().expect("note"))
            .is_ok()
    );
    app.drain().await;
    let read = sent.load(Ordering::Relaxed);
    assert!(read > 0, "the witness was asked");
    // What the witness got to send before the connection was dropped: the cap plus what the sockets' buffers
    // held, far below the 200 MB it tried.
    assert!(read < 32 * 1024 * 1024, "{read} bytes");
}
