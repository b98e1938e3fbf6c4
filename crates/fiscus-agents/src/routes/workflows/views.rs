//! What the workflow operations answer.

use crate::rules::workflows::definition::{Definition, StepKind};
use crate::rules::workflows::records::{CampaignCase, InputPin, LibraryOrigin};
use crate::rules::workflows::run::{RunState, StepOutcome};
use crate::tables::workflows::{Campaign, Run, Step, Version, Workflow};
use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use fiscus_domain::clock::rfc3339;
use serde::Serialize;
use serde_json::Value;

/// A version of a workflow: its immutable definition and where it came from.
#[derive(Serialize, utoipa::ToSchema)]
pub struct WorkflowVersionView {
    /// Always `workflow_version`.
    pub object: &'static str,
    #[schema(example = "wfv_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    #[schema(example = "wfl_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub workflow_id: String,
    pub workflow_name: String,
    pub version: i64,
    pub definition: Definition,
    /// `sha256:` of the definition (RFC 8785): what runs and campaigns cite.
    pub definition_hash: String,
    /// The library template it was installed from, if any.
    pub library: Option<LibraryOrigin>,
    /// `sha256:` of the version's record; the row is sealed.
    pub version_hash: String,
    pub created_by: String,
    pub created_at: String,
}

pub fn version_view(w: &Workflow, v: Version) -> WorkflowVersionView {
    WorkflowVersionView {
        object: "workflow_version",
        id: v.id,
        workflow_id: v.body.workflow_id,
        workflow_name: w.body.name.clone(),
        version: v.body.version,
        definition: v.body.definition,
        definition_hash: v.body.definition_hash,
        library: v.body.library,
        version_hash: v.content_hash,
        created_by: v.created_by.label(),
        created_at: rfc3339(v.created_at),
    }
}

/// A step a run recorded.
#[derive(Serialize, utoipa::ToSchema)]
pub struct WorkflowRunStepView {
    pub step: String,
    pub kind: StepKind,
    /// Its place in the run's history, from 0.
    pub seq: i64,
    pub outcome: StepOutcome,
    /// What the step produced (a read's values, a measure, a check, a person's decision, a report).
    #[schema(value_type = Object)]
    pub output: Value,
    /// `sha256:` of `output` (RFC 8785), which the run's evidence hash chains.
    pub output_hash: String,
    /// `sha256:` of the step's record (run, step, outcome, output); the row is sealed.
    pub record_hash: String,
    /// The worker that ran it, or the operator who reviewed it.
    pub recorded_by: String,
    pub recorded_at: String,
}

/// A run of a workflow version.
#[derive(Serialize, utoipa::ToSchema)]
pub struct WorkflowRunView {
    /// Always `workflow_run`.
    pub object: &'static str,
    #[schema(example = "wfr_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    pub workflow_id: String,
    pub version_id: String,
    pub definition_hash: String,
    pub state: RunState,
    /// The datasets its read steps read, pinned when it started.
    pub pins: Vec<InputPin>,
    /// Once it ended: `sha256:` over its steps' ids and output hashes in order.
    pub evidence_hash: Option<String>,
    /// Its recorded steps, in order (on a single run's read; lists leave them out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<WorkflowRunStepView>>,
    pub created_by: String,
    pub created_at: String,
    pub ended_at: Option<String>,
}

pub fn run_view(r: Run, steps: Option<Vec<Step>>) -> WorkflowRunView {
    WorkflowRunView {
        object: "workflow_run",
        id: r.record.id,
        workflow_id: r.record.body.workflow_id,
        version_id: r.record.body.version_id,
        definition_hash: r.record.body.definition_hash,
        state: r.state,
        pins: r.record.body.pins,
        evidence_hash: r.evidence_hash,
        steps: steps.map(|all| {
            all.into_iter()
                .map(|s| WorkflowRunStepView {
                    step: s.body.step,
                    kind: s.body.kind,
                    seq: s.body.seq,
                    outcome: s.body.outcome,
                    output: s.body.output,
                    output_hash: s.body.output_hash,
                    record_hash: s.content_hash,
                    recorded_by: s.created_by.label(),
                    recorded_at: rfc3339(s.created_at),
                })
                .collect()
        }),
        created_by: r.record.created_by.label(),
        created_at: rfc3339(r.record.created_at),
        ended_at: r.ended_at.map(rfc3339),
    }
}

/// A validation campaign: every case of the suite and how it ended.
#[derive(Serialize, utoipa::ToSchema)]
pub struct WorkflowCampaignView {
    /// Always `workflow_campaign`.
    pub object: &'static str,
    #[schema(example = "wfc_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    pub workflow_id: String,
    pub version_id: String,
    pub definition_hash: String,
    /// Every case ended as it expected.
    pub passed: bool,
    pub pins: Vec<InputPin>,
    pub cases: Vec<CampaignCase>,
    /// `sha256:` of the campaign's record; the row is sealed.
    pub campaign_hash: String,
    pub created_by: String,
    pub created_at: String,
}

pub fn campaign_view(c: Campaign) -> WorkflowCampaignView {
    WorkflowCampaignView {
        object: "workflow_campaign",
        id: c.id,
        workflow_id: c.body.workflow_id,
        version_id: c.body.version_id,
        definition_hash: c.body.definition_hash,
        passed: c.body.passed,
        pins: c.body.pins,
        cases: c.body.cases,
        campaign_hash: c.content_hash,
        created_by: c.created_by.label(),
        created_at: rfc3339(c.created_at),
    }
}

/// 202 with `Location`.
pub fn accepted(location: String, body: impl Serialize) -> Response {
    let mut response = (StatusCode::ACCEPTED, Json(body)).into_response();
    if let Ok(v) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, v);
    }
    response
}
