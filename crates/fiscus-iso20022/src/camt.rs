//! `camt.053` bank-to-customer statements (end of day, with opening and closing balances) and `camt.054`
//! debit/credit notifications (intraday, entries only), version `.08`: each report names the account, its
//! balances and its entries; an entry's transaction details carry the `EndToEndId` of the payment it books.

use fiscus_domain::money::Currency;
use serde::Deserialize;

use crate::read::{AmountXml, DateChoice, ReadError, message_name, parse};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `camt.053`: a statement.
    Statement,
    /// `camt.054`: a notification.
    Notification,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BankToCustomer {
    pub kind: Kind,
    /// `camt.053.001.08` or `camt.054.001.08`.
    pub message: String,
    pub message_id: String,
    pub created_at: String,
    pub reports: Vec<Report>,
}

/// One account's statement or notification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub id: String,
    /// The account's IBAN, or its other identification.
    pub account: String,
    pub account_currency: Option<String>,
    pub balances: Vec<Balance>,
    pub entries: Vec<Entry>,
}

/// A balance: its type code (`OPBD` opening booked, `CLBD` closing booked, …), signed minor units (a debit
/// balance is negative), its currency and date.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Balance {
    pub code: String,
    pub amount_minor: i64,
    pub currency: Currency,
    pub date: Option<String>,
}

/// An entry on the account.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub reference: Option<String>,
    /// Positive minor units; [`Entry::debit`] says which way.
    pub amount_minor: i64,
    pub currency: Currency,
    /// Money left the account (a payment Fiscus sent books as a debit).
    pub debit: bool,
    /// `BOOK`, `PDNG`, `INFO`, `FUTR`.
    pub status: String,
    pub booking_date: Option<String>,
    pub value_date: Option<String>,
    pub account_servicer_reference: Option<String>,
    /// The entry reverses an earlier one (a return).
    pub reversal: bool,
    pub transactions: Vec<Transaction>,
}

impl Entry {
    /// The entry is on the account (not pending or for information).
    pub fn booked(&self) -> bool {
        self.status == "BOOK"
    }
}

/// One transaction of an entry (a batch entry has many).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transaction {
    /// The payment's end-to-end id; `None` when the bank gives none (or `NOTPROVIDED`).
    pub end_to_end_id: Option<String>,
    pub amount_minor: Option<i64>,
    pub remittance: Vec<String>,
    /// A returned payment's reason code (`RtrInf/Rsn`): set when the transaction is a return.
    pub return_reason: Option<String>,
}

/// Reads a statement or a notification.
pub fn read(xml: &str) -> Result<BankToCustomer, ReadError> {
    let message = message_name(xml)?;
    let (kind, reports, header) = match message.as_str() {
        "camt.053.001.08" => {
            let doc: StatementDocument = parse(xml)?;
            (Kind::Statement, doc.message.stmt, doc.message.grp_hdr)
        }
        "camt.054.001.08" => {
            let doc: NotificationDocument = parse(xml)?;
            (Kind::Notification, doc.message.ntfctn, doc.message.grp_hdr)
        }
        _ => return Err(ReadError::Unsupported(message)),
    };
    let reports = reports.into_iter().map(Report::try_from).collect::<Result<_, _>>()?;
    Ok(BankToCustomer { kind, message, message_id: header.msg_id, created_at: header.cre_dt_tm, reports })
}

impl TryFrom<ReportXml> for Report {
    type Error = ReadError;

    fn try_from(r: ReportXml) -> Result<Report, ReadError> {
        let account = r
            .acct
            .id
            .iban
            .or(r.acct.id.othr.map(|o| o.id))
            .ok_or_else(|| ReadError::Invalid(format!("report {} names no account", r.id)))?;
        let balances = r
            .bal
            .iter()
            .map(|b| {
                let (amount, currency) = b.amt.minor()?;
                let code = b.tp.cd_or_prtry.cd.clone().or_else(|| b.tp.cd_or_prtry.prtry.clone()).unwrap_or_default();
                Ok(Balance { code, amount_minor: signed(amount, &b.cdt_dbt_ind)?, currency, date: b.dt.date() })
            })
            .collect::<Result<_, ReadError>>()?;
        let entries = r.ntry.into_iter().map(Entry::try_from).collect::<Result<_, _>>()?;
        Ok(Report { id: r.id, account, account_currency: r.acct.ccy, balances, entries })
    }
}

impl TryFrom<EntryXml> for Entry {
    type Error = ReadError;

    fn try_from(e: EntryXml) -> Result<Entry, ReadError> {
        let (amount_minor, currency) = e.amt.minor()?;
        let debit = signed(1, &e.cdt_dbt_ind)? < 0;
        let status = e.sts.cd.or(e.sts.prtry).unwrap_or_default();
        let mut transactions = Vec::new();
        for d in e.ntry_dtls {
            for t in d.tx_dtls {
                let amount_minor = match &t.amt {
                    Some(a) => Some(a.minor()?.0),
                    None => None,
                };
                let end_to_end_id = t
                    .refs
                    .and_then(|r| r.end_to_end_id)
                    .map(|id| id.trim().to_string())
                    .filter(|id| !id.is_empty() && id != "NOTPROVIDED");
                let remittance = t.rmt_inf.map(|r| r.ustrd).unwrap_or_default();
                // A return without a reason still says it is one (`NARR`, as ISO 20022 names an unstated one).
                let return_reason = t.rtr_inf.map(|r| {
                    r.rsn
                        .and_then(|c| c.cd.or(c.prtry))
                        .map(|c| c.trim().chars().take(35).collect::<String>())
                        .filter(|c| !c.is_empty())
                        .unwrap_or_else(|| "NARR".into())
                });
                transactions.push(Transaction { end_to_end_id, amount_minor, remittance, return_reason });
            }
        }
        Ok(Entry {
            reference: e.ntry_ref,
            amount_minor,
            currency,
            debit,
            status,
            booking_date: e.bookg_dt.and_then(|d| d.date()),
            value_date: e.val_dt.and_then(|d| d.date()),
            account_servicer_reference: e.acct_svcr_ref,
            reversal: e.rvsl_ind.is_some_and(|r| r.trim() == "true"),
            transactions,
        })
    }
}

fn signed(amount: i64, indicator: &str) -> Result<i64, ReadError> {
    match indicator.trim() {
        "CRDT" => Ok(amount),
        "DBIT" => Ok(-amount),
        other => Err(ReadError::Invalid(format!("{other:?} is neither CRDT nor DBIT"))),
    }
}

#[derive(Deserialize)]
struct StatementDocument {
    #[serde(rename = "BkToCstmrStmt")]
    message: StatementMessage,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct StatementMessage {
    grp_hdr: GrpHdr,
    #[serde(default)]
    stmt: Vec<ReportXml>,
}

#[derive(Deserialize)]
struct NotificationDocument {
    #[serde(rename = "BkToCstmrDbtCdtNtfctn")]
    message: NotificationMessage,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct NotificationMessage {
    grp_hdr: GrpHdr,
    #[serde(default)]
    ntfctn: Vec<ReportXml>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct GrpHdr {
    msg_id: String,
    cre_dt_tm: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct ReportXml {
    id: String,
    acct: AcctXml,
    #[serde(default)]
    bal: Vec<BalXml>,
    #[serde(default)]
    ntry: Vec<EntryXml>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct AcctXml {
    id: AcctIdXml,
    ccy: Option<String>,
}

#[derive(Deserialize)]
struct AcctIdXml {
    #[serde(rename = "IBAN")]
    iban: Option<String>,
    #[serde(rename = "Othr")]
    othr: Option<OthrXml>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct OthrXml {
    id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct BalXml {
    tp: BalTpXml,
    amt: AmountXml,
    cdt_dbt_ind: String,
    #[serde(default)]
    dt: DateChoice,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct BalTpXml {
    cd_or_prtry: CodeXml,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "PascalCase")]
struct CodeXml {
    cd: Option<String>,
    prtry: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct EntryXml {
    ntry_ref: Option<String>,
    amt: AmountXml,
    cdt_dbt_ind: String,
    rvsl_ind: Option<String>,
    #[serde(default)]
    sts: CodeXml,
    bookg_dt: Option<DateChoice>,
    val_dt: Option<DateChoice>,
    acct_svcr_ref: Option<String>,
    #[serde(default)]
    ntry_dtls: Vec<NtryDtlsXml>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct NtryDtlsXml {
    #[serde(default)]
    tx_dtls: Vec<TxDtlsXml>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct TxDtlsXml {
    refs: Option<RefsXml>,
    amt: Option<AmountXml>,
    rmt_inf: Option<RmtInfXml>,
    rtr_inf: Option<RtrInfXml>,
}

/// A return's information (`RtrInf`): the reason, an ISO code (`AC04` closed account, …) or the bank's own.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct RtrInfXml {
    rsn: Option<CodeXml>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct RefsXml {
    end_to_end_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct RmtInfXml {
    #[serde(default)]
    ustrd: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(amount: &str, e2e: &str, indicator: &str, status: &str) -> String {
        format!(
            r#"<Ntry><NtryRef>r-{e2e}</NtryRef><Amt Ccy="EUR">{amount}</Amt><CdtDbtInd>{indicator}</CdtDbtInd><Sts><Cd>{status}</Cd></Sts>
   <BookgDt><Dt>2026-12-01</Dt></BookgDt><ValDt><DtTm>2026-12-01T10:00:00Z</DtTm></ValDt><AcctSvcrRef>BANK-{e2e}</AcctSvcrRef>
   <BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>ICDT</Cd><SubFmlyCd>ESCT</SubFmlyCd></Fmly></Domn></BkTxCd>
   <NtryDtls><TxDtls><Refs><EndToEndId>{e2e}</EndToEndId></Refs><Amt Ccy="EUR">{amount}</Amt><CdtDbtInd>{indicator}</CdtDbtInd>
    <RmtInf><Ustrd>INV-1</Ustrd><Ustrd>second line</Ustrd></RmtInf></TxDtls></NtryDtls></Ntry>"#
        )
    }

    const ACCOUNT: &str = "<Acct><Id><IBAN>DE89370400440532013000</IBAN></Id><Ccy>EUR</Ccy></Acct>";

    fn balance(code: &str, amount: &str, indicator: &str) -> String {
        format!(
            r#"<Bal><Tp><CdOrPrtry><Cd>{code}</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">{amount}</Amt><CdtDbtInd>{indicator}</CdtDbtInd><Dt><Dt>2026-12-01</Dt></Dt></Bal>"#
        )
    }

    #[test]
    fn a_statement_gives_its_balances_and_entries_in_minor_units() {
        let xml = format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt>
 <GrpHdr><MsgId>stmt-1</MsgId><CreDtTm>2026-12-01T18:00:00Z</CreDtTm></GrpHdr>
 <Stmt><Id>stmt-1-1</Id>{ACCOUNT}{}{}{}{}</Stmt></BkToCstmrStmt></Document>"#,
            balance("OPBD", "1000.00", "CRDT"),
            balance("CLBD", "25.50", "DBIT"),
            entry("1025.50", "act_1", "DBIT", "BOOK"),
            entry("1.00", "NOTPROVIDED", "CRDT", "PDNG"),
        );
        let s = read(&xml).expect("read");
        assert_eq!((s.kind, s.message.as_str(), s.message_id.as_str()), (Kind::Statement, "camt.053.001.08", "stmt-1"));
        let r = &s.reports[0];
        assert_eq!((r.id.as_str(), r.account.as_str()), ("stmt-1-1", "DE89370400440532013000"));
        assert_eq!(
            r.balances.iter().map(|b| (b.code.as_str(), b.amount_minor)).collect::<Vec<_>>(),
            [("OPBD", 100_000), ("CLBD", -2550)]
        );
        let e = &r.entries[0];
        assert_eq!((e.amount_minor, e.debit, e.booked(), e.reversal), (102_550, true, true, false));
        assert_eq!((e.booking_date.as_deref(), e.value_date.as_deref()), (Some("2026-12-01"), Some("2026-12-01")));
        assert_eq!(e.account_servicer_reference.as_deref(), Some("BANK-act_1"));
        assert_eq!(
            e.transactions,
            vec![Transaction {
                end_to_end_id: Some("act_1".into()),
                amount_minor: Some(102_550),
                remittance: vec!["INV-1".into(), "second line".into()],
                return_reason: None,
            }]
        );
        let pending = &r.entries[1];
        assert_eq!(
            (pending.debit, pending.booked(), pending.transactions[0].end_to_end_id.clone()),
            (false, false, None)
        );
    }

    #[test]
    fn a_notification_gives_its_entries() {
        let xml = format!(
            r#"<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08"><BkToCstmrDbtCdtNtfctn>
 <GrpHdr><MsgId>ntf-1</MsgId><CreDtTm>2026-12-01T12:00:00Z</CreDtTm></GrpHdr>
 <Ntfctn><Id>ntf-1-1</Id>{ACCOUNT}{}</Ntfctn></BkToCstmrDbtCdtNtfctn></Document>"#,
            entry("5", "act_9", "DBIT", "BOOK")
                .replace("<Ntry>", "<Ntry><RvslInd>true</RvslInd>")
                .replace("<NtryRef>r-act_9</NtryRef>", ""),
        );
        let n = read(&xml).expect("read");
        assert_eq!(n.kind, Kind::Notification);
        let e = &n.reports[0].entries[0];
        assert_eq!((e.amount_minor, e.reference.clone()), (500, None));
        assert!(n.reports[0].balances.is_empty());
    }

    #[test]
    fn unknown_versions_indicators_and_amounts_are_refused() {
        let doc = |ns: &str, body: &str| {
            format!(
                r#"<Document xmlns="urn:iso:std:iso:20022:tech:xsd:{ns}"><BkToCstmrStmt><GrpHdr><MsgId>m</MsgId><CreDtTm>2026-12-01T00:00:00Z</CreDtTm></GrpHdr><Stmt><Id>s</Id>{ACCOUNT}{body}</Stmt></BkToCstmrStmt></Document>"#
            )
        };
        assert_eq!(read(&doc("camt.053.001.02", "")), Err(ReadError::Unsupported("camt.053.001.02".into())));
        assert!(matches!(
            read(&doc("camt.053.001.08", &entry("1.00", "a", "DEBIT", "BOOK"))),
            Err(ReadError::Invalid(_))
        ));
        assert!(matches!(
            read(&doc("camt.053.001.08", &entry("1.001", "a", "DBIT", "BOOK"))),
            Err(ReadError::Invalid(_))
        ));
        assert!(read(&doc("camt.053.001.08", &entry("1.00", "a", "DBIT", "BOOK"))).is_ok());
    }
}
