//! Research (`/quant/research/*`, `/quant/projects`): a research run is a reproducible bundle of
//! computations, and a snapshot freezes one with a hash so it can be re-run and compared.
//!
//! A run is a compute job of kind `research_run` filed under a project. Its steps are the requests the
//! compute endpoints take (an optimisation, a simulation, a backtest, a forecast, a tournament, a model run),
//! each pinned to the dataset versions it reads when the run is created and computed in order on the run's
//! thread; its sealed result holds every step's output with its hash and the datasets read. A snapshot
//! copies a succeeded run's bundle (pinned request, engine version, outputs, hashes) into an immutable
//! sealed row whose `bundle_hash` is the SHA-256 of the bundle's RFC 8785 form. Re-running a snapshot
//! computes its pinned steps again as a new run and compares each step's output hash with the snapshot's:
//! the same datasets and engine give the same bytes, so `reproduced` is a statement about the evidence, not
//! a tolerance.

use crate::tables::compute as jobs;
use crate::tables::research::{self as store, Snapshot};
use fiscus_domain::audit_action::Change;
use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::tenancy::Tenant;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

use super::backtest::{self, BacktestRequest};
use super::forecast::{self, ForecastRequest};
use super::models::{self, ModelInput, ModelRunRequest};
use super::optimization::{self, OptimizationRequest};
use super::simulation::{self, SimulationRequest};
use super::tournament::{self, TournamentRequest};
use super::{Control, Refusal, Request, Reserved};
use fiscus_kernel::Services;
use fiscus_kernel::governed::record::{AuditEntry, audit};
use fiscus_kernel::governed::{Caller, Failure};

/// Steps a run may hold.
pub const MAX_STEPS: usize = 8;

/// A model of the catalogue run as a step.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResearchModelStep {
    /// The model's key in `GET /quant/models`.
    #[schema(pattern = "^[a-z0-9_]{1,64}$", example = "robust_z")]
    pub model: String,
    pub input: ModelInput,
    /// The model's parameters (its `parameters` schema in the catalogue).
    #[schema(value_type = Option<Object>)]
    pub parameters: Option<Value>,
}

/// One step of a research run: a `key` and exactly one computation, given as the body its compute endpoint
/// takes.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"key": "min_variance", "optimization": {"objective": "min_variance", "instruments": ["AAPL", "MSFT"]}}))]
pub struct ResearchStepRequest {
    /// Names the step in the run's output (unique within the run).
    #[schema(pattern = "^[a-z0-9][a-z0-9_-]{0,39}$", example = "min_variance")]
    pub key: String,
    /// As `POST /quant/compute/optimizations` takes it.
    pub optimization: Option<OptimizationRequest>,
    /// As `POST /quant/compute/simulations` takes it.
    pub simulation: Option<SimulationRequest>,
    /// As `POST /quant/compute/backtests` takes it.
    pub backtest: Option<BacktestRequest>,
    /// As `POST /planning/forecasts` takes it.
    pub forecast: Option<ForecastRequest>,
    /// As `POST /quant/model-tournaments` takes it.
    pub tournament: Option<TournamentRequest>,
    /// As `POST /quant/models/{key}/run` takes it, with the model's key.
    pub model_run: Option<ResearchModelStep>,
}

/// A research run to create: a project and its steps, or a snapshot to run again.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResearchRunRequest {
    /// The project the run is filed under (created by its first run). Required with `steps`.
    #[schema(pattern = "^[a-z0-9][a-z0-9_.-]{0,63}$", example = "low-volatility")]
    pub project: Option<String>,
    /// A name for the run (text: not blank, no control characters).
    #[schema(value_type = Option<fiscus_domain::fields::Text<1, 200>>, inline, example = "Minimum variance, 2015-2017")]
    pub name: Option<String>,
    /// The computations, run in order; or give `snapshot`.
    #[schema(min_items = 1, max_items = 8)]
    pub steps: Option<Vec<ResearchStepRequest>>,
    /// Runs a snapshot's pinned steps again, as a new run compared with it (`rsn_…`).
    #[schema(pattern = "^rsn_[0-9A-HJKMNP-TV-Z]{26}$", example = "rsn_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub snapshot: Option<String>,
}

/// A step as stored: its request pinned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub key: String,
    pub request: Request,
}

/// What a re-run is compared with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rerun {
    pub snapshot: String,
    pub bundle_hash: String,
    pub engine_version: String,
    /// Each step's output hash in the snapshot.
    pub outputs: BTreeMap<String, String>,
}

/// A research run as stored in its job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Research {
    pub project: String,
    pub name: Option<String>,
    pub steps: Vec<Step>,
    pub rerun_of: Option<Rerun>,
}

fn invalid(field: &'static str, message: impl Into<String>) -> Failure {
    Failure::Invalid(vec![(field, message.into())])
}

/// A project's key: 1 to 64 of a-z, 0-9, `_`, `.`, `-`, starting with a letter or digit.
pub fn is_project_key(s: &str) -> bool {
    is_key(s, 64, b"_.-")
}

fn is_key(s: &str, max: usize, extra: &[u8]) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= max
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || extra.contains(c))
}

/// Checks a run and pins every step (or the snapshot it re-runs).
pub async fn pin(services: &Services, tenant: &Tenant, r: ResearchRunRequest) -> Result<Research, Failure> {
    if let Some(name) = &r.name
        && !fiscus_domain::fields::text_ok(name, 1, 200)
    {
        return Err(invalid("name", "from 1 to 200 characters of text, not blank"));
    }
    match (r.steps, r.snapshot) {
        (Some(_), Some(_)) => Err(invalid("snapshot", "give `steps` or `snapshot`, not both")),
        (None, None) => Err(invalid("steps", "give the steps to run, or a `snapshot` to run again")),
        (None, Some(snapshot)) => {
            if r.project.is_some() {
                return Err(invalid("project", "a re-run is filed under its snapshot's project"));
            }
            rerun(services, tenant, &snapshot, r.name).await
        }
        (Some(steps), None) => {
            let Some(project) = r.project else {
                return Err(invalid("project", "is required with `steps`"));
            };
            if !is_project_key(&project) {
                return Err(invalid("project", "1 to 64 of a-z, 0-9, `_`, `.`, `-`, starting with a letter or digit"));
            }
            if steps.is_empty() || steps.len() > MAX_STEPS {
                return Err(invalid("steps", format!("from 1 to {MAX_STEPS} steps")));
            }
            let mut pinned: Vec<Step> = Vec::with_capacity(steps.len());
            for step in steps {
                let key = step.key.clone();
                if !is_key(&key, 40, b"_-") {
                    return Err(invalid("steps", format!("`{key}`: a key is 1 to 40 of a-z, 0-9, `_`, `-`")));
                }
                // Keys unique across the steps: a rule no schema states (`uniqueItems` compares whole steps).
                if pinned.iter().any(|s| s.key == key) {
                    return Err(Failure::refused(ErrorCode::Conflict, format!("`{key}` names two steps")));
                }
                let request = pin_step(services, &tenant.workspace_id, step).await.map_err(|f| match f {
                    Failure::Invalid(errors) => Failure::Invalid(
                        errors.into_iter().map(|(field, m)| ("steps", format!("step `{key}`: {field}: {m}"))).collect(),
                    ),
                    Failure::Missing(field, m) => Failure::missing("steps", format!("step `{key}`: {field}: {m}")),
                    other => other,
                })?;
                pinned.push(Step { key, request });
            }
            Ok(Research { project, name: r.name, steps: pinned, rerun_of: None })
        }
    }
}

async fn pin_step(services: &Services, workspace_id: &str, s: ResearchStepRequest) -> Result<Request, Failure> {
    let given = [
        s.optimization.is_some(),
        s.simulation.is_some(),
        s.backtest.is_some(),
        s.forecast.is_some(),
        s.tournament.is_some(),
        s.model_run.is_some(),
    ];
    if given.iter().filter(|g| **g).count() != 1 {
        return Err(invalid(
            "step",
            "exactly one of optimization, simulation, backtest, forecast, tournament, model_run",
        ));
    }
    Ok(if let Some(r) = s.optimization {
        Request::Optimization(optimization::pin(services, workspace_id, r).await?)
    } else if let Some(r) = s.simulation {
        Request::Simulation(simulation::pin(services, workspace_id, r).await?)
    } else if let Some(r) = s.backtest {
        Request::Backtest(backtest::pin(services, workspace_id, r).await?)
    } else if let Some(r) = s.forecast {
        Request::Forecast(forecast::pin(services, workspace_id, r).await?)
    } else if let Some(r) = s.tournament {
        Request::Tournament(tournament::pin(services, workspace_id, r).await?)
    } else if let Some(m) = s.model_run {
        let Some(info) = models::find(&m.model) else {
            return Err(invalid("model", format!("no model `{}` in the catalogue", m.model)));
        };
        let body = ModelRunRequest { input: m.input, parameters: m.parameters };
        Request::ModelRun(models::pin(services, workspace_id, info, body).await?)
    } else {
        return Err(Failure::internal("a step with no computation passed the check"));
    })
}

/// A snapshot's bundle, as sealed.
#[derive(Serialize, Deserialize)]
struct Bundle {
    run: String,
    project: String,
    name: Option<String>,
    request: Request,
    request_hash: String,
    engine_version: String,
    datasets: Value,
    output: Value,
    output_hash: String,
    result_hash: String,
    run_created_at: i64,
}

async fn rerun(services: &Services, tenant: &Tenant, id: &str, name: Option<String>) -> Result<Research, Failure> {
    let snapshot = load_snapshot(services, tenant, id).await.map_err(|f| match f {
        Failure::NotFound => {
            Failure::missing("snapshot", format!("no snapshot `{id}` in this workspace and environment"))
        }
        other => other,
    })?;
    let bundle: Bundle = serde_json::from_str(&snapshot.bundle)
        .map_err(|e| Failure::internal(format!("snapshot {id}: stored bundle: {e}")))?;
    let Request::ResearchRun(research) = bundle.request else {
        return Err(Failure::internal(format!("snapshot {id}: its bundle holds no research run")));
    };
    let outputs = bundle.output["steps"]
        .as_array()
        .map(|steps| {
            steps
                .iter()
                .filter_map(|s| Some((s["key"].as_str()?.to_string(), s["output_hash"].as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    Ok(Research {
        project: research.project,
        name: name.or_else(|| Some(format!("re-run of {}", snapshot.name))),
        steps: research.steps,
        rerun_of: Some(Rerun {
            snapshot: snapshot.id,
            bundle_hash: snapshot.bundle_hash,
            engine_version: bundle.engine_version,
            outputs,
        }),
    })
}

/// Every `{dataset, content_hash}` a value names (the pinned inputs of any step kind), by dataset.
fn datasets_in(v: &Value, found: &mut BTreeMap<i64, String>) {
    match v {
        Value::Object(m) => {
            if let (Some(d), Some(h)) = (m.get("dataset").and_then(Value::as_i64), m.get("content_hash")) {
                found.insert(d, h.as_str().unwrap_or_default().to_string());
            }
            m.values().for_each(|x| datasets_in(x, found));
        }
        Value::Array(a) => a.iter().for_each(|x| datasets_in(x, found)),
        _ => {}
    }
}

fn hash_of(v: &Value) -> Result<String, Refusal> {
    let canonical = fiscus_domain::jcs::canonicalize(v)
        .map_err(|e| Refusal::Failure(Failure::internal(format!("step output: {e:?}"))))?;
    Ok(fiscus_domain::evidence::seal_bytes(canonical.as_bytes()))
}

/// The most a research run answered in its request may cost, in credits (each small step costs about one).
pub const INLINE_CREDITS: i64 = 3;

impl Research {
    pub fn size(&self) -> u64 {
        self.steps.iter().map(|s| s.request.size()).sum()
    }

    /// Answered in the request when every step would be and, judged by the sum of its steps, it is no more
    /// than [`INLINE_CREDITS`] worth of computation (eight small steps are one long request otherwise).
    pub fn small(&self) -> bool {
        self.steps.iter().all(|s| s.request.small()) && self.credits() <= INLINE_CREDITS
    }

    /// What the run costs (`fiscus_domain::compute::research_run_credits`).
    pub fn credits(&self) -> i64 {
        fiscus_domain::compute::research_run_credits(self.steps.iter().map(|s| s.request.credits()))
    }

    /// Computes the steps in order (each stops at the run's checks), then compares with the snapshot re-run.
    pub async fn compute(
        &self,
        services: &Services,
        workspace_id: &str,
        control: Arc<Control>,
        thread: Option<&Reserved>,
    ) -> Result<Value, Refusal> {
        let mut steps = Vec::with_capacity(self.steps.len());
        for step in &self.steps {
            control.check()?;
            let output = Box::pin(step.request.compute(services, workspace_id, control.clone(), thread)).await?;
            let output_hash = hash_of(&output)?;
            steps.push(json!({
                "key": step.key, "kind": step.request.kind(), "output": output, "output_hash": output_hash,
            }));
        }
        let mut datasets = BTreeMap::new();
        let request = serde_json::to_value(&self.steps).unwrap_or(Value::Null);
        datasets_in(&request, &mut datasets);
        let datasets: Vec<Value> =
            datasets.into_iter().map(|(d, h)| json!({"dataset": d, "content_hash": h})).collect();
        let mut output = json!({ "project": self.project, "steps": steps, "datasets": datasets });
        if let Some(rerun) = &self.rerun_of {
            let compared: Vec<Value> = steps
                .iter()
                .map(|s| {
                    let key = s["key"].as_str().unwrap_or_default();
                    let expected = rerun.outputs.get(key).cloned();
                    let same = expected.as_deref() == s["output_hash"].as_str();
                    json!({"key": key, "snapshot_output_hash": expected, "output_hash": s["output_hash"], "same": same})
                })
                .collect();
            let reproduced = compared.iter().all(|c| c["same"] == true);
            output["comparison"] = json!({
                "snapshot": rerun.snapshot, "bundle_hash": rerun.bundle_hash,
                "snapshot_engine_version": rerun.engine_version, "engine_version": super::ENGINE_VERSION,
                "reproduced": reproduced, "steps": compared,
            });
        }
        Ok(output)
    }
}

/// A snapshot to take.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResearchSnapshotRequest {
    /// The research run to freeze (`cjb_…`; it must have succeeded).
    #[schema(pattern = "^cjb_[0-9A-HJKMNP-TV-Z]{26}$", example = "cjb_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub run: String,
    /// The snapshot's name (text: not blank, no control characters).
    #[schema(value_type = fiscus_domain::fields::Text<1, 200>, inline, example = "Low-volatility study, as submitted to the committee")]
    pub name: String,
    #[schema(max_length = 2000)]
    pub description: Option<String>,
}

/// Freezes a succeeded research run: its bundle sealed with its hash, one snapshot per run.
pub async fn snapshot(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    r: ResearchSnapshotRequest,
) -> Result<Snapshot, Failure> {
    if !fiscus_domain::fields::text_ok(&r.name, 1, 200) {
        return Err(invalid("name", "from 1 to 200 characters of text, not blank"));
    }
    if r.description.as_ref().is_some_and(|d| d.chars().count() > 2000) {
        return Err(invalid("description", "at most 2000 characters"));
    }
    let no_run = || Failure::missing("run", format!("no research run `{}` in this workspace and environment", r.run));
    if !fiscus_domain::ids::is_id_of("cjb", &r.run) {
        return Err(no_run());
    }
    let mut conn = services.store.read().await?;
    let (job, result) = match jobs::get(&mut conn, services.store.seal_key(), tenant, &r.run).await {
        Err(fiscus_store::StoreError::NotFound) => return Err(no_run()),
        other => other?,
    };
    if job.kind != fiscus_domain::compute::JobKind::ResearchRun {
        return Err(invalid("run", format!("`{}` is a {} job, not a research run", r.run, job.kind.as_str())));
    }
    let Some(result) = result.filter(|_| job.state == fiscus_domain::compute::JobState::Succeeded) else {
        return Err(Failure::refused(
            ErrorCode::Conflict,
            format!("the run is {}: only a run that succeeded can be frozen", job.state.as_str()),
        ));
    };
    if let Some(existing) = store::snapshot_of_run(&mut conn, tenant, &r.run).await? {
        return Err(Failure::refused(ErrorCode::Conflict, format!("the run is already frozen as {existing}")));
    }
    drop(conn);
    let request: Request = serde_json::from_str(&job.request)
        .map_err(|e| Failure::internal(format!("job {}: stored request: {e}", job.id)))?;
    let Request::ResearchRun(research) = &request else {
        return Err(Failure::internal(format!("job {}: a research run holding another request", job.id)));
    };
    let output: Value = serde_json::from_str(&result.output)
        .map_err(|e| Failure::internal(format!("job {}: stored output: {e}", job.id)))?;
    let bundle = Bundle {
        run: job.id.clone(),
        project: research.project.clone(),
        name: research.name.clone(),
        datasets: output["datasets"].clone(),
        request: request.clone(),
        request_hash: job.request_hash.clone(),
        engine_version: job.engine_version.clone(),
        output,
        output_hash: result.output_hash.clone(),
        result_hash: result.result_hash.clone(),
        run_created_at: job.created_at,
    };
    let value = serde_json::to_value(&bundle).map_err(|e| Failure::internal(format!("bundle: {e}")))?;
    let canonical =
        fiscus_domain::jcs::canonicalize(&value).map_err(|e| Failure::internal(format!("bundle: {e:?}")))?;
    let now = now_micros();
    let snapshot = Snapshot {
        id: fiscus_domain::ids::new_id("rsn"),
        project: research.project.clone(),
        name: r.name,
        description: r.description,
        run_id: job.id.clone(),
        bundle_hash: fiscus_domain::evidence::seal_bytes(canonical.as_bytes()),
        bundle: canonical,
        created_by: caller.actor.clone(),
        created_at: now,
    };
    let mut tx = services.store.begin().await?;
    match store::insert_snapshot(&mut tx, tenant, &snapshot).await {
        Err(fiscus_store::StoreError::Conflict(_)) => {
            return Err(Failure::refused(ErrorCode::Conflict, "the run was frozen meanwhile"));
        }
        other => other?,
    }
    let entry = AuditEntry {
        workspace_id: &tenant.workspace_id,
        environment: Some(tenant.environment),
        action: Change::ResearchSnapshotCreated.into(),
        subject: Some(&snapshot.id),
        details: json!({ "run": snapshot.run_id, "project": snapshot.project, "bundle_hash": snapshot.bundle_hash }),
        occurred_at: now,
    };
    audit(&mut tx, caller, &entry).await?;
    tx.commit().await?;
    Ok(snapshot)
}

/// A snapshot of this tenant, its seal checked.
pub async fn load_snapshot(services: &Services, tenant: &Tenant, id: &str) -> Result<Snapshot, Failure> {
    if !fiscus_domain::ids::is_id_of("rsn", id) {
        return Err(Failure::NotFound);
    }
    let mut conn = services.store.read().await?;
    Ok(store::get_snapshot(&mut conn, services.store.seal_key(), tenant, id).await?)
}

/// Whether a stored bundle still hashes to its `bundle_hash` (the row's seal is checked when it is read).
pub fn verified(s: &Snapshot) -> bool {
    fiscus_domain::evidence::seal_bytes(s.bundle.as_bytes()) == s.bundle_hash
}
