//! The data plane's rules: what a dataset is, what each kind of import holds, and how observed values
//! are parsed and checked before anything is stored.
//!
//! A dataset is one sealed import of one file: its provenance (source, licence, the file's SHA-256, the
//! importer's version), what it holds (kind, rows, observed period) and whether it is observed or
//! synthetic. Rows are never edited: a revised file is a new version of the dataset, and the rows of every
//! version stay readable, so any number computed from them can be traced to the exact version it read.

pub mod features;
pub mod frequency;
pub mod quality;
pub mod records;
pub mod values;

use serde::{Deserialize, Serialize};

/// The version of the importer's rules, recorded on every dataset (a change in parsing or validation that
/// could change what a file imports as moves it). Since `/2` a dataset's rows are sealed by their digests
/// (`tables::Sealing`), so a streamed import never keeps its rows' text to hash them.
pub const IMPORTER_VERSION: &str = "fiscus-import/2";

/// What one import holds. Market and economic kinds are *series* (a revised file is a new version and
/// reads use the newest version unless asked for another); finance-core, bank and investment-book kinds
/// are *ledgers* (rows accumulate across imports, an identical row already imported is skipped, a changed
/// one is refused).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Instruments,
    Prices,
    CorporateActions,
    Fundamentals,
    Economics,
    Ledgers,
    Entities,
    Journals,
    Transactions,
    Balances,
    Portfolios,
    Lots,
    Positions,
    Cash,
}

impl Kind {
    pub const ALL: [Kind; 14] = [
        Kind::Instruments,
        Kind::Prices,
        Kind::CorporateActions,
        Kind::Fundamentals,
        Kind::Economics,
        Kind::Ledgers,
        Kind::Entities,
        Kind::Journals,
        Kind::Transactions,
        Kind::Balances,
        Kind::Portfolios,
        Kind::Lots,
        Kind::Positions,
        Kind::Cash,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Instruments => "instruments",
            Kind::Prices => "prices",
            Kind::CorporateActions => "corporate_actions",
            Kind::Fundamentals => "fundamentals",
            Kind::Economics => "economics",
            Kind::Ledgers => "ledgers",
            Kind::Entities => "entities",
            Kind::Journals => "journals",
            Kind::Transactions => "transactions",
            Kind::Balances => "balances",
            Kind::Portfolios => "portfolios",
            Kind::Lots => "lots",
            Kind::Positions => "positions",
            Kind::Cash => "cash",
        }
    }

    /// Accepts the stored name and, for the command line, the hyphenated one (`corporate-actions`).
    pub fn parse(s: &str) -> Option<Kind> {
        let s = s.replace('-', "_");
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The scope (and workspace entitlement) that serves this kind's rows.
    pub fn scope(self) -> &'static str {
        match self {
            Kind::Instruments => "data:reference:read",
            Kind::Prices | Kind::CorporateActions => "data:market:read",
            Kind::Fundamentals => "data:fundamentals:read",
            Kind::Economics => "data:economics:read",
            Kind::Ledgers | Kind::Entities | Kind::Journals => "finance-core:read",
            Kind::Transactions | Kind::Balances => "financial:read",
            Kind::Portfolios | Kind::Lots | Kind::Positions | Kind::Cash => "investment:read",
        }
    }

    /// Finance-core and bank kinds may also be imported over HTTP (`finance-core:intake:write`).
    pub fn intake(self) -> bool {
        matches!(self, Kind::Ledgers | Kind::Entities | Kind::Journals | Kind::Transactions | Kind::Balances)
    }

    /// Series kinds are versioned wholesale; ledger kinds (finance core, bank, and the investment book:
    /// portfolios, their lots and cash) accumulate (see the type's documentation).
    pub fn is_series(self) -> bool {
        matches!(self, Kind::Instruments | Kind::Prices | Kind::CorporateActions | Kind::Fundamentals | Kind::Economics)
    }
}

/// Observed data was measured in the world; synthetic data was generated. Synthetic data can never feed an
/// operation that needs observations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Provenance {
    Observed,
    Synthetic,
}

impl Provenance {
    pub fn as_str(self) -> &'static str {
        match self {
            Provenance::Observed => "observed",
            Provenance::Synthetic => "synthetic",
        }
    }

    pub fn parse(s: &str) -> Option<Provenance> {
        match s {
            "observed" => Some(Provenance::Observed),
            "synthetic" => Some(Provenance::Synthetic),
            _ => None,
        }
    }
}

/// A refusal while importing, naming where: the file's line (1 is the header) and the column's header.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct ImportError {
    pub line: u64,
    pub column: Option<String>,
    pub message: String,
}

impl ImportError {
    pub fn at(line: u64, column: impl Into<String>, message: impl Into<String>) -> ImportError {
        ImportError { line, column: Some(column.into()), message: message.into() }
    }

    pub fn line(line: u64, message: impl Into<String>) -> ImportError {
        ImportError { line, column: None, message: message.into() }
    }
}

impl std::fmt::Display for ImportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.column {
            Some(c) => write!(f, "line {}, column `{c}`: {}", self.line, self.message),
            None => write!(f, "line {}: {}", self.line, self.message),
        }
    }
}

/// A dataset name, a series key, a code or a symbol: 1 to 64 of `A-Z a-z 0-9 . _ -`, starting
/// alphanumeric (tickers such as `BRK.B`, FRED keys such as `CPILFESL`), so it is safe in a URL path as is.
pub fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.as_bytes()[0].is_ascii_alphanumeric()
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}
