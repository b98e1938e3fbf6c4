//! I-JSON (RFC 7493) at the edge: every request body Fiscus parses goes through [`parse`].
//!
//! RFC 8785 canonicalisation, which every seal relies on, assumes I-JSON. A plain JSON parser keeps the last
//! of two members with the same name, so `{"amount_minor":100,"amount_minor":99999999}` would be shown to
//! one reader as 100 and sealed as 99999999; here it is refused. Strings (member names included) carrying
//! U+0000 are refused too: PostgreSQL cannot store them in text columns while SQLite can, so accepting them
//! would make the two backends disagree. Lone surrogates are already refused by the JSON parser itself.

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;

/// 2^53: every integer up to here is exactly representable as an IEEE double.
const INTEGRAL_EXACT: f64 = 9_007_199_254_740_992.0;

/// Why a body is not acceptable I-JSON.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IJsonError {
    /// Not JSON at all (the parser's message, with its position).
    #[error("{0}")]
    Syntax(String),
    /// An object carries the same member name twice (`path` is the object's JSON path).
    #[error("duplicate member `{name}` in {path}")]
    DuplicateMember { path: String, name: String },
    /// A string or member name contains U+0000.
    #[error("{path} contains the character U+0000, which is not accepted")]
    NulCharacter { path: String },
}

/// Parses `bytes` as one JSON value, refusing duplicate member names and U+0000 anywhere.
pub fn parse(bytes: &[u8]) -> Result<Value, IJsonError> {
    let found = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let seed = Node { path: String::from("$"), found: &found };
    let result = seed.deserialize(&mut de).and_then(|v| de.end().map(|()| v));
    match (result, found.into_inner()) {
        (_, Some(refusal)) => Err(refusal),
        (Ok(value), None) => Ok(value),
        (Err(e), None) => Err(IJsonError::Syntax(e.to_string())),
    }
}

/// Checks that a text field of a form, header or query (not JSON) carries no U+0000.
pub fn has_nul(text: &str) -> bool {
    text.contains('\0')
}

/// One value being parsed, with the path used in refusals and the slot the first refusal is put in (serde
/// errors carry only text, so the typed refusal travels beside them).
struct Node<'a> {
    path: String,
    found: &'a RefCell<Option<IJsonError>>,
}

impl Node<'_> {
    fn refuse<E: de::Error>(&self, refusal: IJsonError) -> E {
        let message = refusal.to_string();
        self.found.borrow_mut().get_or_insert(refusal);
        E::custom(message)
    }

    fn string<E: de::Error>(&self, s: &str) -> Result<Value, E> {
        if has_nul(s) {
            return Err(self.refuse(IJsonError::NulCharacter { path: self.path.clone() }));
        }
        Ok(Value::String(s.to_owned()))
    }
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        // JSON has one number type: `5.0` is the integer 5 (JSON Schema counts it as an integer, and RFC 8785
        // writes it as `5`). Integral values are kept as integers where every reader agrees on them (within
        // ±2^53, RFC 7493 §2.2), so an integer field accepts them; beyond that a float stays a float.
        if v.fract() == 0.0 && v.abs() <= INTEGRAL_EXACT {
            return Ok(Value::Number((v as i64).into()));
        }
        Number::from_f64(v).map(Value::Number).ok_or_else(|| E::custom("a number must be finite"))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        self.string(v)
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        self.string(&v)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(item) =
            seq.next_element_seed(Node { path: format!("{}[{}]", self.path, items.len()), found: self.found })?
        {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        let mut seen: HashSet<String> = HashSet::new();
        while let Some(name) = map.next_key::<String>()? {
            let path = format!("{}.{}", self.path, name);
            if has_nul(&name) {
                return Err(self.refuse(IJsonError::NulCharacter { path: self.path.clone() }));
            }
            if !seen.insert(name.clone()) {
                return Err(self.refuse(IJsonError::DuplicateMember { path: self.path.clone(), name }));
            }
            let value = map.next_value_seed(Node { path, found: self.found })?;
            members.insert(name, value);
        }
        Ok(Value::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn accepts_ordinary_json_as_serde_json_would() {
        let text = br#"{"a":[1,-2,3.5,true,null,"x"],"b":{"c":"d"},"e":18446744073709551615}"#;
        assert_eq!(parse(text), Ok(serde_json::from_slice::<Value>(text).expect("json")));
        assert_eq!(parse(b" 42 "), Ok(json!(42)));
    }

    #[test]
    fn integral_numbers_written_with_a_fraction_are_integers_within_the_exact_range() {
        assert_eq!(parse(b"[5.0, -0.0, 1e3, 2.5, 1e300]"), Ok(json!([5, 0, 1000, 2.5, 1e300])));
        assert_eq!(parse(b"9007199254740992.0"), Ok(json!(9_007_199_254_740_992_i64)));
        assert_eq!(parse(b"18014398509481984.0"), Ok(json!(18_014_398_509_481_984.0_f64)));
    }

    #[test]
    fn refuses_a_duplicate_member_naming_it() {
        let refused = parse(br#"{"amount_minor":100,"x":{"k":1,"k":2}}"#);
        assert_eq!(refused, Err(IJsonError::DuplicateMember { path: "$.x".into(), name: "k".into() }));
        let top = parse(br#"{"amount_minor":100,"amount_minor":99999999}"#);
        assert_eq!(top, Err(IJsonError::DuplicateMember { path: "$".into(), name: "amount_minor".into() }));
    }

    #[test]
    fn refuses_nul_in_values_and_member_names() {
        assert_eq!(parse(br#"{"t":["ok","a\u0000b"]}"#), Err(IJsonError::NulCharacter { path: "$.t[1]".into() }));
        assert_eq!(parse(br#"{"a\u0000":1}"#), Err(IJsonError::NulCharacter { path: "$".into() }));
    }

    #[test]
    fn refuses_lone_surrogates_and_trailing_garbage() {
        assert!(matches!(parse(br#"{"t":"\ud800"}"#), Err(IJsonError::Syntax(_))));
        assert!(matches!(parse(br#"{"t":"\udc00x"}"#), Err(IJsonError::Syntax(_))));
        assert!(matches!(parse(br#"{} {}"#), Err(IJsonError::Syntax(_))));
    }
}
