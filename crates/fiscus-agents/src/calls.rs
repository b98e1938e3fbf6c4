//! Client calls, the application layer: a call created, recordings uploaded (each a new version), consent
//! captured by the application or waived by a person at the console under a named policy, and recordings
//! transcribed by the local speech runtime (0 AI credits; each transcript a new version with its text's
//! SHA-256). Routes (`areas/calls.rs`) and the console (`console/calls.rs`) only call these functions.

use crate::rules::calls::records::{CallBody, ConsentBody, RecordingBody, TranscriptBody};
use crate::rules::calls::{ConsentBasis, ConsentMethod, Precondition, may_transcribe};
use crate::tables::calls::{self as store, Call, Consent, Recording, Transcript};
use base64::Engine as _;
use fiscus_domain::actor::ActorKind;
use fiscus_domain::audit_action::Change;
use fiscus_domain::clock::now_micros;
use fiscus_domain::clock::parse_rfc3339;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::evidence::seal_bytes;
use fiscus_domain::people::{Refusal, Role};
use fiscus_domain::tenancy::Tenant;
use fiscus_speech::audio::{self, Format};
use fiscus_store::StoreError;
use serde::Deserialize;
use serde_json::json;

use fiscus_kernel::Services;
use fiscus_kernel::governed::record::{AuditEntry, audit};
use fiscus_kernel::governed::{Caller, Failure, new_record};

/// The largest recording accepted, in bytes of audio (its base64 in the request is a third larger).
pub const MAX_AUDIO_BYTES: usize = 24 * 1024 * 1024;
/// The request body limit of an upload: the base64 of the largest recording, and the rest of the body.
pub const UPLOAD_BODY_LIMIT: usize = MAX_AUDIO_BYTES / 3 * 4 + 64 * 1024;

/// A new call.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewClientCall {
    #[schema(value_type = fiscus_domain::fields::Text<1, 200>, inline, example = "Quarterly review with Acme Supplies")]
    pub title: String,
    #[serde(default)]
    #[schema(value_type = Option<fiscus_domain::fields::Text<1, 200>>, inline, example = "cp_acme_supplies")]
    pub counterparty: Option<String>,
    /// When the call took place (RFC 3339).
    #[serde(default)]
    #[schema(format = DateTime, example = "2026-11-20T15:00:00Z")]
    pub occurred_at: Option<String>,
}

fn text_field(name: &'static str, v: &Option<String>, max: usize) -> Result<(), Failure> {
    match v {
        Some(t) if !fiscus_domain::fields::text_ok(t, 1, max) => {
            Err(Failure::Invalid(vec![(name, format!("1 to {max} characters of text"))]))
        }
        _ => Ok(()),
    }
}

fn instant(name: &'static str, v: &Option<String>) -> Result<Option<i64>, Failure> {
    v.as_deref()
        .map(|t| parse_rfc3339(t).ok_or_else(|| Failure::Invalid(vec![(name, "an RFC 3339 date-time".into())])))
        .transpose()
}

fn changed(e: StoreError) -> Failure {
    match e {
        StoreError::Conflict(_) => Failure::refused(ErrorCode::Conflict, "The call changed meanwhile; read it again."),
        other => other.into(),
    }
}

pub async fn create(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    req: NewClientCall,
) -> Result<Call, Failure> {
    if !fiscus_domain::fields::text_ok(&req.title, 1, 200) {
        return Err(Failure::Invalid(vec![("title", "1 to 200 characters of text".into())]));
    }
    text_field("counterparty", &req.counterparty, 200)?;
    let body = CallBody {
        title: req.title,
        counterparty: req.counterparty,
        occurred_at: instant("occurred_at", &req.occurred_at)?,
    };
    let call = new_record("client call", "ccl", body, caller.actor.clone())?;
    let mut tx = services.store.begin().await?;
    store::insert_call(&mut tx, tenant, &call).await?;
    audit(&mut tx, caller, &AuditEntry::of_tenant(tenant, Change::CallCreated, &call.id, json!({}), call.created_at))
        .await?;
    tx.commit().await?;
    Ok(call)
}

/// Everything recorded about a call.
pub struct CallFile {
    pub call: Call,
    pub recordings: Vec<Recording>,
    pub consents: Vec<Consent>,
    pub transcripts: Vec<Transcript>,
}

pub async fn load(services: &Services, tenant: &Tenant, call_id: &str) -> Result<CallFile, Failure> {
    if !fiscus_domain::ids::is_id_of("ccl", call_id) {
        return Err(Failure::NotFound);
    }
    let key = services.store.seal_key();
    let mut conn = services.store.read().await?;
    let call = store::get_call(&mut conn, key, tenant, call_id).await?;
    Ok(CallFile {
        recordings: store::recordings_of(&mut conn, key, tenant, call_id).await?,
        consents: store::consents_of(&mut conn, key, tenant, call_id).await?,
        transcripts: store::transcripts_of(&mut conn, key, tenant, call_id).await?,
        call,
    })
}

/// A recording to upload.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewCallRecording {
    /// `audio/wav` (16-bit PCM) or `audio/flac` (16- or 24-bit); mono or stereo, 8 to 48 kHz, at most 30 minutes.
    #[schema(pattern = "^audio/(wav|x-wav|wave|flac|x-flac)$", example = "audio/wav")]
    pub media_type: String,
    /// The file, base64 (RFC 4648, with padding); at most 24 MiB of audio.
    #[schema(
        content_encoding = "base64",
        min_length = 4,
        pattern = "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?$",
        max_length = 33_554_432,
        example = "UklGRmQAAABXQVZFZm10IBAAAAABAAEAgD4AAAB9AAACABAAZGF0YUAAAAAAAAMC+APOBXgH6QgWCvYKggu3C5MLFgtECiUJvwcfBlAEYAJeAFr+YfyF+tL4Vvcc9i31kfRM9GD0zfSP9aH2"
    )]
    pub content_base64: String,
}

/// Stores a recording as the call's next version, once it decodes as what it says it is.
pub async fn add_recording(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    call_id: &str,
    req: NewCallRecording,
) -> Result<Recording, Failure> {
    let file = load(services, tenant, call_id).await?;
    let Some(format) = Format::parse(&req.media_type) else {
        return Err(Failure::Invalid(vec![("media_type", "audio/wav or audio/flac".into())]));
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(req.content_base64.as_bytes())
        .map_err(|_| Failure::Invalid(vec![("content_base64", "not base64 (RFC 4648, with padding)".into())]))?;
    if bytes.len() > MAX_AUDIO_BYTES {
        return Err(Failure::refused(
            ErrorCode::PayloadTooLarge,
            format!("the recording holds {} bytes; at most {MAX_AUDIO_BYTES} are accepted", bytes.len()),
        ));
    }
    let (bytes, decoded) = services
        .cpu
        .run(move || {
            let decoded = audio::decode(format, &bytes);
            (bytes, decoded)
        })
        .await
        .map_err(|_| Failure::internal("decoding a recording panicked"))?;
    let decoded = decoded.map_err(|e| Failure::refused(ErrorCode::InvalidAudio, e.0))?;
    let body = RecordingBody {
        call_id: call_id.to_string(),
        version: file.recordings.last().map_or(1, |r| r.body.version + 1),
        media_type: format.media_type().to_string(),
        byte_length: bytes.len() as i64,
        audio_sha256: seal_bytes(&bytes),
        sample_rate: decoded.sample_rate,
        channels: decoded.channels,
        duration_ms: decoded.duration_ms,
    };
    let recording = new_record("call recording", "crc", body, caller.actor.clone())?;
    let mut tx = services.store.begin().await?;
    store::insert_recording(&mut tx, tenant, &recording, &bytes).await.map_err(changed)?;
    let details = json!({ "version": recording.body.version, "audio_sha256": recording.body.audio_sha256 });
    audit(
        &mut tx,
        caller,
        &AuditEntry::of_tenant(tenant, Change::CallRecordingStored, call_id, details, recording.created_at),
    )
    .await?;
    tx.commit().await?;
    Ok(recording)
}

/// What an application says about consent: captured (how, when, and where its evidence is) or withdrawn.
/// That consent is not required is a person's decision at the console, so the API has no such basis.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(tag = "basis", rename_all = "snake_case", deny_unknown_fields)]
pub enum CallConsentRequest {
    /// The participants consented; the application captured it.
    Captured {
        /// How consent was given.
        method: ConsentMethod,
        /// When it was given (RFC 3339).
        #[schema(format = DateTime, example = "2026-11-20T15:01:00Z")]
        captured_at: String,
        /// Where the evidence is (a recording's time offset, a signed form's reference).
        #[serde(default)]
        #[schema(value_type = Option<fiscus_domain::fields::Text<1, 500>>, inline, example = "recording 00:00:12")]
        reference: Option<String>,
        #[serde(default)]
        #[schema(value_type = Option<fiscus_domain::fields::Prose<2000>>, inline)]
        note: Option<String>,
    },
    /// Consent was withdrawn: nothing more is transcribed.
    Withdrawn {
        #[serde(default)]
        #[schema(value_type = Option<fiscus_domain::fields::Text<1, 500>>, inline)]
        reference: Option<String>,
        #[serde(default)]
        #[schema(value_type = Option<fiscus_domain::fields::Prose<2000>>, inline)]
        note: Option<String>,
    },
}

async fn append_consent(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    file: &CallFile,
    body: ConsentBody,
) -> Result<Consent, Failure> {
    let consent = new_record("call consent", "ccn", body, caller.actor.clone())?;
    let mut tx = services.store.begin().await?;
    store::insert_consent(&mut tx, tenant, &consent).await.map_err(changed)?;
    let details =
        json!({ "basis": consent.body.basis.as_str(), "seq": consent.body.seq, "record_hash": consent.content_hash });
    audit(
        &mut tx,
        caller,
        &AuditEntry::of_tenant(tenant, Change::CallConsentRecorded, &file.call.id, details, consent.created_at),
    )
    .await?;
    tx.commit().await?;
    Ok(consent)
}

/// An application records consent it captured, or its withdrawal.
pub async fn record_consent(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    call_id: &str,
    req: CallConsentRequest,
) -> Result<Consent, Failure> {
    let file = load(services, tenant, call_id).await?;
    let (basis, method, captured_at, reference, note) = match req {
        CallConsentRequest::Captured { method, captured_at, reference, note } => {
            (ConsentBasis::Captured, Some(method), Some(captured_at), reference, note)
        }
        CallConsentRequest::Withdrawn { reference, note } => (ConsentBasis::Withdrawn, None, None, reference, note),
    };
    text_field("reference", &reference, 500)?;
    if note.as_deref().is_some_and(|n| !fiscus_domain::fields::prose_ok(n, 2000)) {
        return Err(Failure::Invalid(vec![("note", "at most 2000 characters of text".into())]));
    }
    let captured_at = instant("captured_at", &captured_at)?;
    if captured_at.is_some_and(|at| !crate::rules::calls::captured_in_time(at, now_micros())) {
        return Err(Failure::Invalid(vec![(
            "captured_at",
            format!(
                "not in the future (at most {} s ahead of this service's clock)",
                crate::rules::calls::CONSENT_CLOCK_SKEW_MICROS / 1_000_000
            ),
        )]));
    }
    let body = ConsentBody {
        call_id: call_id.to_string(),
        seq: file.consents.last().map_or(1, |c| c.body.seq + 1),
        basis,
        method,
        captured_at,
        reference,
        note,
    };
    append_consent(services, caller, tenant, &file, body).await
}

/// A person's decision at the console: under `policy`, consent is not required for this call.
pub async fn waive_consent(
    services: &Services,
    caller: &Caller,
    role: Role,
    tenant: &Tenant,
    call_id: &str,
    policy: &str,
) -> Result<Consent, Failure> {
    if caller.actor.kind != ActorKind::Operator || !matches!(role, Role::Admin | Role::Approver) {
        return Err(Failure::Decision(Refusal::RoleMayNotDecide));
    }
    if !fiscus_domain::fields::text_ok(policy, 1, 500) {
        return Err(Failure::Invalid(vec![("policy", "name the policy (1 to 500 characters)".into())]));
    }
    let file = load(services, tenant, call_id).await?;
    let body = ConsentBody {
        call_id: call_id.to_string(),
        seq: file.consents.last().map_or(1, |c| c.body.seq + 1),
        basis: ConsentBasis::NotRequired,
        method: None,
        captured_at: None,
        reference: Some(policy.trim().to_string()),
        note: None,
    };
    append_consent(services, caller, tenant, &file, body).await
}

/// The languages the installed model hears.
const LANGUAGES: [&str; 3] = ["en", "en-us", "en-US"];

/// Transcribes the call's latest recording with the local runtime; costs no AI credits.
pub async fn transcribe(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    call_id: &str,
    language: &str,
) -> Result<Transcript, Failure> {
    if !LANGUAGES.contains(&language) {
        return Err(Failure::Invalid(vec![(
            "language",
            format!("no local speech model hears `{language}`; the installed model hears en"),
        )]));
    }
    let file = load(services, tenant, call_id).await?;
    let latest = file.consents.last();
    match may_transcribe(file.recordings.len(), latest.map(|c| c.body.basis)) {
        Ok(()) => {}
        Err(Precondition::NoRecording) => {
            return Err(Failure::refused(
                ErrorCode::RecordingMissing,
                "the call has no stored recording; upload one first",
            ));
        }
        Err(Precondition::NoConsent) => {
            return Err(Failure::refused(
                ErrorCode::ConsentRequired,
                "no consent is in force for this call: record captured consent, or have a person decide at the \
                 console that a policy makes it unnecessary",
            ));
        }
    }
    let (Some(recording), Some(consent)) = (file.recordings.last(), latest) else {
        return Err(Failure::internal("a transcribable call lost its recording or consent"));
    };
    let runtime = services.speech.runtime(&services.settings).await?;
    let bytes = {
        let mut conn = services.store.read().await?;
        store::audio_of(&mut conn, tenant, recording).await?
    };
    let format = Format::parse(&recording.body.media_type).ok_or_else(|| Failure::internal("a stored media type"))?;
    let heard = tokio::task::spawn_blocking(move || {
        let decoded = audio::decode(format, &bytes).map_err(|e| e.0)?;
        runtime.transcribe(&decoded.samples).map(|t| (t, runtime)).map_err(|e| e.to_string())
    })
    .await
    .map_err(|_| Failure::internal("the speech runtime panicked"))?
    .map_err(|e| Failure::refused(ErrorCode::SpeechRuntimeUnavailable, e))?;
    let (text, runtime) = heard;
    let body = TranscriptBody {
        call_id: call_id.to_string(),
        version: file.transcripts.last().map_or(1, |t| t.body.version + 1),
        recording_id: recording.id.clone(),
        recording_sha256: recording.body.audio_sha256.clone(),
        consent_id: consent.id.clone(),
        language: "en".into(),
        text_sha256: seal_bytes(text.as_bytes()),
        text,
        engine: format!("pocketsphinx 5prealpha ({})", runtime.library),
        model: format!("cmusphinx en-us ({})", runtime.model.acoustic.display()),
        duration_ms: recording.body.duration_ms,
        credits: 0,
    };
    let transcript = new_record("call transcript", "ctr", body, caller.actor.clone())?;
    let mut tx = services.store.begin().await?;
    store::insert_transcript(&mut tx, tenant, &transcript).await.map_err(changed)?;
    let details = json!({
        "version": transcript.body.version, "recording_id": transcript.body.recording_id,
        "text_sha256": transcript.body.text_sha256, "consent_id": transcript.body.consent_id,
    });
    audit(
        &mut tx,
        caller,
        &AuditEntry::of_tenant(tenant, Change::CallTranscribed, call_id, details, transcript.created_at),
    )
    .await?;
    tx.commit().await?;
    Ok(transcript)
}
