//! Governed AI operations (the seed's `/investment/governed-ai-operations/…`): an operation opened on a
//! portfolio steers by a model portfolio a person approved, with the content hash it had when the operation
//! opened, and draws rebalance proposals only while in governed review. Nothing here ever executes: a
//! rebalance becomes a Financial Action only when an admin or approver proposes it at the console.

use fiscus_domain::audit_action::Change;
use std::collections::HashMap;

use crate::rules::model_portfolio::{self as model, Held, ModelState, Order};
use crate::tables::investment_records::{Record, RecordKind};
use crate::tables::themes::{self, Operation, OperationStatus};
use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::StoreError;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::book::{self as ledger};
use super::is_date;
use super::themes::{content_hash_of, load_model, load_universe, text_field};
use fiscus_kernel::Services;
use fiscus_kernel::governed::record::{AuditEntry, audit};
use fiscus_kernel::governed::{Caller, Failure};

/// `POST /investment/governed-ai-operations`.
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OperationRequest {
    /// The portfolio the operation works on (its integer id).
    #[schema(minimum = 1, maximum = 9007199254740991_i64, example = 1)]
    pub portfolio_id: i64,
    /// The model portfolio it steers by (`mdp_…`); its content hash is fixed now.
    #[schema(pattern = "^mdp_[0-9A-HJKMNP-TV-Z]{26}$", example = "mdp_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub model_portfolio: String,
    /// What the operation is for.
    #[schema(
        value_type = fiscus_domain::fields::Text<1, 1000>,
        inline,
        example = "Move the growth book onto the approved AI model"
    )]
    pub objective: String,
    /// The AI agent or model assisting it, for the record.
    #[serde(default)]
    #[schema(value_type = Option<fiscus_domain::fields::Text<1, 200>>, inline, example = "portfolio-copilot v2")]
    pub agent: Option<String>,
}

pub async fn open_operation(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    r: OperationRequest,
) -> Result<Operation, Failure> {
    let mut errors = Vec::new();
    text_field(&mut errors, "objective", &r.objective, 1000);
    if let Some(a) = &r.agent {
        text_field(&mut errors, "agent", a, 200);
    }
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    let mut conn = services.store.read().await?;
    match fiscus_data_core::tables::book::get_portfolio(&mut conn, &tenant.workspace_id, r.portfolio_id).await {
        Err(StoreError::NotFound) => {
            return Err(Failure::missing("portfolio_id", "no such portfolio in this workspace"));
        }
        other => {
            other?;
        }
    }
    drop(conn);
    let m = match load_model(services, tenant, &r.model_portfolio).await {
        Err(Failure::NotFound) => {
            return Err(Failure::missing(
                "model_portfolio",
                "no such model portfolio in this workspace and environment",
            ));
        }
        other => other?,
    };
    let now = now_micros();
    let o = Operation {
        id: fiscus_domain::ids::new_id("gao"),
        portfolio_id: r.portfolio_id,
        model_portfolio_id: m.id,
        model_portfolio_hash: m.content_hash,
        objective: r.objective,
        agent: r.agent,
        status: OperationStatus::GovernedReview,
        created_by: caller.actor.clone(),
        created_at: now,
    };
    let mut tx = services.store.begin().await?;
    themes::insert_operation(&mut tx, tenant, &o).await?;
    let entry = AuditEntry {
        workspace_id: &tenant.workspace_id,
        environment: Some(tenant.environment),
        action: Change::InvestmentOperationOpened.into(),
        subject: Some(&o.id),
        details: json!({ "portfolio": o.portfolio_id, "model_portfolio": o.model_portfolio_id, "model_portfolio_hash": o.model_portfolio_hash }),
        occurred_at: now,
    };
    audit(&mut tx, caller, &entry).await?;
    tx.commit().await?;
    Ok(o)
}

pub async fn load_operation(services: &Services, tenant: &Tenant, id: &str) -> Result<Operation, Failure> {
    if !fiscus_domain::ids::is_id_of("gao", id) {
        return Err(Failure::NotFound);
    }
    let mut conn = services.store.read().await?;
    Ok(themes::get_operation(&mut conn, services.store.seal_key(), tenant, id).await?)
}

/// `POST /investment/governed-ai-operations/{uid}/rebalance` (every field optional).
#[derive(Clone, Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RebalanceRequest {
    /// Valuation date of the holdings and prices (default: the newest observed price of any instrument).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(format = Date, example = "2022-12-28")]
    pub as_of: Option<String>,
    /// Estimated trading cost in basis points of traded notional, 0 to 500 (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 500, example = 10)]
    pub cost_bps: Option<i64>,
    /// The model portfolio hash the caller reviewed; a different current hash refuses the rebalance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^sha256:[0-9a-f]{64}$")]
    pub expected_model_portfolio_hash: Option<String>,
}

/// A rebalance proposal's sealed output.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RebalanceOutput {
    pub operation: String,
    pub portfolio_id: i64,
    pub model_portfolio: String,
    /// The approved model portfolio's content hash the orders move onto.
    pub model_portfolio_hash: String,
    pub as_of: String,
    pub base_currency: String,
    /// Holdings at their marks plus cash, minor units of the base currency.
    pub portfolio_value_minor: i64,
    pub orders: Vec<Order>,
    /// One-way turnover: traded notional over twice the portfolio's value.
    pub turnover: f64,
    pub traded_notional_minor: i64,
    pub cost_bps: i64,
    pub estimated_costs_minor: i64,
    /// Always false: a proposal; orders are a Financial Action people approve.
    pub executable: bool,
}

fn refused(condition: &'static str, detail: String) -> Failure {
    Failure::refused(ErrorCode::RebalanceRefused, format!("{condition}: {detail}"))
}

pub async fn rebalance(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    id: &str,
    r: RebalanceRequest,
) -> Result<Record, Failure> {
    let mut errors = Vec::new();
    if r.as_of.as_deref().is_some_and(|d| !is_date(d)) {
        errors.push(("as_of", "must be a date (YYYY-MM-DD)".to_string()));
    }
    let cost_bps = r.cost_bps.unwrap_or(10);
    if !(0..=500).contains(&cost_bps) {
        errors.push(("cost_bps", "must be from 0 to 500".to_string()));
    }
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    let op = load_operation(services, tenant, id).await?;
    if op.status != OperationStatus::GovernedReview {
        return Err(refused("operation_not_in_governed_review", format!("the operation is {}", op.status.as_str())));
    }
    let m = load_model(services, tenant, &op.model_portfolio_id).await?;
    if m.state != ModelState::Approved {
        return Err(refused(
            "model_portfolio_not_approved",
            format!("model portfolio {} is {}; a person must approve it at the console first", m.id, m.state.as_str()),
        ));
    }
    let (universe, _) = load_universe(services, tenant, m.universe_id).await?;
    let current = content_hash_of(&universe, &m)?;
    if current != m.content_hash || current != op.model_portfolio_hash {
        return Err(refused(
            "model_portfolio_changed",
            format!("model portfolio {} no longer hashes to {}", m.id, op.model_portfolio_hash),
        ));
    }
    if let Some(expected) = &r.expected_model_portfolio_hash
        && *expected != current
    {
        return Err(refused(
            "stale_model_portfolio_hash",
            format!("the model portfolio's hash is {current}, not {expected}"),
        ));
    }
    let book = ledger::load(services, tenant, op.portfolio_id, r.as_of.as_deref()).await?;
    let base = book.portfolio.base_currency;
    // Marks for what is held and what the model holds, on one valuation date.
    let mut conn = services.store.read().await?;
    let mut instruments = book.instruments(r.as_of.as_deref());
    for h in &m.holdings {
        if !instruments.iter().any(|(_, s)| *s == h.symbol) {
            let i =
                fiscus_data_core::tables::market::get_instrument(&mut conn, &tenant.workspace_id, &h.symbol).await?;
            instruments.push((i.id, i.symbol));
        }
    }
    drop(conn);
    let marks = ledger::marks(services, &tenant.workspace_id, &instruments, r.as_of.as_deref()).await?;
    let on = r.as_of.clone().or_else(|| marks.values().map(|k| k.date.clone()).max()).unwrap_or_default();
    let by_id = ledger::prices_in_base(services, &tenant.workspace_id, &marks, base, &on).await?;
    let price_in_base: HashMap<String, i64> =
        instruments.iter().map(|(id, symbol)| (symbol.clone(), by_id[id])).collect();
    let mut held: Vec<Held> = Vec::new();
    for l in book.lots.iter().filter(|l| l.acquired <= on) {
        match held.iter_mut().find(|h| h.symbol == l.symbol) {
            Some(h) => h.quantity_micros += l.open_micros,
            None => held.push(Held {
                symbol: l.symbol.clone(),
                quantity_micros: l.open_micros,
                price_minor: price_in_base[&l.symbol],
            }),
        }
    }
    let mut cash = 0i64;
    for (currency, amount) in &book.cash {
        cash += (*amount as f64 * ledger::fx_rate(services, &tenant.workspace_id, *currency, base, &on).await?).round()
            as i64;
    }
    let targets: Vec<(String, i64, i64)> =
        m.holdings.iter().map(|h| (h.symbol.clone(), h.weight_ppm, price_in_base[&h.symbol])).collect();
    let (orders, nav) = model::rebalance(&held, &targets, cash);
    if nav <= 0 {
        return Err(refused("portfolio_without_value", format!("portfolio {} has no value on {on}", op.portfolio_id)));
    }
    let traded: i64 = orders.iter().map(|o| o.notional_minor).sum();
    let output = RebalanceOutput {
        operation: op.id.clone(),
        portfolio_id: op.portfolio_id,
        model_portfolio: m.id.clone(),
        model_portfolio_hash: current,
        as_of: on,
        base_currency: base.code().to_string(),
        portfolio_value_minor: nav,
        turnover: traded as f64 / (2.0 * nav as f64),
        traded_notional_minor: traded,
        cost_bps,
        estimated_costs_minor: (traded as f64 * cost_bps as f64 / 10_000.0).round() as i64,
        orders,
        executable: false,
    };
    let request = json!({ "operation": op.id, "request": r });
    super::records::record(services, caller, tenant, RecordKind::Rebalance, Some(op.portfolio_id), request, &output)
        .await
}
