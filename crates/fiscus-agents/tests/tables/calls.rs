//! Client calls: calls, recordings, consents and transcripts read sealed in their tenant only, each version
//! or sequence number written once, histories in their order; a recording's audio is served only while it
//! matches its sealed hash; edited rows are refused by their seals, a column that disagrees with its body
//! as corrupt.

use crate::helpers::*;
use fiscus_agents::rules::calls::records::{CallBody, ConsentBody, RecordingBody, TranscriptBody};
use fiscus_agents::rules::calls::{ConsentBasis, ConsentMethod};
use fiscus_agents::tables::calls::{self, Call, Consent, Recording, Transcript};
use fiscus_domain::evidence::seal_bytes;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::{Store, StoreError, seals};

fn call(title: &str, created_at: i64) -> Call {
    let body = CallBody { title: title.into(), counterparty: Some("cp_acme".into()), occurred_at: Some(NOW - 1_000) };
    sealed("cal", body, created_at)
}

async fn add_call(db: &Store, t: &Tenant, c: &Call) {
    let mut tx = db.begin().await.expect("begin");
    calls::insert_call(&mut tx, t, c).await.expect("insert call");
    tx.commit().await.expect("commit");
}

fn recording(call_id: &str, version: i64, audio: &[u8]) -> Recording {
    let body = RecordingBody {
        call_id: call_id.into(),
        version,
        media_type: "audio/wav".into(),
        byte_length: audio.len() as i64,
        audio_sha256: seal_bytes(audio),
        sample_rate: 16_000,
        channels: 1,
        duration_ms: 1_500,
    };
    sealed("crd", body, NOW + version)
}

fn consent(call_id: &str, seq: i64, basis: ConsentBasis) -> Consent {
    let captured = basis == ConsentBasis::Captured;
    let body = ConsentBody {
        call_id: call_id.into(),
        seq,
        basis,
        method: captured.then_some(ConsentMethod::Verbal),
        captured_at: captured.then_some(NOW),
        reference: Some("recording 00:00:04".into()),
        note: None,
    };
    sealed("ccn", body, NOW + seq)
}

fn transcript(call_id: &str, version: i64, recording: &Recording, consent: &Consent) -> Transcript {
    let text = format!("hello, version {version}");
    let body = TranscriptBody {
        call_id: call_id.into(),
        version,
        recording_id: recording.id.clone(),
        recording_sha256: recording.body.audio_sha256.clone(),
        consent_id: consent.id.clone(),
        language: "en".into(),
        text_sha256: seal_bytes(text.as_bytes()),
        text,
        engine: "whisper.cpp".into(),
        model: "base.en".into(),
        duration_ms: 1_500,
        credits: 0,
    };
    sealed("ctr", body, NOW + 10 + version)
}

#[tokio::test]
async fn a_call_is_read_sealed_in_its_tenant_only_and_recent_calls_come_newest_first() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let (a, b, c) = (call("Quarterly review", NOW), call("Margin call", NOW + 1), call("Onboarding", NOW + 2));
    for x in [&a, &b, &c] {
        add_call(&db, &t, x).await;
    }
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    assert_eq!(calls::get_call(&mut conn, key, &t, &b.id).await.expect("get"), b);
    assert_eq!(calls::recent_calls(&mut conn, key, &t, 2).await.expect("recent"), vec![c.clone(), b.clone()]);
    assert_eq!(
        calls::recent_calls(&mut conn, key, &t, 10).await.expect("recent"),
        vec![c.clone(), b.clone(), a.clone()]
    );
    for other in strangers(&db, &t).await {
        assert_not_found(calls::get_call(&mut conn, key, &other, &a.id).await);
        assert!(calls::recent_calls(&mut conn, key, &other, 10).await.expect("recent").is_empty());
    }
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(calls::insert_call(&mut tx, &t, &a).await);
    drop(tx);
    exec(&db, "UPDATE client_calls SET body = replace(body, 'Margin', 'Friendly') WHERE id = $1", &b.id).await;
    let mut conn = db.read().await.expect("conn");
    assert_tampered(calls::get_call(&mut conn, key, &t, &b.id).await);
    assert_tampered(calls::recent_calls(&mut conn, key, &t, 10).await);
}

#[tokio::test]
async fn recordings_are_versioned_per_call_and_their_audio_is_served_only_while_it_matches_its_seal() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let c = call("Quarterly review", NOW);
    add_call(&db, &t, &c).await;
    let (audio_1, audio_2) = (b"RIFF\x00\x01first".to_vec(), b"RIFF\x00\x02second take".to_vec());
    // Version 2's row is written first: the history is by version, not by id.
    let second = recording(&c.id, 2, &audio_2);
    let first = recording(&c.id, 1, &audio_1);
    let mut tx = db.begin().await.expect("begin");
    calls::insert_recording(&mut tx, &t, &second, &audio_2).await.expect("second");
    calls::insert_recording(&mut tx, &t, &first, &audio_1).await.expect("first");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    assert_eq!(
        calls::recordings_of(&mut conn, key, &t, &c.id).await.expect("recordings"),
        vec![first.clone(), second.clone()]
    );
    assert_eq!(calls::audio_of(&mut conn, &t, &first).await.expect("audio"), audio_1);
    assert_eq!(calls::audio_of(&mut conn, &t, &second).await.expect("audio"), audio_2);
    for other in strangers(&db, &t).await {
        assert!(calls::recordings_of(&mut conn, key, &other, &c.id).await.expect("recordings").is_empty());
        assert_not_found(calls::audio_of(&mut conn, &other, &first).await);
    }
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(calls::insert_recording(&mut tx, &t, &recording(&c.id, 2, b"again"), b"again").await);
    drop(tx);
    // Audio replaced behind the store's back is refused; audio gone is corrupt.
    let mut conn = db.read().await.expect("conn");
    sqlx::query("UPDATE call_recordings SET audio = $1 WHERE id = $2")
        .bind(b"RIFF\x00\x01forged".to_vec())
        .bind(&first.id)
        .execute(&mut *conn)
        .await
        .expect("replace audio");
    let forged = calls::audio_of(&mut conn, &t, &first).await;
    assert!(matches!(&forged, Err(StoreError::Tampered(m)) if m.contains(&first.id)), "{forged:?}");
    drop(conn);
    exec(&db, "UPDATE call_recordings SET audio = NULL WHERE id = $1", &second.id).await;
    let mut conn = db.read().await.expect("conn");
    assert_corrupt(calls::audio_of(&mut conn, &t, &second).await, "no audio");
    // The row itself edited: refused by its seal.
    drop(conn);
    exec(&db, "UPDATE call_recordings SET body = replace(body, 'audio/wav', 'audio/mp3') WHERE id = $1", &first.id)
        .await;
    let mut conn = db.read().await.expect("conn");
    assert_tampered(calls::recordings_of(&mut conn, key, &t, &c.id).await);
}

#[tokio::test]
async fn consents_and_transcripts_read_in_their_order_and_each_number_is_written_once() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let c = call("Quarterly review", NOW);
    add_call(&db, &t, &c).await;
    let audio = b"RIFF".to_vec();
    let r = recording(&c.id, 1, &audio);
    let withdrawn = consent(&c.id, 2, ConsentBasis::Withdrawn);
    let captured = consent(&c.id, 1, ConsentBasis::Captured);
    let v2 = transcript(&c.id, 2, &r, &captured);
    let v1 = transcript(&c.id, 1, &r, &captured);
    let mut tx = db.begin().await.expect("begin");
    calls::insert_recording(&mut tx, &t, &r, &audio).await.expect("recording");
    calls::insert_consent(&mut tx, &t, &withdrawn).await.expect("consent");
    calls::insert_consent(&mut tx, &t, &captured).await.expect("consent");
    calls::insert_transcript(&mut tx, &t, &v2).await.expect("transcript");
    calls::insert_transcript(&mut tx, &t, &v1).await.expect("transcript");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    let consents = calls::consents_of(&mut conn, key, &t, &c.id).await.expect("consents");
    assert_eq!(consents, vec![captured.clone(), withdrawn.clone()]);
    assert_eq!(consents.last().map(|c| c.body.basis), Some(ConsentBasis::Withdrawn), "the last is in force");
    assert_eq!(
        calls::transcripts_of(&mut conn, key, &t, &c.id).await.expect("transcripts"),
        vec![v1.clone(), v2.clone()]
    );
    for other in strangers(&db, &t).await {
        assert!(calls::consents_of(&mut conn, key, &other, &c.id).await.expect("consents").is_empty());
        assert!(calls::transcripts_of(&mut conn, key, &other, &c.id).await.expect("transcripts").is_empty());
    }
    drop(conn);
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(calls::insert_consent(&mut tx, &t, &consent(&c.id, 2, ConsentBasis::NotRequired)).await);
    drop(tx);
    let mut tx = db.begin().await.expect("begin");
    assert_conflict(calls::insert_transcript(&mut tx, &t, &transcript(&c.id, 1, &r, &captured)).await);
    drop(tx);
    exec(&db, "UPDATE call_transcripts SET body = replace(body, 'hello', 'goodbye') WHERE id = $1", &v1.id).await;
    let mut conn = db.read().await.expect("conn");
    assert_tampered(calls::transcripts_of(&mut conn, key, &t, &c.id).await);
}

#[tokio::test]
async fn a_consent_whose_basis_column_disagrees_with_its_body_is_corrupt() {
    let db = fresh_store().await;
    let t = tenant(&db).await;
    let c = call("Quarterly review", NOW);
    add_call(&db, &t, &c).await;
    let withdrawn = consent(&c.id, 1, ConsentBasis::Withdrawn);
    let mut tx = db.begin().await.expect("begin");
    calls::insert_consent(&mut tx, &t, &withdrawn).await.expect("consent");
    tx.commit().await.expect("commit");
    // Edited: refused by the seal.
    exec(&db, "UPDATE call_consents SET basis = 'captured' WHERE id = $1", &withdrawn.id).await;
    let mut conn = db.read().await.expect("conn");
    let key = db.seal_key();
    assert_tampered(calls::consents_of(&mut conn, key, &t, &c.id).await);
    drop(conn);
    // Resealed after the edit: the column still disagrees with the sealed body, and is refused.
    let mut tx = db.begin().await.expect("begin");
    seals::seal(&mut tx, &calls::CONSENTS_SEALED, &t.workspace_id, &withdrawn.id).await.expect("reseal");
    tx.commit().await.expect("commit");
    let mut conn = db.read().await.expect("conn");
    assert_corrupt(calls::consents_of(&mut conn, key, &t, &c.id).await, "columns differ from the body");
}
