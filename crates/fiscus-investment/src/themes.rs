//! Thematic investing (the seed's `/investment/themes/…`): universes research hands off, and the model
//! portfolios drawn from them. A model portfolio is a draft until an operator approves it at the console;
//! the governed AI operations that steer by an approved one are `governed_operations`.

use fiscus_domain::audit_action::Change;
use std::collections::HashMap;

use crate::rules::model_portfolio::{self as model, Candidate, ModelDecision, ModelHolding, ModelState, Weighting};
use crate::tables::themes::{self, Member, ModelPortfolio, Universe, UniverseStatus};
use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::StoreError;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::invalid;
use fiscus_kernel::Services;
use fiscus_kernel::governed::record::{AuditEntry, audit};
use fiscus_kernel::governed::{Caller, Failure};

/// A member as research hands it off.
#[derive(Clone, Debug, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MemberInput {
    /// An instrument of the workspace.
    #[schema(pattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", example = "MSFT")]
    pub symbol: String,
    /// Relevance to the theme, 0 to 1.
    #[schema(minimum = 0, maximum = 1, example = 0.92)]
    pub relevance: f64,
    /// Why research chose it.
    #[serde(default)]
    #[schema(value_type = Option<fiscus_domain::fields::Text<0, 500>>, inline, example = "Largest cloud AI platform by revenue")]
    pub rationale: Option<String>,
}

/// `POST /investment/themes/universes`.
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UniverseRequest {
    #[schema(value_type = fiscus_domain::fields::Text<1, 200>, inline, example = "AI infrastructure leaders")]
    pub name: String,
    #[schema(value_type = fiscus_domain::fields::Text<1, 200>, inline, example = "artificial_intelligence")]
    pub theme: String,
    /// Who handed it off (a research desk, a model run).
    #[schema(value_type = fiscus_domain::fields::Text<1, 200>, inline, example = "Equity research, thematic desk")]
    pub source: String,
    /// The members, when handed off at once; absent, the universe is announced (`pending`) and its members
    /// follow with `POST …/{universe}/handoff`.
    #[serde(default)]
    #[schema(min_items = 1, max_items = 500)]
    pub members: Option<Vec<MemberInput>>,
}

/// `POST /investment/themes/universes/{universe}/handoff`.
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HandoffRequest {
    #[schema(min_items = 1, max_items = 500)]
    pub members: Vec<MemberInput>,
}

pub(crate) fn text_field(errors: &mut Vec<(&'static str, String)>, field: &'static str, v: &str, max: usize) {
    if !fiscus_domain::fields::text_ok(v, 1, max) {
        errors.push((field, format!("from 1 to {max} characters, not blank, no control characters")));
    }
}

/// Checks members against the workspace's instruments; the members to store and their hash.
async fn members_of(
    services: &Services,
    workspace_id: &str,
    input: &[MemberInput],
) -> Result<(Vec<Member>, String), Failure> {
    let (mut errors, mut missing, mut twice) = (Vec::new(), Vec::new(), Vec::new());
    if input.is_empty() || input.len() > 500 {
        errors.push(("members", "from 1 to 500 members".to_string()));
    }
    let mut conn = services.store.read().await?;
    let known = fiscus_data_core::tables::market::ids_by_symbol(&mut conn, workspace_id).await?;
    drop(conn);
    let mut out: Vec<Member> = Vec::with_capacity(input.len());
    for m in input {
        if !(m.relevance.is_finite() && (0.0..=1.0).contains(&m.relevance)) {
            errors.push(("members", format!("`{}`: relevance must be from 0 to 1", m.symbol)));
        }
        if m.rationale.as_ref().is_some_and(|r| r.chars().count() > 500 || r.chars().any(char::is_control)) {
            errors.push(("members", format!("`{}`: a rationale is at most 500 characters", m.symbol)));
        }
        if out.iter().any(|o| o.symbol == m.symbol) {
            twice.push(format!("`{}`", m.symbol));
            continue;
        }
        match known.get(&m.symbol) {
            Some(id) => out.push(Member {
                symbol: m.symbol.clone(),
                instrument_id: id.clone(),
                relevance: fiscus_data_core::rules::values::shortest(m.relevance),
                rationale: m.rationale.clone().unwrap_or_default(),
            }),
            None => missing.push(format!("`{}`", m.symbol)),
        }
    }
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    // A symbol unique across the members is a rule no schema states (`uniqueItems` compares whole members).
    if !twice.is_empty() {
        let detail = format!("members name {} twice", twice.join(", "));
        return Err(Failure::refused(fiscus_domain::error_code::ErrorCode::Conflict, detail));
    }
    if !missing.is_empty() {
        return Err(Failure::missing("members", format!("no instrument {} in this workspace", missing.join(", "))));
    }
    out.sort_by(|a, b| a.symbol.cmp(&b.symbol));
    let listed: Vec<Value> =
        out.iter().map(|m| json!({ "symbol": m.symbol, "relevance": m.relevance, "rationale": m.rationale })).collect();
    let hash =
        fiscus_domain::evidence::seal_bytes(super::records::canonical("members", &Value::Array(listed))?.as_bytes());
    Ok((out, hash))
}

pub async fn create_universe(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    r: UniverseRequest,
) -> Result<Universe, Failure> {
    let mut errors = Vec::new();
    text_field(&mut errors, "name", &r.name, 200);
    text_field(&mut errors, "theme", &r.theme, 200);
    text_field(&mut errors, "source", &r.source, 200);
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    let members = match &r.members {
        Some(m) => Some(members_of(services, &tenant.workspace_id, m).await?),
        None => None,
    };
    let now = now_micros();
    let mut u = Universe {
        id: 0,
        uid: fiscus_domain::ids::new_id("thu"),
        name: r.name,
        theme: r.theme,
        source: r.source,
        status: if members.is_some() { UniverseStatus::HandedOff } else { UniverseStatus::Pending },
        members_hash: members.as_ref().map(|(_, h)| h.clone()),
        created_by: caller.actor.clone(),
        created_at: now,
        handed_off_at: members.as_ref().map(|_| now),
    };
    let mut tx = services.store.begin().await?;
    themes::insert_universe(&mut tx, &tenant.workspace_id, &mut u, members.as_ref().map_or(&[], |(m, _)| m)).await?;
    let entry = AuditEntry {
        workspace_id: &tenant.workspace_id,
        environment: Some(tenant.environment),
        action: Change::InvestmentUniverseCreated.into(),
        subject: Some(&u.uid),
        details: json!({ "universe": u.id, "status": u.status.as_str(), "members_hash": u.members_hash }),
        occurred_at: now,
    };
    audit(&mut tx, caller, &entry).await?;
    tx.commit().await?;
    Ok(u)
}

pub async fn hand_off(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    universe_id: i64,
    r: HandoffRequest,
) -> Result<Universe, Failure> {
    let u = load_universe(services, tenant, universe_id).await?.0;
    let (members, hash) = members_of(services, &tenant.workspace_id, &r.members).await?;
    let already =
        || Failure::refused(ErrorCode::Conflict, "the universe was handed off already; its members are fixed");
    if u.status != UniverseStatus::Pending {
        return Err(already());
    }
    let now = now_micros();
    let mut tx = services.store.begin().await?;
    if !themes::hand_off(&mut tx, &tenant.workspace_id, &u, &members, &hash, now).await? {
        return Err(already());
    }
    let entry = AuditEntry {
        workspace_id: &tenant.workspace_id,
        environment: Some(tenant.environment),
        action: Change::InvestmentUniverseHandedOff.into(),
        subject: Some(&u.uid),
        details: json!({ "universe": u.id, "members": members.len(), "members_hash": hash }),
        occurred_at: now,
    };
    audit(&mut tx, caller, &entry).await?;
    tx.commit().await?;
    Ok(load_universe(services, tenant, universe_id).await?.0)
}

/// A universe of the workspace with its members.
pub async fn load_universe(services: &Services, tenant: &Tenant, id: i64) -> Result<(Universe, Vec<Member>), Failure> {
    let mut conn = services.store.read().await?;
    let u = themes::get_universe(&mut conn, services.store.seal_key(), &tenant.workspace_id, id).await?;
    let members = themes::members(&mut conn, &tenant.workspace_id, id).await?;
    Ok((u, members))
}

/// `POST /investment/themes/universes/{universe}/model-portfolio` (every field optional).
#[derive(Clone, Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelPortfolioRequest {
    /// Default: the universe's name and the weighting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<fiscus_domain::fields::Text<1, 200>>, inline, example = "AI leaders, relevance-weighted")]
    pub name: Option<String>,
    /// How many of the most relevant members to hold, 1 to 500 (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 500, example = 20)]
    pub limit: Option<i64>,
    /// `relevance` (default) or `equal`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weighting: Option<Weighting>,
    /// An instrument of the workspace to compare with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", example = "SPX")]
    pub benchmark_symbol: Option<String>,
}

/// The content a model portfolio's hash covers: everything that makes it what it is.
fn content(
    universe: &Universe,
    name: &str,
    weighting: Weighting,
    limit: i64,
    benchmark: Option<&str>,
    holdings: &[ModelHolding],
) -> Value {
    json!({
        "universe": universe.id,
        "universe_members_hash": universe.members_hash,
        "name": name,
        "weighting": weighting.as_str(),
        "limit": limit,
        "benchmark_symbol": benchmark,
        "holdings": holdings,
    })
}

/// The hash of a stored model portfolio's content, recomputed.
pub fn content_hash_of(universe: &Universe, m: &ModelPortfolio) -> Result<String, Failure> {
    let c = content(universe, &m.name, m.weighting, m.limit, m.benchmark_symbol.as_deref(), &m.holdings);
    Ok(fiscus_domain::evidence::seal_bytes(super::records::canonical("model portfolio", &c)?.as_bytes()))
}

pub async fn create_model(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    universe_id: i64,
    r: ModelPortfolioRequest,
) -> Result<ModelPortfolio, Failure> {
    let mut errors = Vec::new();
    let limit = r.limit.unwrap_or(20);
    if !(1..=model::MAX_LIMIT).contains(&limit) {
        errors.push(("limit", format!("must be from 1 to {}", model::MAX_LIMIT)));
    }
    if let Some(n) = &r.name {
        text_field(&mut errors, "name", n, 200);
    }
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    let weighting = r.weighting.unwrap_or(Weighting::Relevance);
    let (universe, members) = load_universe(services, tenant, universe_id).await?;
    if let Some(b) = &r.benchmark_symbol {
        let mut conn = services.store.read().await?;
        match fiscus_data_core::tables::market::get_instrument(&mut conn, &tenant.workspace_id, b).await {
            Err(StoreError::NotFound) => {
                return Err(Failure::missing("benchmark_symbol", format!("no instrument `{b}` in this workspace")));
            }
            other => {
                other?;
            }
        }
    }
    if universe.status != UniverseStatus::HandedOff {
        return Err(Failure::refused_with(
            ErrorCode::HandoffUnavailable,
            format!("universe {} is announced but research has not handed its members off yet", universe.id),
            vec![("state", serde_json::json!(universe.status.as_str()))],
        ));
    }
    let candidates: Vec<Candidate> = members
        .iter()
        .map(|m| Candidate { symbol: m.symbol.clone(), relevance: m.relevance.parse().unwrap_or(f64::NAN) })
        .collect();
    let Some(chosen) = model::construct(&candidates, limit as usize, weighting) else {
        return Err(invalid("weighting", "no member of the universe has a positive relevance to weight by"));
    };
    let relevance: HashMap<&str, &str> = members.iter().map(|m| (m.symbol.as_str(), m.relevance.as_str())).collect();
    let holdings: Vec<ModelHolding> = chosen
        .iter()
        .map(|(s, _, w)| ModelHolding {
            symbol: s.clone(),
            relevance: relevance[s.as_str()].to_string(),
            weight_ppm: *w,
        })
        .collect();
    let name = r.name.unwrap_or_else(|| format!("{} ({} weighted)", universe.name, weighting.as_str()));
    let c = content(&universe, &name, weighting, limit, r.benchmark_symbol.as_deref(), &holdings);
    let holdings_json = super::records::canonical(
        "holdings",
        &serde_json::to_value(&holdings).map_err(|e| Failure::internal(e.to_string()))?,
    )?;
    let now = now_micros();
    let m = ModelPortfolio {
        id: fiscus_domain::ids::new_id("mdp"),
        universe_id,
        name,
        weighting,
        limit,
        benchmark_symbol: r.benchmark_symbol,
        holdings,
        holdings_json,
        content_hash: fiscus_domain::evidence::seal_bytes(super::records::canonical("model portfolio", &c)?.as_bytes()),
        state: ModelState::ApprovalRequired,
        created_by: caller.actor.clone(),
        created_at: now,
        decided_by: None,
        decided_at: None,
        decision_note: None,
    };
    let mut tx = services.store.begin().await?;
    themes::insert_model(&mut tx, tenant, &m).await?;
    let entry = AuditEntry {
        workspace_id: &tenant.workspace_id,
        environment: Some(tenant.environment),
        action: Change::InvestmentModelPortfolioCreated.into(),
        subject: Some(&m.id),
        details: json!({ "universe": universe_id, "content_hash": m.content_hash, "state": m.state.as_str() }),
        occurred_at: now,
    };
    audit(&mut tx, caller, &entry).await?;
    tx.commit().await?;
    Ok(m)
}

pub async fn load_model(services: &Services, tenant: &Tenant, id: &str) -> Result<ModelPortfolio, Failure> {
    if !fiscus_domain::ids::is_id_of("mdp", id) {
        return Err(Failure::NotFound);
    }
    let mut conn = services.store.read().await?;
    Ok(themes::get_model(&mut conn, services.store.seal_key(), tenant, id).await?)
}

/// An operator's decision on a draft (the console's; a credential never decides).
pub async fn decide_model(
    services: &Services,
    operator: &Caller,
    tenant: &Tenant,
    id: &str,
    decision: ModelDecision,
    note: Option<&str>,
) -> Result<ModelPortfolio, Failure> {
    if operator.actor.kind != fiscus_domain::actor::ActorKind::Operator {
        return Err(Failure::refused(ErrorCode::Conflict, "only an operator at the console decides a model portfolio"));
    }
    let m = load_model(services, tenant, id).await?;
    let to = model::decide(m.state, decision).map_err(|r| Failure::refused(ErrorCode::Conflict, r.to_string()))?;
    let now = now_micros();
    let mut tx = services.store.begin().await?;
    if !themes::decide_model(&mut tx, tenant, id, to, &operator.actor, now, note).await? {
        return Err(Failure::refused(ErrorCode::Conflict, "the model portfolio was decided meanwhile"));
    }
    let entry = AuditEntry {
        workspace_id: &tenant.workspace_id,
        environment: Some(tenant.environment),
        action: if to == ModelState::Approved {
            Change::InvestmentModelPortfolioApproved
        } else {
            Change::InvestmentModelPortfolioRejected
        }
        .into(),
        subject: Some(id),
        details: json!({ "content_hash": m.content_hash, "note": note }),
        occurred_at: now,
    };
    audit(&mut tx, operator, &entry).await?;
    tx.commit().await?;
    load_model(services, tenant, id).await
}
