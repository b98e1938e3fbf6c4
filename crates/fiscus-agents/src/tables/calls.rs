//! Client calls (see the migration `…_client_calls.sql`): calls, recordings with their audio, consent
//! records and transcripts. Records are sealed and decoded by column (`sealed_records`); a recording's audio
//! is read back only when its SHA-256 matches the sealed one.

use crate::rules::calls::records::{CallBody, ConsentBody, RecordingBody, TranscriptBody};
use fiscus_domain::integrity::{SealKey, Stored};
use fiscus_domain::tenancy::Tenant;
use fiscus_store::sealed_records::{
    Fields, Record, columns_differ, history, insert_record, select_one, select_page, text,
};
use fiscus_store::{Result, StoreError, WriteTx};
use sqlx::AnyConnection;

pub use fiscus_store::agent_tables::CALLS_SEALED;
pub use fiscus_store::agent_tables::CONSENTS_SEALED;
pub use fiscus_store::agent_tables::RECORDINGS_SEALED;
pub use fiscus_store::agent_tables::TRANSCRIPTS_SEALED;

pub type Call = Record<CallBody>;
pub type Recording = Record<RecordingBody>;
pub type Consent = Record<ConsentBody>;
pub type Transcript = Record<TranscriptBody>;

fn versioned<B: serde::de::DeserializeOwned>(
    f: &Fields,
    table: &str,
    call_id: impl Fn(&B) -> &str,
    version: impl Fn(&B) -> i64,
    column: &str,
) -> Result<Record<B>> {
    let r: Record<B> = f.record()?;
    if f.text("call_id")? != call_id(&r.body) || f.int(column)? != version(&r.body) {
        return Err(columns_differ(table, &r.id));
    }
    Ok(r)
}

fn recording(f: &Fields) -> Result<Recording> {
    versioned(f, "call_recordings", |b: &RecordingBody| &b.call_id, |b| b.version, "version")
}

fn consent(f: &Fields) -> Result<Consent> {
    let c: Consent = versioned(f, "call_consents", |b: &ConsentBody| &b.call_id, |b| b.seq, "seq")?;
    if f.text("basis")? != c.body.basis.as_str() {
        return Err(columns_differ("call_consents", &c.id));
    }
    Ok(c)
}

fn transcript(f: &Fields) -> Result<Transcript> {
    versioned(f, "call_transcripts", |b: &TranscriptBody| &b.call_id, |b| b.version, "version")
}

pub async fn insert_call(tx: &mut WriteTx, tenant: &Tenant, c: &Call) -> Result<()> {
    insert_record(tx, &CALLS_SEALED, tenant, c, &[]).await
}

pub async fn get_call(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, id: &str) -> Result<Call> {
    select_one(conn, key, &CALLS_SEALED, tenant, id).await?.record()
}

/// The tenant's newest calls, at most `limit`.
pub async fn recent_calls(conn: &mut AnyConnection, key: &SealKey, tenant: &Tenant, limit: u32) -> Result<Vec<Call>> {
    let mut all: Vec<Call> = select_page(conn, key, &CALLS_SEALED, tenant, None, limit)
        .await?
        .iter()
        .map(|f| f.record())
        .collect::<Result<_>>()?;
    all.truncate(limit as usize);
    Ok(all)
}

/// Appends a recording with its audio; a second writer of the same version is `Conflict`.
pub async fn insert_recording(tx: &mut WriteTx, tenant: &Tenant, r: &Recording, audio: &[u8]) -> Result<()> {
    let own = [("call_id", text(&r.body.call_id)), ("version", Stored::Integer(r.body.version))];
    insert_record(tx, &RECORDINGS_SEALED, tenant, r, &own).await?;
    sqlx::query("UPDATE call_recordings SET audio = $1 WHERE id = $2")
        .bind(audio.to_vec())
        .bind(&r.id)
        .execute(tx.conn())
        .await?;
    Ok(())
}

/// A call's recordings, oldest first (without their audio).
pub async fn recordings_of(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    call_id: &str,
) -> Result<Vec<Recording>> {
    history(conn, key, &RECORDINGS_SEALED, tenant, ("call_id", call_id), recording, |r: &Recording| r.body.version)
        .await
}

/// A recording's audio, refused as `Tampered` unless its SHA-256 is the sealed one.
pub async fn audio_of(conn: &mut AnyConnection, tenant: &Tenant, r: &Recording) -> Result<Vec<u8>> {
    let (audio,): (Option<Vec<u8>>,) =
        sqlx::query_as("SELECT audio FROM call_recordings WHERE workspace_id = $1 AND environment = $2 AND id = $3")
            .bind(&tenant.workspace_id)
            .bind(tenant.environment.as_str())
            .bind(&r.id)
            .fetch_optional(&mut *conn)
            .await?
            .ok_or(StoreError::NotFound)?;
    let audio = audio.ok_or_else(|| StoreError::Corrupt(format!("call_recordings {}: no audio", r.id)))?;
    if fiscus_domain::evidence::seal_bytes(&audio) != r.body.audio_sha256 {
        return Err(StoreError::Tampered(format!("call_recordings {} audio", r.id)));
    }
    Ok(audio)
}

/// Appends a consent record; a second writer of the same sequence number is `Conflict`.
pub async fn insert_consent(tx: &mut WriteTx, tenant: &Tenant, c: &Consent) -> Result<()> {
    let own = [
        ("call_id", text(&c.body.call_id)),
        ("seq", Stored::Integer(c.body.seq)),
        ("basis", text(c.body.basis.as_str())),
    ];
    insert_record(tx, &CONSENTS_SEALED, tenant, c, &own).await
}

/// A call's consent records, oldest first; the last is in force.
pub async fn consents_of(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    call_id: &str,
) -> Result<Vec<Consent>> {
    history(conn, key, &CONSENTS_SEALED, tenant, ("call_id", call_id), consent, |c: &Consent| c.body.seq).await
}

/// Appends a transcript; a second writer of the same version is `Conflict`.
pub async fn insert_transcript(tx: &mut WriteTx, tenant: &Tenant, t: &Transcript) -> Result<()> {
    let own = [("call_id", text(&t.body.call_id)), ("version", Stored::Integer(t.body.version))];
    insert_record(tx, &TRANSCRIPTS_SEALED, tenant, t, &own).await
}

/// A call's transcripts, oldest first.
pub async fn transcripts_of(
    conn: &mut AnyConnection,
    key: &SealKey,
    tenant: &Tenant,
    call_id: &str,
) -> Result<Vec<Transcript>> {
    history(conn, key, &TRANSCRIPTS_SEALED, tenant, ("call_id", call_id), transcript, |t: &Transcript| t.body.version)
        .await
}
