//! Objects of request bodies. serde's derived deserialisation of a struct also takes a JSON array (its
//! fields by position), which no documented schema allows: `"limits": [null, null]` would read as limits
//! with every field absent. [`Strict`] reads a body so that every struct, however deep, must be an object;
//! the API's body parser uses it. [`object`] and [`optional_object`] say the same of one member for a type
//! read outside that parser.

use serde::de::{self, DeserializeOwned, Error, IntoDeserializer, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// A parsed JSON value read as a deserializer that refuses an array wherever a struct is expected, at any
/// depth (sequences and maps hand their elements on as `Strict` too). Everything else reads as
/// `serde_json::Value` reads it.
pub struct Strict<'a>(pub &'a Value);

impl<'de> Deserializer<'de> for Strict<'de> {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => n.deserialize_any(visitor),
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => visitor.visit_seq(Seq(items.iter())),
            Value::Object(members) => visitor.visit_map(Members { iter: members.iter(), value: None }),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        if !self.0.is_object() {
            return Err(serde_json::Error::custom("expected an object"));
        }
        self.deserialize_any(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::String(s) => visitor.visit_enum(s.as_str().into_deserializer()),
            // An externally tagged variant with data reads as serde_json reads it.
            other => other.deserialize_enum(name, variants, visitor),
        }
    }

    /// An identifier (an internally tagged enum's tag, such as `"kind": "instrument"`) is a string, as
    /// serde_json reads it: handed to `deserialize_any`, a number would be taken as the variant's position
    /// (`"kind": 0`), which no documented schema allows.
    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::String(s) => visitor.visit_borrowed_str(s),
            _ => Err(serde_json::Error::custom("expected a string")),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf unit unit_struct
        seq tuple tuple_struct map ignored_any
    }
}

struct Seq<'a>(std::slice::Iter<'a, Value>);

impl<'de> de::SeqAccess<'de> for Seq<'de> {
    type Error = serde_json::Error;

    fn next_element_seed<T: de::DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Self::Error> {
        self.0.next().map(|v| seed.deserialize(Strict(v))).transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct Members<'a> {
    iter: serde_json::map::Iter<'a>,
    value: Option<&'a Value>,
}

impl<'de> de::MapAccess<'de> for Members<'de> {
    type Error = serde_json::Error;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Self::Error> {
        match self.iter.next() {
            Some((k, v)) => {
                self.value = Some(v);
                seed.deserialize(de::value::BorrowedStrDeserializer::new(k)).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Self::Error> {
        let value = self.value.take().ok_or_else(|| serde_json::Error::custom("a value without its key"))?;
        seed.deserialize(Strict(value))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

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

    #[derive(Debug, Deserialize, PartialEq)]
    struct Case {
        name: String,
        #[serde(default)]
        note: Option<String>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Suite {
        #[serde(default)]
        cases: Vec<Case>,
        #[serde(default)]
        nested: Option<Box<Suite>>,
    }

    #[test]
    fn strict_refuses_an_array_for_a_struct_at_any_depth_and_reads_the_rest_as_serde_json_does() {
        let read = |v: Value| Suite::deserialize(Strict(&v));
        let ok = serde_json::json!({"cases": [{"name": "a"}], "nested": {"cases": [{"name": "b", "note": null}]}});
        assert_eq!(read(ok.clone()).expect("reads"), serde_json::from_value::<Suite>(ok).expect("reads"));
        assert!(serde_json::from_value::<Suite>(serde_json::json!({"cases": [["a"]]})).is_ok(), "serde alone takes it");
        assert!(read(serde_json::json!({"cases": [["a"]]})).is_err());
        assert!(read(serde_json::json!({"nested": {"cases": [["b"]]}})).is_err());
        assert!(read(serde_json::json!({"nested": [[]]})).is_err());
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    enum Tagged {
        First { a: u8 },
        Second,
    }

    #[test]
    fn strict_takes_a_tag_only_as_its_name() {
        let read = |v: Value| Tagged::deserialize(Strict(&v));
        assert_eq!(read(serde_json::json!({"kind": "first", "a": 1})).expect("reads"), Tagged::First { a: 1 });
        assert_eq!(read(serde_json::json!({"kind": "second"})).expect("reads"), Tagged::Second);
        assert!(
            serde_json::from_value::<Tagged>(serde_json::json!({"kind": 0, "a": 1})).is_err(),
            "as serde_json refuses"
        );
        assert!(read(serde_json::json!({"kind": 0, "a": 1})).is_err());
        assert!(read(serde_json::json!({"kind": 1})).is_err());
        assert!(read(serde_json::json!({"kind": true})).is_err());
    }

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
