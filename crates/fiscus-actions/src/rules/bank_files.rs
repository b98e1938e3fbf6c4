//! Paying through banks with files: the sealed bodies of what the `iso20022` connector records (payment
//! instructions, the `pain.001` files that carry them, the bank's messages back and the statement entries
//! that matched nothing), and the rules that need no IO: which bank status ends a payment, how a statement
//! entry finds its payment, whether a statement's balances add up.

use serde::{Deserialize, Serialize};

use fiscus_domain::actions::ActionKind;
use fiscus_domain::money::Currency;

/// What executing a payment through the connector hands over, bound to the approved details its checks
/// cite: the file worker renders exactly these, after checking the versions still hash to them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstructionBody {
    pub action_id: String,
    pub kind: ActionKind,
    pub amount_minor: i64,
    pub currency: Currency,
    /// The envelope's reference: the remittance information the creditor sees.
    pub reference: String,
    /// The own account (`bac_…`) debited, and the approved version of its details used.
    pub debtor_account_id: String,
    pub debtor_version_id: String,
    pub debtor_hash: String,
    pub creditor_version_id: String,
    pub creditor_hash: String,
    /// `YYYY-MM-DD`: the day the bank is asked to execute it (the day of execution, UTC).
    pub requested_date: String,
}

/// Where a file's publication stands. A crash between any two steps leaves a state the worker finishes
/// from: `recorded` is written again from the stored bytes; `staged` is renamed, or, when the staged file is
/// gone, was renamed already.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FileState {
    /// Committed with its payments; not yet on disk.
    Recorded,
    /// Written and synced in the staging directory.
    Staged,
    /// Renamed into the outbound directory, whole.
    Published,
}

impl FileState {
    pub fn as_str(self) -> &'static str {
        match self {
            FileState::Recorded => "recorded",
            FileState::Staged => "staged",
            FileState::Published => "published",
        }
    }

    pub fn parse(s: &str) -> Option<FileState> {
        [FileState::Recorded, FileState::Staged, FileState::Published].into_iter().find(|f| f.as_str() == s)
    }
}

/// A `pain.001` file as recorded: what it holds and the SHA-256 of its bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileBody {
    /// The file name in the outbound directory (`<message id>.xml`).
    pub name: String,
    pub message: String,
    pub debtor_account_id: String,
    pub debtor_version_id: String,
    pub currency: Currency,
    pub requested_date: String,
    pub payments: u32,
    pub control_sum_minor: i64,
    /// `sha256:` + hex of the file's bytes.
    pub sha256: String,
    /// The actions paid, in the file's order (each its `EndToEndId`).
    pub action_ids: Vec<String>,
}

/// The kinds of message the bank sends back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub enum MessageKind {
    /// A status report on a file Fiscus sent.
    #[serde(rename = "pain.002")]
    StatusReport,
    /// An end-of-day statement.
    #[serde(rename = "camt.053")]
    Statement,
    /// A debit or credit notification.
    #[serde(rename = "camt.054")]
    Notification,
}

impl MessageKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MessageKind::StatusReport => "pain.002",
            MessageKind::Statement => "camt.053",
            MessageKind::Notification => "camt.054",
        }
    }
}

/// What one item of a bank message did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The bank accepted the payment (or its file): recorded, the action stays `executing`.
    Accepted,
    /// The bank refused it: the action is `failed`.
    Rejected,
    /// A booked entry matched the payment and agreed: the action is `completed`.
    Completed,
    /// A booked entry matched the payment but disagreed (amount, currency): `reconciliation_exception`.
    Exception,
    /// Nothing it names is a payment in flight (already finished, or not Fiscus's): changed nothing.
    Ignored,
    /// A booked entry no payment matched: listed for a person.
    Unmatched,
    /// A booked credit returning a payment (its return reason in `reason`): the action is `returned`.
    Returned,
}

/// One item of a bank message and what it did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageItem {
    /// The status code (`ACCP`, `RJCT`, …) or, for an entry, `BOOK`.
    pub code: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_to_end_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount_minor: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<Currency>,
    pub outcome: Outcome,
}

/// A bank message as recorded: its kind, the bank's id for it, and what each item did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageBody {
    pub kind: MessageKind,
    /// `pain.002.001.10`, `camt.053.001.08`, …
    pub message: String,
    pub message_id: String,
    pub sha256: String,
    pub items: Vec<MessageItem>,
}

/// A booked entry no payment matched, for a person to resolve.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntryBody {
    /// The account the statement is of (IBAN or other id).
    pub account: String,
    pub amount_minor: i64,
    pub currency: Currency,
    pub debit: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub booking_date: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_to_end_id: Option<String>,
    /// The remittance lines and the bank's reference, as the entry carries them.
    #[serde(default)]
    pub references: Vec<String>,
}

/// How a pain.002 status code ends a payment: `Rejected` for `RJCT`, `Accepted` for the codes that say the
/// bank took it (`ACTC`, `ACCP`, `ACSP`, `ACSC`, `ACWC`, `ACCC`, `PART`), none for the rest (`PDNG`, …).
pub fn status_outcome(code: &str) -> Option<Outcome> {
    match code {
        "RJCT" => Some(Outcome::Rejected),
        "ACTC" | "ACCP" | "ACSP" | "ACSC" | "ACWC" | "ACCC" | "PART" => Some(Outcome::Accepted),
        _ => None,
    }
}

/// A statement's balances: opening (`OPBD`, or the previous closing `PRCD`) plus the booked entries
/// (credits up, debits down) must come to the closing (`CLBD`). `None` when the report carries no such
/// pair (a notification, an intraday report); `Some(difference)` otherwise, 0 when it adds up.
pub fn balance_difference(opening: Option<i64>, closing: Option<i64>, booked: &[(i64, bool)]) -> Option<i128> {
    let (opening, closing) = (opening?, closing?);
    let moved: i128 =
        booked.iter().map(|&(amount, debit)| if debit { -i128::from(amount) } else { i128::from(amount) }).sum();
    Some(i128::from(opening) + moved - i128::from(closing))
}

/// Whether an end-to-end id a bank returned is one (banks write `NOTPROVIDED` when the originator gave none).
pub fn end_to_end_given(id: Option<&str>) -> Option<&str> {
    id.map(str::trim).filter(|i| !i.is_empty() && !i.eq_ignore_ascii_case("NOTPROVIDED"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_adds_up_or_says_by_how_much_it_does_not() {
        assert_eq!(balance_difference(Some(10_000), Some(7_500), &[(2_500, true)]), Some(0));
        assert_eq!(balance_difference(Some(10_000), Some(7_500), &[(2_500, true), (100, false)]), Some(100));
        assert_eq!(balance_difference(None, Some(7_500), &[(2_500, true)]), None, "a notification has no balances");
        assert_eq!(balance_difference(Some(i64::MAX), Some(i64::MAX), &[(i64::MAX, false), (i64::MAX, true)]), Some(0));
    }

    #[test]
    fn rejections_end_a_payment_acceptances_are_recorded_and_pending_says_nothing() {
        assert_eq!(status_outcome("RJCT"), Some(Outcome::Rejected));
        assert_eq!(status_outcome("ACSC"), Some(Outcome::Accepted));
        assert_eq!(status_outcome("PDNG"), None);
        assert_eq!(end_to_end_given(Some("NOTPROVIDED")), None);
        assert_eq!(end_to_end_given(Some(" act_1 ")), Some("act_1"));
    }
}
