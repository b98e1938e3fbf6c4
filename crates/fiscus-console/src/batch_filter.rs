//! The batch approval page's filter as a person types it (`?kind=…&currency=EUR&min_amount=1,000.00&…`):
//! read into the database's filter (`fiscus_actions::tables::actions::QueueFilter`), with every fault said in
//! words; drawn back as the form; and kept as given in the batch's record.

use std::collections::BTreeMap;

use fiscus_actions::tables::actions::QueueFilter;
use fiscus_domain::actions::ActionKind;
use fiscus_domain::clock::now_micros;
use fiscus_domain::credentials::Environment;
use fiscus_domain::money::Currency;
use serde::Deserialize;

use super::html::escape;

/// The page's query: the filter as a person types it.
#[derive(Debug, Default, Deserialize)]
pub struct BatchQuery {
    #[serde(default)]
    environment: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    connector: Option<String>,
    #[serde(default)]
    currency: Option<String>,
    #[serde(default)]
    min_amount: Option<String>,
    #[serde(default)]
    max_amount: Option<String>,
    #[serde(default)]
    counterparty: Option<String>,
    #[serde(default)]
    proposer: Option<String>,
    #[serde(default)]
    reference: Option<String>,
    #[serde(default)]
    older_than_hours: Option<String>,
}

fn given(v: &Option<String>) -> Option<&str> {
    v.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

/// "1,250.00" in `currency`'s minor units; `None` if it is not an amount.
fn minor_units(text: &str, currency: Currency) -> Option<i64> {
    let clean: String = text.chars().filter(|c| !matches!(c, ',' | ' ' | '\'' | '_')).collect();
    let (whole, fraction) = clean.split_once('.').unwrap_or((&clean, ""));
    let exp = usize::from(currency.exponent());
    if whole.is_empty() || fraction.len() > exp || !whole.chars().chain(fraction.chars()).all(|c| c.is_ascii_digit()) {
        return None;
    }
    let padded = format!("{whole}{fraction:0<exp$}");
    padded.parse::<i64>().ok().filter(|m| *m <= fiscus_domain::money::MAX_AMOUNT_MINOR)
}

impl BatchQuery {
    pub fn environment(&self) -> Environment {
        given(&self.environment).and_then(Environment::parse).unwrap_or(Environment::Sandbox)
    }

    /// The database filter, or what the person must correct.
    pub fn filter(&self) -> Result<QueueFilter, Vec<String>> {
        let mut faults = Vec::new();
        let mut f = QueueFilter::default();
        if let Some(k) = given(&self.kind) {
            f.kind = ActionKind::parse(k).or_else(|| {
                faults.push(format!("No kind is called “{k}”."));
                None
            });
        }
        f.connector = given(&self.connector).map(str::to_string);
        if let Some(c) = given(&self.currency) {
            f.currency = Currency::parse(&c.to_ascii_uppercase()).or_else(|| {
                faults.push(format!("“{c}” is not an ISO 4217 currency."));
                None
            });
        }
        for (text, slot, name) in
            [(&self.min_amount, &mut f.min_amount_minor, "least"), (&self.max_amount, &mut f.max_amount_minor, "most")]
        {
            let Some(text) = given(text) else { continue };
            match f.currency {
                None => faults.push(format!("An amount at {name} needs a currency to be read in.")),
                Some(c) => match minor_units(text, c) {
                    Some(m) => *slot = Some(m),
                    None => faults.push(format!("“{text}” is not an amount in {}.", c.code())),
                },
            }
        }
        f.counterparty = given(&self.counterparty).map(str::to_string);
        f.proposer_id = given(&self.proposer).map(str::to_string);
        f.reference_prefix = given(&self.reference).map(str::to_string);
        if let Some(h) = given(&self.older_than_hours) {
            match h.parse::<i64>() {
                Ok(h) if (0..=24 * 3650).contains(&h) => f.proposed_before = Some(now_micros() - h * 3_600_000_000),
                _ => faults.push(format!("“{h}” is not a number of hours.")),
            }
        }
        if faults.is_empty() { Ok(f) } else { Err(faults) }
    }

    /// The filter as given, for the batch's record.
    pub fn as_record(&self) -> BTreeMap<String, String> {
        let fields = [
            ("kind", &self.kind),
            ("connector", &self.connector),
            ("currency", &self.currency),
            ("min_amount", &self.min_amount),
            ("max_amount", &self.max_amount),
            ("counterparty", &self.counterparty),
            ("proposer", &self.proposer),
            ("reference", &self.reference),
            ("older_than_hours", &self.older_than_hours),
        ];
        fields.iter().filter_map(|(k, v)| given(v).map(|v| (k.to_string(), v.to_string()))).collect()
    }

    pub fn form(&self, env: Environment) -> String {
        let field = |name: &str, label: &str, value: &Option<String>, hint: &str| {
            format!(
                "<label>{label} <input type=\"text\" name=\"{name}\" value=\"{v}\"{hint}></label>",
                v = escape(given(value).unwrap_or_default()),
                hint = if hint.is_empty() { String::new() } else { format!(" placeholder=\"{hint}\"") },
            )
        };
        let kinds: String = std::iter::once(String::from("<option value=\"\">any</option>"))
            .chain(ActionKind::ALL.iter().map(|k| {
                let selected = if given(&self.kind) == Some(k.as_str()) { " selected" } else { "" };
                format!(
                    "<option value=\"{k}\"{selected}>{w}</option>",
                    k = k.as_str(),
                    w = k.as_str().replace('_', " ")
                )
            }))
            .collect();
        format!(
            "<form method=\"get\" action=\"/console/approvals/batch\" class=\"filter\">\
             <input type=\"hidden\" name=\"environment\" value=\"{env}\">\
             <label>Kind <select name=\"kind\">{kinds}</select></label>{reference}{cp}{cur}{min}{max}{con}{pro}{age}\
             <button type=\"submit\">Show what matches</button></form>",
            env = env.as_str(),
            reference = field("reference", "Payment run (reference starts with)", &self.reference, "RUN-2026-12-08-"),
            cp = field("counterparty", "Counterparty", &self.counterparty, "cpt_…"),
            cur = field("currency", "Currency", &self.currency, "EUR"),
            min = field("min_amount", "Amount at least", &self.min_amount, "0.00"),
            max = field("max_amount", "Amount at most", &self.max_amount, ""),
            con = field("connector", "Connector", &self.connector, "iso20022"),
            pro = field("proposer", "Proposed by", &self.proposer, "app_…"),
            age = field("older_than_hours", "Proposed at least this many hours ago", &self.older_than_hours, ""),
        )
    }
}
