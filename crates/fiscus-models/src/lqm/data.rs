//! The observations a contract covers: one dated value per observation of the target, read from the
//! contracted dataset alone (datasets are immutable, so one dataset id is one exact data version), and the
//! SHA-256 that pins them.

use crate::rules::lqm::records::{ContractTarget, TargetTransform};
use fiscus_data_core::rules::Kind;
use fiscus_data_core::tables::datasets::Dataset;
use fiscus_data_core::tables::market::{self, Window};
use fiscus_store::StoreError;
use serde_json::{Value, json};

use super::invalid;
use fiscus_kernel::Services;
use fiscus_kernel::governed::Failure;

/// The most observations a contract covers (the engine's fits are answered in the request).
pub const MAX_OBSERVATIONS: usize = 20_000;

/// A target's observations, oldest first.
#[derive(Clone, Debug, PartialEq)]
pub struct Observations {
    pub dates: Vec<String>,
    pub values: Vec<f64>,
}

impl Observations {
    /// `sha256:` of `[[date, value], …]` (values in their shortest round-trip form), RFC 8785.
    pub fn hash(&self) -> Result<String, Failure> {
        let pairs: Vec<Value> = self
            .dates
            .iter()
            .zip(&self.values)
            .map(|(d, v)| json!([d, fiscus_data_core::rules::values::shortest(*v)]))
            .collect();
        Ok(super::canonical("observations", &Value::Array(pairs))?.1)
    }

    /// The first `n` observations and the rest.
    pub fn split(&self, n: usize) -> (Observations, Observations) {
        let n = n.min(self.values.len());
        (
            Observations { dates: self.dates[..n].to_vec(), values: self.values[..n].to_vec() },
            Observations { dates: self.dates[n..].to_vec(), values: self.values[n..].to_vec() },
        )
    }
}

fn number(field: &str, date: &str, v: &str) -> Result<f64, Failure> {
    v.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| Failure::internal(format!("stored {field} `{v}` on {date} is not a number")))
}

/// Reads `target` from `dataset`; 422 when the dataset does not hold it.
pub async fn read(
    services: &Services,
    workspace_id: &str,
    dataset: &Dataset,
    target: &ContractTarget,
) -> Result<Observations, Failure> {
    let mut conn = services.store.read().await?;
    let limit = (MAX_OBSERVATIONS + 1) as u32;
    let mut out = Observations { dates: Vec::new(), values: Vec::new() };
    match (dataset.kind, target) {
        (Kind::Prices, ContractTarget::Instrument { symbol, transform }) => {
            let instrument = match market::get_instrument(&mut conn, workspace_id, symbol).await {
                Err(StoreError::NotFound) => {
                    return Err(Failure::missing("target", format!("no instrument `{symbol}` in this workspace")));
                }
                other => other?,
            };
            let bars =
                market::bars(&mut conn, workspace_id, &instrument.id, dataset.number, Window::default(), limit).await?;
            for b in bars {
                if let Some(v) = b.adj_close.as_deref().or(b.close.as_deref()) {
                    out.values.push(number("price", &b.date, v)?);
                    out.dates.push(b.date);
                }
            }
            if *transform == TargetTransform::Return {
                let returns: Vec<f64> = out.values.windows(2).map(|w| w[1] / w[0] - 1.0).collect();
                if returns.iter().any(|r| !r.is_finite()) {
                    return Err(invalid("target", "a zero price makes the returns undefined"));
                }
                // A return is dated by the later of its two prices.
                if !out.dates.is_empty() {
                    out.dates.remove(0);
                }
                out.values = returns;
            }
        }
        (Kind::Economics, ContractTarget::Series { key }) => {
            match fiscus_data_core::tables::economics::get(&mut conn, workspace_id, key, Some(dataset.number)).await {
                Err(StoreError::NotFound) => {
                    return Err(invalid("target", format!("dataset {} holds no series `{key}`", dataset.number)));
                }
                other => {
                    other?;
                }
            }
            let rows = fiscus_data_core::tables::economics::observations(
                &mut conn,
                workspace_id,
                key,
                dataset.number,
                Window::default(),
                limit,
            )
            .await?;
            for o in rows {
                out.values.push(number("value", &o.date, &o.value)?);
                out.dates.push(o.date);
            }
        }
        (Kind::Prices, _) => return Err(invalid("target", "a prices dataset takes an `instrument` target")),
        (Kind::Economics, _) => return Err(invalid("target", "an economics dataset takes a `series` target")),
        (other, _) => {
            return Err(Failure::internal(format!("a {} dataset reached the series reader", other.as_str())));
        }
    }
    Ok(out)
}
