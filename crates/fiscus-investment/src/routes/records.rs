//! How a sealed investment record is served: one shape for every kind (a harvest proposal, a scenario run,
//! a construction, a collateral snapshot, a rebalance proposal, a risk-compliance run, a generative market
//! run, a report), its output typed per kind.

use crate::tables::investment_records::Record;
use fiscus_domain::clock::rfc3339;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use fiscus_http::problem::ApiError;

/// A sealed investment record.
#[derive(Serialize, utoipa::ToSchema)]
pub struct RecordView<T> {
    /// What it is: `tax_harvest_proposal`, `scenario_run`, `construction_proposal`,
    /// `collateral_inventory_snapshot`, `rebalance_proposal`, `risk_compliance_run`,
    /// `generative_market_run` or `portfolio_report`.
    pub object: &'static str,
    #[schema(example = "rpt_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub id: String,
    pub portfolio_id: Option<i64>,
    /// The request as recorded.
    #[schema(value_type = Object)]
    pub request: Value,
    pub output: T,
    /// `sha256:` over the canonical request and output (RFC 8785), newline-separated; the row is sealed.
    pub content_hash: String,
    pub created_by: String,
    pub created_at: String,
}

/// A record as served, its output parsed back into its type.
pub fn view<T: DeserializeOwned>(object: &'static str, r: Record) -> Result<RecordView<T>, ApiError> {
    let output = serde_json::from_str(&r.output)
        .map_err(|e| ApiError::from(fiscus_kernel::governed::Failure::internal(format!("record {}: {e}", r.id))))?;
    Ok(RecordView {
        object,
        output,
        request: serde_json::from_str(&r.request).unwrap_or(Value::Null),
        portfolio_id: r.portfolio_id,
        id: r.id,
        content_hash: r.content_hash,
        created_by: r.created_by.label(),
        created_at: rfc3339(r.created_at),
    })
}
