//! The transparency log over HTTP: signed checkpoints (the latest, the history, a fresh one on request),
//! inclusion proofs of any record or audit event, consistency proofs between two tree sizes, the log's
//! verifier key, and the tree as C2SP `tlog-tiles` for mirrors. The log itself is the kernel's
//! (`fiscus_kernel::evidence`); what it proves, and how to check it without Fiscus, is in
//! `docs/evidence.md`.
//!
//! Reads need `trust:read`, the seed's scope for the trust surface (it already serves the audit head);
//! asking for a fresh checkpoint needs `trust:write`, which changes nothing but the log's own signatures.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::tlog::b64;
use fiscus_domain::tlog::tiles::{self, TileRef};
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::list::ListPage;
use fiscus_http::problem::ApiError;
use fiscus_http::query::{ApiPath, ListParams};
use fiscus_kernel::evidence;
use fiscus_kernel::evidence::views::{EvidenceBundleView, LogCheckpointView};
use fiscus_store::tlog::StoredCheckpoint;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The reads (`trust:read`).
pub fn reads() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_checkpoint))
        .routes(routes!(list_checkpoints))
        .routes(routes!(get_record_proof))
        .routes(routes!(get_consistency))
        .routes(routes!(get_key))
        .routes(routes!(get_tile))
        .routes(routes!(get_action_bundle))
}

/// The write (`trust:write`): a fresh checkpoint.
pub fn writes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(create_checkpoint))
}

fn checkpoint_view(services: &fiscus_kernel::Services, workspace_id: &str, c: StoredCheckpoint) -> LogCheckpointView {
    evidence::checkpoint_view(services, workspace_id, c)
}

/// Reads the latest signed checkpoint of the workspace's log.
///
/// The newest checkpoint issued (every log signs one when it grew, at most every
/// `evidence.checkpoint_interval_seconds`, and whenever a client asks with `POST /evidence/checkpoints`).
/// Keep it: a later checkpoint's consistency proof against it shows the log only grew. 404 while the log
/// has no checkpoint yet. Needs `trust:read`; changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/evidence/checkpoint",
    responses(
        (status = 200, description = "The latest checkpoint", body = LogCheckpointView),
        (status = 404, description = "The log has no checkpoint yet")
    )
)]
pub async fn get_checkpoint(ctx: Ctx, State(state): State<AppState>) -> Result<Json<LogCheckpointView>, ApiError> {
    let workspace_id = ctx.principal.workspace_id();
    let mut ev = state.store.evidence_read().await?;
    let latest = fiscus_store::tlog::latest_checkpoint(&mut ev, workspace_id)
        .await?
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound).detail("the log has no checkpoint yet"))?;
    Ok(Json(checkpoint_view(&state, workspace_id, latest)))
}

/// `limit` and `after_id` of the checkpoint list (whose ids are `ckp_<tree size>`).
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CheckpointPageParams {
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<u32>,
    /// Return the checkpoints after (older than) this one.
    #[param(pattern = "^ckp_[1-9][0-9]{0,15}$")]
    pub after_id: Option<String>,
}

/// Lists the checkpoints issued, newest first.
///
/// Every checkpoint the workspace's log was given, each kept as signed. `after_id` continues after a
/// checkpoint (`ckp_<size>`) towards older ones. Needs `trust:read`; changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/evidence/checkpoints",
    params(CheckpointPageParams),
    responses((status = 200, description = "A page of checkpoints", body = ListPage<LogCheckpointView>))
)]
pub async fn list_checkpoints(
    ctx: Ctx,
    State(state): State<AppState>,
    params: ListParams,
) -> Result<Json<ListPage<LogCheckpointView>>, ApiError> {
    params.only(&[])?;
    let before = match params.page.after_id.as_deref() {
        None => None,
        Some(id) => Some(
            id.strip_prefix("ckp_")
                .and_then(|n| n.parse::<i64>().ok())
                .ok_or_else(|| ApiError::new(ErrorCode::InvalidParameter).field("after_id", "not a checkpoint id"))?,
        ),
    };
    let workspace_id = ctx.principal.workspace_id();
    let mut ev = state.store.evidence_read().await?;
    let rows = fiscus_store::tlog::checkpoints(&mut ev, workspace_id, before, i64::from(params.page.limit) + 1).await?;
    let page = ListPage::from_overfetch(rows, params.page.limit, |c| format!("ckp_{}", c.tree_size));
    Ok(Json(ListPage {
        object: page.object,
        has_more: page.has_more,
        next_after_id: page.next_after_id,
        data: page.data.into_iter().map(|c| checkpoint_view(&state, workspace_id, c)).collect(),
    }))
}

/// Signs a checkpoint of everything committed so far.
///
/// Integrates every record and event committed before the request into the workspace's log and answers a
/// signed checkpoint of it: a new one (kept with the others), or the latest when nothing was committed
/// since. A client that must prove a record it just wrote asks for this, then for the record's proof. Needs
/// `trust:write`; changes nothing but the log's checkpoints.
#[utoipa::path(
    post,
    path = "/api/v2/evidence/checkpoints",
    responses(
        (status = 201, description = "A checkpoint covering every record committed before the request", body = LogCheckpointView),
        (status = 404, description = "The log has no record yet")
    )
)]
pub async fn create_checkpoint(ctx: Ctx, State(state): State<AppState>) -> Result<Response, ApiError> {
    let workspace_id = ctx.principal.workspace_id();
    let checkpoint = evidence::checkpoint_now(&state, workspace_id)
        .await?
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound).detail("the log has no record yet"))?;
    let view = checkpoint_view(&state, workspace_id, checkpoint);
    Ok(fiscus_http::created::created(Some("/api/v2/evidence/checkpoint".into()), view))
}

/// Which tree a proof is against.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ProofParams {
    /// The tree size of the checkpoint to prove against (default: the latest checkpoint's).
    #[param(minimum = 1, maximum = 9007199254740991i64)]
    pub tree_size: Option<i64>,
    /// The record's kind (its table, or `audit_event`), when an id names records of several kinds.
    #[param(pattern = "^[a-z][a-z0-9_]{0,63}$")]
    pub kind: Option<String>,
}

/// A record's leaf and the hashes from it to the root.
#[derive(Serialize, ToSchema)]
pub struct InclusionProofView {
    #[schema(example = "inclusion_proof")]
    pub object: &'static str,
    /// The record's kind: the table it is stored in, or `audit_event`.
    #[schema(example = "actions")]
    pub kind: String,
    #[schema(example = "act_01KBTA0C4GZ2Q5R8V1XWJ3N6M9")]
    pub record_id: String,
    /// `sha256:` of the record's canonical bytes (a sealed row's sealed columns as RFC 8785 JSON; an audit
    /// event's chain hash).
    pub record_hash: String,
    /// The leaf's entry, whose RFC 9162 leaf hash is `SHA-256(0x00 ‖ entry)`.
    #[schema(
        example = "fiscus-evidence/v1\nactions\nact_01KBTA0C4GZ2Q5R8V1XWJ3N6M9\nsha256:5d41402abc4b2a76b9719d911017c592…\n"
    )]
    pub entry: String,
    #[schema(example = 17)]
    pub leaf_index: i64,
    #[schema(example = 1042)]
    pub tree_size: i64,
    /// The root of the tree of `tree_size` leaves (standard base64).
    pub root_hash: String,
    /// The inclusion path (RFC 9162 §2.1.3), each hash standard base64, leaf side first.
    pub hashes: Vec<String>,
    /// The signed checkpoint of `tree_size`, when one was issued (it is, unless a size was asked for that
    /// no checkpoint has).
    pub checkpoint: Option<LogCheckpointView>,
}

/// Proves that a record or audit event is in the workspace's log.
///
/// The record's latest leaf below `tree_size` and its RFC 9162 inclusion proof against the tree of
/// `tree_size` leaves (by default the latest checkpoint's), with that checkpoint. Any sealed record's id
/// (`act_…`, `dec_…`, `stl_…`, …) or an audit event's (`aud_<seq>`). A record written after the checkpoint
/// has no leaf in it yet: 404 (ask for a fresh checkpoint). Needs `trust:read`; changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/evidence/records/{id}/proof",
    params(("id" = String, Path, pattern = "^[A-Za-z0-9_:.-]{1,128}$", description = "The record's id"), ProofParams),
    responses((status = 200, description = "The inclusion proof", body = InclusionProofView))
)]
pub async fn get_record_proof(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    fiscus_http::query::ApiQuery(q): fiscus_http::query::ApiQuery<ProofParams>,
) -> Result<Json<InclusionProofView>, ApiError> {
    let workspace_id = ctx.principal.workspace_id();
    if q.tree_size.is_some_and(|s| s < 1) {
        return Err(ApiError::new(ErrorCode::InvalidParameter).field("tree_size", "must be at least 1"));
    }
    let (size, checkpoint) = tree_size(&state, workspace_id, q.tree_size).await?;
    let leaf = evidence::leaf_of(&state, workspace_id, &id, q.kind.as_deref(), size).await?.ok_or_else(|| {
        ApiError::new(ErrorCode::NotFound).detail(format!("no record {id} in the first {size} leaves"))
    })?;
    let signed = checkpoint.as_ref().map(|c| c.root);
    let (hashes, root) = evidence::inclusion(&state, workspace_id, leaf.index, size, signed).await?;
    // A proof read from edited tiles does not lead from the leaf to the root: refused, never served (the
    // root is the checkpoint's signed one whenever a checkpoint of that size exists).
    if fiscus_domain::tlog::verify_inclusion(&leaf.leaf.hash(), leaf.index as u64, size as u64, &hashes, &root).is_err()
    {
        return Err(fiscus_store::StoreError::Tampered(format!(
            "the log's tiles give no proof of leaf {} in the tree of {size}",
            leaf.index
        ))
        .into());
    }
    Ok(Json(InclusionProofView {
        object: "inclusion_proof",
        entry: leaf.leaf.entry(),
        kind: leaf.leaf.kind,
        record_id: leaf.leaf.id,
        record_hash: leaf.leaf.record_hash,
        leaf_index: leaf.index,
        tree_size: size,
        root_hash: b64(&root),
        hashes: hashes.iter().map(b64).collect(),
        checkpoint: checkpoint.map(|c| checkpoint_view(&state, workspace_id, c)),
    }))
}

/// The tree size asked for (or the latest checkpoint's) and the checkpoint of that size, if one was issued.
async fn tree_size(
    state: &AppState,
    workspace_id: &str,
    asked: Option<i64>,
) -> Result<(i64, Option<StoredCheckpoint>), ApiError> {
    let mut ev = state.store.evidence_read().await?;
    match asked {
        Some(size) => Ok((size, fiscus_store::tlog::checkpoint(&mut ev, workspace_id, size).await?)),
        None => {
            let latest = fiscus_store::tlog::latest_checkpoint(&mut ev, workspace_id)
                .await?
                .ok_or_else(|| ApiError::new(ErrorCode::NotFound).detail("the log has no checkpoint yet"))?;
            Ok((latest.tree_size, Some(latest)))
        }
    }
}

/// The two tree sizes of a consistency proof.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ConsistencyParams {
    /// The smaller tree size (a checkpoint you kept).
    #[param(minimum = 1, maximum = 9007199254740991i64)]
    pub first: i64,
    /// The larger tree size (default: the latest checkpoint's).
    #[param(minimum = 1, maximum = 9007199254740991i64)]
    pub second: Option<i64>,
}

/// Proof that one tree extends another.
#[derive(Serialize, ToSchema)]
pub struct ConsistencyProofView {
    #[schema(example = "consistency_proof")]
    pub object: &'static str,
    #[schema(example = 512)]
    pub first: i64,
    #[schema(example = 1042)]
    pub second: i64,
    /// The roots of both trees (standard base64).
    pub first_root_hash: String,
    pub second_root_hash: String,
    /// The consistency path (RFC 9162 §2.1.4), each hash standard base64.
    pub hashes: Vec<String>,
    /// The signed checkpoint of `second`, when one was issued.
    pub checkpoint: Option<LogCheckpointView>,
}

/// Proves that the log of `second` leaves extends the log of `first` leaves.
///
/// The RFC 9162 consistency proof between two tree sizes of the workspace's log. An auditor who kept a
/// checkpoint checks that a later one extends it: nothing they were shown was rewritten or removed since.
/// `first` larger than `second` is 409. Needs `trust:read`; changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/evidence/consistency",
    params(ConsistencyParams),
    responses(
        (status = 200, description = "The consistency proof", body = ConsistencyProofView),
        (status = 404, description = "No tree of that size yet (or no checkpoint, when `second` is left out)")
    )
)]
pub async fn get_consistency(
    ctx: Ctx,
    State(state): State<AppState>,
    fiscus_http::query::ApiQuery(q): fiscus_http::query::ApiQuery<ConsistencyParams>,
) -> Result<Json<ConsistencyProofView>, ApiError> {
    let workspace_id = ctx.principal.workspace_id();
    if q.first < 1 {
        return Err(ApiError::new(ErrorCode::InvalidParameter).field("first", "must be at least 1"));
    }
    if q.second.is_some_and(|s| s < 1) {
        return Err(ApiError::new(ErrorCode::InvalidParameter).field("second", "must be at least 1"));
    }
    let (second, checkpoint) = tree_size(&state, workspace_id, q.second).await?;
    if q.first > second {
        // Both sizes are well formed; the log of `second` leaves cannot extend a larger one (409, as every
        // well-formed request that meets a fact rather than a schema rule: docs/standards.md).
        return Err(ApiError::new(ErrorCode::Conflict)
            .detail(format!("a log of {second} leaves cannot extend one of {} leaves", q.first)));
    }
    let (hashes, first_root, second_root) = evidence::consistency(&state, workspace_id, q.first, second).await?;
    // Read from edited tiles, the roots would not be the signed one, or the proof would not join them:
    // refused, never served.
    let (m, n) = (q.first as u64, second as u64);
    let joined = fiscus_domain::tlog::verify_consistency(m, n, &first_root, &second_root, &hashes).is_ok();
    if !joined || checkpoint.as_ref().is_some_and(|c| c.root != second_root) {
        let what = format!("the log's tiles give no consistency proof from {m} to {n} matching its checkpoint");
        return Err(fiscus_store::StoreError::Tampered(what).into());
    }
    Ok(Json(ConsistencyProofView {
        object: "consistency_proof",
        first: q.first,
        second,
        first_root_hash: b64(&first_root),
        second_root_hash: b64(&second_root),
        hashes: hashes.iter().map(b64).collect(),
        checkpoint: checkpoint.map(|c| checkpoint_view(&state, workspace_id, c)),
    }))
}

/// The key checkpoints are signed with.
#[derive(Serialize, ToSchema)]
pub struct EvidenceKeyView {
    #[schema(example = "evidence_key")]
    pub object: &'static str,
    /// The key's name (each checkpoint's signature line names it).
    #[schema(example = "fiscus.localhost")]
    pub name: String,
    /// The C2SP `signed-note` verifier key: `<name>+<key id>+<base64 of 0x01 ‖ Ed25519 public key>`.
    #[schema(example = "fiscus.localhost+3b1fa6d2+AXq2o0b5ZJt4Wm8mK6H1n1b2C3d4E5f6G7h8I9j0K1lM")]
    pub verifier_key: String,
    /// This workspace's log origin (the first line of its checkpoints).
    pub origin: String,
}

/// Reads the log's verifier key.
///
/// The Ed25519 key every checkpoint of this deployment is signed with, as a C2SP verifier key, and the
/// workspace log's origin. The same key is served without credentials at
/// `/.well-known/fiscus-evidence-key` and printed by `fiscus evidence key`; an auditor should get it once,
/// out of band, and keep it. Needs `trust:read`.
#[utoipa::path(
    get,
    path = "/api/v2/evidence/key",
    responses((status = 200, description = "The verifier key", body = EvidenceKeyView))
)]
pub async fn get_key(ctx: Ctx, State(state): State<AppState>) -> Json<EvidenceKeyView> {
    Json(EvidenceKeyView {
        object: "evidence_key",
        name: state.settings.log_name(),
        verifier_key: evidence::verifier_key(&state),
        origin: evidence::origin(&state, ctx.principal.workspace_id()),
    })
}

/// The verifier key as plain text, for `/.well-known/fiscus-evidence-key` (no credentials: it is public).
pub async fn well_known_key(State(state): State<AppState>) -> Response {
    (
        [(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"))],
        format!("{}\n", evidence::verifier_key(&state)),
    )
        .into_response()
}

/// Serves the log as C2SP `tlog-tiles`.
///
/// Under this prefix the workspace's log is laid out as the `tlog-tiles` specification says, so a mirror
/// or a witness reads it with any tiles client: `checkpoint` (the latest signed checkpoint, text), `tile/<L>/<N>[.p/<W>]`
/// (hash tiles: up to 256 hashes of 32 bytes) and `tile/entries/<N>[.p/<W>]` (entry bundles: each entry a
/// big-endian 16-bit length then the entry). Tiles never change once served (a partial tile is served
/// only as wide as the latest checkpoint reaches, and a wider one has another path); the checkpoint does.
/// Every tile is checked before it is served: the tree's root computed over its hashes (an entry bundle's
/// leaf hashes) must be the latest checkpoint's signed root, else 500 `integrity_failure`. Needs
/// `trust:read`.
#[utoipa::path(
    get,
    path = "/api/v2/evidence/tiles/{*path}",
    params(("path" = String, Path, pattern = "^(checkpoint|tile/(entries|[0-9]{1,2})/(x[0-9]{3}/){0,6}[0-9]{3}(\\.p/[0-9]{1,3})?)$", description = "`checkpoint` or a tile's path")),
    responses(
        (status = 200, description = "The tile's bytes, or the checkpoint's note", content(
            (Vec<u8> = "application/octet-stream"),
            (String = "text/plain; charset=utf-8"),
        ))
    )
)]
pub async fn get_tile(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(path): ApiPath<String>,
) -> Result<Response, ApiError> {
    let workspace_id = ctx.principal.workspace_id();
    let mut ev = state.store.evidence_read().await?;
    if path == "checkpoint" {
        let latest = fiscus_store::tlog::latest_checkpoint(&mut ev, workspace_id)
            .await?
            .ok_or_else(|| ApiError::new(ErrorCode::NotFound).detail("the log has no checkpoint yet"))?;
        return Ok((
            [
                (header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8")),
                (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            ],
            latest.note,
        )
            .into_response());
    }
    let not_found =
        || ApiError::new(ErrorCode::NotFound).detail(format!("no tile {path} within the latest checkpoint"));
    let tile: TileRef = tiles::parse(&path)
        .ok_or_else(|| ApiError::new(ErrorCode::InvalidParameter).field("path", "not a tile path"))?;
    drop(ev);
    // Served only once checked against the latest signed checkpoint (`evidence::checked_tile`).
    let body = fiscus_kernel::evidence::checked_tile(&state, workspace_id, tile.level, tile.index, tile.width)
        .await?
        .ok_or_else(not_found)?;
    Ok((
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, HeaderValue::from_static("application/octet-stream")),
            (header::CACHE_CONTROL, HeaderValue::from_static("private, max-age=31536000, immutable")),
        ],
        body,
    )
        .into_response())
}

/// Downloads a Financial Action's evidence bundle.
///
/// One JSON document with everything sealed about the action (its envelope, every check version, every
/// decision with who and when, settlement and reconciliation records, its payment instruction) and every
/// audit event about it, each as its canonical bytes with the inclusion proof of its leaf against one signed
/// checkpoint (signed now if the latest does not cover them). `clients/verify_evidence.py` and `fiscus
/// verify evidence` check it with nothing but the log's published key. Another workspace's or
/// environment's action is 404. Needs `actions:read`; changes nothing but the log's checkpoints.
#[utoipa::path(
    get,
    path = "/api/v2/actions/{uid}/evidence-bundle",
    params(("uid" = String, Path, description = "Action id (act_…)")),
    responses((status = 200, description = "The action's evidence bundle", body = EvidenceBundleView))
)]
pub async fn get_action_bundle(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<EvidenceBundleView>, ApiError> {
    // The action must be the caller's tenant's (workspace and environment), as every read says.
    let mut conn = state.store.read().await?;
    fiscus_actions::tables::actions::get(&mut conn, ctx.tenant(), &id).await?;
    drop(conn);
    let workspace_id = ctx.principal.workspace_id();
    let bundle = evidence::bundle(&state, workspace_id, &fiscus_store::seals::ACTIONS, "action_id", &id).await?;
    Ok(Json(evidence::bundle_view(&state, workspace_id, "actions", &id, bundle)))
}
