//! Client calls: a recording uploaded and transcribed by the local speech runtime under consent (409 without
//! it, or without a recording), a person's decision at the console that consent is not required, bad uploads
//! (a foreign file, a truncated WAV, a 2 GB body) refused with nothing stored, and 503 when the runtime is
//! not installed.

use base64::Engine as _;
use fiscus_apptest::console::{client, console_page, enrolled_operator, hidden, sign_in};
use fiscus_apptest::{TestApp, problem, spawn_app, spawn_app_with};
use fiscus_domain::people::Role;
use fiscus_speech::audio::{FlacStream, constant_frames, flac_bytes, flac_of};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const LIBRIVOX: &str = "/usr/share/pocketsphinx/test/data/librivox";
const CALLS: &str = "/api/v2/client-intelligence/calls";

async fn post(app: &TestApp, path: &str, body: &Value) -> reqwest::Response {
    app.post_json(path, &app.key, body, None).await
}

async fn created(app: &TestApp, path: &str, body: &Value) -> Value {
    let r = post(app, path, body).await;
    let status = r.status().as_u16();
    let v: Value = r.json().await.expect("json");
    assert_eq!(status, 201, "{path}: {v}");
    v
}

pub async fn new_call(app: &TestApp) -> String {
    let call = created(app, CALLS, &json!({ "title": "Quarterly review", "counterparty": "cp_acme_supplies" })).await;
    call["id"].as_str().expect("id").to_string()
}

/// The path a documented example of a call operation works on: a fresh call, which for transcription holds a
/// recording and captured consent.
pub async fn example_path(app: &TestApp, path: &str) -> String {
    if !path.contains("{uid}") {
        return path.to_string();
    }
    let call = new_call(app).await;
    if path.ends_with("/transcribe-recording") {
        created(
            app,
            &format!("{CALLS}/{call}/recordings"),
            &recording(&librivox("sense_and_sensibility_01_austen_64kb-0930")),
        )
        .await;
        created(app, &format!("{CALLS}/{call}/consent"), &captured()).await;
    }
    path.replace("{uid}", &call)
}

pub fn recording(bytes: &[u8]) -> Value {
    json!({ "media_type": "audio/wav", "content_base64": base64::engine::general_purpose::STANDARD.encode(bytes) })
}

pub fn librivox(id: &str) -> Vec<u8> {
    std::fs::read(format!("{LIBRIVOX}/{id}.wav"))
        .unwrap_or_else(|e| panic!("{LIBRIVOX}/{id}.wav: {e}; install Debian's pocketsphinx-testdata"))
}

pub fn captured() -> Value {
    json!({ "basis": "captured", "method": "verbal", "captured_at": "2026-11-20T15:01:00Z", "reference": "recording 00:00:02" })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_with_consent_is_transcribed_locally_as_a_sealed_version() {
    let app = spawn_app().await;
    let call = new_call(&app).await;
    let transcribe = format!("{CALLS}/{call}/transcribe-recording");
    problem(post(&app, &transcribe, &json!({})).await, 409, "recording_missing").await;
    let stored = created(
        &app,
        &format!("{CALLS}/{call}/recordings"),
        &recording(&librivox("sense_and_sensibility_01_austen_64kb-0930")),
    )
    .await;
    assert_eq!((stored["version"].as_i64(), stored["sample_rate"].as_i64()), (Some(1), Some(16_000)));
    problem(post(&app, &transcribe, &json!({ "language": "en" })).await, 409, "consent_required").await;
    // Only a person decides that consent is not required.
    problem(
        post(&app, &format!("{CALLS}/{call}/consent"), &json!({ "basis": "not_required" })).await,
        422,
        "invalid_request",
    )
    .await;
    created(&app, &format!("{CALLS}/{call}/consent"), &captured()).await;
    let before: Value = app.get("/api/v2/ai-credits/balance", &app.key).await.json().await.expect("json");

    let transcript = created(&app, &transcribe, &json!({ "language": "en" })).await;
    let text = transcript["text"].as_str().expect("text");
    assert_eq!(transcript["text_sha256"], fiscus_domain::evidence::seal_bytes(text.as_bytes()));
    assert_eq!(transcript["credits"], 0);
    assert_eq!(transcript["recording_id"], stored["id"]);
    // Within the error the model is documented to make on this recording (PocketSphinx's own expected output
    // for it is "he might even have been made the amiable itself": 2 errors in 8 words).
    let (errors, words) = fiscus_speech::wer::edits("he might even have been made amiable himself", text);
    assert!(errors <= 2 && words == 8, "{text}");
    let after: Value = app.get("/api/v2/ai-credits/balance", &app.key).await.json().await.expect("json");
    assert_eq!(before["consumed"], after["consumed"], "transcription costs no credits");
    // A second transcription is a second version; the call keeps both.
    created(&app, &transcribe, &json!({})).await;
    let file: Value = app.get(&format!("{CALLS}/{call}"), &app.key).await.json().await.expect("json");
    assert_eq!(file["transcripts"].as_array().expect("transcripts").len(), 2);
    assert_eq!(file["transcripts"][1]["version"], 2);
    problem(post(&app, &transcribe, &json!({ "language": "fr" })).await, 422, "invalid_request").await;

    // Withdrawn consent stops transcription.
    let withdrawn = json!({ "basis": "withdrawn", "note": "the client asked" });
    created(&app, &format!("{CALLS}/{call}/consent"), &withdrawn).await;
    problem(post(&app, &transcribe, &json!({})).await, 409, "consent_required").await;

    // Another workspace sees none of it.
    let (_, theirs) = app.other_workspace_key().await;
    problem(app.get(&format!("{CALLS}/{call}"), &theirs).await, 404, "not_found").await;
    problem(app.post_json(&transcribe, &theirs, &json!({}), None).await, 404, "not_found").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_at_the_console_may_decide_consent_is_not_required() {
    let app = spawn_app().await;
    let call = new_call(&app).await;
    created(
        &app,
        &format!("{CALLS}/{call}/recordings"),
        &recording(&librivox("sense_and_sensibility_01_austen_64kb-0930")),
    )
    .await;
    let op = enrolled_operator(&app, "consent@example.com", Role::Approver).await;
    let cookie = sign_in(&app, &op).await;
    let page = console_page(&app, &cookie, "/console/calls").await;
    assert!(page.contains(&call), "{page}");
    let decided = client()
        .post(app.url(&format!("/console/calls/{call}")))
        .header("cookie", &cookie)
        .form(&[
            ("csrf", hidden(&page, "csrf")),
            ("environment", "sandbox".into()),
            ("policy", "Internal training calls, policy TR-7".into()),
        ])
        .send()
        .await
        .expect("request");
    assert_eq!(decided.status(), 303);
    let transcript = created(&app, &format!("{CALLS}/{call}/transcribe-recording"), &json!({})).await;
    let file: Value = app.get(&format!("{CALLS}/{call}"), &app.key).await.json().await.expect("json");
    assert_eq!(file["consents"][0]["basis"], "not_required");
    assert!(file["consents"][0]["recorded_by"].as_str().expect("by").starts_with("operator:"));
    assert_eq!(transcript["consent_id"], file["consents"][0]["id"]);
}

#[tokio::test]
async fn bad_uploads_are_refused_with_their_reason_and_store_nothing() {
    let app = spawn_app().await;
    let call = new_call(&app).await;
    let path = format!("{CALLS}/{call}/recordings");
    let foreign =
        problem(post(&app, &path, &recording(b"%PDF-1.7 a contract, not a call")).await, 409, "invalid_audio").await;
    assert!(foreign["detail"].as_str().expect("detail").contains("not a WAV"), "{foreign}");
    let whole = librivox("sense_and_sensibility_01_austen_64kb-0880");
    let cut = problem(post(&app, &path, &recording(&whole[..whole.len() / 2])).await, 409, "invalid_audio").await;
    assert!(cut["detail"].as_str().expect("detail").contains("truncated"), "{cut}");
    let flac = json!({ "media_type": "audio/flac", "content_base64": base64::engine::general_purpose::STANDARD.encode(&whole) });
    problem(post(&app, &path, &flac).await, 409, "invalid_audio").await;
    problem(
        post(&app, &path, &json!({ "media_type": "audio/wav", "content_base64": "not base64!" })).await,
        422,
        "invalid_request",
    )
    .await;
    // A 2 GB upload is refused on its declared length, before a byte of it is read.
    let mut stream = tokio::net::TcpStream::connect(app.base.trim_start_matches("http://")).await.expect("connect");
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: 2147483648\r\n\r\n{{",
        app.key
    );
    stream.write_all(head.as_bytes()).await.expect("write");
    let mut answer = vec![0u8; 4096];
    let n = stream.read(&mut answer).await.expect("read");
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    let file: Value = app.get(&format!("{CALLS}/{call}"), &app.key).await.json().await.expect("json");
    assert_eq!(file["recordings"], json!([]));
}

/// Peak resident size of this test's process (each test runs in its own process under nextest).
fn peak_rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM")
}

fn flac(bytes: &[u8]) -> Value {
    json!({ "media_type": "audio/flac", "content_base64": base64::engine::general_purpose::STANDARD.encode(bytes) })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decoder_bombs_are_refused_with_422_while_the_server_stays_small() {
    let app = spawn_app().await;
    let call = new_call(&app).await;
    let path = format!("{CALLS}/{call}/recordings");
    let stereo = |rate| FlacStream { rate, channels: 2, bits: 16, max_block_size: u16::MAX, total_samples: 0 };
    // ~700 KB of frames that each declare 8 channels × 65,535 samples in a stereo stream (it once made the
    // decoder ask for 4 GiB and the process abort), and ~7 KB of agreeing frames that decode to 50 minutes.
    let bomb = flac_bytes(&stereo(48_000), &constant_frames(19_000, 8, 48_000));
    let long = flac_bytes(&stereo(8_000), &constant_frames(370, 2, 8_000));
    assert!(bomb.len() > 600_000 && long.len() < 8_000, "{} and {} bytes", bomb.len(), long.len());
    let refused = problem(post(&app, &path, &flac(&bomb)).await, 409, "invalid_audio").await;
    assert!(refused["detail"].as_str().expect("detail").contains("8 channels in a stream of 2"), "{refused}");
    let refused = problem(post(&app, &path, &flac(&long)).await, 409, "invalid_audio").await;
    assert!(refused["detail"].as_str().expect("detail").contains("more than 1800 s"), "{refused}");
    assert!(peak_rss_kb() < 300 * 1024, "peak RSS {} kB", peak_rss_kb());
    let file: Value = app.get(&format!("{CALLS}/{call}"), &app.key).await.json().await.expect("json");
    assert_eq!(file["recordings"], json!([]));
    // A well-formed FLAC is stored.
    let speech: Vec<i16> = (0..16_000).map(|i| ((i * 31) % 2_000) as i16).collect();
    let stored = created(&app, &path, &flac(&flac_of(16_000, 1, &speech))).await;
    assert_eq!((stored["media_type"].as_str(), stored["duration_ms"].as_i64()), (Some("audio/flac"), Some(1000)));
}

#[tokio::test]
async fn consent_captured_in_the_future_is_refused() {
    let app = spawn_app().await;
    let call = new_call(&app).await;
    let path = format!("{CALLS}/{call}/consent");
    let future = json!({ "basis": "captured", "method": "verbal", "captured_at": "2999-01-01T00:00:00Z" });
    let refused = problem(post(&app, &path, &future).await, 422, "invalid_request").await;
    assert!(refused.to_string().contains("captured_at"), "{refused}");
    // A minute ahead is clock skew, not the future.
    let ahead = time::OffsetDateTime::now_utc() + time::Duration::minutes(1);
    let at = ahead.format(&time::format_description::well_known::Rfc3339).expect("format");
    created(&app, &path, &json!({ "basis": "captured", "method": "verbal", "captured_at": at })).await;
    let file: Value = app.get(&format!("{CALLS}/{call}"), &app.key).await.json().await.expect("json");
    assert_eq!(file["consents"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn without_the_speech_runtime_transcription_answers_503_naming_what_is_missing() {
    let app = spawn_app_with(|s| s.speech_library = Some("/nonexistent/libpocketsphinx.so.3".into())).await;
    let call = new_call(&app).await;
    created(
        &app,
        &format!("{CALLS}/{call}/recordings"),
        &recording(&librivox("sense_and_sensibility_01_austen_64kb-0930")),
    )
    .await;
    created(&app, &format!("{CALLS}/{call}/consent"), &captured()).await;
    let refused = problem(
        post(&app, &format!("{CALLS}/{call}/transcribe-recording"), &json!({})).await,
        503,
        "speech_runtime_unavailable",
    )
    .await;
    assert!(refused["detail"].as_str().expect("detail").contains("libpocketsphinx"), "{refused}");
    let file: Value = app.get(&format!("{CALLS}/{call}"), &app.key).await.json().await.expect("json");
    assert_eq!(file["transcripts"], json!([]));
}
