//! From a rebalance proposal to an investment Financial Action, and from its settlement back into the book.
//!
//! `propose` turns a proposal (one action per proposal) into an `investment_order` action awaiting approval:
//! its envelope carries the orders, the proposal's content hash and the approved model portfolio's hash, so
//! the hashes chain from what was executed back to what a person approved. The pre-trade checks the action
//! requires are computed from the book and recorded at once (limits, restricted list, concentration); a
//! person still approves at the console, and execution follows the actions' lifecycle.
//!
//! `apply_settlement` moves the book when such an action settles and reconciles: buys open trade lots and
//! spend cash; sells close lots first in, first out (the engine's relief) and bring in cash. It checks
//! everything before writing anything: a sale larger than what is held is a reconciliation exception,
//! never a negative lot.

use fiscus_domain::audit_action::Change;
use std::collections::HashMap;

use crate::rules::model_portfolio::{Order, Side};
use crate::rules::pre_trade;
use fiscus_actions::rules::checks::{CheckStatus, ValidCheck};
use fiscus_actions::rules::envelope::{ExecutionMode, Origin, ProposalRequest, RiskTier};
use fiscus_data_core::tables::book;
use fiscus_domain::actions::ActionKind;
use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::money::Currency;
use fiscus_domain::tenancy::Tenant;
use fiscus_quant::tax_lots::{self, Lot, ReliefMethod, Sale, Term};
use fiscus_store::WriteTx;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::governed_operations::RebalanceOutput;
use fiscus_actions::steps::Loaded;
use fiscus_kernel::governed::{Caller, Failure};

/// `POST /investment/rebalance-proposals/{uid}/actions` (every field optional).
#[derive(Clone, Debug, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderActionRequest {
    /// The execution connector (default `sandbox`; one the environment does not have is 409
    /// `reference_not_found`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 64, example = "sandbox")]
    pub connector: Option<String>,
    /// Default `T2`: two distinct approvers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk_tier: Option<RiskTier>,
    /// The reference carried to the broker (default `RBP-` and the proposal's id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 140, example = "RBP-2026-11-Q4")]
    pub reference: Option<String>,
}

/// The orders an investment action's envelope carries (its `metadata`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OrderTicket {
    pub rebalance_proposal: String,
    pub proposal_hash: String,
    pub model_portfolio: String,
    pub model_portfolio_hash: String,
    pub portfolio_id: i64,
    pub orders: Vec<Order>,
}

fn check(key: &str, passed: bool, portfolio_id: i64, facts: Value) -> Result<ValidCheck, Failure> {
    let source_hash =
        fiscus_domain::evidence::seal(&facts).map_err(|e| Failure::internal(format!("check facts: {e}")))?;
    Ok(ValidCheck {
        check_key: key.to_string(),
        status: if passed { CheckStatus::Passed } else { CheckStatus::Failed },
        source_type: "fiscus_book".to_string(),
        source_reference: format!("investment/portfolios/{portfolio_id}"),
        source_hash,
        metrics: vec![facts],
        metadata: Vec::new(),
    })
}

/// Puts a symbol on the workspace's restricted list (or changes its reason), with its audit event: the
/// command line's (a compliance control, so no credential sets it).
pub fn restrict<'a>(
    store: &'a fiscus_store::Store,
    caller: &'a Caller,
    workspace_id: &'a str,
    symbol: &'a str,
    reason: &'a str,
) -> fiscus_store::Boxed<'a, Result<(), Failure>> {
    Box::pin(async move {
        let mut errors = Vec::new();
        if !fiscus_data_core::rules::is_name(symbol) {
            errors.push(("symbol", "1 to 64 of A-Z a-z 0-9 . _ -".to_string()));
        }
        if reason.trim().is_empty() || reason.chars().count() > 500 || reason.chars().any(char::is_control) {
            errors.push(("reason", "1 to 500 characters, not blank".to_string()));
        }
        if !errors.is_empty() {
            return Err(Failure::Invalid(errors));
        }
        let now = now_micros();
        let by = caller.actor.clone();
        let mut tx = store.begin().await?;
        book::restrict(&mut tx, workspace_id, symbol, reason, &by, now).await?;
        let entry = fiscus_kernel::governed::record::AuditEntry {
            workspace_id,
            environment: None,
            action: Change::InvestmentRestrictedListAdded.into(),
            subject: Some(symbol),
            details: json!({ "reason": reason }),
            occurred_at: now,
        };
        fiscus_kernel::governed::record::audit(&mut tx, caller, &entry).await?;
        tx.commit().await?;
        Ok(())
    })
}

/// Proposes the investment action of a rebalance proposal, in `tx`, with its computed checks.
pub async fn propose(
    tx: &mut WriteTx,
    settings: &fiscus_kernel::Settings,
    tenant: &Tenant,
    caller: &Caller,
    proposal_id: &str,
    req: OrderActionRequest,
    origin: Origin,
) -> Result<Loaded, Failure> {
    if !fiscus_domain::ids::is_id_of("rbp", proposal_id) {
        return Err(Failure::NotFound);
    }
    let key = tx.seal_key().clone();
    let record = crate::tables::investment_records::get(tx.conn(), &key, tenant, proposal_id).await?;
    if record.kind != crate::tables::investment_records::RecordKind::Rebalance {
        return Err(Failure::NotFound);
    }
    let output: RebalanceOutput =
        serde_json::from_str(&record.output).map_err(|e| Failure::internal(format!("proposal {proposal_id}: {e}")))?;
    if output.orders.is_empty() {
        return Err(Failure::refused(ErrorCode::Conflict, "the proposal has no orders: the portfolio is on its model"));
    }
    if let Some(existing) = book::order_link(tx.conn(), tenant, proposal_id).await? {
        return Err(Failure::refused(ErrorCode::Conflict, format!("the proposal is action {existing} already")));
    }
    let currency = Currency::parse(&output.base_currency)
        .ok_or_else(|| Failure::internal(format!("proposal {proposal_id}: currency")))?;
    let ticket = OrderTicket {
        rebalance_proposal: record.id.clone(),
        proposal_hash: record.content_hash.clone(),
        model_portfolio: output.model_portfolio.clone(),
        model_portfolio_hash: output.model_portfolio_hash.clone(),
        portfolio_id: output.portfolio_id,
        orders: output.orders.clone(),
    };
    let connector = req.connector.clone().unwrap_or_else(|| "sandbox".to_string());
    let envelope = ProposalRequest {
        kind: ActionKind::InvestmentOrder,
        amount_minor: output.traded_notional_minor,
        currency,
        counterparty: format!("broker:{connector}"),
        connector,
        execution_mode: ExecutionMode::HumanApproved,
        delegation_id: None,
        risk_tier: req.risk_tier.unwrap_or(RiskTier::T2),
        reference: req.reference.clone().unwrap_or_else(|| format!("RBP-{}", &record.id[4..])),
        required_checks: pre_trade::CHECKS.iter().map(|c| c.to_string()).collect(),
        metadata: Some(serde_json::to_value(&ticket).map_err(|e| Failure::internal(e.to_string()))?),
    }
    .validate()
    .map_err(Failure::Invalid)?;
    let loaded = fiscus_actions::steps::propose::propose(tx, settings, tenant, caller, envelope, origin).await?;
    let now = now_micros();
    match book::link_order(tx, tenant, proposal_id, &loaded.action.id, now).await {
        Err(fiscus_store::StoreError::Conflict(_)) => {
            return Err(Failure::refused(ErrorCode::Conflict, "the proposal became an action meanwhile"));
        }
        other => other?,
    }
    for c in computed_checks(tx, tenant, &ticket, &output).await? {
        fiscus_actions::steps::check::record_check(tx, tenant, caller, &loaded.action.id, c).await?;
    }
    let key = tx.seal_key().clone();
    Ok(fiscus_actions::steps::Loaded::load(tx.conn(), &key, tenant, loaded.action).await?)
}

/// The three pre-trade checks (`crate::rules::pre_trade`), decided on the book as it stands and
/// the model portfolio the orders move onto.
async fn computed_checks(
    tx: &mut WriteTx,
    tenant: &Tenant,
    ticket: &OrderTicket,
    output: &RebalanceOutput,
) -> Result<Vec<ValidCheck>, Failure> {
    let lots = book::open_lots(tx.conn(), tenant, ticket.portfolio_id, None).await?;
    let cash = book::cash_balances(tx.conn(), tenant, ticket.portfolio_id, None).await?;
    let restricted = book::restricted(tx.conn(), &tenant.workspace_id).await?;
    let key = tx.seal_key().clone();
    let model = crate::tables::themes::get_model(tx.conn(), &key, tenant, &ticket.model_portfolio).await?;
    let mut held: HashMap<String, i64> = HashMap::new();
    for l in &lots {
        *held.entry(l.symbol.clone()).or_default() += l.open_micros;
    }
    let cash_minor: i64 = cash.iter().filter(|(c, _)| c.code() == output.base_currency).map(|(_, a)| *a).sum();
    let facts = pre_trade::Facts {
        orders: &ticket.orders,
        held: &held,
        cash_minor,
        restricted: &restricted,
        targets: &model.holdings,
    };
    pre_trade::evaluate(&facts).into_iter().map(|d| check(d.key, d.passed, ticket.portfolio_id, d.facts)).collect()
}

/// Moves the book for a settled, reconciled investment action: `Err(reason)` (nothing written) when the
/// book cannot take it.
pub async fn apply_settlement(
    tx: &mut WriteTx,
    tenant: &Tenant,
    action_id: &str,
    metadata: &Value,
    currency: Currency,
    date: &str,
    at: i64,
) -> Result<Result<(), String>, Failure> {
    let Ok(ticket) = serde_json::from_value::<OrderTicket>(metadata.clone()) else {
        return Ok(Err("the envelope carries no order ticket".to_string()));
    };
    let lots = book::open_lots(tx.conn(), tenant, ticket.portfolio_id, None).await?;
    let instruments = fiscus_data_core::tables::market::ids_by_symbol(tx.conn(), &tenant.workspace_id).await?;
    let settled = super::tax::engine_date(date)?;
    // Plan every sale first, so a sale the lots cannot cover writes nothing at all.
    let mut plans = Vec::new();
    for o in ticket.orders.iter().filter(|o| o.side == Side::Sell) {
        let units = fiscus_data_core::book::quantity_micros(&o.quantity).map_err(Failure::internal)?;
        let mine: Vec<&book::OpenLot> = lots.iter().filter(|l| l.symbol == o.symbol).collect();
        let engine: Vec<Lot> = mine
            .iter()
            .enumerate()
            .map(|(i, l)| {
                Ok(Lot {
                    id: i as u64,
                    acquired: super::tax::engine_date(&l.acquired)?,
                    quantity: l.open_micros,
                    cost: l.open_cost_minor,
                })
            })
            .collect::<Result<_, Failure>>()?;
        let sale = Sale { date: settled, quantity: units, proceeds: o.notional_minor };
        match tax_lots::relieve(&engine, &sale, &ReliefMethod::Fifo) {
            Ok(relief) => plans.push((o, mine, relief)),
            Err(e) => return Ok(Err(format!("{} cannot be sold: {e}", o.symbol))),
        }
    }
    for o in ticket.orders.iter().filter(|o| o.side == Side::Buy) {
        if !instruments.contains_key(&o.symbol) {
            return Ok(Err(format!("{} is not an instrument of the workspace", o.symbol)));
        }
    }
    for (o, mine, relief) in &plans {
        for piece in &relief.realised {
            let lot = mine[piece.lot_id as usize];
            let term = if piece.term == Term::Long { "long" } else { "short" };
            let d = book::Disposal {
                lot_id: &lot.id,
                portfolio_id: ticket.portfolio_id,
                disposed: date,
                quantity_micros: piece.quantity,
                cost_minor: piece.cost,
                proceeds_minor: piece.proceeds,
                term,
                source: action_id,
                at,
            };
            book::insert_disposal(tx, tenant, &d).await?;
        }
        let entry = format!("{action_id}-{}-sell", o.symbol);
        let what = format!("Sold {} {}", o.quantity, o.symbol);
        book::insert_trade_cash(tx, tenant, ticket.portfolio_id, &entry, date, o.notional_minor, currency, &what)
            .await?;
    }
    for o in ticket.orders.iter().filter(|o| o.side == Side::Buy) {
        let units = fiscus_data_core::book::quantity_micros(&o.quantity).map_err(Failure::internal)?;
        let lot = book::TradeLot {
            id: fiscus_domain::ids::new_id("tlt"),
            portfolio_id: ticket.portfolio_id,
            lot: format!("{action_id}-{}", o.symbol),
            instrument_id: &instruments[&o.symbol],
            acquired: date,
            quantity_micros: units,
            cost_minor: o.notional_minor,
            currency,
        };
        book::insert_trade_lot(tx, tenant, &lot).await?;
        let entry = format!("{action_id}-{}-buy", o.symbol);
        let what = format!("Bought {} {}", o.quantity, o.symbol);
        book::insert_trade_cash(tx, tenant, ticket.portfolio_id, &entry, date, -o.notional_minor, currency, &what)
            .await?;
    }
    Ok(Ok(()))
}

/// The portfolio books as the settlement of an investment order moves them
/// (`fiscus_kernel::book::Book`; the composition hands it to the services).
pub struct PortfolioBooks;

impl fiscus_kernel::book::Book for PortfolioBooks {
    fn apply<'a>(
        &'a self,
        tx: &'a mut WriteTx,
        order: fiscus_kernel::book::SettledOrder<'a>,
    ) -> fiscus_kernel::book::Applied<'a> {
        Box::pin(apply_settlement(
            tx,
            order.tenant,
            order.action_id,
            order.metadata,
            order.currency,
            order.date,
            order.at,
        ))
    }
}
