//! QLMs: governed model profiles composed from promoted LQM checkpoints. Each version pins exact
//! checkpoints by role; composing pins what the promotions serve at that moment, and moving a role to
//! another checkpoint is a new version an operator decides at the console. Invoking runs the pinned
//! checkpoints (never whatever is promoted now) and refuses while any of them is revoked; evaluating runs
//! them on a contract's held-out observations.

use crate::rules::lqm::lifecycle::{self, Operation, PromotionState};
use crate::rules::lqm::records::{Pin, QlmBody, QlmRunBody, QlmVersionBody};
use crate::tables::lqm::qlms::{self, Qlm, Run, RunKind, Version};
use fiscus_domain::actor::ActorKind;
use fiscus_domain::audit_action::Change;
use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::StoreError;
use fiscus_store::sealed_records::Record;
use serde::Deserialize;
use serde_json::{Value, json};

use super::fit::{self, Criteria};
use super::{canonical, crashed, gate_closed, invalid, registry};
use fiscus_kernel::Services;
use fiscus_kernel::governed::record::{AuditEntry, audit};
use fiscus_kernel::governed::{Caller, Failure};

/// A component of `POST /qlms`.
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ComponentInput {
    /// A model with a promoted checkpoint serving.
    #[schema(pattern = "^lqm_[0-9A-HJKMNP-TV-Z]{26}$", example = "lqm_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub model_uid: String,
}

/// `POST /qlms`.
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateQlm {
    #[schema(value_type = fiscus_domain::fields::Text<1, 200>, inline, example = "Treasury liquidity profile")]
    pub name: String,
    #[serde(default)]
    #[schema(value_type = Option<fiscus_domain::fields::Prose<2000>>, inline, example = "S&P 500 level forecasts with a daily VaR guard")]
    pub description: Option<String>,
    /// Each role of the profile (the member's name: a lowercase letter, then up to 31 of a-z, 0-9 and `_`)
    /// and the model that fills it. An object, so that a role is named once: JSON Schema states it, and a
    /// member named twice is refused as malformed JSON.
    #[schema(example = json!({"forecast": {"model_uid": "lqm_01M8C3ZQ5V6J1P8N2T4W0XK7RD"}}))]
    pub components: std::collections::BTreeMap<String, ComponentInput>,
}

/// `POST /qlms/{uid}/invoke`.
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InvokeInput {
    /// The observations every component runs on, oldest first.
    #[schema(
        value_type = Vec<fiscus_domain::fields::Magnitude>,
        inline,
        min_items = 3,
        max_items = 20000,
        example = json!([4012.5, 4030.1, 4018.9, 4055.0, 4071.3, 4066.2])
    )]
    pub values: Vec<f64>,
    /// Periods forecast by forecasting components, 1 to 500 (default 12).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 500, example = 5)]
    pub horizon: Option<i64>,
    /// A version to run (default: the newest).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 9007199254740991_i64, example = 1)]
    pub version: Option<i64>,
}

/// `POST /qlms/{uid}/evaluate`.
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EvaluateInput {
    /// A dataset contract of the workspace: each component is evaluated on its held-out observations.
    #[schema(pattern = "^lqc_[0-9A-HJKMNP-TV-Z]{26}$", example = "lqc_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub contract_uid: String,
    #[serde(default)]
    #[schema(minimum = 1, maximum = 9007199254740991_i64, example = 1)]
    pub version: Option<i64>,
}

fn role_ok(r: &str) -> bool {
    let mut chars = r.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && r.len() <= 32
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// The pin a model's serving promotion gives a role; refused (gate closed) when it serves nothing.
async fn pin_of(services: &Services, tenant: &Tenant, role: &str, model_id: &str) -> Result<Pin, Failure> {
    let d = registry::dossier(services, tenant, model_id).await?;
    lifecycle::gate(Operation::QlmComposition, &d.facts, None)
        .map_err(|r| gate_closed(Operation::QlmComposition, &r))?;
    let p = d
        .promotions
        .iter()
        .find(|p| p.state == PromotionState::Active)
        .ok_or_else(|| Failure::internal("a serving model has no active promotion"))?;
    Ok(Pin {
        role: role.to_string(),
        model_id: model_id.to_string(),
        checkpoint_id: p.record.body.checkpoint_id.clone(),
        checkpoint_hash: p.record.body.checkpoint_hash.clone(),
        promotion_id: p.record.id.clone(),
    })
}

fn version_record(caller: &Caller, body: QlmVersionBody, at: i64) -> Result<Version, Failure> {
    let (body_json, content_hash) = canonical("QLM version", &body)?;
    Ok(Record {
        id: fiscus_domain::ids::new_id("qlv"),
        body,
        body_json,
        content_hash,
        created_by: caller.actor.clone(),
        created_at: at,
    })
}

/// Composes a QLM from models whose promoted checkpoints serve; version 1 pins them.
pub async fn create(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    r: CreateQlm,
) -> Result<(Qlm, Version), Failure> {
    let mut errors = Vec::new();
    if !fiscus_domain::fields::text_ok(&r.name, 1, 200) {
        errors.push(("name", "from 1 to 200 characters, not blank, no control characters".to_string()));
    }
    if r.description.as_ref().is_some_and(|d| !fiscus_domain::fields::prose_ok(d, 2000)) {
        errors.push(("description", "at most 2000 characters".to_string()));
    }
    if r.components.is_empty() || r.components.len() > 8 {
        errors.push(("components", "from 1 to 8 components".to_string()));
    }
    for role in r.components.keys() {
        if !role_ok(role) {
            errors.push(("components", format!("role `{role}`: a lowercase letter, then up to 31 of a-z, 0-9, _")));
        }
    }
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    let mut pins = Vec::with_capacity(r.components.len());
    for (role, c) in &r.components {
        match pin_of(services, tenant, role, &c.model_uid).await {
            Err(Failure::NotFound) => {
                return Err(Failure::missing("components", format!("no model `{}` in this workspace", c.model_uid)));
            }
            other => pins.push(other?),
        }
    }
    let now = now_micros();
    let body = QlmBody { name: r.name, description: r.description.unwrap_or_default() };
    let (body_json, content_hash) = canonical("QLM", &body)?;
    let q = Record {
        id: fiscus_domain::ids::new_id("qlm"),
        body,
        body_json,
        content_hash,
        created_by: caller.actor.clone(),
        created_at: now,
    };
    let first = version_record(
        caller,
        QlmVersionBody {
            qlm_id: q.id.clone(),
            version: 1,
            pins,
            previous_version_hash: None,
            reason: "composed".into(),
        },
        now,
    )?;
    let mut tx = services.store.begin().await?;
    match qlms::insert_qlm(&mut tx, tenant, &q, &first).await {
        Err(StoreError::Conflict(_)) => {
            return Err(Failure::refused(ErrorCode::Conflict, format!("a QLM named `{}` exists already", q.body.name)));
        }
        other => other?,
    }
    let details = json!({ "version_hash": first.content_hash, "pins": first.body.pins.len() });
    audit(&mut tx, caller, &AuditEntry::of_tenant(tenant, Change::QlmCreated, &q.id, details, now)).await?;
    tx.commit().await?;
    Ok((q, first))
}

/// A QLM with its versions, oldest first.
pub async fn load(services: &Services, tenant: &Tenant, id: &str) -> Result<(Qlm, Vec<Version>), Failure> {
    let key = services.store.seal_key();
    let mut conn = services.store.read().await?;
    let q = qlms::get_qlm(&mut conn, key, tenant, id).await?;
    let versions = qlms::versions_of(&mut conn, key, tenant, id).await?;
    if versions.is_empty() {
        return Err(Failure::internal(format!("QLM {id} has no version")));
    }
    Ok((q, versions))
}

/// An operator moves one role of a QLM to the checkpoint its model's promotion serves now: a new version.
/// `checkpoint_hash` is the hash the operator's page showed; anything else serving is not pinned.
pub async fn rebind(
    services: &Services,
    operator: &Caller,
    tenant: &Tenant,
    qlm_id: &str,
    role: &str,
    checkpoint_hash: &str,
) -> Result<Version, Failure> {
    if operator.actor.kind != ActorKind::Operator {
        return Err(Failure::refused(ErrorCode::Conflict, "only an operator at the console rebinds a QLM"));
    }
    let (_, versions) = load(services, tenant, qlm_id).await?;
    let current = versions.last().ok_or(Failure::NotFound)?;
    let old = current.body.pins.iter().find(|p| p.role == role).ok_or(Failure::NotFound)?;
    let new = pin_of(services, tenant, role, &old.model_id).await?;
    if new.checkpoint_hash != checkpoint_hash {
        return Err(Failure::refused(
            ErrorCode::Conflict,
            "the serving checkpoint is not the one shown; nothing was rebound",
        ));
    }
    if new.checkpoint_id == old.checkpoint_id {
        return Err(Failure::refused(ErrorCode::Conflict, "the role already pins that checkpoint"));
    }
    let pins = current.body.pins.iter().map(|p| if p.role == role { new.clone() } else { p.clone() }).collect();
    let now = now_micros();
    let v = version_record(
        operator,
        QlmVersionBody {
            qlm_id: qlm_id.to_string(),
            version: current.body.version + 1,
            pins,
            previous_version_hash: Some(current.content_hash.clone()),
            reason: format!("rebound {role} from {} to {}", old.checkpoint_hash, new.checkpoint_hash),
        },
        now,
    )?;
    let mut tx = services.store.begin().await?;
    match qlms::insert_version(&mut tx, tenant, &v).await {
        Err(StoreError::Conflict(_)) => {
            return Err(Failure::refused(ErrorCode::Conflict, "the QLM was rebound meanwhile"));
        }
        other => other?,
    }
    let details = json!({ "version": v.body.version, "role": role, "from": old.checkpoint_hash, "to": new.checkpoint_hash, "version_hash": v.content_hash });
    audit(&mut tx, operator, &AuditEntry::of_tenant(tenant, Change::QlmRebound, qlm_id, details, now)).await?;
    tx.commit().await?;
    Ok(v)
}

fn pick(versions: &[Version], wanted: Option<i64>) -> Result<&Version, Failure> {
    match wanted {
        None => versions.last().ok_or(Failure::NotFound),
        Some(n) => versions
            .iter()
            .find(|v| v.body.version == n)
            .ok_or_else(|| invalid("version", format!("the QLM has no version {n}"))),
    }
}

/// The pinned checkpoints of a version, each checked: not revoked, and its stored record still the hash
/// the version pins.
async fn pinned(
    services: &Services,
    tenant: &Tenant,
    v: &Version,
) -> Result<Vec<(Pin, crate::tables::lqm::training::Checkpoint)>, Failure> {
    let mut out = Vec::new();
    for p in &v.body.pins {
        let d = registry::dossier(services, tenant, &p.model_id).await?;
        let here =
            d.checkpoint(&p.checkpoint_id).ok_or_else(|| Failure::internal("a pinned checkpoint left its model"))?;
        if here.facts.revoked {
            return Err(Failure::refused_with(
                ErrorCode::CheckpointRevoked,
                format!(
                    "role {}: checkpoint {} was revoked; an operator must rebind the QLM",
                    p.role, p.checkpoint_hash
                ),
                vec![("role", json!(p.role)), ("checkpoint_hash", json!(p.checkpoint_hash))],
            ));
        }
        if here.checkpoint.content_hash != p.checkpoint_hash {
            return Err(StoreError::Tampered(format!(
                "checkpoint {} is not the one QLM version {} pins",
                p.checkpoint_id, v.id
            ))
            .into());
        }
        out.push((p.clone(), here.checkpoint.clone()));
    }
    Ok(out)
}

async fn record_run(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    kind: RunKind,
    v: &Version,
    request: &Value,
    outputs: Value,
) -> Result<Run, Failure> {
    let body = QlmRunBody {
        qlm_id: v.body.qlm_id.clone(),
        version: v.body.version,
        version_hash: v.content_hash.clone(),
        request_hash: canonical("request", request)?.1,
        outputs,
    };
    let (body_json, content_hash) = canonical("QLM run", &body)?;
    let now = now_micros();
    let run = Record {
        id: fiscus_domain::ids::new_id("qlr"),
        body,
        body_json,
        content_hash,
        created_by: caller.actor.clone(),
        created_at: now,
    };
    let mut tx = services.store.begin().await?;
    qlms::insert_run(&mut tx, tenant, kind, &run).await?;
    let action = match kind {
        RunKind::Invoke => Change::QlmInvoked,
        RunKind::Evaluate => Change::QlmEvaluated,
    };
    let details = json!({ "qlm": v.body.qlm_id, "version": v.body.version, "run_hash": run.content_hash });
    audit(&mut tx, caller, &AuditEntry::of_tenant(tenant, action, &run.id, details, now)).await?;
    tx.commit().await?;
    Ok(run)
}

/// Runs every pinned checkpoint of a version on the input; the outputs carry the version's and each
/// checkpoint's hash. Recorded, sealed.
pub async fn invoke(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    qlm_id: &str,
    r: InvokeInput,
) -> Result<(Version, Run), Failure> {
    if r.values.len() < 3 || r.values.len() > 20_000 || r.values.iter().any(|v| !v.is_finite() || v.abs() > 1e12) {
        return Err(invalid("values", "from 3 to 20000 finite values, at most 1e12 in size"));
    }
    let horizon = r.horizon.unwrap_or(12);
    if !(1..=500).contains(&horizon) {
        return Err(invalid("horizon", "from 1 to 500"));
    }
    let (_, versions) = load(services, tenant, qlm_id).await?;
    let v = pick(&versions, r.version)?.clone();
    let checkpoints = pinned(services, tenant, &v).await?;
    let values = r.values.clone();
    let jobs: Vec<_> = checkpoints
        .iter()
        .map(|(p, c)| (p.clone(), c.body.algorithm, c.body.hyperparameters.clone(), c.body.fitted.clone()))
        .collect();
    let outputs = crashed(
        services
            .compute
            .run_inline(&tenant.workspace_id, move || {
                jobs.iter()
                    .map(|(p, algorithm, hyper, fitted)| {
                        fit::apply(*algorithm, hyper, fitted, &values, horizon as usize).map(|output| {
                            json!({ "role": p.role, "model_id": p.model_id, "checkpoint_id": p.checkpoint_id,
                                    "checkpoint_hash": p.checkpoint_hash, "output": output })
                        })
                    })
                    .collect::<Result<Vec<Value>, _>>()
            })
            .await,
    )?
    .map_err(fiscus_kernel::engine::refused_by_engine)?;
    let request = json!({ "values": r.values, "horizon": horizon, "version": v.body.version });
    let run = record_run(services, caller, tenant, RunKind::Invoke, &v, &request, Value::Array(outputs)).await?;
    Ok((v, run))
}

/// Evaluates every pinned checkpoint on a contract's held-out observations, each against its family's
/// default criterion. Recorded, sealed.
pub async fn evaluate(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    qlm_id: &str,
    r: EvaluateInput,
) -> Result<(Version, Run), Failure> {
    let (_, versions) = load(services, tenant, qlm_id).await?;
    let v = pick(&versions, r.version)?.clone();
    let contract = match super::contracts::get(services, tenant, &r.contract_uid).await {
        Err(Failure::NotFound) => return Err(Failure::missing("contract_uid", "no such contract in this workspace")),
        other => other?,
    };
    let checkpoints = pinned(services, tenant, &v).await?;
    let observations = super::contracts::observations(services, tenant, &contract).await?;
    let (train, holdout) = observations.split((contract.body.observations - contract.body.holdout) as usize);
    let mut jobs = Vec::new();
    for (p, c) in &checkpoints {
        let criteria = Criteria::default().for_family(c.body.algorithm.family())?;
        jobs.push((p.clone(), c.body.algorithm, c.body.hyperparameters.clone(), c.body.fitted.clone(), criteria));
    }
    let (tv, hv) = (train.values.clone(), holdout.values.clone());
    let outputs = crashed(
        services
            .compute
            .run_inline(&tenant.workspace_id, move || {
                jobs.iter()
                    .map(|(p, algorithm, hyper, fitted, criteria)| {
                        fit::evaluate(*algorithm, hyper, fitted, &tv, &hv, criteria).map(|s| {
                            json!({ "role": p.role, "model_id": p.model_id, "checkpoint_hash": p.checkpoint_hash,
                                    "criteria": criteria, "metrics": s.metrics, "passed": s.passed })
                        })
                    })
                    .collect::<Result<Vec<Value>, Failure>>()
            })
            .await,
    )??;
    let request = json!({ "contract_uid": contract.id, "contract_hash": contract.content_hash, "version": v.body.version,
                          "holdout_hash": holdout.hash()? });
    let run = record_run(services, caller, tenant, RunKind::Evaluate, &v, &request, Value::Array(outputs)).await?;
    Ok((v, run))
}
