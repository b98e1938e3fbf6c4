//! Bank account details as ISO 20022 payment messages carry them: the account by IBAN (ISO 13616, whose
//! mod-97 check digits catch every single-character error and most transpositions) or by a local number
//! with its clearing system, the bank by BIC (ISO 9362), and the holder's name and postal address.
//!
//! What is checked here is what a file's schema cannot check (the IBAN's check digits) plus the schema's
//! own patterns and lengths, so a detail that passes here also passes the bank's XSD. Country-specific BBAN
//! formats are not checked: the bank does that, and a typo is already caught by the check digits.

use serde::{Deserialize, Serialize};

/// Why a bank detail was refused: the field and what it must be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    pub field: &'static str,
    pub message: String,
}

fn refused(field: &'static str, message: impl Into<String>) -> Refused {
    Refused { field, message: message.into() }
}

/// An IBAN in its electronic form: upper case, no spaces, check digits verified.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Iban(String);

impl Iban {
    /// Reads an IBAN as people write it (spaces in groups of four, any case).
    pub fn parse(raw: &str) -> Result<Iban, Refused> {
        let compact: String = raw.chars().filter(|c| !c.is_whitespace()).map(|c| c.to_ascii_uppercase()).collect();
        let bytes = compact.as_bytes();
        // ISO 20022's IBAN2007Identifier: [A-Z]{2}[0-9]{2}[a-zA-Z0-9]{1,30}; registered IBANs are 15 to 34 long.
        let shape_ok = (15..=34).contains(&bytes.len())
            && bytes[..2].iter().all(u8::is_ascii_uppercase)
            && bytes[2..4].iter().all(u8::is_ascii_digit)
            && bytes[4..].iter().all(u8::is_ascii_alphanumeric);
        if !shape_ok {
            return Err(refused(
                "iban",
                "must be a country code, two check digits and 11 to 30 letters or digits (15 to 34 in all)",
            ));
        }
        if mod97(&compact) != 1 {
            return Err(refused("iban", "its check digits do not match (ISO 13616 mod 97): a character is wrong"));
        }
        Ok(Iban(compact))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The ISO 3166 country of the account.
    pub fn country(&self) -> &str {
        &self.0[..2]
    }
}

/// ISO 7064 MOD 97-10 over the IBAN rearranged (its first four characters moved to the end, letters as
/// 10..35), computed digit by digit so no big number is needed.
fn mod97(iban: &str) -> u32 {
    let (head, tail) = iban.split_at(4);
    tail.bytes().chain(head.bytes()).fold(0u32, |acc, b| match b {
        b'0'..=b'9' => (acc * 10 + u32::from(b - b'0')) % 97,
        _ => (acc * 100 + u32::from(b - b'A') + 10) % 97,
    })
}

impl TryFrom<String> for Iban {
    type Error = String;

    fn try_from(raw: String) -> Result<Iban, String> {
        Iban::parse(&raw).map_err(|r| r.message)
    }
}

impl From<Iban> for String {
    fn from(iban: Iban) -> String {
        iban.0
    }
}

/// A BIC (ISO 9362): 4 characters of the institution, 2 letters of its country, 2 of its location and an
/// optional 3 of the branch, as ISO 20022's `BICFIDec2014Identifier` writes it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Bic(String);

impl Bic {
    pub fn parse(raw: &str) -> Result<Bic, Refused> {
        let bic = raw.trim().to_ascii_uppercase();
        let b = bic.as_bytes();
        let upper_alnum = |c: &u8| c.is_ascii_uppercase() || c.is_ascii_digit();
        let ok = (b.len() == 8 || b.len() == 11)
            && b[..4].iter().all(upper_alnum)
            && b[4..6].iter().all(u8::is_ascii_uppercase)
            && b[6..].iter().all(upper_alnum);
        if !ok {
            return Err(refused(
                "bic",
                "must be 8 or 11 letters or digits (ISO 9362: bank, country, location, branch)",
            ));
        }
        Ok(Bic(bic))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The ISO 3166 country of the institution.
    pub fn country(&self) -> &str {
        &self.0[4..6]
    }
}

impl TryFrom<String> for Bic {
    type Error = String;

    fn try_from(raw: String) -> Result<Bic, String> {
        Bic::parse(&raw).map_err(|r| r.message)
    }
}

impl From<Bic> for String {
    fn from(bic: Bic) -> String {
        bic.0
    }
}

/// An ISO 3166-1 alpha-2 country code (its shape; the list of assigned codes is not kept here).
pub fn country(field: &'static str, raw: &str) -> Result<String, Refused> {
    let code = raw.trim().to_ascii_uppercase();
    if code.len() == 2 && code.bytes().all(|b| b.is_ascii_uppercase()) {
        Ok(code)
    } else {
        Err(refused(field, "must be an ISO 3166 country code of two letters"))
    }
}

/// ISO 20022 text of at most `max` characters (`Max35Text`, `Max70Text`, `Max140Text`): trimmed, not empty,
/// no control characters.
pub fn text(field: &'static str, raw: &str, max: usize) -> Result<String, Refused> {
    let t = raw.trim();
    if t.is_empty() || t.chars().count() > max || t.chars().any(char::is_control) {
        return Err(refused(field, format!("must be 1 to {max} characters without control characters")));
    }
    Ok(t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ibans_with_good_check_digits_are_read_as_people_write_them() {
        // Example IBANs published in the SWIFT IBAN registry's format examples.
        for (raw, compact) in [
            ("DE89 3704 0044 0532 0130 00", "DE89370400440532013000"),
            ("gb29 nwbk 6016 1331 9268 19", "GB29NWBK60161331926819"),
            ("FR1420041010050500013M02606", "FR1420041010050500013M02606"),
            ("NO9386011117947", "NO9386011117947"),
        ] {
            let iban = Iban::parse(raw).expect(raw);
            assert_eq!(iban.as_str(), compact);
        }
        assert_eq!(Iban::parse("DE89370400440532013000").expect("iban").country(), "DE");
    }

    #[test]
    fn a_wrong_character_or_swapped_pair_is_refused_by_the_check_digits() {
        for bad in
            ["DE89370400440532013001", "DE89370400440532031000", "DE88370400440532013000", "GB29NWBK60161331926818"]
        {
            let r = Iban::parse(bad).expect_err(bad);
            assert_eq!(r.field, "iban");
            assert!(r.message.contains("check digits"), "{bad}: {}", r.message);
        }
    }

    #[test]
    fn malformed_ibans_are_refused_by_their_shape() {
        for bad in [
            "",
            "DE89",
            "1289370400440532013000",
            "DEX9370400440532013000",
            "DE89-3704-0044-0532-0130-00",
            &"DE89".repeat(10),
        ] {
            let r = Iban::parse(bad).expect_err(bad);
            assert!(r.message.contains("country code"), "{bad}: {}", r.message);
        }
    }

    #[test]
    fn bics_of_eight_or_eleven_characters_are_read_and_others_refused() {
        assert_eq!(Bic::parse("deutdeff").expect("bic").as_str(), "DEUTDEFF");
        assert_eq!(Bic::parse("DEUTDEFF500").expect("bic").country(), "DE");
        assert_eq!(Bic::parse("1234DEFF").expect("bic, ISO 9362:2014 allows digits").as_str(), "1234DEFF");
        for bad in ["DEUTDEF", "DEUTDEFF50", "DEUT12FF", "DEUTDEFF5000", "DEUT DEFF"] {
            assert_eq!(Bic::parse(bad).expect_err(bad).field, "bic");
        }
    }

    #[test]
    fn serde_reads_through_the_same_checks() {
        let iban: Iban = serde_json::from_str("\"DE89 3704 0044 0532 0130 00\"").expect("iban");
        assert_eq!(serde_json::to_string(&iban).expect("json"), "\"DE89370400440532013000\"");
        assert!(serde_json::from_str::<Iban>("\"DE00370400440532013000\"").is_err());
        assert!(serde_json::from_str::<Bic>("\"XX\"").is_err());
    }

    #[test]
    fn countries_and_texts_are_checked_as_iso_20022_writes_them() {
        assert_eq!(country("country", " de ").expect("country"), "DE");
        assert!(country("country", "DEU").is_err());
        assert_eq!(text("name", "  Acme GmbH ", 70).expect("name"), "Acme GmbH");
        assert!(text("name", "", 70).is_err() && text("name", &"x".repeat(71), 70).is_err());
        assert!(text("name", "a\nb", 70).is_err());
    }
}
