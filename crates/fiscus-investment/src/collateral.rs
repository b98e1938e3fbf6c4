//! Collateral inventory: the book's settled securities and positive cash, valued from observed prices and
//! FX rates (the engine's `collateral::value`), under the workspace's explicit eligibility and haircut
//! policy, sealed as a snapshot. A missing quote or rate is `market_data_unavailable` (503): nothing is
//! substituted, and a snapshot is never built on an invented observation.

use fiscus_domain::audit_action::Change;
use std::collections::BTreeMap;

use crate::rules::collateral::{CollateralRule, default_rules, validate};
use crate::tables::collateral::{self as store, Policy};
use crate::tables::investment_records::{Record, RecordKind};
use fiscus_domain::clock::now_micros;
use fiscus_domain::tenancy::Tenant;
use fiscus_quant::collateral::{self as engine, CollateralPosition, EligibilityRule, Observations};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{book, is_date, unavailable};
use fiscus_kernel::Services;
use fiscus_kernel::governed::record::{AuditEntry, audit};
use fiscus_kernel::governed::{Caller, Failure};

/// Sets the next version of a workspace's policy (the command line's; policies are a control, so no
/// credential sets them).
pub fn set_policy<'a>(
    store: &'a fiscus_store::Store,
    caller: &'a Caller,
    workspace_id: &'a str,
    rules: Vec<CollateralRule>,
) -> fiscus_store::Boxed<'a, Result<Policy, Failure>> {
    Box::pin(async move {
        if let Err(errors) = validate(&rules) {
            return Err(Failure::Invalid(errors.into_iter().map(|e| ("rules", e)).collect()));
        }
        let rules_json = super::records::canonical(
            "rules",
            &serde_json::to_value(&rules).map_err(|e| Failure::internal(e.to_string()))?,
        )?;
        let now = now_micros();
        let mut p = Policy {
            id: fiscus_domain::ids::new_id("cpl"),
            version: 0,
            rules,
            rules_hash: fiscus_domain::evidence::seal_bytes(rules_json.as_bytes()),
            rules_json,
            created_by: caller.actor.clone(),
            created_at: now,
        };
        let mut tx = store.begin().await?;
        crate::tables::collateral::insert(&mut tx, workspace_id, &mut p).await?;
        let entry = AuditEntry {
            workspace_id,
            environment: None,
            action: Change::InvestmentCollateralPolicySet.into(),
            subject: Some(&p.id),
            details: json!({ "version": p.version, "rules_hash": p.rules_hash }),
            occurred_at: now,
        };
        audit(&mut tx, caller, &entry).await?;
        tx.commit().await?;
        Ok(p)
    })
}

/// The policy a snapshot applies: the workspace's newest version, or the built-in default (version 0).
pub async fn policy_in_force(
    services: &Services,
    workspace_id: &str,
) -> Result<(i64, String, Vec<CollateralRule>), Failure> {
    let mut conn = services.store.read().await?;
    match store::current(&mut conn, services.store.seal_key(), workspace_id).await? {
        Some(p) => Ok((p.version, p.rules_hash, p.rules)),
        None => {
            let rules = default_rules();
            let json = super::records::canonical(
                "rules",
                &serde_json::to_value(&rules).map_err(|e| Failure::internal(e.to_string()))?,
            )?;
            Ok((0, fiscus_domain::evidence::seal_bytes(json.as_bytes()), rules))
        }
    }
}

/// `POST /investment/portfolios/{portfolio}/collateral-inventory` (every field optional).
#[derive(Clone, Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CollateralRequest {
    /// Valuation date (default: today, UTC): lots held on it, each at its newest observed price on or before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(format = Date, example = "2022-12-28")]
    pub as_of: Option<String>,
}

/// One position of the inventory.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct InventoryLine {
    /// A symbol, or `cash:<currency>`.
    pub position: String,
    pub asset_class: String,
    pub currency: String,
    /// Units (decimal text) or the cash amount in minor units.
    pub quantity: String,
    /// The observed price used (decimal text; 1 for cash) and its date.
    pub price: String,
    pub price_date: Option<String>,
    pub fx_to_base: f64,
    pub market_value_minor: i64,
    pub eligible: bool,
    pub haircut: f64,
    /// Market value less the haircut, rounded down.
    pub collateral_value_minor: i64,
}

/// A snapshot's sealed output.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct InventoryOutput {
    pub portfolio_id: i64,
    pub base_currency: String,
    pub as_of: String,
    /// The policy applied: its version (0 is the built-in default), the SHA-256 of its rules, and the rules.
    pub policy_version: i64,
    pub policy_rules_hash: String,
    pub policy_rules: Vec<CollateralRule>,
    pub lines: Vec<InventoryLine>,
    pub total_market_value_minor: i64,
    pub total_collateral_value_minor: i64,
}

/// The portfolio a collateral path names: its integer id, or its code.
async fn portfolio_id(services: &Services, tenant: &Tenant, key: &str) -> Result<i64, Failure> {
    if let Ok(id) = key.parse::<i64>() {
        return Ok(id);
    }
    if !fiscus_data_core::rules::is_name(key) {
        return Err(Failure::NotFound);
    }
    let mut conn = services.store.read().await?;
    let codes = fiscus_data_core::tables::book::portfolio_codes(&mut conn, &tenant.workspace_id).await?;
    codes.get(key).map(|p| p.id).ok_or(Failure::NotFound)
}

pub async fn snapshot(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    portfolio: &str,
    req: CollateralRequest,
) -> Result<Record, Failure> {
    if req.as_of.as_deref().is_some_and(|d| !is_date(d)) {
        return Err(Failure::Invalid(vec![("as_of", "must be a date (YYYY-MM-DD)".into())]));
    }
    let id = portfolio_id(services, tenant, portfolio).await?;
    let book = book::load(services, tenant, id, req.as_of.as_deref()).await?;
    let base = book.portfolio.base_currency;
    let (version, rules_hash, rules) = policy_in_force(services, &tenant.workspace_id).await?;
    // Settled securities: the open lots held on the valuation date, by instrument.
    // The book on its date (today by default): every lot acquired by then, each valued at its newest
    // observed price on or before it (the line shows that price's date).
    let on = book::book_date(req.as_of.as_deref());
    let instruments = book.instruments(Some(&on));
    let marks = book::marks(services, &tenant.workspace_id, &instruments, Some(&on)).await?;
    let mut positions = Vec::new();
    let mut observations = Observations::default();
    let mut lines = Vec::new();
    let mut conn = services.store.read().await?;
    for (instrument_id, symbol) in &instruments {
        let i =
            fiscus_data_core::tables::market::get_instrument(&mut conn, &tenant.workspace_id, instrument_id).await?;
        let micros: i64 = book
            .lots
            .iter()
            .filter(|l| &l.instrument_id == instrument_id && l.acquired <= on)
            .map(|l| l.open_micros)
            .sum();
        let mark = &marks[instrument_id];
        let price: f64 =
            mark.price.parse().map_err(|_| Failure::internal(format!("{symbol}: price `{}`", mark.price)))?;
        observations.prices.insert(symbol.clone(), price);
        positions.push(CollateralPosition {
            instrument: symbol.clone(),
            quantity: micros as f64 / 1_000_000.0,
            currency: i.currency.clone(),
            asset_class: i.asset_class.clone(),
        });
        lines.push((fiscus_data_core::book::quantity_text(micros), mark.price.clone(), Some(mark.date.clone())));
    }
    drop(conn);
    // Positive cash, by currency, at 1 per unit of its currency.
    for (currency, amount) in book.cash.iter().filter(|(_, a)| *a > 0) {
        let name = format!("cash:{}", currency.code());
        let units = *amount as f64 / 10f64.powi(i32::from(currency.exponent()));
        observations.prices.insert(name.clone(), 1.0);
        positions.push(CollateralPosition {
            instrument: name,
            quantity: units,
            currency: currency.code().to_string(),
            asset_class: crate::rules::collateral::CASH.to_string(),
        });
        lines.push((amount.to_string(), "1".to_string(), None));
    }
    for p in &positions {
        if p.currency != base.code() && !observations.fx_to_base.contains_key(&p.currency) {
            let from = fiscus_domain::money::Currency::parse(&p.currency)
                .ok_or_else(|| Failure::internal(format!("currency `{}`", p.currency)))?;
            let rate = book::fx_rate(services, &tenant.workspace_id, from, base, &on).await?;
            observations.fx_to_base.insert(p.currency.clone(), rate);
        }
    }
    let engine_rules: Vec<EligibilityRule> = rules
        .iter()
        .map(|r| EligibilityRule {
            asset_class: r.asset_class.clone(),
            haircut: r.haircut,
            currencies: r.currencies.clone(),
        })
        .collect();
    let valued = engine::value(&positions, &observations, &engine_rules, base.code(), u32::from(base.exponent()))
        .map_err(|e| match e {
            fiscus_quant::QuantError::MissingObservation { what } => unavailable(what),
            other => fiscus_kernel::engine::refused_by_engine(other),
        })?;
    let by_name: BTreeMap<&str, &engine::ValuedPosition> =
        valued.positions.iter().map(|v| (v.instrument.as_str(), v)).collect();
    let out_lines: Vec<InventoryLine> = positions
        .iter()
        .zip(lines)
        .map(|(p, (quantity, price, price_date))| {
            let v = by_name[p.instrument.as_str()];
            InventoryLine {
                position: p.instrument.clone(),
                asset_class: p.asset_class.clone(),
                currency: p.currency.clone(),
                quantity,
                price,
                price_date,
                fx_to_base: observations.fx_to_base.get(&p.currency).copied().unwrap_or(1.0),
                market_value_minor: v.market_value,
                eligible: v.eligible,
                haircut: v.haircut,
                collateral_value_minor: v.collateral_value,
            }
        })
        .collect();
    let output = InventoryOutput {
        portfolio_id: id,
        base_currency: base.code().to_string(),
        as_of: on,
        policy_version: version,
        policy_rules_hash: rules_hash,
        policy_rules: rules,
        lines: out_lines,
        total_market_value_minor: valued.total_market_value,
        total_collateral_value_minor: valued.total_collateral_value,
    };
    let request = json!({ "portfolio": portfolio, "request": req });
    super::records::record(services, caller, tenant, RecordKind::CollateralInventory, Some(id), request, &output).await
}
