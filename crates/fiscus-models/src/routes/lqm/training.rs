//! Dataset contracts, retraining requests and their review, training and evaluation.

use axum::Json;
use axum::extract::State;
use axum::response::Response;

use super::views::{
    self, CheckpointView, ContractView, EvaluationView, EvidencePacketView, PromotionView, PublicationView, RequestView,
};
use crate::lqm::contracts::{self, ContractRequest};
use crate::lqm::supply_chain;
use crate::lqm::training::{self, DecisionInput, EvaluationInput, RetrainingInput};
use fiscus_http::AppState;
use fiscus_http::created::created;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::ApiJson;
use fiscus_http::problem::ApiError;
use fiscus_http::query::ApiPath;

/// Seals an immutable contract between a model and a dataset of the data plane: the source, feature-schema,
/// lineage and data hashes, never the rows. Refused (409 `dataset_ineligible` with a `reason`) for a
/// synthetic, unsupported, unsealed, licence-incompatible or empty dataset.
///
/// `model_uid` names a model of this workspace and environment (422 otherwise). The target's observations (30
/// to 20,000) are read from this dataset alone, and the newest `holdout_fraction` of them (default 0.2, at
/// least 5) is held out for evaluation. A licence forbidding derivatives never qualifies; a non-commercial one
/// only for a model registered with `commercial_use: false`. Needs `lqm:build:write`. The contract is immutable
/// and copies no rows; it starts no training, which still needs a retraining request a person approves.
#[utoipa::path(
    post,
    path = "/api/v2/lqm/datasets/{dataset}/contracts",
    params(("dataset" = i64, Path, minimum = 1, maximum = 9007199254740991_i64, description = "The dataset's integer id", example = 3)),
    request_body(content = ContractRequest, example = json!({
        "model_uid": "lqm_01M8C3ZQ5V6J1P8N2T4W0XK7RD",
        "target": {"kind": "instrument", "symbol": "SPX", "transform": "price"},
        "holdout_fraction": 0.2
    })),
    responses(
        (status = 201, description = "The immutable contract", body = ContractView,
         headers(("Location" = String, description = "The contract"))),
        (status = 404, description = "No such dataset in this workspace"),
        (status = 409, description = "The dataset is ineligible (`dataset_ineligible`; `reason`: `synthetic`, `kind_unsupported`, `unsealed`, `licence_unrecognised`, `licence_no_derivatives`, `licence_non_commercial`, `empty`, `insufficient_observations`, `too_many_observations`)"),
        (status = 422, description = "Bad input (a target the dataset does not hold); an unknown model is 409 `reference_not_found`")
    )
)]
pub async fn post_contract(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(dataset): ApiPath<i64>,
    ApiJson(body): ApiJson<ContractRequest>,
) -> Result<Response, ApiError> {
    let c = contracts::create(&state, &ctx.caller(), ctx.tenant(), dataset, body).await?;
    Ok(created(Some(format!("/api/v2/lqm/contracts/{}", c.id)), views::contract(c)))
}

/// One dataset contract.
///
/// The dataset's identity (its integer `id`, kind, name, version, source, licence, content hash), the licence
/// terms, the target, the observation and holdout counts with their dates, and the source, feature-schema,
/// lineage and data hashes with `contract_hash`; never the rows. Needs `lqm:build:read`; it changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/lqm/contracts/{uid}",
    params(("uid" = String, Path, description = "The contract (`lqc_…`)", example = "lqc_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses(
        (status = 200, description = "The contract", body = ContractView),
        (status = 404, description = "Not in this workspace and environment")
    )
)]
pub async fn get_contract(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<ContractView>, ApiError> {
    Ok(Json(views::contract(contracts::get(&state, ctx.tenant(), &uid).await?)))
}

/// Requests the retraining of a model on one of its contracts, with an algorithm of its family.
///
/// The request awaits review (`pending`); nothing is trained until a person approves it at the console.
/// Any credential of the workspace holding `lqm:build:write` may request; the request trains, promotes and
/// activates nothing by itself.
#[utoipa::path(
    post,
    path = "/api/v2/lqm/models/{uid}/retraining-requests",
    params(("uid" = String, Path, description = "The model (`lqm_…`)", example = "lqm_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    request_body(content = RetrainingInput, example = json!({
        "contract_uid": "lqc_01M8C3ZQ5V6J1P8N2T4W0XK7RD", "algorithm": "holt_winters",
        "hyperparameters": {"trend": true}, "reason": "Quarterly recalibration on the latest observed data"
    })),
    responses(
        (status = 201, description = "Pending review", body = RequestView,
         headers(("Location" = String, description = "The request"))),
        (status = 404, description = "No such model in this workspace and environment"),
        (status = 409, description = "`conflict`: the contract is another model's, or the algorithm (or, without `algorithm`, the hyperparameters) is of another task family than the model's"),
        (status = 422, description = "Bad input: hyperparameters the algorithm does not take or breaking its rules")
    )
)]
pub async fn post_request(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
    ApiJson(body): ApiJson<RetrainingInput>,
) -> Result<Response, ApiError> {
    let r = training::request(&state, &ctx.caller(), ctx.tenant(), &uid, body).await?;
    Ok(created(Some(format!("/api/v2/lqm/retraining-requests/{}", r.record.id)), views::request(r)))
}

/// One retraining request and where it stands.
///
/// The request as sealed (contract and its hash, algorithm, hyperparameters, reason, `request_hash`), its
/// `state` (`pending`, `approved`, `rejected`, `cancelled`, `trained`), the person's `review` once decided, the
/// decisions credentials submitted (`submitted_decisions`) and, once trained, `checkpoint_id`. Needs
/// `lqm:build:read`; reading it decides nothing.
#[utoipa::path(
    get,
    path = "/api/v2/lqm/retraining-requests/{requestUid}",
    params(("requestUid" = String, Path, description = "The request (`lrr_…`)", example = "lrr_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses(
        (status = 200, description = "The request", body = RequestView),
        (status = 404, description = "Not in this workspace and environment")
    )
)]
pub async fn get_request(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<RequestView>, ApiError> {
    Ok(Json(views::reviewable(training::reviewable(&state, ctx.tenant(), &uid).await?)))
}

/// Submits a decision on a pending retraining request for a person to confirm.
///
/// The seed makes this a *human decision*, and a credential never carries the authority of a control: the
/// submission is recorded (sealed, audited, shown in `submitted_decisions`) and the request stays `pending`
/// until a person decides it at the console (`/console/lqm-retraining`), where it is shown beside what the
/// request would train on, its contract and data hashes. The person's decision is final: `approve`
/// authorises the training of one candidate checkpoint and nothing else (nothing is promoted or
/// activated); `reject` and `cancel` execute nothing. No scope lets a credential approve, and the
/// requester may submit too (a person still decides). A decided request is not reviewable (409, with its
/// `state`).
#[utoipa::path(
    post,
    path = "/api/v2/lqm/retraining-requests/{requestUid}/decision",
    params(("requestUid" = String, Path, description = "The request (`lrr_…`)", example = "lrr_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    request_body(content = DecisionInput, example = json!({
        "decision": "approve", "note": "Data contract and scope reviewed; candidate training authorised"
    })),
    responses(
        (status = 200, description = "Decision recorded, for a person to confirm at the console (the request stays `pending`)", body = RequestView),
        (status = 404, description = "Not in this workspace and environment"),
        (status = 409, description = "Not reviewable: decided already (`not_reviewable`, with its `state`)"),
        (status = 422, description = "Bad input")
    )
)]
pub async fn post_decision(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
    ApiJson(body): ApiJson<DecisionInput>,
) -> Result<Json<RequestView>, ApiError> {
    Ok(Json(views::reviewable(training::submit(&state, &ctx.caller(), ctx.tenant(), &uid, body).await?)))
}

/// Trains the candidate checkpoint an approved request authorises: the algorithm fitted on the contract's
/// training observations, read again and checked against the contract's hash. The checkpoint's hash covers
/// its fitted parameters and the exact data version; the approval is spent.
///
/// Needs `lqm:build:run`, and a request a person approved at the console: one pending, rejected, cancelled or
/// trained already is 409 `lifecycle_gate_closed` (`retraining_review_pending`,
/// `no_approved_retraining_request`). The checkpoint is written and the request moved to `trained` in one
/// transaction, so an approval trains one candidate only; a dataset that no longer matches the contract's hash
/// refuses the training (500 `integrity_failure`). The candidate is not evaluated, published or promoted by it.
#[utoipa::path(
    post,
    path = "/api/v2/lqm/retraining-requests/{requestUid}/training",
    params(("requestUid" = String, Path, description = "The approved request (`lrr_…`)", example = "lrr_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses(
        (status = 201, description = "The checkpoint", body = CheckpointView,
         headers(("Location" = String, description = "The checkpoint"))),
        (status = 404, description = "Not in this workspace and environment"),
        (status = 409, description = "Training is not open (`lifecycle_gate_closed` with its `reasons`)"),
        (status = 422, description = "The engine refused the data (`computation_refused`)")
    )
)]
pub async fn post_training(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Response, ApiError> {
    let c = training::train(&state, &ctx.caller(), ctx.tenant(), &uid).await?;
    Ok(created(Some(format!("/api/v2/lqm/checkpoints/{}", c.id)), views::checkpoint(c, None)))
}

/// One checkpoint with its evaluation.
///
/// The algorithm, hyperparameters, fitted parameters, engine and `data_version` (dataset, contract and
/// training-data hashes, observation count and dates) with `checkpoint_hash`, who trained it, and its
/// evaluation once recorded. Needs `lqm:build:read`; it changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/lqm/checkpoints/{uid}",
    params(("uid" = String, Path, description = "The checkpoint (`ckp_…`)", example = "ckp_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses(
        (status = 200, description = "The checkpoint", body = CheckpointView),
        (status = 404, description = "Not in this workspace and environment")
    )
)]
pub async fn get_checkpoint(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<CheckpointView>, ApiError> {
    let (c, e) = training::checkpoint(&state, ctx.tenant(), &uid).await?;
    Ok(Json(views::checkpoint(c, e)))
}

/// Evaluates a checkpoint on the observations its contract held out (training never saw them) against its
/// family's criterion; recorded once, passed or failed.
///
/// Needs `lqm:build:run`. `criteria` may set the family's threshold (forecasting `max_relative_mae`, default
/// 1.1; anomaly detection `max_outlier_rate`, 0.05; risk `min_p_value`, 0.05); another family's is 422. The
/// training data is checked against the checkpoint's hash first (500 `integrity_failure` if it changed). A
/// second evaluation is 409 (`already_evaluated`); `independent` records whether the evaluator is not the
/// trainer, which is not required. Evaluating publishes nothing and promotes nothing.
#[utoipa::path(
    post,
    path = "/api/v2/lqm/checkpoints/{uid}/evaluation",
    params(("uid" = String, Path, description = "The checkpoint (`ckp_…`)", example = "ckp_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    request_body(content = EvaluationInput, example = json!({"criteria": {"max_relative_mae": 1.1}})),
    responses(
        (status = 201, description = "The evaluation", body = EvaluationView,
         headers(("Location" = String, description = "The checkpoint it evaluates"))),
        (status = 404, description = "Not in this workspace and environment"),
        (status = 409, description = "Evaluation is not open (`lifecycle_gate_closed` with its `reasons`)"),
        (status = 422, description = "Bad input (a criterion of another family), or the engine refused (`computation_refused`)")
    )
)]
pub async fn post_evaluation(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
    ApiJson(body): ApiJson<EvaluationInput>,
) -> Result<Response, ApiError> {
    let e = training::evaluate(&state, &ctx.caller(), ctx.tenant(), &uid, body).await?;
    Ok(created(Some(format!("/api/v2/lqm/checkpoints/{uid}")), views::evaluation(e)))
}

/// Issues the evidence packet of a checkpoint whose evaluation passed: the model's registration, the data
/// contract, the review, the checkpoint and the evaluation, each by its hash, in one sealed record.
///
/// Needs `lqm:build:write`. Open only for a checkpoint whose evaluation passed and that has no packet yet (409
/// `lifecycle_gate_closed`: `not_evaluated`, `evaluation_failed`, `evidence_packet_issued`,
/// `checkpoint_revoked`). Beside the hashes, the packet names who requested, reviewed, trained and evaluated;
/// it copies no data. Issuing it publishes nothing and promotes nothing.
#[utoipa::path(
    post,
    path = "/api/v2/lqm/checkpoints/{uid}/evidence-packet",
    params(("uid" = String, Path, description = "The checkpoint (`ckp_…`)", example = "ckp_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses(
        (status = 201, description = "The evidence packet", body = EvidencePacketView,
         headers(("Location" = String, description = "The checkpoint it documents"))),
        (status = 404, description = "Not in this workspace and environment"),
        (status = 409, description = "Issuance is not open (`lifecycle_gate_closed` with its `reasons`)")
    )
)]
pub async fn post_evidence_packet(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Response, ApiError> {
    let p = supply_chain::issue_packet(&state, &ctx.caller(), ctx.tenant(), &uid).await?;
    Ok(created(Some(format!("/api/v2/lqm/checkpoints/{uid}")), views::packet(p)))
}

/// Publishes a checkpoint with its evidence packet to the model hub: the bundle (checkpoint, evaluation,
/// evidence packet and their in-toto/SLSA provenance) stored by content hash, and a publication linked to
/// the workspace's supply-chain head.
///
/// Needs `lqm:publish:write`, and a checkpoint with its evidence packet, not published yet (409
/// `lifecycle_gate_closed`: `no_evidence_packet`, `already_published`, `checkpoint_revoked`). The model hub is a
/// content-addressed store in the server's data directory: the four files are written there and nothing is
/// sent elsewhere; the publication takes the model's next `revision`. Publishing promotes nothing: promotion is
/// a separate request that an admin or approver decides at the console.
#[utoipa::path(
    post,
    path = "/api/v2/lqm/checkpoints/{uid}/publication",
    params(("uid" = String, Path, description = "The checkpoint (`ckp_…`)", example = "ckp_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses(
        (status = 201, description = "Published", body = PublicationView,
         headers(("Location" = String, description = "The publication"))),
        (status = 404, description = "Not in this workspace and environment"),
        (status = 409, description = "Publishing is not open (`lifecycle_gate_closed` with its `reasons`)")
    )
)]
pub async fn post_publication(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Response, ApiError> {
    let p = supply_chain::publish(&state, &ctx.caller(), ctx.tenant(), &uid).await?;
    let head = p.content_hash.clone();
    Ok(created(Some(format!("/api/v2/lqm/publications/{}", p.id)), views::publication(p, head)))
}

/// A publication: repository and revision, the checkpoint, evaluation and evidence-packet hashes, the
/// builder, the bundle and artifact hashes, and the hash-linked supply-chain head. Credential material is
/// never part of it.
///
/// `head` is the SHA-256 of this publication's record, which includes `previous_head`; `supply_chain_head` is
/// the workspace's head now (this publication's, or a later one's). Needs `lqm:build:read`; it changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/lqm/publications/{publicationUid}",
    params(("publicationUid" = String, Path, description = "The publication (`lpb_…`)", example = "lpb_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses(
        (status = 200, description = "The publication", body = PublicationView),
        (status = 404, description = "Not in this workspace and environment")
    )
)]
pub async fn get_publication(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<PublicationView>, ApiError> {
    let (p, head) = supply_chain::publication(&state, ctx.tenant(), &uid).await?;
    Ok(Json(views::publication(p, head)))
}

/// `POST /lqm/checkpoints/{uid}/promotion-requests`.
#[derive(Clone, Debug, Default, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PromotionInput {
    /// Why it should serve.
    #[serde(default)]
    #[schema(value_type = Option<fiscus_domain::fields::Prose<2000>>, inline, example = "Passed holdout evaluation; replaces the Q3 checkpoint")]
    pub note: Option<String>,
}

/// Requests the promotion of an exact evaluated, published checkpoint into the workspace's Quant Models
/// catalogue. The request waits for an operator at the console (`/console/lqm-promotions`): a credential
/// requests, never decides.
///
/// Needs `lqm:promote:write`. The request is sealed with its control evidence (the checkpoint, evaluation and
/// evidence-packet hashes, the publication and its head) and stays `pending` until an admin or approver
/// approves or denies it at the console, on the checkpoint hash the page showed; an approval supersedes the
/// model's serving promotion. No scope lets a credential approve, deny or revoke a promotion.
#[utoipa::path(
    post,
    path = "/api/v2/lqm/checkpoints/{uid}/promotion-requests",
    params(("uid" = String, Path, description = "The checkpoint (`ckp_…`)", example = "ckp_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    request_body(content = PromotionInput, example = json!({"note": "Passed holdout evaluation; replaces the Q3 checkpoint"})),
    responses(
        (status = 201, description = "Pending an operator's decision", body = PromotionView,
         headers(("Location" = String, description = "The model's promotion history"))),
        (status = 404, description = "Not in this workspace and environment"),
        (status = 409, description = "Promotion is not open (`lifecycle_gate_closed` with its `reasons`: unevaluated, failed, unpublished, superseded, revoked, pending or promoted already)"),
        (status = 422, description = "Bad input")
    )
)]
pub async fn post_promotion_request(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
    ApiJson(body): ApiJson<PromotionInput>,
) -> Result<Response, ApiError> {
    let p = crate::lqm::promotion::request(&state, &ctx.caller(), ctx.tenant(), &uid, body.note).await?;
    let location = format!("/api/v2/lqm/models/{}/promotions", p.record.body.model_id);
    Ok(created(Some(location), views::promotion(p)))
}

/// Downloads a model publication's evidence bundle.
///
/// One JSON document with everything sealed about the published checkpoint (the checkpoint, its
/// evaluations and evidence packets, the publication, its promotions) and every audit event about the
/// checkpoint, each as its canonical bytes with the inclusion proof of its leaf against one signed checkpoint
/// of the workspace's transparency log (signed now if the latest does not cover them).
/// `clients/verify_evidence.py` and `fiscus verify evidence` check it with nothing but the log's published
/// key. Needs `lqm:build:read`; changes nothing but the log's checkpoints.
#[utoipa::path(
    get,
    path = "/api/v2/lqm/publications/{publicationUid}/evidence-bundle",
    params(("publicationUid" = String, Path, description = "The publication (`lpb_…`)", example = "lpb_01M8C3ZQ5V6J1P8N2T4W0XK7RD")),
    responses(
        (status = 200, description = "The publication's evidence bundle", body = fiscus_kernel::evidence::views::EvidenceBundleView),
        (status = 404, description = "Not in this workspace and environment")
    )
)]
pub async fn get_publication_bundle(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiPath(uid): ApiPath<String>,
) -> Result<Json<fiscus_kernel::evidence::views::EvidenceBundleView>, ApiError> {
    let (p, _) = supply_chain::publication(&state, ctx.tenant(), &uid).await?;
    let workspace_id = ctx.principal.workspace_id();
    let checkpoint = &p.body.checkpoint_id;
    let table = &crate::tables::lqm::training::CHECKPOINTS_SEALED;
    let bundle = fiscus_kernel::evidence::bundle(&state, workspace_id, table, "checkpoint_id", checkpoint).await?;
    Ok(Json(fiscus_kernel::evidence::bundle_view(&state, workspace_id, table.table, checkpoint, bundle)))
}
