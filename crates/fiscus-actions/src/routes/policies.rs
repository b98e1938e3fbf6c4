//! The approval policy as machines read it: the version in force (and a change awaiting a second admin),
//! and a dry run of a proposal, so an application or an agent can tell a person "this needs the CFO" before
//! it proposes. Policies are written and approved only at the console.

use crate::rules::envelope::ProposalRequest;
use crate::rules::policy::{Policy, Requirement};
use crate::tables::approval_policies::{PolicyRef, PolicyVersion};
use axum::Json;
use axum::extract::State;
use fiscus_domain::clock::rfc3339;
use fiscus_domain::credentials::Environment;
use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::json::ApiJson;
use fiscus_http::problem::ApiError;
use serde::Serialize;
use utoipa::ToSchema;

/// A version of the approval policy.
#[derive(Serialize, ToSchema)]
pub struct PolicyVersionView {
    #[schema(example = "apv_01KBTA0C4GZ2Q5R8V1XWJ3N6M9")]
    pub id: String,
    #[schema(example = 3)]
    pub version: i64,
    /// `sha256:` of the policy's RFC 8785 form: what each action's requirement cites.
    pub policy_hash: String,
    pub policy: Policy,
    /// The admin who wrote it (`operator:opr_…`).
    pub proposed_by: String,
    pub proposed_at: String,
    /// The second admin who approved it; null while it awaits one.
    pub approved_by: Option<String>,
    pub approved_at: Option<String>,
}

fn version_view(v: PolicyVersion) -> PolicyVersionView {
    let (approved_by, approved_at) = match &v.decision {
        Some((by, at, _)) => (Some(by.label()), Some(rfc3339(*at))),
        None => (None, None),
    };
    PolicyVersionView {
        id: v.record.id,
        version: v.version,
        policy_hash: v.record.content_hash,
        policy: v.record.body,
        proposed_by: v.record.created_by.label(),
        proposed_at: rfc3339(v.record.created_at),
        approved_by,
        approved_at,
    }
}

/// What applies where no rule matches.
#[derive(Serialize, ToSchema)]
pub struct DefaultRequirementView {
    /// Distinct people a T1 action needs in this deployment.
    #[schema(example = 1)]
    pub t1_quorum: u32,
    /// Distinct people a T2 action needs in this deployment.
    #[schema(example = 2)]
    pub t2_quorum: u32,
}

/// An approver group the rules may name.
#[derive(Serialize, ToSchema)]
pub struct ApproverGroupView {
    #[schema(example = "treasury")]
    pub name: String,
    pub description: Option<String>,
    /// How many operators are in it now.
    #[schema(example = 3)]
    pub members: u32,
}

/// The approval policy of the caller's workspace and environment.
#[derive(Serialize, ToSchema)]
pub struct ApprovalPoliciesView {
    #[schema(example = "approval_policies")]
    pub object: &'static str,
    pub environment: Environment,
    /// The version in force; null when no version was ever approved (the default applies to every action).
    pub in_force: Option<PolicyVersionView>,
    /// A change written by an admin and awaiting a second admin's approval: not in force.
    pub pending: Option<PolicyVersionView>,
    pub default: DefaultRequirementView,
    /// The workspace's approver groups, by name.
    pub groups: Vec<ApproverGroupView>,
}

/// Reads the approval policy in force.
///
/// The rules the workspace's admins wrote for this environment (the version in force, and a change awaiting
/// a second admin, which is not), the default that applies where no rule matches (each risk tier's quorum),
/// and the approver groups the rules name. Each version is a sealed record checked before it is shown.
/// Needs `actions:read`; changes nothing.
#[utoipa::path(
    get,
    path = "/api/v2/actions/approval-policies",
    responses((status = 200, description = "The approval policy", body = ApprovalPoliciesView))
)]
pub async fn get_approval_policies(
    ctx: Ctx,
    State(state): State<AppState>,
) -> Result<Json<ApprovalPoliciesView>, ApiError> {
    let tenant = ctx.tenant();
    let mut conn = state.store.read().await?;
    let versions = crate::tables::approval_policies::versions(&mut conn, state.store.seal_key(), tenant).await?;
    let groups = crate::tables::approver_groups::all(&mut conn, &tenant.workspace_id).await?;
    let mut in_force = None;
    let mut pending = None;
    for v in versions {
        match v.state {
            crate::rules::bank_accounts::VersionState::Active => in_force = Some(version_view(v)),
            crate::rules::bank_accounts::VersionState::Pending => pending = Some(version_view(v)),
            _ => {}
        }
    }
    use crate::rules::envelope::RiskTier;
    Ok(Json(ApprovalPoliciesView {
        object: "approval_policies",
        environment: tenant.environment,
        in_force,
        pending,
        default: DefaultRequirementView {
            t1_quorum: crate::steps::quorum(&state.settings, RiskTier::T1),
            t2_quorum: crate::steps::quorum(&state.settings, RiskTier::T2),
        },
        groups: groups
            .into_iter()
            .map(|g| ApproverGroupView { members: g.members.len() as u32, name: g.name, description: g.description })
            .collect(),
    }))
}

/// The requirement a proposal would get.
#[derive(Serialize, ToSchema)]
pub struct DryRunView {
    #[schema(example = "approval_requirement")]
    pub object: &'static str,
    /// The policy version evaluated; null when none is in force (the default applied).
    pub policy: Option<PolicyRef>,
    pub requirement: Requirement,
    /// The requirement in words ("3 people: 1 of cfo and 2 of treasury").
    #[schema(example = "3 people: 1 of cfo and 2 of treasury")]
    pub in_words: String,
    /// True when a rule refuses such a proposal (it would be answered 422 `policy_refused`).
    pub refused: bool,
}

/// Dry-runs the approval policy on a proposal.
///
/// Evaluates the policy in force on the envelope as `POST /actions` would (the same validation, the same
/// counterparty facts, the caller as proposer) and answers the requirement the proposal would get: who must
/// approve, the rules that matched, or the rule that refuses it. Nothing is recorded. Needs `actions:read`.
#[utoipa::path(
    post,
    path = "/api/v2/actions/approval-policies/dry-run",
    request_body(content = ProposalRequest, example = json!(super::proposals::example())),
    responses((status = 200, description = "The requirement the proposal would get", body = DryRunView))
)]
pub async fn post_dry_run(
    ctx: Ctx,
    State(state): State<AppState>,
    ApiJson(body): ApiJson<ProposalRequest>,
) -> Result<Json<DryRunView>, ApiError> {
    let envelope = body.validate().map_err(ApiError::invalid_fields)?;
    let mut conn = state.store.read().await?;
    let (policy, requirement) = crate::steps::policies::requirement_for(
        &mut conn,
        state.store.seal_key(),
        &state.settings,
        ctx.tenant(),
        &envelope,
        &ctx.caller().actor.id,
    )
    .await?;
    Ok(Json(DryRunView {
        object: "approval_requirement",
        policy,
        in_words: requirement.in_words(),
        refused: requirement.refused.is_some(),
        requirement,
    }))
}
