//! Bank accounts as governed master data. Redirecting a supplier's payments by changing its bank details is
//! the commonest loss in accounts payable, so details are never edited: each change is a new **version**,
//! inactive until a person approves it at the console (another person than its proposer, when a person
//! proposed it), and the version it replaces stays on record beside it. A payment binds the hash of the
//! version it pays to (`content_hash`, RFC 8785 + SHA-256 over the version's body), so a later change cannot
//! redirect it.
//!
//! The same rule holds for the workspace's own (debtor) accounts: a changed debit account moves money from
//! somewhere else as surely as a changed creditor account moves it to someone else.
//!
//! Here are the shapes a payment binds and a bank file carries (ISO 20022 reads them); the rules (a
//! version's states, proposed details checked, who decides) are Financial Actions'
//! (`fiscus_actions::rules::bank_accounts`).

use serde::{Deserialize, Serialize};

use crate::banking::{Bic, Iban};
use crate::money::Currency;

/// Whose account it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Owner {
    /// The workspace's own account, which its payments are debited from.
    Own,
    /// A counterparty's account, which payments are credited to.
    Counterparty,
}

impl Owner {
    pub fn as_str(self) -> &'static str {
        match self {
            Owner::Own => "own",
            Owner::Counterparty => "counterparty",
        }
    }

    pub fn parse(s: &str) -> Option<Owner> {
        [Owner::Own, Owner::Counterparty].into_iter().find(|o| o.as_str() == s)
    }
}

/// How the account is identified: by IBAN, or by a local number and its scheme where IBANs are not used.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum AccountNumber {
    Iban(Iban),
    Local {
        number: String,
        /// The scheme's ISO code (`BBAN`, …), when it has one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scheme: Option<String>,
    },
}

/// The holder's postal address, structured as ISO 20022 carries it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PostalAddress {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub street: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub building: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postcode: Option<String>,
    pub town: String,
    /// ISO 3166 alpha-2.
    pub country: String,
}

/// One version of an account's details: the sealed body whose hash a payment binds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountVersion {
    /// The account (`bac_…`) every version of it shares.
    pub account_id: String,
    /// 1 for the first, one more for each change.
    pub version: i64,
    pub owner: Owner,
    /// The counterparty (`cpt_…`) of a counterparty's account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counterparty_id: Option<String>,
    pub currency: Currency,
    pub holder_name: String,
    pub number: AccountNumber,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bic: Option<Bic>,
    /// (clearing system code, member id), e.g. (`USABA`, the routing number).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clearing: Option<(String, String)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<PostalAddress>,
}

/// A counterparty: whom payments go to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CounterpartyBody {
    pub name: String,
    /// The caller's own reference for it (a supplier number), unique in the tenant when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
}
