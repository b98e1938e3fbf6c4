//! `/client-intelligence/calls…`: client calls, their recordings and consent, and transcription by the
//! local speech runtime.

use crate::rules::calls::{ConsentBasis, ConsentMethod};
use axum::Json;
use axum::extract::{DefaultBodyLimit, State};
use axum::response::Response;
use fiscus_domain::clock::rfc3339;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::calls::{self, CallConsentRequest, CallFile, NewCallRecording, NewClientCall, UPLOAD_BODY_LIMIT};
use fiscus_http::AppState;
use fiscus_http::body_limit::LargeBody;
use fiscus_http::created::created;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::{ApiJson, OptionalJson};
use fiscus_http::problem::ApiError;
use fiscus_http::query::ApiPath;

pub fn writing_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(post_call))
        .routes(routes!(get_call))
        .routes(routes!(post_consent))
        .routes(routes!(post_transcribe))
        .merge(
            OpenApiRouter::new().routes(routes!(post_recording)).route_layer(DefaultBodyLimit::max(UPLOAD_BODY_LIMIT)),
        )
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct CallRecordingView {
    #[schema(example = "crc_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    #[schema(minimum = 1)]
    pub version: i64,
    pub media_type: String,
    pub byte_length: i64,
    /// `sha256:` of the file as uploaded.
    pub audio_sha256: String,
    pub sample_rate: u32,
    pub channels: u16,
    pub duration_ms: u64,
    pub record_hash: String,
    pub created_by: String,
    pub created_at: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct CallConsentView {
    #[schema(example = "ccn_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    #[schema(minimum = 1)]
    pub seq: i64,
    pub basis: ConsentBasis,
    pub method: Option<ConsentMethod>,
    pub captured_at: Option<String>,
    /// The evidence (captured) or the policy (not required).
    pub reference: Option<String>,
    pub note: Option<String>,
    pub record_hash: String,
    /// The application that captured it, or the operator who decided it is not required.
    pub recorded_by: String,
    pub recorded_at: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct CallTranscriptView {
    /// Always `call_transcript`.
    pub object: &'static str,
    #[schema(example = "ctr_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    pub call_id: String,
    #[schema(minimum = 1)]
    pub version: i64,
    pub recording_id: String,
    pub recording_sha256: String,
    /// The consent record it was made under.
    pub consent_id: String,
    pub language: String,
    pub text: String,
    /// `sha256:` of `text` (UTF-8).
    pub text_sha256: String,
    pub engine: String,
    pub model: String,
    pub duration_ms: u64,
    /// Always 0: transcription runs locally.
    pub credits: i64,
    pub record_hash: String,
    pub created_by: String,
    pub created_at: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ClientCallView {
    /// Always `client_call`.
    pub object: &'static str,
    #[schema(example = "ccl_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    pub title: String,
    pub counterparty: Option<String>,
    pub occurred_at: Option<String>,
    /// Every upload, oldest first (the latest is transcribed).
    pub recordings: Vec<CallRecordingView>,
    /// Every consent record, oldest first (the latest is in force).
    pub consents: Vec<CallConsentView>,
    pub transcripts: Vec<CallTranscriptView>,
    pub record_hash: String,
    pub created_by: String,
    pub created_at: String,
}

fn recording_view(r: crate::tables::calls::Recording) -> CallRecordingView {
    CallRecordingView {
        id: r.id,
        version: r.body.version,
        media_type: r.body.media_type,
        byte_length: r.body.byte_length,
        audio_sha256: r.body.audio_sha256,
        sample_rate: r.body.sample_rate,
        channels: r.body.channels,
        duration_ms: r.body.duration_ms,
        record_hash: r.content_hash,
        created_by: r.created_by.label(),
        created_at: rfc3339(r.created_at),
    }
}

fn consent_view(c: crate::tables::calls::Consent) -> CallConsentView {
    CallConsentView {
        id: c.id,
        seq: c.body.seq,
        basis: c.body.basis,
        method: c.body.method,
        captured_at: c.body.captured_at.map(rfc3339),
        reference: c.body.reference,
        note: c.body.note,
        record_hash: c.content_hash,
        recorded_by: c.created_by.label(),
        recorded_at: rfc3339(c.created_at),
    }
}

fn transcript_view(t: crate::tables::calls::Transcript) -> CallTranscriptView {
    CallTranscriptView {
        object: "call_transcript",
        id: t.id,
        call_id: t.body.call_id,
        version: t.body.version,
        recording_id: t.body.recording_id,
        recording_sha256: t.body.recording_sha256,
        consent_id: t.body.consent_id,
        language: t.body.language,
        text: t.body.text,
        text_sha256: t.body.text_sha256,
        engine: t.body.engine,
        model: t.body.model,
        duration_ms: t.body.duration_ms,
        credits: t.body.credits,
        record_hash: t.content_hash,
        created_by: t.created_by.label(),
        created_at: rfc3339(t.created_at),
    }
}

fn call_view(f: CallFile) -> ClientCallView {
    ClientCallView {
        object: "client_call",
        id: f.call.id,
        title: f.call.body.title,
        counterparty: f.call.body.counterparty,
        occurred_at: f.call.body.occurred_at.map(rfc3339),
        recordings: f.recordings.into_iter().map(recording_view).collect(),
        consents: f.consents.into_iter().map(consent_view).collect(),
        transcripts: f.transcripts.into_iter().map(transcript_view).collect(),
        record_hash: f.call.content_hash,
        created_by: f.call.created_by.label(),
        created_at: rfc3339(f.call.created_at),
    }
}

fn location(call_id: &str) -> String {
    format!("/api/v2/client-intelligence/calls/{call_id}")
}

/// Records a client call, to which recordings, consent and transcripts are then added.
///
/// The `title`, optional `counterparty` and `occurred_at` are sealed into a record of the caller's workspace and
/// environment, with an audit event; the answer is the call with no recordings, consent or transcripts yet. Needs
/// `client:intelligence:write`. Creating a call records no audio and transcribes nothing.
#[utoipa::path(
    post,
    path = "/api/v2/client-intelligence/calls",
    request_body(content = NewClientCall, example = json!({"title": "Quarterly review with Acme Supplies", "counterparty": "cp_acme_supplies", "occurred_at": "2026-11-20T15:00:00Z"})),
    responses(
        (status = 201, description = "The call", body = ClientCallView, headers(("Location" = String, description = "The call"))),
        (status = 422, description = "Bad input")
    )
)]
pub async fn post_call(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<NewClientCall>,
) -> Result<Response, ApiError> {
    let call = calls::create(&state, &ctx.caller(), ctx.tenant(), body).await?;
    let file = calls::load(&state, ctx.tenant(), &call.id).await?;
    Ok(created(Some(location(&call.id)), call_view(file)))
}

/// A call with its recordings, consent records and transcripts.
///
/// Every recording version (its format, length, duration and `audio_sha256`, never the audio), every consent
/// record (the latest is in force) and every transcript version with its text and `text_sha256`, each a sealed
/// record. Any call of the caller's workspace and environment is readable (404 otherwise). Needs
/// `client:intelligence:read`; reading changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/client-intelligence/calls/{uid}",
    params(("uid" = String, Path, description = "The call (`ccl_…`)", example = "ccl_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses((status = 200, description = "The call", body = ClientCallView), (status = 404, description = "Not in this workspace and environment"))
)]
pub async fn get_call(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<ClientCallView>, ApiError> {
    Ok(Json(call_view(calls::load(&state, ctx.tenant(), &uid).await?)))
}

/// Uploads a recording of the call (WAV or FLAC, base64): stored as the call's next version once it
/// decodes, with its SHA-256; earlier versions are kept.
///
/// A `content_base64` that is not base64, or another `media_type`, is 422 `invalid_request`; a file that does not
/// decode as a WAV or FLAC this service reads is 409 `invalid_audio`; more than 24 MiB of audio is 413
/// `payload_too_large`; nothing is stored then. The version records its sample rate, channels and duration. Needs
/// `client:intelligence:write`. Uploading transcribes nothing and records no consent; the audio is stored by
/// Fiscus and sent to no other service.
#[utoipa::path(
    post,
    path = "/api/v2/client-intelligence/calls/{uid}/recordings",
    params(("uid" = String, Path, description = "The call (`ccl_…`)", example = "ccl_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    request_body(content = NewCallRecording, example = json!({"media_type": "audio/wav", "content_base64": "UklGRmQAAABXQVZFZm10IBAAAAABAAEAgD4AAAB9AAACABAAZGF0YUAAAAAAAAMC+APOBXgH6QgWCvYKggu3C5MLFgtECiUJvwcfBlAEYAJeAFr+YfyF+tL4Vvcc9i31kfRM9GD0zfSP9aH2"})),
    responses(
        (status = 201, description = "Stored", body = CallRecordingView, headers(("Location" = String, description = "The call"))),
        (status = 404, description = "Not in this workspace and environment"),
        (status = 413, description = "More than 24 MiB of audio (`payload_too_large`)"),
        (status = 409, description = "Base64 whose bytes are not a WAV/FLAC this service reads: a foreign file, a truncated WAV, another sample format (`invalid_audio`, naming why)"),
        (status = 422, description = "Not base64, or another media type (`invalid_request`)")
    )
)]
pub async fn post_recording(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
    ApiJson(body): ApiJson<NewCallRecording>,
) -> Result<Response, ApiError> {
    let r = calls::add_recording(&state, &ctx.caller(), ctx.tenant(), &uid, body).await?;
    Ok(created(Some(location(&uid)), recording_view(r)))
}

/// Records consent the application captured (or its withdrawal). That consent is not required under a
/// policy is a person's decision at the console, never an application's.
///
/// Appends a sealed record with the next `seq`: `captured`, with its `method`, `captured_at` (not in the future
/// beyond a small clock skew) and an optional evidence `reference`; or `withdrawn`, after which transcription is
/// refused until consent is in force again. Needs `client:intelligence:write`. An application can never record
/// `not_required`: an admin or approver decides that at the console, naming the policy. Earlier records are never
/// changed.
#[utoipa::path(
    post,
    path = "/api/v2/client-intelligence/calls/{uid}/consent",
    params(("uid" = String, Path, description = "The call (`ccl_…`)", example = "ccl_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    request_body(content = CallConsentRequest, example = json!({"basis": "captured", "method": "verbal", "captured_at": "2026-11-20T15:01:00Z", "reference": "recording 00:00:12"})),
    responses(
        (status = 201, description = "Recorded; the latest record is in force", body = CallConsentView, headers(("Location" = String, description = "The call"))),
        (status = 404, description = "Not in this workspace and environment"),
        (status = 422, description = "Bad input, or `not_required` (a person's decision at the console)")
    )
)]
pub async fn post_consent(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
    ApiJson(body): ApiJson<CallConsentRequest>,
) -> Result<Response, ApiError> {
    let c = calls::record_consent(&state, &ctx.caller(), ctx.tenant(), &uid, body).await?;
    Ok(created(Some(location(&uid)), consent_view(c)))
}

/// The languages this build transcribes: those of the one model it loads (Debian's US English).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // a schema only: the field stays a string, checked by `calls::transcribe`
enum TranscriptionLanguage {
    #[schema(rename = "en")]
    En,
    #[schema(rename = "en-us")]
    EnUs,
    #[schema(rename = "en-US")]
    EnUsUpper,
}

/// What to transcribe in.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TranscribeRecordingRequest {
    /// The language spoken (default `en`): one the installed model hears (`calls::LANGUAGES`).
    #[serde(default = "english")]
    #[schema(value_type = TranscriptionLanguage, example = "en")]
    pub language: String,
}

fn english() -> String {
    "en".into()
}

/// Transcribes the call's latest recording with the local speech runtime (PocketSphinx from the operating
/// system's packages; never a cloud service), at no AI credit cost, and stores the transcript as a new
/// version with the SHA-256 of its text.
///
/// Needs a stored recording (409 `recording_missing`) and a latest consent record that is `captured` or
/// `not_required` (409 `consent_required`, also after a withdrawal); the audio is read back only while it matches
/// its sealed SHA-256. The transcript names the recording, its hash and the consent record it was made under.
/// Needs `client:intelligence:run`. Audio and text never leave Fiscus, `credits` is 0, and earlier transcripts are
/// kept.
#[utoipa::path(
    post,
    path = "/api/v2/client-intelligence/calls/{uid}/transcribe-recording",
    params(("uid" = String, Path, description = "The call (`ccl_…`)", example = "ccl_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    request_body(content = Option<TranscribeRecordingRequest>, example = json!({"language": "en"})),
    responses(
        (status = 201, description = "Transcript stored", body = CallTranscriptView, headers(("Location" = String, description = "The call"))),
        (status = 404, description = "Not in this workspace and environment"),
        (status = 409, description = "No stored recording (`recording_missing`), or no consent in force (`consent_required`)"),
        (status = 422, description = "A language no installed model hears"),
        (status = 503, description = "The local speech runtime or its model is not installed (`speech_runtime_unavailable`, naming what is missing)")
    )
)]
pub async fn post_transcribe(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
    OptionalJson(body): OptionalJson<TranscribeRecordingRequest>,
) -> Result<Response, ApiError> {
    let language = body.map_or_else(english, |b| b.language);
    let t = calls::transcribe(&state, &ctx.caller(), ctx.tenant(), &uid, &language).await?;
    Ok(created(Some(location(&uid)), transcript_view(t)))
}

/// The recording upload's body limit, for the body limit layer (`http::body_limit`).
pub const LARGE_BODY: LargeBody = LargeBody { path: is_upload, limit: UPLOAD_BODY_LIMIT };

/// A call recording's upload (`POST /api/v2/client-intelligence/calls/{uid}/recordings`), whose body carries
/// the audio and may be larger than any other request's; its route reads at most that much.
fn is_upload(path: &str) -> bool {
    path.strip_prefix("/api/v2/client-intelligence/calls/")
        .and_then(|rest| rest.strip_suffix("/recordings"))
        .is_some_and(|uid| !uid.is_empty() && !uid.contains('/'))
}
