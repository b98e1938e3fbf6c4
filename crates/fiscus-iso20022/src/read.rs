//! What reading a bank's message shares: which message a document is (by its namespace, which the XML reader
//! does not check by itself), amounts to minor units exactly, dates out of ISO 20022's date-or-time choice.

use fiscus_domain::money::Currency;
use serde::Deserialize;

/// Why a bank's message was not read. Nothing of a refused message is used.
#[derive(Debug, PartialEq, Eq)]
pub enum ReadError {
    /// Not well-formed XML, or not the structure of the message it names.
    Malformed(String),
    /// A message (or version) this crate does not read, named by its namespace.
    Unsupported(String),
    /// Well-formed, but a value breaks the message's rules (an amount with more decimals than its currency
    /// has, an unknown currency, a code outside its list).
    Invalid(String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Malformed(why) => write!(f, "the message cannot be read: {why}"),
            ReadError::Unsupported(ns) => write!(f, "{ns} is not a message Fiscus reads"),
            ReadError::Invalid(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for ReadError {}

/// The message a document is, from its root's default namespace (`urn:iso:std:iso:20022:tech:xsd:NAME`).
pub(crate) fn message_name(xml: &str) -> Result<String, ReadError> {
    #[derive(Deserialize)]
    struct Root {
        #[serde(rename = "@xmlns", default)]
        xmlns: String,
    }
    let root: Root = quick_xml::de::from_str(xml).map_err(|e| ReadError::Malformed(e.to_string()))?;
    root.xmlns
        .strip_prefix("urn:iso:std:iso:20022:tech:xsd:")
        .map(str::to_string)
        .ok_or_else(|| ReadError::Unsupported(format!("a document in namespace {:?}", root.xmlns)))
}

pub(crate) fn parse<'de, T: Deserialize<'de>>(xml: &'de str) -> Result<T, ReadError> {
    quick_xml::de::from_str(xml).map_err(|e| ReadError::Malformed(e.to_string()))
}

/// An amount with its currency (`<Amt Ccy="EUR">125.50</Amt>`).
#[derive(Deserialize)]
pub(crate) struct AmountXml {
    #[serde(rename = "@Ccy")]
    pub(crate) ccy: String,
    #[serde(rename = "$text")]
    pub(crate) value: String,
}

impl AmountXml {
    /// The amount in minor units of its currency.
    pub(crate) fn minor(&self) -> Result<(i64, Currency), ReadError> {
        let currency = Currency::parse(self.ccy.trim())
            .ok_or_else(|| ReadError::Invalid(format!("{:?} is not an ISO 4217 currency code", self.ccy)))?;
        Ok((minor_units(self.value.trim(), currency)?, currency))
    }
}

/// `125.50` EUR → 12550, exactly: more significant decimals than the currency has are refused (a bank's
/// amount is never rounded here), trailing zeros beyond them are not.
pub(crate) fn minor_units(text: &str, currency: Currency) -> Result<i64, ReadError> {
    let bad = || ReadError::Invalid(format!("{text:?} is not an amount in {}", currency.code()));
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let exponent = usize::from(currency.exponent());
    let (kept, dropped) = fraction.split_at(fraction.len().min(exponent));
    if dropped.bytes().any(|b| b != b'0') {
        return Err(ReadError::Invalid(format!(
            "{text} {} has more decimals than the currency's {exponent}",
            currency.code()
        )));
    }
    let digits = format!("{whole}{kept:0<exponent$}");
    digits.parse::<i64>().map_err(|_| bad())
}

/// ISO 20022's `DateAndDateTime2Choice`: a date, or a date and time (whose date is kept).
#[derive(Deserialize, Default)]
#[serde(rename_all = "PascalCase")]
pub(crate) struct DateChoice {
    dt: Option<String>,
    dt_tm: Option<String>,
}

impl DateChoice {
    pub(crate) fn date(&self) -> Option<String> {
        self.dt.clone().or_else(|| self.dt_tm.as_ref().map(|t| t.chars().take(10).collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_become_minor_units_exactly() {
        let eur = Currency::parse("EUR").expect("eur");
        let jpy = Currency::parse("JPY").expect("jpy");
        let bhd = Currency::parse("BHD").expect("bhd");
        assert_eq!(minor_units("125.50", eur), Ok(12550));
        assert_eq!(minor_units("125.5", eur), Ok(12550));
        assert_eq!(minor_units("125", eur), Ok(12500));
        assert_eq!(minor_units("125.500", eur), Ok(12550));
        assert_eq!(minor_units("1500", jpy), Ok(1500));
        assert_eq!(minor_units("1.5", bhd), Ok(1500));
        for bad in ["125.505", "-1", "1e3", "", ".5", "12,50"] {
            assert!(minor_units(bad, eur).is_err(), "{bad}");
        }
        assert!(minor_units("1.5", jpy).is_err());
    }
}
