//! The rules of bank details as governed master data (the shapes a payment binds are the domain's,
//! `fiscus_domain::bank_accounts`): a version's states, details as a caller proposes them checked field by
//! field into a version, and who may decide one (a person, never its proposer for an approval).

use fiscus_domain::actor::{Actor, ActorKind};
use fiscus_domain::bank_accounts::{AccountNumber, AccountVersion, Owner, PostalAddress};
use fiscus_domain::banking::{Bic, Iban};
use fiscus_domain::money::Currency;
use serde::{Deserialize, Serialize};

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

/// Bank details as a caller proposes them (a new account or a change of one): checked into an
/// [`AccountVersion`] by [`ProposedDetails::into_version`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProposedDetails {
    pub owner: Owner,
    /// The counterparty (`cpt_…`) whose account it is; required for `counterparty`, refused for `own`.
    #[serde(default)]
    #[schema(pattern = "^cpt_[0-9A-Za-z]{26}$", example = "cpt_01KBTA0C4GZ2Q5R8V1XWJ3N6M9")]
    pub counterparty_id: Option<String>,
    /// ISO 4217: the currency the account is paid in.
    #[schema(value_type = fiscus_domain::fields::CurrencyCode, inline, example = "EUR")]
    pub currency: Currency,
    #[schema(value_type = fiscus_domain::fields::Text<1, 140>, inline, example = "Lieferant GmbH")]
    pub holder_name: String,
    /// The IBAN (spaces allowed); or give `local_number`.
    #[serde(default)]
    #[schema(pattern = "^[A-Za-z]{2}[0-9]{2}[A-Za-z0-9 ]{11,38}$", example = "DE89 3704 0044 0532 0130 00")]
    pub iban: Option<String>,
    /// A local account number where IBANs are not used (with `clearing_system` and `clearing_member`, or `bic`).
    #[serde(default)]
    #[schema(value_type = Option<fiscus_domain::fields::Text<1, 34>>, inline)]
    pub local_number: Option<String>,
    /// The local number's scheme code (`BBAN`, …).
    #[serde(default)]
    #[schema(min_length = 1, max_length = 4, pattern = "^[A-Z]{1,4}$")]
    pub local_scheme: Option<String>,
    /// The bank's BIC (ISO 9362).
    #[serde(default)]
    #[schema(pattern = "^[A-Za-z0-9]{4}[A-Za-z]{2}[A-Za-z0-9]{2}([A-Za-z0-9]{3})?$", example = "COBADEFFXXX")]
    pub bic: Option<String>,
    /// The clearing system's ISO code (`USABA`, `GBDSC`, …) and the bank's member id in it.
    #[serde(default)]
    #[schema(min_length = 1, max_length = 5, pattern = "^[A-Z]{1,5}$")]
    pub clearing_system: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<fiscus_domain::fields::Text<1, 35>>, inline)]
    pub clearing_member: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<ProposedAddress>)]
    pub address: Option<ProposedAddress>,
}

/// The holder's postal address (ISO 20022 `PostalAddress24`'s structured elements and their limits).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProposedAddress {
    #[serde(default)]
    #[schema(value_type = Option<fiscus_domain::fields::Text<1, 70>>, inline, example = "Königstraße")]
    pub street: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<fiscus_domain::fields::Text<1, 16>>, inline, example = "12a")]
    pub building: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<fiscus_domain::fields::Text<1, 16>>, inline, example = "70173")]
    pub postcode: Option<String>,
    #[schema(value_type = fiscus_domain::fields::Text<1, 35>, inline, example = "Stuttgart")]
    pub town: String,
    #[schema(pattern = "^[A-Za-z]{2}$", example = "DE")]
    pub country: String,
}

impl ProposedDetails {
    /// The version these details make for `account_id`, numbered `version`; every refused field at once.
    pub fn into_version(self, account_id: &str, version: i64) -> Result<AccountVersion, Vec<(&'static str, String)>> {
        use fiscus_domain::banking::{country, text};
        let mut errors = Vec::new();
        let mut keep = |r: Result<String, fiscus_domain::banking::Refused>| match r {
            Ok(v) => Some(v),
            Err(e) => {
                errors.push((e.field, e.message));
                None
            }
        };
        let holder_name = keep(text("holder_name", &self.holder_name, 140));
        let number = match (&self.iban, &self.local_number) {
            (Some(iban), None) => match Iban::parse(iban) {
                Ok(iban) => Some(AccountNumber::Iban(iban)),
                Err(e) => {
                    keep(Err(e));
                    None
                }
            },
            (None, Some(number)) => {
                let scheme = self.local_scheme.as_deref().and_then(|s| keep(text("local_scheme", s, 4)));
                keep(text("local_number", number, 34)).map(|number| AccountNumber::Local { number, scheme })
            }
            _ => {
                keep(Err(fiscus_domain::banking::Refused {
                    field: "iban",
                    message: "give either an IBAN or a local account number".into(),
                }));
                None
            }
        };
        let bic = match self.bic.as_deref() {
            None => None,
            Some(raw) => match Bic::parse(raw) {
                Ok(b) => Some(b),
                Err(e) => {
                    keep(Err(e));
                    None
                }
            },
        };
        let clearing = match (&self.clearing_system, &self.clearing_member) {
            (Some(system), Some(member)) => {
                match (keep(text("clearing_system", system, 5)), keep(text("clearing_member", member, 35))) {
                    (Some(s), Some(m)) => Some((s, m)),
                    _ => None,
                }
            }
            (None, None) => None,
            _ => {
                keep(Err(fiscus_domain::banking::Refused {
                    field: "clearing_member",
                    message: "a clearing system and a member id go together".into(),
                }));
                None
            }
        };
        if self.local_number.is_some() && bic.is_none() && clearing.is_none() && self.bic.is_none() {
            keep(Err(fiscus_domain::banking::Refused {
                field: "clearing_system",
                message: "a local account number needs its bank: a BIC or a clearing system and member id".into(),
            }));
        }
        let address = self.address.as_ref().and_then(|a| {
            let street = a.street.as_deref().map(|s| keep(text("address.street", s, 70)));
            let building = a.building.as_deref().map(|s| keep(text("address.building", s, 16)));
            let postcode = a.postcode.as_deref().map(|s| keep(text("address.postcode", s, 16)));
            let town = keep(text("address.town", &a.town, 35));
            let ctry = keep(country("address.country", &a.country));
            Some(PostalAddress {
                street: street.map(|s| s.unwrap_or_default()),
                building: building.map(|s| s.unwrap_or_default()),
                postcode: postcode.map(|s| s.unwrap_or_default()),
                town: town?,
                country: ctry?,
            })
        });
        match (self.owner, &self.counterparty_id) {
            (Owner::Counterparty, None) => errors.push(("counterparty_id", "a counterparty's account names it".into())),
            (Owner::Own, Some(_)) => errors.push(("counterparty_id", "the workspace's own account has none".into())),
            _ => {}
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(AccountVersion {
            account_id: account_id.to_string(),
            version,
            owner: self.owner,
            counterparty_id: self.counterparty_id,
            currency: self.currency,
            holder_name: holder_name.unwrap_or_default(),
            number: number.ok_or_else(|| vec![("iban", "no account number".to_string())])?,
            bic,
            clearing,
            address,
        })
    }
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

    fn proposal() -> ProposedDetails {
        ProposedDetails {
            owner: Owner::Own,
            counterparty_id: None,
            currency: Currency::parse("USD").expect("usd"),
            holder_name: "Acme Inc".into(),
            iban: None,
            local_number: Some("000123456789".into()),
            local_scheme: None,
            bic: None,
            clearing_system: Some("USABA".into()),
            clearing_member: Some("021000021".into()),
            address: Some(ProposedAddress {
                street: None,
                building: None,
                postcode: None,
                town: "New York".into(),
                country: "us".into(),
            }),
        }
    }

    #[test]
    fn proposed_details_are_checked_field_by_field() {
        let v = proposal().into_version("bac_2", 3).expect("a local account with its clearing member");
        assert_eq!(v.clearing, Some(("USABA".into(), "021000021".into())));
        assert_eq!(v.address.expect("address").country, "US");
        let fields = |p: ProposedDetails| -> Vec<&'static str> {
            p.into_version("bac_2", 1).expect_err("refused").into_iter().map(|(f, _)| f).collect()
        };
        let mut both = proposal();
        both.iban = Some("DE89370400440532013000".into());
        assert_eq!(fields(both), ["iban"]);
        let mut no_bank = proposal();
        no_bank.clearing_system = None;
        no_bank.clearing_member = None;
        assert_eq!(fields(no_bank), ["clearing_system"]);
        let mut half = proposal();
        half.clearing_member = None;
        assert!(fields(half).contains(&"clearing_member"));
        let mut bad = proposal();
        bad.local_number = None;
        bad.iban = Some("DE00370400440532013000".into());
        bad.bic = Some("XX".into());
        bad.holder_name = " ".into();
        bad.counterparty_id = Some("cpt_1".into());
        assert_eq!(fields(bad), ["holder_name", "iban", "bic", "counterparty_id"]);
        let mut no_cp = proposal();
        no_cp.owner = Owner::Counterparty;
        assert_eq!(fields(no_cp), ["counterparty_id"]);
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
        let proposed = ProposedDetails {
            owner: Owner::Counterparty,
            counterparty_id: Some("cpt_1".into()),
            currency: Currency::parse("EUR").expect("eur"),
            holder_name: " Supplier GmbH ".into(),
            iban: Some("DE89 3704 0044 0532 0130 00".into()),
            local_number: None,
            local_scheme: None,
            bic: Some("cobadeff".into()),
            clearing_system: None,
            clearing_member: None,
            address: None,
        };
        let mut same = v.clone();
        same.version = 1;
        assert_eq!(proposed.clone().into_version("bac_1", 1), Ok(same));
        for s in VersionState::ALL {
            assert_eq!(VersionState::parse(s.as_str()), Some(s));
        }
        assert_eq!(Owner::parse("own"), Some(Owner::Own));
    }
}
