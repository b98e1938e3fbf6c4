//! The shapes of request fields, each stated once as a rule the server applies and as the JSON Schema
//! keywords the OpenAPI document shows, so that a client generated from the document sends what the server
//! accepts and nothing it refuses.
//!
//! Patterns are ECMA-262 regular expressions without look-around, so that schema-driven generators
//! (hypothesis-jsonschema, used by Schemathesis) can produce matching values.

/// Text people write: `min..=max` characters (Unicode scalar values, as JSON Schema counts them), no
/// control characters, and not blank when it is required.
pub fn text_ok(s: &str, min: usize, max: usize) -> bool {
    let n = s.chars().count();
    (min..=max).contains(&n) && !s.chars().any(char::is_control) && (min == 0 || !s.trim().is_empty())
}

/// Prose that may span lines: like [`text_ok`] but tab, line feed and carriage return are allowed.
pub fn prose_ok(s: &str, max: usize) -> bool {
    s.chars().count() <= max && !s.chars().any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
}

/// The pattern of [`prose_ok`] text.
pub const PROSE_PATTERN: &str = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$";

/// A nonce: 16 to 128 visible ASCII characters.
pub const NONCE_PATTERN: &str = "^[!-~]{16,128}$";

/// Canonical standard base64 of 32 bytes (an Ed25519 public key): the last character before the padding
/// carries only bits of the key.
pub const BASE64_32_PATTERN: &str = "^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$";

/// Canonical standard base64 of 64 bytes (an Ed25519 signature).
pub const BASE64_64_PATTERN: &str = "^[A-Za-z0-9+/]{85}[AQgw]==$";

/// The pattern of [`text_ok`] text that may be empty: no control characters (C0, DEL, C1).
pub const TEXT_PATTERN: &str = "^[^\\u0000-\\u001F\\u007F-\\u009F]*$";

/// The pattern of required [`text_ok`] text: no control characters and at least one that is not white space.
pub const REQUIRED_TEXT_PATTERN: &str =
    "^[^\\u0000-\\u001F\\u007F-\\u009F]*[^\\s\\u0000-\\u001F\\u007F-\\u009F][^\\u0000-\\u001F\\u007F-\\u009F]*$";

/// `sha256:` and 64 lower-case hexadecimal digits.
pub const SHA256_REF_PATTERN: &str = "^sha256:[0-9a-f]{64}$";

/// A check key: 1 to 64 lower-case letters, digits, `_`, `.`, `-`.
pub const CHECK_KEY_PATTERN: &str = "^[a-z0-9_.-]{1,64}$";

/// An RFC 3339 timestamp with an explicit offset (the form `clock::parse_rfc3339` accepts).
pub const RFC3339_PATTERN: &str = "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,9})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$";

/// An object id with the given prefix: `prefix_` and 26 Crockford base32 characters.
pub fn id_pattern(prefix: &str) -> String {
    format!("^{prefix}_[0-9A-HJKMNP-TV-Z]{{26}}$")
}

/// Schema types of these shapes, for `#[schema(value_type = fields::…, inline)]` on request fields. Unlike
/// `schema_with`, `value_type` keeps the field's doc comment as its description.
macro_rules! schema_types {
    ($($(#[$doc:meta])* $name:ident => $build:expr;)*) => {$(
        $(#[$doc])*
        pub struct $name;

        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                $build.into()
            }
        }

        impl utoipa::ToSchema for $name {}
    )*};
}

schema_types! {
    /// `sha256:` and 64 lower-case hex digits.
    Sha256Ref => schema::sha256_ref();
    /// A check key.
    CheckKey => schema::check_key();
    /// At most 32 check keys.
    CheckKeys => schema::check_keys();
    /// A positive amount in minor units, at most [`crate::money::MAX_AMOUNT_MINOR`].
    Amount => schema::amount();
    /// An ISO 4217 code Fiscus knows.
    CurrencyCode => schema::currency();
    /// A delegation id.
    DelegationId => schema::delegation_id();
    /// A machine identity id.
    IdentityId => schema::identity_id();
    /// A JSON object (free-form).
    Object => schema::object();
    /// An RFC 3339 timestamp.
    Timestamp => schema::timestamp();
    /// A nonce.
    Nonce => schema::nonce();
    /// An Ed25519 public key in base64.
    PublicKey => schema::public_key();
    /// An Ed25519 signature in base64.
    Signature => schema::signature();
    /// A finite number at most 10^12 in size (series values the engine takes).
    Magnitude => schema::magnitude();
    /// An identifier of the SPDX License List or a `LicenseRef-…` reference (`lqm::licence`).
    SpdxLicence => schema::spdx_licence();
    /// `machine_delegated`, the only mode of a delegation.
    MachineDelegatedOnly => schema::machine_delegated_only();
}

/// [`text_ok`] text of `MIN..=MAX` characters.
pub struct Text<const MIN: usize, const MAX: usize>;

impl<const MIN: usize, const MAX: usize> utoipa::PartialSchema for Text<MIN, MAX> {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        schema::text::<MIN, MAX>().into()
    }
}

impl<const MIN: usize, const MAX: usize> utoipa::ToSchema for Text<MIN, MAX> {}

/// [`prose_ok`] text of at most `MAX` characters. (Optional fields say `Option<…>`, which adds `null`.)
pub struct Prose<const MAX: usize>;

impl<const MAX: usize> utoipa::PartialSchema for Prose<MAX> {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        schema::prose::<MAX>().into()
    }
}

impl<const MAX: usize> utoipa::ToSchema for Prose<MAX> {}

/// A finite number from `MIN` to `MAX` (whole bounds), inline where a member's items are bounded.
pub struct Bounded<const MIN: i64, const MAX: i64>;

impl<const MIN: i64, const MAX: i64> utoipa::PartialSchema for Bounded<MIN, MAX> {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::Number)
            .format(Some(utoipa::openapi::schema::SchemaFormat::KnownFormat(
                utoipa::openapi::schema::KnownFormat::Double,
            )))
            .minimum(Some(MIN as f64))
            .maximum(Some(MAX as f64))
            .build()
            .into()
    }
}

impl<const MIN: i64, const MAX: i64> utoipa::ToSchema for Bounded<MIN, MAX> {
    /// One component per range (`NumberMinus1To10`), not one `Bounded` for all.
    fn name() -> std::borrow::Cow<'static, str> {
        let bound = |v: i64| if v < 0 { format!("Minus{}", v.unsigned_abs()) } else { v.to_string() };
        format!("Number{}To{}", bound(MIN), bound(MAX)).into()
    }
}

/// The JSON Schemas behind the schema types above.
pub mod schema {
    use super::*;
    use utoipa::openapi::Object;
    use utoipa::openapi::schema::{ArrayBuilder, KnownFormat, ObjectBuilder, SchemaFormat, Type};

    fn string(min: usize, max: usize, pattern: &str) -> ObjectBuilder {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length(Some(min))
            .max_length(Some(max))
            .pattern(Some(pattern))
    }

    /// [`text_ok`] text of `MIN..=MAX` characters.
    pub fn text<const MIN: usize, const MAX: usize>() -> Object {
        string(MIN, MAX, if MIN == 0 { TEXT_PATTERN } else { REQUIRED_TEXT_PATTERN }).build()
    }

    pub fn sha256_ref() -> Object {
        string(71, 71, SHA256_REF_PATTERN)
            .examples([format!("sha256:{}", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")])
            .build()
    }

    pub fn check_key() -> Object {
        string(1, 64, CHECK_KEY_PATTERN).examples(["sanctions_screening"]).build()
    }

    pub fn check_keys() -> utoipa::openapi::schema::Array {
        ArrayBuilder::new().items(check_key()).max_items(Some(32)).build()
    }

    /// A positive amount in minor units, at most [`crate::money::MAX_AMOUNT_MINOR`].
    pub fn amount() -> Object {
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
            .minimum(Some(1))
            .maximum(Some(crate::money::MAX_AMOUNT_MINOR))
            .build()
    }

    /// An upper-case ISO 4217 code Fiscus knows (an exponent is never guessed).
    pub fn currency() -> Object {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(crate::money::Currency::codes()))
            .examples(["USD"])
            .build()
    }

    pub fn identity_id() -> Object {
        string(30, 30, &id_pattern("mid")).build()
    }

    /// [`prose_ok`] text of at most `MAX` characters.
    pub fn prose<const MAX: usize>() -> Object {
        string(0, MAX, PROSE_PATTERN).build()
    }

    pub fn machine_delegated_only() -> Object {
        ObjectBuilder::new().schema_type(Type::String).enum_values(Some(["machine_delegated"])).build()
    }

    /// A JSON object (free-form).
    pub fn object() -> Object {
        ObjectBuilder::new().schema_type(Type::Object).build()
    }

    /// An RFC 3339 timestamp (`date-time`).
    pub fn timestamp() -> Object {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
            .examples(["2026-11-22T09:30:00Z"])
            .build()
    }

    pub fn delegation_id() -> Object {
        string(30, 30, &id_pattern("dlg")).build()
    }

    pub fn nonce() -> Object {
        string(16, 128, NONCE_PATTERN).build()
    }

    pub fn public_key() -> Object {
        string(44, 44, BASE64_32_PATTERN).examples(["11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="]).build()
    }

    pub fn magnitude() -> Object {
        ObjectBuilder::new()
            .schema_type(Type::Number)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Double)))
            .minimum(Some(-1e12))
            .maximum(Some(1e12))
            .build()
    }

    pub fn signature() -> Object {
        string(88, 88, BASE64_64_PATTERN).build()
    }

    /// The list itself as an `enum` (about 700 identifiers), so that a client learns which identifiers
    /// are accepted from the document rather than from a refusal; or the SPDX `LicenseRef-` form.
    pub fn spdx_licence() -> utoipa::openapi::schema::Schema {
        let listed =
            ObjectBuilder::new().schema_type(Type::String).enum_values(Some(crate::spdx::listed_ids())).build();
        utoipa::openapi::schema::AnyOfBuilder::new()
            .item(listed)
            .item(string(12, 75, crate::spdx::LICENSE_REF_PATTERN).build())
            .examples(["Apache-2.0"])
            .build()
            .into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_rules() {
        assert!(text_ok("Acme Supplies", 1, 200));
        assert!(!text_ok("   ", 1, 200), "blank");
        assert!(text_ok("", 0, 10));
        assert!(!text_ok("a\u{7}b", 0, 10), "control");
        assert!(!text_ok("a\u{85}b", 0, 10), "C1 control");
        assert!(text_ok("ééé", 3, 3), "characters, not bytes");
        assert!(!text_ok("abcd", 1, 3));
    }
}
