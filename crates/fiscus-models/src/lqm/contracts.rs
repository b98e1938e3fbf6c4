//! Dataset contracts: which data of the data plane a model may learn from, sealed as hashes only.
//!
//! A contract is refused (409 `dataset_ineligible`, with its `reason`) when the dataset is synthetic, of a
//! kind no algorithm learns from, unsealed or no longer matching its content hash, under a licence that
//! does not allow the model's use, or without (enough) observations of the target. It copies no rows: it
//! records the dataset's identity and the SHA-256 of its source, of the feature schema, of its lineage and
//! of the target's observations, which training and evaluation read again and compare.

use crate::rules::lqm::licence;
use crate::rules::lqm::records::{Column, ContractBody, ContractTarget, DatasetRef, FeatureSchema};
use crate::tables::lqm::models::{self, Contract};
use fiscus_data_core::rules::{Kind, Provenance};
use fiscus_data_core::tables::datasets::{self, Dataset};
use fiscus_domain::audit_action::Change;
use fiscus_domain::clock::now_micros;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::StoreError;
use fiscus_store::sealed_records::Record;
use serde::Deserialize;
use serde_json::json;

use super::data::{self, MAX_OBSERVATIONS};
use super::{canonical, invalid};
use fiscus_kernel::Services;
use fiscus_kernel::governed::record::{AuditEntry, audit};
use fiscus_kernel::governed::{Caller, Failure};

/// Fewer observations than this teach nothing worth evaluating.
pub const MIN_OBSERVATIONS: usize = 30;
/// The fewest observations held out for evaluation.
pub const MIN_HOLDOUT: usize = 5;

/// `POST /lqm/datasets/{dataset}/contracts`.
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ContractRequest {
    /// The model the data is contracted for.
    #[schema(pattern = "^lqm_[0-9A-HJKMNP-TV-Z]{26}$", example = "lqm_01M8C3ZQ5V6J1P8N2T4W0XK7RD")]
    pub model_uid: String,
    pub target: ContractTarget,
    /// The share of the newest observations held out for evaluation, 0.05 to 0.5 (default 0.2); at least
    /// 5 observations are.
    #[serde(default)]
    #[schema(minimum = 0.05, maximum = 0.5, example = 0.2)]
    pub holdout_fraction: Option<f64>,
}

fn ineligible(reason: &'static str, detail: impl Into<String>) -> Failure {
    Failure::refused_with(ErrorCode::DatasetIneligible, detail, vec![("reason", json!(reason))])
}

fn check_target(target: &ContractTarget) -> Result<(), Failure> {
    let (field, v) = match target {
        ContractTarget::Instrument { symbol, .. } => ("symbol", symbol),
        ContractTarget::Series { key } => ("key", key),
    };
    let ok = !v.is_empty() && v.len() <= 64 && v.chars().all(|c| c.is_ascii_alphanumeric() || "._-^".contains(c));
    if ok { Ok(()) } else { Err(invalid("target", format!("{field}: 1 to 64 letters, digits, `.`, `_`, `-` or `^`"))) }
}

pub async fn create(
    services: &Services,
    caller: &Caller,
    tenant: &Tenant,
    dataset_number: i64,
    r: ContractRequest,
) -> Result<Contract, Failure> {
    let fraction = r.holdout_fraction.unwrap_or(0.2);
    if !(fraction.is_finite() && (0.05..=0.5).contains(&fraction)) {
        return Err(invalid("holdout_fraction", "from 0.05 to 0.5"));
    }
    check_target(&r.target)?;
    let key = services.store.seal_key();
    let mut conn = services.store.read().await?;
    let model = match models::get_model(&mut conn, key, tenant, &r.model_uid).await {
        Err(StoreError::NotFound) => return Err(Failure::missing("model_uid", "no such model in this workspace")),
        other => other?,
    };
    // A dataset whose own record fails its seal is ineligible as one whose rows do (below): 409 `unsealed`.
    let dataset = match datasets::get(&mut conn, key, &tenant.workspace_id, dataset_number).await {
        Err(StoreError::Tampered(what)) => {
            tracing::error!(record = %what, "a dataset offered for a contract failed verification");
            return Err(ineligible("unsealed", "the dataset's seal or content hash does not verify"));
        }
        other => other?,
    };
    if dataset.provenance == Provenance::Synthetic {
        return Err(ineligible("synthetic", "the dataset is labelled synthetic: models learn from observed data only"));
    }
    if !matches!(dataset.kind, Kind::Prices | Kind::Economics) {
        return Err(ineligible(
            "kind_unsupported",
            format!("a {} dataset has no series a model learns from (prices and economics do)", dataset.kind.as_str()),
        ));
    }
    match datasets::verify(&mut conn, key, &tenant.workspace_id, &dataset).await {
        Err(StoreError::Tampered(what)) => {
            tracing::error!(record = %what, "a dataset offered for a contract failed verification");
            return Err(ineligible("unsealed", "the dataset's seal or content hash does not verify"));
        }
        other => other?,
    }
    drop(conn);
    let terms = licence::compatible(&dataset.licence, model.body.commercial_use).map_err(|why| {
        let l = &dataset.licence;
        ineligible(
            why.as_str(),
            match why {
                licence::Incompatibility::Unrecognised => format!(
                    "the dataset's licence `{l}` is not an SPDX licence Fiscus can classify: import the data under its SPDX identifier"
                ),
                licence::Incompatibility::NoDerivatives => {
                    format!("the dataset's licence `{l}` forbids derived works, and a trained model is one")
                }
                licence::Incompatibility::NonCommercial => {
                    format!("the dataset's licence `{l}` is non-commercial and the model is registered for commercial use")
                }
            },
        )
    })?;
    if dataset.row_count == 0 {
        return Err(ineligible("empty", "the dataset holds no rows"));
    }
    let observations = data::read(services, &tenant.workspace_id, &dataset, &r.target).await?;
    let n = observations.values.len();
    if n == 0 {
        return Err(ineligible("empty", "the dataset holds no observations of the target"));
    }
    if n < MIN_OBSERVATIONS {
        return Err(ineligible(
            "insufficient_observations",
            format!("the dataset holds {n} observations of the target; a contract needs {MIN_OBSERVATIONS}"),
        ));
    }
    if n > MAX_OBSERVATIONS {
        return Err(ineligible(
            "too_many_observations",
            format!("the dataset holds more than {MAX_OBSERVATIONS} observations of the target"),
        ));
    }
    let holdout = ((n as f64 * fraction).round() as usize).max(MIN_HOLDOUT);
    let feature_schema = FeatureSchema {
        target: r.target,
        columns: vec![
            Column { name: "date".into(), type_: "date".into() },
            Column { name: "value".into(), type_: "number".into() },
        ],
    };
    let body = ContractBody {
        model_id: model.id.clone(),
        dataset: dataset_ref(&dataset),
        licence_terms: terms,
        observations: n as i64,
        holdout: holdout as i64,
        first_date: observations.dates[0].clone(),
        last_date: observations.dates[n - 1].clone(),
        source_hash: canonical(
            "source",
            &json!({ "file_sha256": dataset.file_sha256, "source": dataset.source, "licence": dataset.licence }),
        )?
        .1,
        feature_schema_hash: canonical("feature schema", &feature_schema)?.1,
        lineage_hash: lineage_hash(&dataset)?,
        data_hash: observations.hash()?,
        feature_schema,
    };
    let (body_json, content_hash) = canonical("contract", &body)?;
    let now = now_micros();
    let c = Record {
        id: fiscus_domain::ids::new_id("lqc"),
        body,
        body_json,
        content_hash,
        created_by: caller.actor.clone(),
        created_at: now,
    };
    let mut tx = services.store.begin().await?;
    models::insert_contract(&mut tx, tenant, &c).await?;
    let entry = AuditEntry::of_tenant(
        tenant,
        Change::LqmContractSealed,
        &c.id,
        json!({ "model": model.id, "dataset": dataset.number, "contract_hash": c.content_hash }),
        now,
    );
    audit(&mut tx, caller, &entry).await?;
    tx.commit().await?;
    Ok(c)
}

fn dataset_ref(d: &Dataset) -> DatasetRef {
    DatasetRef {
        id: d.number,
        kind: d.kind.as_str().to_string(),
        name: d.name.clone(),
        version: d.version,
        source: d.source.clone(),
        licence: d.licence.clone(),
        file_sha256: d.file_sha256.clone(),
        content_hash: d.content_hash.clone(),
        importer_version: d.importer_version.clone(),
        imported_by: d.imported_by.clone(),
    }
}

fn lineage_hash(d: &Dataset) -> Result<String, Failure> {
    let lineage = json!({
        "dataset": d.id, "number": d.number, "kind": d.kind.as_str(), "name": d.name, "version": d.version,
        "importer_version": d.importer_version, "mapping": d.mapping, "content_hash": d.content_hash,
        "imported_by": d.imported_by, "created_at": d.created_at,
        "period_start": d.period_start, "period_end": d.period_end,
    });
    Ok(canonical("lineage", &lineage)?.1)
}

pub async fn get(services: &Services, tenant: &Tenant, id: &str) -> Result<Contract, Failure> {
    let mut conn = services.store.read().await?;
    Ok(models::get_contract(&mut conn, services.store.seal_key(), tenant, id).await?)
}

/// A contract's observations read again, checked against its data hash: training and evaluation never
/// run on data the contract did not seal.
pub async fn observations(services: &Services, tenant: &Tenant, c: &Contract) -> Result<data::Observations, Failure> {
    let mut conn = services.store.read().await?;
    let dataset = datasets::get(&mut conn, services.store.seal_key(), &tenant.workspace_id, c.body.dataset.id).await?;
    drop(conn);
    let obs = data::read(services, &tenant.workspace_id, &dataset, &c.body.feature_schema.target).await?;
    if obs.hash()? != c.body.data_hash || dataset.content_hash != c.body.dataset.content_hash {
        return Err(
            StoreError::Tampered(format!("dataset {} no longer matches contract {}", dataset.number, c.id)).into()
        );
    }
    Ok(obs)
}
