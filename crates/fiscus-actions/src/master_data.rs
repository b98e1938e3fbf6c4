//! Counterparties and bank accounts from CSV files (`fiscus import counterparties|bank-accounts`), the way an
//! ERP's supplier master is exported. A file is one transaction: every line is checked, and one refused line
//! refuses the file, naming the line and field. Importing the same file again changes nothing: a counterparty
//! is found by its `reference` (required here for that reason), an account by its owner, currency and
//! number. Accounts arrive as pending versions, like any proposal: a person approves each at the console.
//!
//! Counterparties: `name,reference`. Bank accounts: `counterparty_reference` (empty for the workspace's own
//! account), `currency`, `holder_name`, then `iban` or `local_number` (with `local_scheme`), `bic`,
//! `clearing_system`, `clearing_member`, `street`, `building`, `postcode`, `town`, `country` (each optional
//! where the API's is).

use crate::rules::bank_accounts::{ProposedAddress, ProposedDetails};
use crate::steps::bank_accounts::{NewCounterparty, create_counterparty, propose};
use crate::tables::bank_accounts as store;
use fiscus_domain::bank_accounts::{AccountNumber, Owner};
use fiscus_domain::money::Currency;
use fiscus_domain::tenancy::Tenant;
use fiscus_kernel::governed::{Caller, Failure};
use fiscus_store::Store;
use std::collections::HashMap;

/// What an import did.
#[derive(Debug, PartialEq, Eq)]
pub struct Imported {
    pub created: usize,
    /// Lines that named what was already there.
    pub present: usize,
}

/// Why a file was not imported (nothing of it was).
#[derive(Debug)]
pub enum ImportError {
    /// A line (1 is the header) and what is wrong with it.
    Line {
        line: usize,
        field: String,
        message: String,
    },
    Failure(Failure),
}

impl std::fmt::Display for ImportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ImportError::Line { line, field, message } => write!(f, "line {line}, {field}: {message}"),
            ImportError::Failure(e) => write!(f, "{e:?}"),
        }
    }
}

impl From<Failure> for ImportError {
    fn from(e: Failure) -> ImportError {
        ImportError::Failure(e)
    }
}

impl From<fiscus_store::StoreError> for ImportError {
    fn from(e: fiscus_store::StoreError) -> ImportError {
        ImportError::Failure(e.into())
    }
}

/// One line's non-empty fields by header name, with its line number.
type Line = (usize, HashMap<String, String>);

/// The file's records by header name, each with its line number.
fn records(csv: &[u8], required: &[&str]) -> Result<Vec<Line>, ImportError> {
    let bad = |line: usize, message: String| ImportError::Line { line, field: "file".into(), message };
    let mut reader = csv::ReaderBuilder::new().trim(csv::Trim::All).from_reader(csv);
    let headers: Vec<String> =
        reader.headers().map_err(|e| bad(1, e.to_string()))?.iter().map(str::to_string).collect();
    for name in required {
        if !headers.iter().any(|h| h == name) {
            return Err(ImportError::Line {
                line: 1,
                field: (*name).into(),
                message: "the header has no such column".into(),
            });
        }
    }
    let mut out = Vec::new();
    for (i, row) in reader.records().enumerate() {
        let row = row.map_err(|e| bad(i + 2, e.to_string()))?;
        let fields =
            headers.iter().cloned().zip(row.iter().map(str::to_string)).filter(|(_, v)| !v.is_empty()).collect();
        out.push((i + 2, fields));
    }
    Ok(out)
}

fn line_error(line: usize, failure: Failure) -> ImportError {
    match failure {
        Failure::Invalid(errors) => {
            let (field, message) = errors.into_iter().next().unwrap_or(("line", "refused".into()));
            ImportError::Line { line, field: field.into(), message }
        }
        Failure::Missing(field, message) => ImportError::Line { line, field: field.into(), message },
        Failure::Refused { detail, .. } => ImportError::Line { line, field: "line".into(), message: detail },
        other => ImportError::Failure(other),
    }
}

pub fn import_counterparties<'a>(
    store: &'a Store,
    tenant: &'a Tenant,
    caller: &'a Caller,
    csv: &'a [u8],
) -> fiscus_store::Boxed<'a, Result<Imported, ImportError>> {
    Box::pin(async move {
        let rows = records(csv, &["name", "reference"])?;
        let mut tx = store.begin().await?;
        let key = tx.seal_key().clone();
        let mut done = Imported { created: 0, present: 0 };
        for (line, mut f) in rows {
            let Some(reference) = f.remove("reference") else {
                return Err(ImportError::Line {
                    line,
                    field: "reference".into(),
                    message: "required in a file".into(),
                });
            };
            if store::counterparty_by_reference(tx.conn(), &key, tenant, &reference).await?.is_some() {
                done.present += 1;
                continue;
            }
            let new = NewCounterparty { name: f.remove("name").unwrap_or_default(), reference: Some(reference) };
            create_counterparty(&mut tx, tenant, caller, new).await.map_err(|e| line_error(line, e))?;
            done.created += 1;
        }
        tx.commit().await?;
        Ok(done)
    })
}

pub fn import_bank_accounts<'a>(
    store: &'a Store,
    tenant: &'a Tenant,
    caller: &'a Caller,
    csv: &'a [u8],
) -> fiscus_store::Boxed<'a, Result<Imported, ImportError>> {
    Box::pin(async move {
        let rows = records(csv, &["currency", "holder_name"])?;
        let mut tx = store.begin().await?;
        let key = tx.seal_key().clone();
        let mut done = Imported { created: 0, present: 0 };
        for (line, mut f) in rows {
            let counterparty_id = match f.remove("counterparty_reference") {
                None => None,
                Some(reference) => match store::counterparty_by_reference(tx.conn(), &key, tenant, &reference).await? {
                    Some(c) => Some(c.id),
                    None => {
                        return Err(ImportError::Line {
                            line,
                            field: "counterparty_reference".into(),
                            message: format!("no counterparty {reference}: import the counterparties first"),
                        });
                    }
                },
            };
            let code = f.remove("currency").unwrap_or_default();
            let Some(currency) = Currency::parse(&code) else {
                return Err(ImportError::Line {
                    line,
                    field: "currency".into(),
                    message: format!("{code:?} is not an ISO 4217 code"),
                });
            };
            let address = f.remove("town").map(|town| ProposedAddress {
                street: f.remove("street"),
                building: f.remove("building"),
                postcode: f.remove("postcode"),
                town,
                country: f.remove("country").unwrap_or_default(),
            });
            let details = ProposedDetails {
                owner: if counterparty_id.is_some() { Owner::Counterparty } else { Owner::Own },
                counterparty_id,
                currency,
                holder_name: f.remove("holder_name").unwrap_or_default(),
                iban: f.remove("iban"),
                local_number: f.remove("local_number"),
                local_scheme: f.remove("local_scheme"),
                bic: f.remove("bic"),
                clearing_system: f.remove("clearing_system"),
                clearing_member: f.remove("clearing_member"),
                address,
            };
            let wanted =
                details.clone().into_version("", 0).map_err(|errors| line_error(line, Failure::Invalid(errors)))?;
            let existing = match &details.counterparty_id {
                Some(cp) => store::versions_of_counterparty(tx.conn(), &key, tenant, cp).await?,
                None => store::versions_of_own(tx.conn(), &key, tenant).await?,
            };
            let same = |n: &AccountNumber| *n == wanted.number;
            let rejected = |v: &store::Version| v.state == crate::rules::bank_accounts::VersionState::Rejected;
            if existing
                .iter()
                .any(|v| !rejected(v) && v.record.body.currency == wanted.currency && same(&v.record.body.number))
            {
                done.present += 1;
                continue;
            }
            propose(&mut tx, tenant, caller, None, details).await.map_err(|e| line_error(line, e))?;
            done.created += 1;
        }
        tx.commit().await?;
        Ok(done)
    })
}
