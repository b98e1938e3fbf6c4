//! `pain.001.001.09`, customer credit transfer initiation: one file per debtor account, currency and
//! requested execution date, so one payment information block (`PmtInf`) per file, and one credit transfer
//! (`CdtTrfTxInf`) per payment, whose `EndToEndId` is the Financial Action's id: the reference the bank
//! returns in status reports and statements, and what makes each payment findable in exactly one file.
//!
//! The structs below mirror the schema (`pain.001.001.09.xsd`) element by element, in its sequence order,
//! with only the elements Fiscus fills; optional elements left empty are not written (an empty element is
//! not the same as an absent one to a validator).
//!
//! It is long because the schema's element types are mirrored one struct each in one file, so their order
//! can be read against the XSD's sequences in one place; its tests sit beside them.

use fiscus_domain::bank_accounts::{AccountNumber, AccountVersion};
use fiscus_domain::banking::{Bic, Iban};
use fiscus_domain::money::Currency;
use serde::Serialize;

use crate::MessageError;

/// The schema's namespace, also the message's name and version.
pub const NAMESPACE: &str = "urn:iso:std:iso:20022:tech:xsd:pain.001.001.09";

/// Payments in one file at most: banks' host-to-host channels take files of this size routinely, and a
/// control sum of this many maximal amounts still fits the schema's 18 digits.
pub const MAX_PAYMENTS: usize = 10_000;

/// A postal address as `PostalAddress24` carries it (the structured elements; banks increasingly refuse
/// unstructured address lines for cross-border payments).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Address {
    pub street: Option<String>,
    pub building: Option<String>,
    pub postcode: Option<String>,
    pub town: String,
    /// ISO 3166 alpha-2.
    pub country: String,
}

/// The account holder: name (`Max140Text`) and address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Party {
    pub name: String,
    pub address: Option<Address>,
}

/// How the account is identified: by IBAN, or by a local number (`Othr`, `Max34Text`) where IBANs are not
/// used, with the scheme's code when it has one (`BBAN`, `CUID`, …).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AccountId {
    Iban(Iban),
    Other { id: String, scheme: Option<String> },
}

/// The account servicer: its BIC, or its member id in a clearing system (`USABA`, `GBDSC`, …), or both.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Agent {
    pub bic: Option<Bic>,
    /// (clearing system code, member id).
    pub clearing: Option<(String, String)>,
}

/// One payment: to whom, how much, and what the creditor sees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreditTransfer {
    /// The Financial Action's id (`act_…`, at most 35 characters).
    pub end_to_end_id: String,
    pub amount_minor: i64,
    pub creditor: Party,
    pub creditor_account: AccountId,
    pub creditor_agent: Option<Agent>,
    /// Unstructured remittance information (`Max140Text`): the action's reference.
    pub remittance: Option<String>,
    /// An ISO external category purpose code (`INTC` for a transfer between own accounts).
    pub category_purpose: Option<&'static str>,
}

/// A file: the initiating party, the debtor and its account, the currency and date every payment shares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaymentFile {
    /// The message id (`MsgId`, at most 35 characters, unique per initiating party): the file's record id.
    pub message_id: String,
    /// When the file was created, RFC 3339 (`ISODateTime`).
    pub created_at: String,
    pub initiating_party: String,
    pub debtor: Party,
    pub debtor_account: AccountId,
    pub debtor_agent: Agent,
    pub currency: Currency,
    /// `YYYY-MM-DD`.
    pub requested_execution_date: String,
    pub payments: Vec<CreditTransfer>,
}

impl Party {
    /// The holder of an account version, as its details name them.
    pub fn holder(v: &AccountVersion) -> Party {
        Party {
            name: v.holder_name.clone(),
            address: v.address.as_ref().map(|a| Address {
                street: a.street.clone(),
                building: a.building.clone(),
                postcode: a.postcode.clone(),
                town: a.town.clone(),
                country: a.country.clone(),
            }),
        }
    }
}

impl AccountId {
    pub fn of(v: &AccountVersion) -> AccountId {
        match &v.number {
            AccountNumber::Iban(iban) => AccountId::Iban(iban.clone()),
            AccountNumber::Local { number, scheme } => AccountId::Other { id: number.clone(), scheme: scheme.clone() },
        }
    }
}

impl Agent {
    /// The bank servicing an account version.
    pub fn of(v: &AccountVersion) -> Agent {
        Agent { bic: v.bic.clone(), clearing: v.clearing.clone() }
    }
}

/// The file's bytes (UTF-8 XML with its declaration) and its control sum in minor units.
pub fn render(file: &PaymentFile) -> Result<(String, u128), MessageError> {
    let n = file.payments.len();
    if n == 0 || n > MAX_PAYMENTS {
        return Err(MessageError::Size(n));
    }
    let exponent = u32::from(file.currency.exponent());
    let mut sum: u128 = 0;
    let mut transfers = Vec::with_capacity(n);
    for p in &file.payments {
        let Ok(amount) = u128::try_from(p.amount_minor) else {
            return Err(MessageError::Amount(format!("payment {} has a negative amount", p.end_to_end_id)));
        };
        if amount == 0 {
            return Err(MessageError::Amount(format!("payment {} has no amount", p.end_to_end_id)));
        }
        sum += amount;
        transfers.push(CdtTrfTxInf::of(p, file.currency, exponent));
    }
    let ctrl_sum = decimal(sum, exponent);
    // ActiveOrHistoricCurrencyAndAmount / DecimalNumber: at most 18 digits in all.
    if ctrl_sum.bytes().filter(u8::is_ascii_digit).count() > 18 {
        return Err(MessageError::Amount("the file's total does not fit 18 digits".into()));
    }
    let count = n.to_string();
    let document = Document {
        xmlns: NAMESPACE,
        cstmr_cdt_trf_initn: CstmrCdtTrfInitn {
            grp_hdr: GrpHdr {
                msg_id: &file.message_id,
                cre_dt_tm: &file.created_at,
                nb_of_txs: &count,
                ctrl_sum: &ctrl_sum,
                initg_pty: InitgPty { nm: &file.initiating_party },
            },
            pmt_inf: PmtInf {
                pmt_inf_id: &file.message_id,
                pmt_mtd: "TRF",
                nb_of_txs: &count,
                ctrl_sum: &ctrl_sum,
                reqd_exctn_dt: ReqdExctnDt { dt: &file.requested_execution_date },
                dbtr: PartyXml::of(&file.debtor),
                dbtr_acct: Acct::of(&file.debtor_account),
                dbtr_agt: Agt::of(&file.debtor_agent),
                cdt_trf_tx_inf: transfers,
            },
        },
    };
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let mut serializer = quick_xml::se::Serializer::new(&mut xml);
    serializer.indent(' ', 2);
    document.serialize(serializer).map_err(|e| MessageError::Xml(e.to_string()))?;
    xml.push('\n');
    Ok((xml, sum))
}

/// `minor` in major units with exactly `exponent` decimals (what `InstdAmt` and `CtrlSum` carry).
fn decimal(minor: u128, exponent: u32) -> String {
    if exponent == 0 {
        return minor.to_string();
    }
    let scale = 10u128.pow(exponent);
    format!("{}.{:0width$}", minor / scale, minor % scale, width = exponent as usize)
}

// The schema's elements, in its order. Field names become element names by PascalCase (`grp_hdr` →
// `GrpHdr`); the schema's upper-case names (`IBAN`, `BICFI`) and attributes (`@Ccy`) are renamed.

#[derive(Serialize)]
#[serde(rename = "Document")]
struct Document<'a> {
    #[serde(rename = "@xmlns")]
    xmlns: &'static str,
    #[serde(rename = "CstmrCdtTrfInitn")]
    cstmr_cdt_trf_initn: CstmrCdtTrfInitn<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct CstmrCdtTrfInitn<'a> {
    grp_hdr: GrpHdr<'a>,
    pmt_inf: PmtInf<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct GrpHdr<'a> {
    msg_id: &'a str,
    cre_dt_tm: &'a str,
    nb_of_txs: &'a str,
    ctrl_sum: &'a str,
    initg_pty: InitgPty<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct InitgPty<'a> {
    nm: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct PmtInf<'a> {
    pmt_inf_id: &'a str,
    pmt_mtd: &'static str,
    nb_of_txs: &'a str,
    ctrl_sum: &'a str,
    reqd_exctn_dt: ReqdExctnDt<'a>,
    dbtr: PartyXml<'a>,
    dbtr_acct: Acct<'a>,
    dbtr_agt: Agt<'a>,
    cdt_trf_tx_inf: Vec<CdtTrfTxInf<'a>>,
}

/// `DateAndDateTime2Choice`: always the date.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct ReqdExctnDt<'a> {
    dt: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct PartyXml<'a> {
    nm: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pstl_adr: Option<PstlAdr<'a>>,
}

impl<'a> PartyXml<'a> {
    fn of(p: &'a Party) -> PartyXml<'a> {
        PartyXml {
            nm: &p.name,
            pstl_adr: p.address.as_ref().map(|a| PstlAdr {
                strt_nm: a.street.as_deref(),
                bldg_nb: a.building.as_deref(),
                pst_cd: a.postcode.as_deref(),
                twn_nm: &a.town,
                ctry: &a.country,
            }),
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct PstlAdr<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    strt_nm: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bldg_nb: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pst_cd: Option<&'a str>,
    twn_nm: &'a str,
    ctry: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Acct<'a> {
    id: AcctId<'a>,
}

impl<'a> Acct<'a> {
    fn of(a: &'a AccountId) -> Acct<'a> {
        let id = match a {
            AccountId::Iban(iban) => AcctId { iban: Some(iban.as_str()), othr: None },
            AccountId::Other { id, scheme } => {
                AcctId { iban: None, othr: Some(Othr { id, schme_nm: scheme.as_deref().map(|cd| SchmeNm { cd }) }) }
            }
        };
        Acct { id }
    }
}

/// `AccountIdentification4Choice`: exactly one of the two is set.
#[derive(Serialize)]
struct AcctId<'a> {
    #[serde(rename = "IBAN", skip_serializing_if = "Option::is_none")]
    iban: Option<&'a str>,
    #[serde(rename = "Othr", skip_serializing_if = "Option::is_none")]
    othr: Option<Othr<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Othr<'a> {
    id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    schme_nm: Option<SchmeNm<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct SchmeNm<'a> {
    cd: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Agt<'a> {
    fin_instn_id: FinInstnId<'a>,
}

impl<'a> Agt<'a> {
    fn of(a: &'a Agent) -> Agt<'a> {
        Agt {
            fin_instn_id: FinInstnId {
                bicfi: a.bic.as_ref().map(Bic::as_str),
                clr_sys_mmb_id: a
                    .clearing
                    .as_ref()
                    .map(|(system, member)| ClrSysMmbId { clr_sys_id: ClrSysId { cd: system }, mmb_id: member }),
            },
        }
    }
}

#[derive(Serialize)]
struct FinInstnId<'a> {
    #[serde(rename = "BICFI", skip_serializing_if = "Option::is_none")]
    bicfi: Option<&'a str>,
    #[serde(rename = "ClrSysMmbId", skip_serializing_if = "Option::is_none")]
    clr_sys_mmb_id: Option<ClrSysMmbId<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct ClrSysMmbId<'a> {
    clr_sys_id: ClrSysId<'a>,
    mmb_id: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct ClrSysId<'a> {
    cd: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct CdtTrfTxInf<'a> {
    pmt_id: PmtId<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pmt_tp_inf: Option<PmtTpInf>,
    amt: Amt,
    #[serde(skip_serializing_if = "Option::is_none")]
    cdtr_agt: Option<Agt<'a>>,
    cdtr: PartyXml<'a>,
    cdtr_acct: Acct<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rmt_inf: Option<RmtInf<'a>>,
}

impl<'a> CdtTrfTxInf<'a> {
    fn of(p: &'a CreditTransfer, currency: Currency, exponent: u32) -> CdtTrfTxInf<'a> {
        CdtTrfTxInf {
            pmt_id: PmtId { end_to_end_id: &p.end_to_end_id },
            pmt_tp_inf: p.category_purpose.map(|cd| PmtTpInf { ctgy_purp: CtgyPurp { cd } }),
            amt: Amt {
                instd_amt: InstdAmt {
                    ccy: currency.code(),
                    value: decimal(u128::try_from(p.amount_minor).unwrap_or(0), exponent),
                },
            },
            cdtr_agt: p.creditor_agent.as_ref().map(Agt::of),
            cdtr: PartyXml::of(&p.creditor),
            cdtr_acct: Acct::of(&p.creditor_account),
            rmt_inf: p.remittance.as_deref().map(|ustrd| RmtInf { ustrd }),
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct PmtId<'a> {
    end_to_end_id: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct PmtTpInf {
    ctgy_purp: CtgyPurp,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct CtgyPurp {
    cd: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Amt {
    instd_amt: InstdAmt,
}

#[derive(Serialize)]
struct InstdAmt {
    #[serde(rename = "@Ccy")]
    ccy: &'static str,
    #[serde(rename = "$text")]
    value: String,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct RmtInf<'a> {
    ustrd: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(payments: Vec<CreditTransfer>, currency: &str) -> PaymentFile {
        PaymentFile {
            message_id: "pmf_01KBT8V4W4ZJ4XQ3Y9N6C2M5RA".into(),
            created_at: "2026-11-28T10:00:00Z".into(),
            initiating_party: "Acme Treasury GmbH".into(),
            debtor: Party {
                name: "Acme Treasury GmbH".into(),
                address: Some(Address {
                    street: Some("Hauptstrasse".into()),
                    building: Some("1".into()),
                    postcode: Some("10115".into()),
                    town: "Berlin".into(),
                    country: "DE".into(),
                }),
            },
            debtor_account: AccountId::Iban(Iban::parse("DE89370400440532013000").expect("iban")),
            debtor_agent: Agent { bic: Some(Bic::parse("COBADEFFXXX").expect("bic")), clearing: None },
            currency: Currency::parse(currency).expect("currency"),
            requested_execution_date: "2026-12-01".into(),
            payments,
        }
    }

    fn payment(id: &str, amount_minor: i64) -> CreditTransfer {
        CreditTransfer {
            end_to_end_id: id.into(),
            amount_minor,
            creditor: Party { name: "Supplier & Sons".into(), address: None },
            creditor_account: AccountId::Iban(Iban::parse("GB29NWBK60161331926819").expect("iban")),
            creditor_agent: Some(Agent { bic: Some(Bic::parse("NWBKGB2L").expect("bic")), clearing: None }),
            remittance: Some("INV-2026-001".into()),
            category_purpose: None,
        }
    }

    #[test]
    fn a_file_carries_counts_control_sum_and_amounts_in_the_currencys_exponent() {
        let (xml, sum) = render(&file(vec![payment("act_1", 12_345), payment("act_2", 5)], "EUR")).expect("render");
        assert_eq!(sum, 12_350);
        assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:pain.001.001.09\">"), "{xml}");
        assert_eq!(xml.matches("<NbOfTxs>2</NbOfTxs>").count(), 2, "{xml}");
        assert_eq!(xml.matches("<CtrlSum>123.50</CtrlSum>").count(), 2, "{xml}");
        assert!(xml.contains("<InstdAmt Ccy=\"EUR\">123.45</InstdAmt>"), "{xml}");
        assert!(xml.contains("<InstdAmt Ccy=\"EUR\">0.05</InstdAmt>"), "{xml}");
        assert!(xml.contains("<EndToEndId>act_1</EndToEndId>"), "{xml}");
        assert!(xml.contains("<Nm>Supplier &amp; Sons</Nm>"), "text is escaped: {xml}");
        assert!(xml.contains("<ReqdExctnDt>\n        <Dt>2026-12-01</Dt>"), "{xml}");
        assert!(!xml.contains("<PmtTpInf>") && !xml.contains("<StrtNm/>"), "nothing empty is written: {xml}");
        let (yen, _) = render(&file(vec![payment("act_3", 1500)], "JPY")).expect("render");
        assert!(yen.contains("<InstdAmt Ccy=\"JPY\">1500</InstdAmt>"), "{yen}");
        let (dinar, _) = render(&file(vec![payment("act_4", 1500)], "BHD")).expect("render");
        assert!(dinar.contains("<InstdAmt Ccy=\"BHD\">1.500</InstdAmt>"), "{dinar}");
    }

    #[test]
    fn local_accounts_and_clearing_members_are_written_in_place_of_iban_and_bic() {
        let mut p = payment("act_5", 100);
        p.creditor_account = AccountId::Other { id: "000123456789".into(), scheme: Some("BBAN".into()) };
        p.creditor_agent = Some(Agent { bic: None, clearing: Some(("USABA".into(), "021000021".into())) });
        p.category_purpose = Some("INTC");
        let (xml, _) = render(&file(vec![p], "USD")).expect("render");
        assert!(
            xml.contains(
                "<Othr>\n              <Id>000123456789</Id>\n              <SchmeNm>\n                <Cd>BBAN</Cd>"
            ),
            "{xml}"
        );
        assert!(xml.contains("<ClrSysMmbId>\n              <ClrSysId>\n                <Cd>USABA</Cd>"), "{xml}");
        assert!(xml.contains("<CtgyPurp>\n            <Cd>INTC</Cd>"), "{xml}");
    }

    #[test]
    fn empty_negative_zero_and_oversized_files_are_refused() {
        assert_eq!(render(&file(vec![], "EUR")).map(|_| ()), Err(MessageError::Size(0)));
        assert!(matches!(render(&file(vec![payment("act_6", -1)], "EUR")), Err(MessageError::Amount(_))));
        assert!(matches!(render(&file(vec![payment("act_7", 0)], "EUR")), Err(MessageError::Amount(_))));
        let many = (0..=MAX_PAYMENTS).map(|i| payment(&format!("act_{i}"), 1)).collect();
        assert_eq!(render(&file(many, "EUR")).map(|_| ()), Err(MessageError::Size(MAX_PAYMENTS + 1)));
        assert_eq!(decimal(1_000_000_000_000_000_000, 2), "10000000000000000.00");
    }
}
