//! Bank accounts as governed master data. Redirecting a supplier's payments by changing its bank details is
//! the commonest loss in accounts payable, so details are never edited: each change is a new **version**,
//! inactive until a person approves it at the console (another person than its proposer, when a person
//! proposed it), and the version it replaces stays on record beside it. A payment binds the hash of the
//! version it pays to (`content_hash`, RFC 8785 + SHA-256 over the version's body), so a later change cannot
//! redirect it.
//!
//! The same rule holds for the workspace's own (debtor) accounts: a changed debit account moves money from
//! somewhere else as surely as a changed creditor account moves it to someone else.

use serde::{Deserialize, Serialize};

use crate::actor::{Actor, ActorKind};
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

/// Where a version stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum VersionState {
    /// Proposed; nothing is paid to or from it.
    Pending,
    /// Approved by a person: what payments use.
    Active,
    /// Refused by a person.
    Rejected,
    /// Replaced by a newer approved version.
    Superseded,
}

impl VersionState {
    pub const ALL: [VersionState; 4] =
        [VersionState::Pending, VersionState::Active, VersionState::Rejected, VersionState::Superseded];

    pub fn as_str(self) -> &'static str {
        match self {
            VersionState::Pending => "pending",
            VersionState::Active => "active",
            VersionState::Rejected => "rejected",
            VersionState::Superseded => "superseded",
        }
    }

    pub fn parse(s: &str) -> Option<VersionState> {
        VersionState::ALL.into_iter().find(|v| v.as_str() == s)
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

/// Why a person may not decide a version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecisionRefusal {
    /// Only a person at the console decides bank details.
    NotAPerson,
    /// The person who proposed the details may not approve them (four eyes).
    Proposer,
    /// The version was decided already.
    NotPending(VersionState),
}

impl DecisionRefusal {
    pub fn message(self) -> String {
        match self {
            DecisionRefusal::NotAPerson => "only a person at the console decides bank details".into(),
            DecisionRefusal::Proposer => "the person who proposed these bank details may not decide them".into(),
            DecisionRefusal::NotPending(s) => format!("the version is {} and cannot be decided", s.as_str()),
        }
    }
}

/// Whether `decider` may decide a version `proposer` proposed, standing in `state`. A rejection by its own
/// proposer is a withdrawal, which four eyes do not forbid; an approval is never its proposer's.
pub fn may_decide(
    proposer: &Actor,
    decider: &Actor,
    state: VersionState,
    approve: bool,
) -> Result<(), DecisionRefusal> {
    if decider.kind != ActorKind::Operator {
        return Err(DecisionRefusal::NotAPerson);
    }
    if state != VersionState::Pending {
        return Err(DecisionRefusal::NotPending(state));
    }
    if approve && proposer == decider {
        return Err(DecisionRefusal::Proposer);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_another_person_approves_and_only_a_pending_version() {
        let alice = Actor::operator("opr_alice");
        let bob = Actor::operator("opr_bob");
        let app = Actor::application("app_1");
        assert_eq!(may_decide(&alice, &bob, VersionState::Pending, true), Ok(()));
        assert_eq!(may_decide(&app, &bob, VersionState::Pending, true), Ok(()));
        assert_eq!(may_decide(&alice, &alice, VersionState::Pending, true), Err(DecisionRefusal::Proposer));
        assert_eq!(may_decide(&alice, &alice, VersionState::Pending, false), Ok(()), "a withdrawal");
        for who in [app.clone(), Actor::cli(), Actor::worker("n1"), Actor::runtime("auto_native")] {
            assert_eq!(may_decide(&alice, &who, VersionState::Pending, true), Err(DecisionRefusal::NotAPerson));
        }
        for s in [VersionState::Active, VersionState::Rejected, VersionState::Superseded] {
            assert_eq!(may_decide(&app, &bob, s, true), Err(DecisionRefusal::NotPending(s)));
        }
    }

    #[test]
    fn a_version_s_body_is_its_canonical_form() {
        let v = AccountVersion {
            account_id: "bac_1".into(),
            version: 2,
            owner: Owner::Counterparty,
            counterparty_id: Some("cpt_1".into()),
            currency: Currency::parse("EUR").expect("eur"),
            holder_name: "Supplier GmbH".into(),
            number: AccountNumber::Iban(Iban::parse("DE89370400440532013000").expect("iban")),
            bic: Some(Bic::parse("COBADEFF").expect("bic")),
            clearing: None,
            address: None,
        };
        let json = serde_json::to_value(&v).expect("json");
        assert_eq!(json["number"], serde_json::json!({ "iban": "DE89370400440532013000" }));
        assert_eq!(serde_json::from_value::<AccountVersion>(json.clone()).expect("back"), v);
        let local = AccountNumber::Local { number: "000123".into(), scheme: None };
        assert_eq!(serde_json::to_value(&local).expect("json"), serde_json::json!({ "local": { "number": "000123" } }));
        for s in VersionState::ALL {
            assert_eq!(VersionState::parse(s.as_str()), Some(s));
        }
        assert_eq!(Owner::parse("own"), Some(Owner::Own));
    }
}
