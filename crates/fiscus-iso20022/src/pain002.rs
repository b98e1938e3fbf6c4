//! `pain.002`, customer payment status report: what the bank says of a `pain.001` it received, for the whole
//! file, one payment information block, or one payment (by the `EndToEndId` Fiscus wrote, the action's id).
//!
//! Versions `.03` (the SEPA one), `.10` and `.12` are read: the elements Fiscus needs sit at the same paths in
//! all three. A status given for a group or block applies to every payment below it that has none of its own.

use serde::Deserialize;

use crate::read::{ReadError, message_name, parse};

const VERSIONS: [&str; 3] = ["pain.002.001.03", "pain.002.001.10", "pain.002.001.12"];

/// What a status is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The whole original file.
    File,
    /// One payment information block (`PmtInfId`; Fiscus writes one per file, with the file's id).
    Block(String),
    /// One payment, by its end-to-end id.
    Payment(String),
}

/// One status: an ISO external status code (`ACTC`, `ACCP`, `ACSC`, `PDNG`, `RJCT`, …) and, for a
/// rejection, the reason code (`AC04`, `AM04`, …) and the bank's words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    pub scope: Scope,
    pub code: String,
    pub reason: Option<String>,
    pub detail: Option<String>,
}

impl Status {
    /// The bank refused it: nothing of it will be paid.
    pub fn rejected(&self) -> bool {
        self.code == "RJCT"
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusReport {
    /// `pain.002.001.NN`.
    pub message: String,
    pub message_id: String,
    pub created_at: String,
    /// The `MsgId` of the `pain.001` reported on (the file's id, for files Fiscus wrote).
    pub original_message_id: String,
    pub original_message_name: String,
    /// The most precise status known for each scope: payments first as the report lists them, then blocks
    /// without payment statuses, then the file's when nothing below it has one.
    pub statuses: Vec<Status>,
}

/// Reads a status report.
pub fn read(xml: &str) -> Result<StatusReport, ReadError> {
    let message = message_name(xml)?;
    if !VERSIONS.contains(&message.as_str()) {
        return Err(ReadError::Unsupported(message));
    }
    let doc: Document = parse(xml)?;
    let report = doc.report;
    let group = &report.orgnl_grp_inf_and_sts;
    let group_status = group.grp_sts.as_ref().map(|code| status(Scope::File, code, &group.sts_rsn_inf));
    let mut statuses = Vec::new();
    for block in &report.orgnl_pmt_inf_and_sts {
        let block_status = block
            .pmt_inf_sts
            .as_ref()
            .map(|code| status(Scope::Block(block.orgnl_pmt_inf_id.clone()), code, &block.sts_rsn_inf));
        let mut any = false;
        for tx in &block.tx_inf_and_sts {
            let Some(e2e) = tx.orgnl_end_to_end_id.as_ref().filter(|id| !id.trim().is_empty()) else { continue };
            let inherited = block_status.as_ref().or(group_status.as_ref());
            let own =
                tx.tx_sts.as_ref().map(|code| status(Scope::Payment(e2e.trim().to_string()), code, &tx.sts_rsn_inf));
            let Some(s) = own
                .or_else(|| inherited.map(|i| Status { scope: Scope::Payment(e2e.trim().to_string()), ..i.clone() }))
            else {
                continue;
            };
            statuses.push(s);
            any = true;
        }
        if !any && let Some(s) = block_status {
            statuses.push(s);
        }
    }
    if statuses.is_empty()
        && let Some(s) = group_status
    {
        statuses.push(s);
    }
    for s in &statuses {
        if !(1..=4).contains(&s.code.len()) || !s.code.bytes().all(|b| b.is_ascii_uppercase()) {
            return Err(ReadError::Invalid(format!("{:?} is not a payment status code", s.code)));
        }
    }
    Ok(StatusReport {
        message,
        message_id: report.grp_hdr.msg_id,
        created_at: report.grp_hdr.cre_dt_tm,
        original_message_id: group.orgnl_msg_id.clone(),
        original_message_name: group.orgnl_msg_nm_id.clone(),
        statuses,
    })
}

fn status(scope: Scope, code: &str, reasons: &[StsRsnInf]) -> Status {
    let first = reasons.first();
    Status {
        scope,
        code: code.trim().to_string(),
        reason: first.and_then(|r| r.rsn.as_ref()).and_then(|r| r.cd.clone().or_else(|| r.prtry.clone())),
        detail: first.map(|r| r.addtl_inf.join(" ")).filter(|d| !d.is_empty()),
    }
}

#[derive(Deserialize)]
struct Document {
    #[serde(rename = "CstmrPmtStsRpt")]
    report: Report,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Report {
    grp_hdr: GrpHdr,
    orgnl_grp_inf_and_sts: OrgnlGrpInfAndSts,
    #[serde(default)]
    orgnl_pmt_inf_and_sts: Vec<OrgnlPmtInfAndSts>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct GrpHdr {
    msg_id: String,
    cre_dt_tm: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct OrgnlGrpInfAndSts {
    orgnl_msg_id: String,
    orgnl_msg_nm_id: String,
    grp_sts: Option<String>,
    #[serde(default)]
    sts_rsn_inf: Vec<StsRsnInf>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct OrgnlPmtInfAndSts {
    orgnl_pmt_inf_id: String,
    pmt_inf_sts: Option<String>,
    #[serde(default)]
    sts_rsn_inf: Vec<StsRsnInf>,
    #[serde(default)]
    tx_inf_and_sts: Vec<TxInfAndSts>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct TxInfAndSts {
    orgnl_end_to_end_id: Option<String>,
    tx_sts: Option<String>,
    #[serde(default)]
    sts_rsn_inf: Vec<StsRsnInf>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct StsRsnInf {
    rsn: Option<Rsn>,
    #[serde(default)]
    addtl_inf: Vec<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Rsn {
    cd: Option<String>,
    prtry: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(version: &str, blocks: &str, group_status: &str) -> String {
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.002.001.{version}">
 <CstmrPmtStsRpt>
  <GrpHdr><MsgId>bank-1</MsgId><CreDtTm>2026-12-01T09:00:00Z</CreDtTm></GrpHdr>
  <OrgnlGrpInfAndSts><OrgnlMsgId>pmf_1</OrgnlMsgId><OrgnlMsgNmId>pain.001.001.09</OrgnlMsgNmId>{group_status}</OrgnlGrpInfAndSts>
  {blocks}
 </CstmrPmtStsRpt>
</Document>"#
        )
    }

    #[test]
    fn payment_statuses_are_read_with_their_reasons_in_every_version() {
        let blocks = r#"<OrgnlPmtInfAndSts><OrgnlPmtInfId>pmf_1</OrgnlPmtInfId>
   <TxInfAndSts><OrgnlEndToEndId>act_1</OrgnlEndToEndId><TxSts>ACCP</TxSts></TxInfAndSts>
   <TxInfAndSts><OrgnlEndToEndId>act_2</OrgnlEndToEndId><TxSts>RJCT</TxSts>
     <StsRsnInf><Rsn><Cd>AC04</Cd></Rsn><AddtlInf>account closed</AddtlInf></StsRsnInf></TxInfAndSts>
  </OrgnlPmtInfAndSts>"#;
        for version in ["03", "10", "12"] {
            let r = read(&report(version, blocks, "<GrpSts>PART</GrpSts>")).expect(version);
            assert_eq!(r.message, format!("pain.002.001.{version}"));
            assert_eq!((r.message_id.as_str(), r.original_message_id.as_str()), ("bank-1", "pmf_1"));
            assert_eq!(
                r.statuses,
                vec![
                    Status { scope: Scope::Payment("act_1".into()), code: "ACCP".into(), reason: None, detail: None },
                    Status {
                        scope: Scope::Payment("act_2".into()),
                        code: "RJCT".into(),
                        reason: Some("AC04".into()),
                        detail: Some("account closed".into())
                    },
                ]
            );
            assert!(!r.statuses[0].rejected() && r.statuses[1].rejected());
        }
    }

    #[test]
    fn a_block_or_file_status_applies_to_payments_without_their_own() {
        let blocks = r#"<OrgnlPmtInfAndSts><OrgnlPmtInfId>pmf_1</OrgnlPmtInfId><PmtInfSts>RJCT</PmtInfSts>
     <StsRsnInf><Rsn><Cd>AM04</Cd></Rsn></StsRsnInf>
   <TxInfAndSts><OrgnlEndToEndId>act_1</OrgnlEndToEndId></TxInfAndSts></OrgnlPmtInfAndSts>"#;
        let r = read(&report("12", blocks, "")).expect("read");
        assert_eq!(r.statuses.len(), 1);
        assert_eq!(
            (r.statuses[0].scope.clone(), r.statuses[0].reason.as_deref()),
            (Scope::Payment("act_1".into()), Some("AM04"))
        );
        let whole = read(&report("12", "", "<GrpSts>ACTC</GrpSts>")).expect("read");
        assert_eq!(
            whole.statuses,
            vec![Status { scope: Scope::File, code: "ACTC".into(), reason: None, detail: None }]
        );
        let block_only = read(&report(
            "03",
            "<OrgnlPmtInfAndSts><OrgnlPmtInfId>pmf_1</OrgnlPmtInfId><PmtInfSts>ACSC</PmtInfSts></OrgnlPmtInfAndSts>",
            "",
        ))
        .expect("read");
        assert_eq!(block_only.statuses[0].scope, Scope::Block("pmf_1".into()));
    }

    #[test]
    fn other_messages_versions_and_broken_documents_are_refused() {
        let other = report("12", "", "<GrpSts>ACTC</GrpSts>").replace("pain.002.001.12", "pain.002.001.02");
        assert_eq!(read(&other), Err(ReadError::Unsupported("pain.002.001.02".into())));
        assert!(matches!(read("<Document"), Err(ReadError::Malformed(_))));
        assert!(matches!(read("<Document xmlns=\"urn:other\"/>"), Err(ReadError::Unsupported(_))));
        let bad_code = report("12", "", "<GrpSts>accepted</GrpSts>");
        assert!(matches!(read(&bad_code), Err(ReadError::Invalid(_))));
    }

    #[test]
    fn entities_a_document_declares_are_never_expanded() {
        // The "billion laughs": entities that expand to entities. The reader knows only XML's five.
        let bomb = report("12", "", "<GrpSts>ACTC</GrpSts>")
            .replace(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
                "<?xml version=\"1.0\"?><!DOCTYPE Document [<!ENTITY a \"AAAAAAAAAA\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">]>",
            )
            .replace("<MsgId>bank-1</MsgId>", "<MsgId>&b;</MsgId>");
        assert!(matches!(read(&bomb), Err(ReadError::Malformed(_))), "{:?}", read(&bomb));
    }
}
