//! What this crate writes, checked by others: each file validated against the official XSD (as the `sepaxml`
//! package on PyPI ships it) by `lxml`, and read back independently (`clients/iso20022_validate.py`): IBAN
//! check digits, counts, control sums and decimals, and the same payments Fiscus meant to write.

use fiscus_domain::banking::{Bic, Iban};
use fiscus_domain::money::Currency;
use fiscus_iso20022::pain001::{AccountId, Address, Agent, CreditTransfer, Party, PaymentFile, render};
use std::path::PathBuf;
use std::process::Command;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Python of the client tests (`scripts/test` prepares it; `FISCUS_PYTHON` may name another).
fn python() -> PathBuf {
    if let Ok(p) = std::env::var("FISCUS_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = repo_root().join("target/clients-venv/bin/python");
    assert!(venv.exists(), "the XSD checks need the Python clients: run scripts/test, or set FISCUS_PYTHON");
    venv
}

/// What the validator read from each file, or why it refused one.
fn check(kind: &str, files: &[PathBuf]) -> Result<Vec<serde_json::Value>, String> {
    let out = Command::new(python())
        .arg(repo_root().join("clients/iso20022_validate.py"))
        .arg(kind)
        .args(files)
        .output()
        .expect("run the validator");
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).to_string());
    }
    Ok(String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).expect("json line")).collect())
}

fn validate(kind: &str, files: &[PathBuf]) -> Vec<serde_json::Value> {
    check(kind, files).unwrap_or_else(|why| panic!("{why}"))
}

fn creditor(i: usize) -> (Party, AccountId, Option<Agent>) {
    match i % 3 {
        0 => (
            Party { name: format!("Supplier {i} & Co"), address: None },
            AccountId::Iban(Iban::parse("GB29 NWBK 6016 1331 9268 19").expect("iban")),
            Some(Agent { bic: Some(Bic::parse("NWBKGB2L").expect("bic")), clearing: None }),
        ),
        1 => (
            Party {
                name: "Lieferant GmbH".into(),
                address: Some(Address {
                    street: Some("Königstraße".into()),
                    building: Some("12a".into()),
                    postcode: Some("70173".into()),
                    town: "Stuttgart".into(),
                    country: "DE".into(),
                }),
            },
            AccountId::Iban(Iban::parse("DE89370400440532013000").expect("iban")),
            None,
        ),
        _ => (
            Party {
                name: "Vendor Inc".into(),
                address: Some(Address {
                    street: None,
                    building: None,
                    postcode: None,
                    town: "New York".into(),
                    country: "US".into(),
                }),
            },
            AccountId::Other { id: "000123456789".into(), scheme: Some("BBAN".into()) },
            Some(Agent { bic: None, clearing: Some(("USABA".into(), "021000021".into())) }),
        ),
    }
}

fn file(id: &str, currency: &str, n: usize) -> PaymentFile {
    let payments = (0..n)
        .map(|i| {
            let (creditor, creditor_account, creditor_agent) = creditor(i);
            CreditTransfer {
                end_to_end_id: format!("act_{id}_{i:05}"),
                amount_minor: 1 + (i as i64 * 7919) % 1_000_000,
                creditor,
                creditor_account,
                creditor_agent,
                remittance: Some(format!("INV-{i}")),
                category_purpose: (i % 5 == 0).then_some("INTC"),
            }
        })
        .collect();
    PaymentFile {
        message_id: format!("pmf_{id}"),
        created_at: "2026-11-28T10:15:00Z".into(),
        initiating_party: "Acme Treasury GmbH".into(),
        debtor: Party { name: "Acme Treasury GmbH".into(), address: None },
        debtor_account: AccountId::Iban(Iban::parse("FR1420041010050500013M02606").expect("iban")),
        debtor_agent: Agent { bic: Some(Bic::parse("PSSTFRPPXXX").expect("bic")), clearing: None },
        currency: Currency::parse(currency).expect("currency"),
        requested_execution_date: "2026-12-01".into(),
        payments,
    }
}

#[test]
fn pain_001_files_validate_against_the_official_xsd_and_read_back_the_same() {
    let dir = tempfile::tempdir().expect("dir");
    let cases = [("a", "EUR", 1), ("b", "EUR", 250), ("c", "JPY", 7), ("d", "BHD", 3), ("e", "USD", 2000)];
    let mut paths = Vec::new();
    let mut written = Vec::new();
    for (id, currency, n) in cases {
        let f = file(id, currency, n);
        let (xml, sum) = render(&f).expect("render");
        let path = dir.path().join(format!("{id}.xml"));
        std::fs::write(&path, xml).expect("write");
        paths.push(path);
        written.push((f, sum));
    }
    let read = validate("pain.001", &paths);
    assert_eq!(read.len(), written.len());
    for (r, (f, sum)) in read.iter().zip(&written) {
        assert_eq!(r["message_id"], f.message_id.as_str());
        assert_eq!(r["count"], f.payments.len());
        let exponent = f.currency.exponent();
        let expected_sum = fiscus_domain::money::format_minor(i64::try_from(*sum).expect("sum"), f.currency);
        assert_eq!(r["control_sum"], expected_sum.as_str(), "exponent {exponent}");
        for (p, want) in r["payments"].as_array().expect("payments").iter().zip(&f.payments) {
            assert_eq!(p["end_to_end_id"], want.end_to_end_id.as_str());
            assert_eq!(p["amount"], fiscus_domain::money::format_minor(want.amount_minor, f.currency).as_str());
            assert_eq!(p["currency"], f.currency.code());
        }
    }
}

#[test]
fn the_validator_refuses_what_the_xsd_or_the_sums_forbid() {
    let dir = tempfile::tempdir().expect("dir");
    let (xml, _) = render(&file("z", "EUR", 3)).expect("render");
    let broken = [
        ("element", xml.replacen("<BICFI>", "<BIC>", 1).replacen("</BICFI>", "</BIC>", 1), "not valid"),
        ("sum", xml.replacen("<CtrlSum>", "<CtrlSum>1", 1), "CtrlSum"),
        ("iban", xml.replace("GB29NWBK60161331926819", "GB28NWBK60161331926819"), "check digits"),
        ("decimals", xml.replacen("Ccy=\"EUR\">0.01<", "Ccy=\"EUR\">0.010<", 1), "decimals"),
    ];
    for (what, text, why) in broken {
        let path = dir.path().join(format!("{what}.xml"));
        std::fs::write(&path, &text).expect("write");
        let refused = check("pain.001", &[path]).expect_err(what);
        assert!(refused.contains(why), "{what}: {refused}");
    }
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

#[test]
fn statements_validate_against_the_official_xsds_and_read_as_camt053_reads_them() {
    for name in ["camt.053.001.08.xml", "camt.054.001.08.xml"] {
        let path = fixture(name);
        let theirs = validate("camt", std::slice::from_ref(&path)).remove(0);
        let ours = fiscus_iso20022::camt::read(&std::fs::read_to_string(&path).expect("read")).expect(name);
        assert_eq!(theirs["message"], ours.message.as_str());
        assert_eq!(theirs["message_id"], ours.message_id.as_str());
        let their_reports = theirs["reports"].as_array().expect("reports");
        assert_eq!(their_reports.len(), ours.reports.len());
        for (t, o) in their_reports.iter().zip(&ours.reports) {
            assert_eq!((t["id"].as_str(), t["account"].as_str()), (Some(o.id.as_str()), Some(o.account.as_str())));
            let balances: Vec<(String, String)> = o
                .balances
                .iter()
                .map(|b| (b.code.clone(), fiscus_domain::money::format_minor(b.amount_minor, b.currency)))
                .collect();
            let their_balances: Vec<(String, String)> = t["balances"]
                .as_array()
                .expect("balances")
                .iter()
                .map(|b| {
                    let sign = if b["indicator"] == "DBIT" { "-" } else { "" };
                    (
                        b["code"].as_str().expect("code").to_string(),
                        format!("{sign}{}", b["amount"].as_str().expect("amount")),
                    )
                })
                .collect();
            assert_eq!(balances, their_balances, "{name}");
            let entries = t["entries"].as_array().expect("entries");
            assert_eq!(entries.len(), o.entries.len());
            for (te, oe) in entries.iter().zip(&o.entries) {
                assert_eq!(te["amount"], fiscus_domain::money::format_minor(oe.amount_minor, oe.currency).as_str());
                assert_eq!(te["currency"], oe.currency.code());
                assert_eq!(te["indicator"], if oe.debit { "DBIT" } else { "CRDT" });
                assert_eq!(te["status"], oe.status.as_str());
                assert_eq!(te["booking_date"].as_str(), oe.booking_date.as_deref());
                assert_eq!(te["account_servicer_reference"].as_str(), oe.account_servicer_reference.as_deref());
                let ids: Vec<Option<&str>> = te["end_to_end_ids"]
                    .as_array()
                    .expect("ids")
                    .iter()
                    .map(|v| v.as_str().filter(|id| *id != "NOTPROVIDED"))
                    .collect();
                assert_eq!(ids, oe.transactions.iter().map(|t| t.end_to_end_id.as_deref()).collect::<Vec<_>>());
            }
        }
    }
}

#[test]
fn status_reports_validate_against_the_official_xsd_and_read_as_lxml_reads_them() {
    let path = fixture("pain.002.001.12.xml");
    let theirs = validate("pain.002", std::slice::from_ref(&path)).remove(0);
    let ours = fiscus_iso20022::pain002::read(&std::fs::read_to_string(&path).expect("read")).expect("read");
    assert_eq!(theirs["message_id"], ours.message_id.as_str());
    assert_eq!(theirs["original_message_id"], ours.original_message_id.as_str());
    let statuses: Vec<(String, String, Option<String>)> = ours
        .statuses
        .iter()
        .map(|s| match &s.scope {
            fiscus_iso20022::pain002::Scope::Payment(e2e) => (e2e.clone(), s.code.clone(), s.reason.clone()),
            other => panic!("a payment status, not {other:?}"),
        })
        .collect();
    let their_statuses: Vec<(String, String, Option<String>)> = theirs["statuses"]
        .as_array()
        .expect("statuses")
        .iter()
        .map(|s| {
            (
                s["end_to_end_id"].as_str().expect("id").to_string(),
                s["code"].as_str().expect("code").to_string(),
                s["reason"].as_str().map(str::to_string),
            )
        })
        .collect();
    assert_eq!(statuses, their_statuses);
}
