//! Autonomy assessment evidence: sealed records an application files about an agent's autonomy, listed back;
//! evidence grants nothing.

use crate::rules::autonomy::{AssessmentDomain, EvidenceRequest, EvidenceView, seal_payload};
use crate::tables::autonomy_evidence::EvidenceRow;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use fiscus_domain::clock::{now_micros, rfc3339};
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::evidence::seal;
use fiscus_http::list::ListPage;
use fiscus_store::appends::Appends;

use fiscus_domain::pagination::PageParams;
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::ApiJson;
use fiscus_http::problem::ApiError;
use fiscus_http::query::ListParams;

/// Records institutional autonomy assessment evidence, classified into one of the eight domains and sealed.
/// It grants no execution authority.
///
/// The caller names the domain (organisation, financial controls, security, technology, legal and compliance,
/// financial risk, operational resilience or governance) and the source by `source_reference` and a `sha256:`
/// `source_hash`; Fiscus seals it with the workspace, environment and recording application into `evidence_hash`
/// and appends it with an audit event. Needs `actions:create`. Fiscus keeps the reference and hash, never a copy
/// of the source; evidence only feeds the assurance read (`grants_authority` is false) and never approves,
/// delegates or executes anything.
#[utoipa::path(
    post,
    path = "/api/v2/actions/autonomy/assessment-evidence",
    request_body(content = EvidenceRequest, example = json!({
        "domain": "security",
        "title": "SOC 2 Type II report 2026",
        "summary": "No exceptions noted for change management and access controls.",
        "source_type": "audit_report",
        "source_reference": "vault://assurance/soc2-2026.pdf",
        "source_hash": "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "observed_at": "2026-10-01T00:00:00Z",
        "metadata": { "auditor": "Example LLP" }
    })),
    responses((status = 201, description = "Evidence recorded; no execution authority", body = EvidenceView))
)]
pub async fn post_evidence(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<EvidenceRequest>,
) -> Result<Response, ApiError> {
    let valid = body.validate().map_err(ApiError::invalid_fields)?;
    let now = now_micros();
    let id = fiscus_domain::ids::new_id("aev");
    let environment = ctx.principal.tenant.environment.as_str();
    let observed_at = valid.observed_at.unwrap_or(now);
    let recorded_by = ctx.principal.application_id.clone();
    let payload = seal_payload(ctx.principal.workspace_id(), &id, environment, &valid, observed_at, &recorded_by, now);
    let evidence_hash = seal(&payload).map_err(|_| ApiError::invalid_request("metadata", "numbers must be finite"))?;
    let row = EvidenceRow {
        id: id.clone(),
        environment: environment.to_string(),
        domain: valid.domain.as_str().to_string(),
        title: valid.title,
        summary: valid.summary,
        source_type: valid.source_type,
        source_reference: valid.source_reference,
        source_hash: valid.source_hash,
        observed_at,
        metadata: valid.metadata.to_string(),
        evidence_hash,
        recorded_by,
        created_at: now,
    };
    // Evidence is append-only: the row, its audit event and the idempotency record are handed to the store
    // whole and written with the commit group's other appends.
    let mut appends = Appends::new();
    crate::tables::autonomy_evidence::append(&mut appends, state.store.seal_key(), ctx.tenant(), &row)?;
    ctx.audit_appended(
        &mut appends,
        Some(&id),
        serde_json::json!({ "domain": row.domain, "evidence_hash": row.evidence_hash }),
    );
    let view = to_view(row)?;
    ctx.respond_appended(&state.store, appends, StatusCode::CREATED, &view).await
}

/// Lists recorded evidence of this workspace and environment, oldest first.
///
/// Every record of the caller's workspace and environment, whichever application recorded it, optionally of one
/// `domain` (not one of the eight is 422 `invalid_parameter`), each checked against its seal. Needs
/// `actions:read`. Evidence is append-only: this read changes nothing, and no record grants authority.
#[utoipa::path(
    get,
    path = "/api/v2/actions/autonomy/assessment-evidence",
    params(
        PageParams,
        ("domain" = Option<AssessmentDomain>, Query, description = "Only this domain"),
    ),
    responses((status = 200, description = "A page of evidence", body = ListPage<EvidenceView>))
)]
pub async fn list_evidence(
    ctx: Ctx,
    State(state): State<AppState>,
    params: ListParams,
) -> Result<Json<ListPage<EvidenceView>>, ApiError> {
    params.only(&["domain"])?;
    let domain = match params.rest.get("domain") {
        Some(d) => Some(
            AssessmentDomain::parse(d)
                .ok_or_else(|| {
                    ApiError::new(ErrorCode::InvalidParameter).field("domain", "not one of the eight domains")
                })?
                .as_str(),
        ),
        None => None,
    };
    let mut conn = state.store.read().await?;
    let rows = crate::tables::autonomy_evidence::list(
        &mut conn,
        state.store.seal_key(),
        ctx.tenant(),
        domain,
        params.page.after_id.as_deref(),
        params.page.limit,
    )
    .await?;
    let page = ListPage::from_overfetch(rows, params.page.limit, |r| r.id.clone());
    Ok(Json(ListPage {
        object: page.object,
        has_more: page.has_more,
        next_after_id: page.next_after_id,
        data: page.data.into_iter().map(to_view).collect::<Result<_, _>>()?,
    }))
}

/// A stored domain outside the eight is corruption, reported as an internal error, never re-classified.
fn to_view(row: EvidenceRow) -> Result<EvidenceView, ApiError> {
    let Some(domain) = AssessmentDomain::parse(&row.domain) else {
        tracing::error!(id = %row.id, domain = %row.domain, "stored evidence has an unknown domain");
        return Err(ApiError::internal());
    };
    Ok(EvidenceView {
        object: "autonomy_assessment_evidence".into(),
        domain,
        metadata: serde_json::from_str(&row.metadata).unwrap_or_default(),
        observed_at: rfc3339(row.observed_at),
        created_at: rfc3339(row.created_at),
        grants_authority: false,
        id: row.id,
        environment: row.environment,
        title: row.title,
        summary: row.summary,
        source_type: row.source_type,
        source_reference: row.source_reference,
        source_hash: row.source_hash,
        evidence_hash: row.evidence_hash,
        recorded_by: row.recorded_by,
    })
}
