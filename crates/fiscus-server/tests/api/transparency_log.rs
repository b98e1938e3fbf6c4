//! The transparency log over HTTP, checked the way an outsider would: a checkpoint's signature with the
//! published key, a record's inclusion proof and a consistency proof between two checkpoints with the RFC
//! 9162 verification algorithms (not Fiscus's prover), and the tiles a mirror downloads giving the same root.

use crate::helpers::{EVIDENCE, TestApp, evidence_body, spawn_app};
use crate::webhook_delivery::propose;
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
    let (checked, missing) = fiscus_store::sealed_tables::unlogged(&mut conn, &app.workspace_id).await.expect("check");
    drop(conn);
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
    assert_eq!(sizes, vec![second.size, signed.size]);
}
