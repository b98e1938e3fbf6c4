//! Nested objects of request bodies. serde's derived deserialisation of a struct also takes a JSON array
//! (its fields by position), which no documented schema allows: `"limits": [null, null]` would read as
//! limits with every field absent. A member whose type is a struct takes `deserialize_with` one of these,
//! which accept an object only (and, for an optional member, null).

use serde::de::{DeserializeOwned, Error};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// An object member.
pub fn object<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<T, D::Error> {
    let v = Value::deserialize(d)?;
    if !v.is_object() {
        return Err(D::Error::custom("expected an object"));
    }
    serde_json::from_value(v).map_err(D::Error::custom)
}

/// An optional object member: an object, or null for none.
pub fn optional_object<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<Option<T>, D::Error> {
    match Value::deserialize(d)? {
        Value::Null => Ok(None),
        v @ Value::Object(_) => serde_json::from_value(v).map(Some).map_err(D::Error::custom),
        _ => Err(D::Error::custom("expected an object")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, Deserialize, PartialEq)]
    struct Inner {
        a: Option<f64>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Outer {
        #[serde(default, deserialize_with = "object")]
        inner: Inner,
        #[serde(default, deserialize_with = "optional_object")]
        maybe: Option<Inner>,
    }

    #[test]
    fn an_array_is_not_an_object() {
        assert!(serde_json::from_str::<Inner>("[null]").is_ok(), "what serde alone accepts");
        assert!(serde_json::from_str::<Outer>(r#"{"inner": [null]}"#).is_err());
        assert!(serde_json::from_str::<Outer>(r#"{"maybe": [1.0]}"#).is_err());
        let ok: Outer = serde_json::from_str(r#"{"inner": {"a": 1.0}, "maybe": null}"#).expect("objects");
        assert_eq!(ok, Outer { inner: Inner { a: Some(1.0) }, maybe: None });
        let absent: Outer = serde_json::from_str("{}").expect("defaults");
        assert_eq!(absent, Outer { inner: Inner::default(), maybe: None });
    }
}
