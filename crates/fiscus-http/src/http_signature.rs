//! RFC 9421 HTTP Message Signatures (Ed25519 only) and RFC 9530 `Content-Digest`, as the agent-execution
//! gateway verifies them.
//!
//! A signed request carries `Signature-Input: <label>=(<components>);created=…;keyid="…";nonce="…"[;alg="ed25519"]`
//! and `Signature: <label>=:<base64>:`. The verifier rebuilds the *signature base* (one line per covered
//! component, then the `@signature-params` line) from the request as it arrived and checks the Ed25519
//! signature over it with the client's registered key. Everything here is pure: the server supplies the
//! request's parts, the clock and the key.
//!
//! What is accepted, and why (the RFC leaves these to the verifier, section 3.2.1 and section 7):
//! - exactly one signature per request: a second one could only be another party's, which this gateway has
//!   no use for, and accepting "any one that verifies" invites confusion about who signed;
//! - `created`, `keyid` and `nonce` are required (the nonce by [`SignedRequest::check_coverage`], so that
//!   the RFC's own examples, which have none, still parse and verify); `alg`, when present, must be `ed25519`; `expires` and `tag`
//!   are optional;
//! - the covered components must include `@method` and `@target-uri` (so the signature binds what is done and
//!   where), and `content-digest` whenever the request has a body (so it binds the body, through RFC 9530);
//! - components with parameters (`;sf`, `;key`, `;bs`, `;req`, `;tr`) and derived components other than
//!   `@method`, `@target-uri`, `@authority`, `@scheme`, `@request-target`, `@path` and `@query` are refused
//!   rather than guessed at.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use ed25519_dalek::{Signature, VerifyingKey};
use sfv::{BareItem, Dictionary, FieldType as _, InnerList, Item, ListEntry, Parser};
use sha2::{Digest as _, Sha256, Sha512};

/// Why a signature or digest was not accepted. The text is safe to show the client: it names what is wrong
/// with the request, never anything about the key or the stored client.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("the {0} header is not a valid structured-field dictionary (RFC 8941)")]
    Malformed(&'static str),
    #[error("exactly one signature is accepted, with the same label in Signature-Input and Signature")]
    NotOneSignature,
    #[error("the signature parameters must include `{0}`")]
    MissingParameter(&'static str),
    #[error("the signature parameter `{0}` is not valid")]
    BadParameter(&'static str),
    #[error("only alg=\"ed25519\" is accepted")]
    UnsupportedAlgorithm,
    #[error("the covered component {0} is not supported")]
    UnsupportedComponent(String),
    #[error("the covered components must include {0}")]
    MissingComponent(&'static str),
    #[error("the covered component {0} is listed twice")]
    DuplicateComponent(String),
    #[error("the covered header {0} is not in the request")]
    HeaderAbsent(String),
    #[error("the signature was created outside the accepted window of {0} seconds")]
    Stale(i64),
    #[error("the signature has expired")]
    Expired,
    #[error("the signature does not verify")]
    BadSignature,
    #[error("a request with a body must carry a Content-Digest header (RFC 9530)")]
    DigestMissing,
    #[error("the Content-Digest header names no supported algorithm (sha-256, sha-512)")]
    DigestUnsupported,
    #[error("the Content-Digest does not match the body")]
    DigestMismatch,
}

/// The derived components this verifier can compute.
const DERIVED: [&str; 7] = ["@method", "@target-uri", "@authority", "@scheme", "@request-target", "@path", "@query"];

/// Longest nonce accepted (the nonce is stored to refuse replays).
pub const MAX_NONCE_LEN: usize = 128;

/// A parsed, not yet verified, request signature.
#[derive(Clone, Debug)]
pub struct SignedRequest {
    pub label: String,
    /// Covered component identifiers in order (`@method`, `content-digest`, …), lowercase.
    pub components: Vec<String>,
    /// Seconds since the epoch.
    pub created: i64,
    pub expires: Option<i64>,
    pub keyid: String,
    /// Optional in RFC 9421; this gateway requires it ([`SignedRequest::check_coverage`]).
    pub nonce: Option<String>,
    /// The `@signature-params` value, re-serialized from what was parsed (RFC 9421 section 2.3).
    params_line: String,
    signature: Vec<u8>,
}

/// The request as it arrived, as the signature base needs it.
pub struct RequestParts<'a> {
    pub method: &'a str,
    /// `http` or `https`, as the client addressed the service (the configured public URL's scheme).
    pub scheme: &'a str,
    /// Host and port, as in the `Host` header (or the configured public URL's authority).
    pub authority: &'a str,
    pub path: &'a str,
    pub query: Option<&'a str>,
    /// Every value of a header (by lowercase name), in order.
    pub header: &'a dyn Fn(&str) -> Vec<String>,
}

/// Parses the two headers (each already combined across field lines with `, `).
pub fn parse(signature_input: &str, signature: &str) -> Result<SignedRequest, Refusal> {
    let inputs: Dictionary = Parser::new(signature_input).parse().map_err(|_| Refusal::Malformed("Signature-Input"))?;
    let signatures: Dictionary = Parser::new(signature).parse().map_err(|_| Refusal::Malformed("Signature"))?;
    if inputs.len() != 1 || signatures.len() != 1 {
        return Err(Refusal::NotOneSignature);
    }
    let (label, entry) = inputs.iter().next().ok_or(Refusal::NotOneSignature)?;
    let Some(ListEntry::Item(sig_item)) = signatures.get(label) else { return Err(Refusal::NotOneSignature) };
    let sig_bytes = sig_item.bare_item.as_byte_sequence().ok_or(Refusal::Malformed("Signature"))?.to_vec();
    let ListEntry::InnerList(inner) = entry else { return Err(Refusal::Malformed("Signature-Input")) };

    let mut components = Vec::with_capacity(inner.items.len());
    for item in &inner.items {
        let Some(name) = item.bare_item.as_string().map(|s| s.as_str().to_string()) else {
            return Err(Refusal::Malformed("Signature-Input"));
        };
        if !item.params.is_empty() {
            return Err(Refusal::UnsupportedComponent(format!("\"{name}\" with parameters")));
        }
        if name.starts_with('@') && !DERIVED.contains(&name.as_str()) {
            return Err(Refusal::UnsupportedComponent(format!("\"{name}\"")));
        }
        if !name.starts_with('@') && !is_field_name(&name) {
            return Err(Refusal::UnsupportedComponent(format!("\"{name}\"")));
        }
        if components.contains(&name) {
            return Err(Refusal::DuplicateComponent(format!("\"{name}\"")));
        }
        components.push(name);
    }

    let mut created = None;
    let mut expires = None;
    let mut keyid = None;
    let mut nonce = None;
    for (key, value) in &inner.params {
        match key.as_str() {
            "created" => created = Some(value.as_integer().ok_or(Refusal::BadParameter("created"))?),
            "expires" => expires = Some(value.as_integer().ok_or(Refusal::BadParameter("expires"))?),
            "keyid" => keyid = Some(string_param(value, "keyid")?),
            "nonce" => nonce = Some(string_param(value, "nonce")?),
            "alg" if string_param(value, "alg")? != "ed25519" => return Err(Refusal::UnsupportedAlgorithm),
            "tag" => {
                string_param(value, "tag")?;
            }
            // Unknown parameters are still covered by the signature (they are in the params line).
            _ => {}
        }
    }
    let created = i64::from(created.ok_or(Refusal::MissingParameter("created"))?);
    let keyid = keyid.ok_or(Refusal::MissingParameter("keyid"))?;
    if nonce.as_ref().is_some_and(|n| n.is_empty() || n.len() > MAX_NONCE_LEN) {
        return Err(Refusal::BadParameter("nonce"));
    }
    if keyid.is_empty() || keyid.len() > 64 {
        return Err(Refusal::BadParameter("keyid"));
    }
    Ok(SignedRequest {
        label: label.as_str().to_string(),
        components,
        created,
        expires: expires.map(i64::from),
        keyid,
        nonce,
        params_line: serialize_params(inner)?,
        signature: sig_bytes,
    })
}

fn string_param(value: &BareItem, name: &'static str) -> Result<String, Refusal> {
    value.as_string().map(|s| s.as_str().to_string()).ok_or(Refusal::BadParameter(name))
}

/// RFC 9110 field names are tokens; component identifiers for fields are their lowercase names.
fn is_field_name(name: &str) -> bool {
    !name.is_empty()
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// The inner list with its parameters, serialized as RFC 8941 section 4.1.1.1 says (the `@signature-params`
/// value is defined as exactly that serialization).
fn serialize_params(inner: &InnerList) -> Result<String, Refusal> {
    let list: Vec<ListEntry> = vec![ListEntry::InnerList(inner.clone())];
    list.serialize().ok_or(Refusal::Malformed("Signature-Input"))
}

impl SignedRequest {
    /// Checks what this gateway requires of every signed request beyond RFC 9421: a nonce, and the covered
    /// components.
    pub fn check_coverage(&self, has_body: bool) -> Result<(), Refusal> {
        if self.nonce.is_none() {
            return Err(Refusal::MissingParameter("nonce"));
        }
        for required in ["@method", "@target-uri"] {
            if !self.components.iter().any(|c| c == required) {
                return Err(Refusal::MissingComponent(required));
            }
        }
        if has_body && !self.components.iter().any(|c| c == "content-digest") {
            return Err(Refusal::MissingComponent("content-digest"));
        }
        Ok(())
    }

    /// `created` within `window` seconds before `now` (and at most `skew` seconds after it, for clocks a
    /// little ahead); `expires`, when given, not passed.
    pub fn check_freshness(&self, now: i64, window: i64, skew: i64) -> Result<(), Refusal> {
        if self.created > now + skew || self.created < now - window {
            return Err(Refusal::Stale(window));
        }
        if self.expires.is_some_and(|e| e <= now) {
            return Err(Refusal::Expired);
        }
        Ok(())
    }

    /// The signature base (RFC 9421 section 2.5) of `request` for these parameters.
    pub fn signature_base(&self, request: &RequestParts<'_>) -> Result<String, Refusal> {
        let mut base = String::new();
        for name in &self.components {
            let value = match name.as_str() {
                "@method" => request.method.to_string(),
                "@target-uri" => format!("{}{}", origin(request), request_target(request)),
                "@authority" => request.authority.to_ascii_lowercase(),
                "@scheme" => request.scheme.to_ascii_lowercase(),
                "@request-target" => request_target(request),
                "@path" => if request.path.is_empty() { "/" } else { request.path }.to_string(),
                "@query" => format!("?{}", request.query.unwrap_or("")),
                field => {
                    let values = (request.header)(field);
                    if values.is_empty() {
                        return Err(Refusal::HeaderAbsent(format!("\"{field}\"")));
                    }
                    values.iter().map(|v| v.trim_matches([' ', '\t'])).collect::<Vec<_>>().join(", ")
                }
            };
            if value.contains('\n') || value.contains('\r') {
                return Err(Refusal::BadSignature);
            }
            base.push_str(&format!("\"{name}\": {value}\n"));
        }
        base.push_str(&format!("\"@signature-params\": {}", self.params_line));
        Ok(base)
    }

    /// Verifies the signature over `request` with `key` (strict Ed25519: no malleable signatures, no weak keys).
    pub fn verify(&self, request: &RequestParts<'_>, key: &VerifyingKey) -> Result<(), Refusal> {
        let base = self.signature_base(request)?;
        let bytes: [u8; 64] = self.signature.as_slice().try_into().map_err(|_| Refusal::BadSignature)?;
        key.verify_strict(base.as_bytes(), &Signature::from_bytes(&bytes)).map_err(|_| Refusal::BadSignature)
    }
}

fn origin(request: &RequestParts<'_>) -> String {
    format!("{}://{}", request.scheme.to_ascii_lowercase(), request.authority.to_ascii_lowercase())
}

fn request_target(request: &RequestParts<'_>) -> String {
    let path = if request.path.is_empty() { "/" } else { request.path };
    match request.query {
        Some(q) => format!("{path}?{q}"),
        None => path.to_string(),
    }
}

/// Checks an RFC 9530 `Content-Digest` header against `body`: every supported algorithm it names must match,
/// and it must name at least one (`sha-256` or `sha-512`); unknown algorithms are ignored, as the RFC says.
pub fn check_content_digest(header: Option<&str>, body: &[u8]) -> Result<(), Refusal> {
    let Some(header) = header else { return Err(Refusal::DigestMissing) };
    let digests: Dictionary = Parser::new(header).parse().map_err(|_| Refusal::Malformed("Content-Digest"))?;
    let mut checked = 0;
    for (algorithm, entry) in &digests {
        let ListEntry::Item(Item { bare_item, .. }) = entry else {
            return Err(Refusal::Malformed("Content-Digest"));
        };
        let expected: Vec<u8> = match algorithm.as_str() {
            "sha-256" => Sha256::digest(body).to_vec(),
            "sha-512" => Sha512::digest(body).to_vec(),
            _ => continue,
        };
        let presented = bare_item.as_byte_sequence().ok_or(Refusal::Malformed("Content-Digest"))?;
        if presented != expected.as_slice() {
            return Err(Refusal::DigestMismatch);
        }
        checked += 1;
    }
    if checked == 0 {
        return Err(Refusal::DigestUnsupported);
    }
    Ok(())
}

/// `sha-256=:<base64>:` of `body`, as a client would send it (used by tests and examples).
pub fn content_digest(body: &[u8]) -> String {
    format!("sha-256=:{}:", B64.encode(Sha256::digest(body)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::{Signer as _, SigningKey};

    fn headers(list: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Vec<String> {
        move |name: &str| list.iter().filter(|(n, _)| *n == name).map(|(_, v)| v.to_string()).collect()
    }

    const BODY: &[u8] = br#"{"hello": "world"}"#;

    fn request<'a>(header: &'a dyn Fn(&str) -> Vec<String>) -> RequestParts<'a> {
        RequestParts {
            method: "POST",
            scheme: "https",
            authority: "fiscus.example",
            path: "/api/v2/agent-execution/mcp",
            query: Some("a=1"),
            header,
        }
    }

    /// Signs like a client: builds the params, the base, and the two headers.
    fn sign(key: &SigningKey, params: &str, header: &dyn Fn(&str) -> Vec<String>) -> (String, String) {
        let input = format!("sig1={params}");
        let parsed = parse(&input, "sig1=:AAAA:").expect("params parse");
        let base = parsed.signature_base(&request(header)).expect("base");
        let signature = key.sign(base.as_bytes());
        (input, format!("sig1=:{}:", B64.encode(signature.to_bytes())))
    }

    const PARAMS: &str =
        r#"("@method" "@target-uri" "content-digest");created=1700000000;keyid="ecl_1";nonce="n-1";alg="ed25519""#;

    #[test]
    fn a_signature_over_method_target_and_digest_verifies_and_binds_each() {
        let key = SigningKey::from_bytes(&[7; 32]);
        static H: &[(&str, &str)] = &[("content-digest", "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:")];
        let header = headers(H);
        let (input, signature) = sign(&key, PARAMS, &header);
        let parsed = parse(&input, &signature).expect("parse");
        assert_eq!(parsed.keyid, "ecl_1");
        assert_eq!(parsed.nonce.as_deref(), Some("n-1"));
        parsed.check_coverage(true).expect("coverage");
        parsed.verify(&request(&header), &key.verifying_key()).expect("verifies");
        let base = parsed.signature_base(&request(&header)).expect("base");
        assert_eq!(
            base,
            "\"@method\": POST\n\"@target-uri\": https://fiscus.example/api/v2/agent-execution/mcp?a=1\n\
             \"content-digest\": sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:\n\
             \"@signature-params\": (\"@method\" \"@target-uri\" \"content-digest\");created=1700000000;keyid=\"ecl_1\";nonce=\"n-1\";alg=\"ed25519\""
        );
        // Another method, path or digest: the same signature no longer verifies.
        let mut other = request(&header);
        other.method = "DELETE";
        assert_eq!(parsed.verify(&other, &key.verifying_key()), Err(Refusal::BadSignature));
        let mut other = request(&header);
        other.path = "/api/v2/agent-execution/a2a";
        assert_eq!(parsed.verify(&other, &key.verifying_key()), Err(Refusal::BadSignature));
        static H2: &[(&str, &str)] = &[("content-digest", "sha-256=:AAAA:")];
        let header2 = headers(H2);
        assert_eq!(parsed.verify(&request(&header2), &key.verifying_key()), Err(Refusal::BadSignature));
        // Another key.
        let stranger = SigningKey::from_bytes(&[9; 32]);
        assert_eq!(parsed.verify(&request(&header), &stranger.verifying_key()), Err(Refusal::BadSignature));
    }

    #[test]
    fn the_params_line_is_what_was_signed_so_a_changed_parameter_breaks_the_signature() {
        let key = SigningKey::from_bytes(&[7; 32]);
        static H: &[(&str, &str)] = &[("content-digest", "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:")];
        let header = headers(H);
        let (input, signature) = sign(&key, PARAMS, &header);
        let replayed = input.replace("nonce=\"n-1\"", "nonce=\"n-2\"");
        let parsed = parse(&replayed, &signature).expect("parse");
        assert_eq!(parsed.verify(&request(&header), &key.verifying_key()), Err(Refusal::BadSignature));
    }

    #[test]
    fn malformed_and_unsupported_inputs_are_refused_with_their_reason() {
        let sig = "sig1=:AAAA:";
        assert_eq!(parse("sig1=(", sig).expect_err("refused"), Refusal::Malformed("Signature-Input"));
        assert_eq!(parse(PARAMS, sig).expect_err("refused"), Refusal::Malformed("Signature-Input"));
        let two = format!("sig1={PARAMS}, sig2={PARAMS}");
        assert_eq!(parse(&two, "sig1=:AAAA:, sig2=:AAAA:").expect_err("refused"), Refusal::NotOneSignature);
        assert_eq!(parse(&format!("sig1={PARAMS}"), "other=:AAAA:").expect_err("refused"), Refusal::NotOneSignature);
        let no_nonce = r#"sig1=("@method" "@target-uri");created=1;keyid="k""#;
        assert_eq!(
            parse(no_nonce, sig).expect("parses").check_coverage(false),
            Err(Refusal::MissingParameter("nonce"))
        );
        let no_created = r#"sig1=("@method");keyid="k";nonce="n""#;
        assert_eq!(parse(no_created, sig).expect_err("refused"), Refusal::MissingParameter("created"));
        let rsa = r#"sig1=("@method");created=1;keyid="k";nonce="n";alg="rsa-pss-sha512""#;
        assert_eq!(parse(rsa, sig).expect_err("refused"), Refusal::UnsupportedAlgorithm);
        let sf = r#"sig1=("content-digest";sf);created=1;keyid="k";nonce="n""#;
        assert!(matches!(parse(sf, sig).expect_err("refused"), Refusal::UnsupportedComponent(_)));
        let status = r#"sig1=("@status");created=1;keyid="k";nonce="n""#;
        assert!(matches!(parse(status, sig).expect_err("refused"), Refusal::UnsupportedComponent(_)));
        let twice = r#"sig1=("@method" "@method");created=1;keyid="k";nonce="n""#;
        assert!(matches!(parse(twice, sig).expect_err("refused"), Refusal::DuplicateComponent(_)));
        let long_nonce = format!(r#"sig1=("@method");created=1;keyid="k";nonce="{}""#, "n".repeat(129));
        assert_eq!(parse(&long_nonce, sig).expect_err("refused"), Refusal::BadParameter("nonce"));
    }

    #[test]
    fn coverage_and_freshness_rules() {
        let p = parse(r#"sig1=("@method" "@target-uri");created=1000;keyid="k";nonce="n";expires=1100"#, "sig1=:AAAA:")
            .expect("parse");
        assert_eq!(p.check_coverage(true), Err(Refusal::MissingComponent("content-digest")));
        p.check_coverage(false).expect("no body, no digest needed");
        let p2 = parse(r#"sig1=("@target-uri");created=1000;keyid="k";nonce="n""#, "sig1=:AAAA:").expect("parse");
        assert_eq!(p2.check_coverage(false), Err(Refusal::MissingComponent("@method")));
        p.check_freshness(1050, 300, 5).expect("fresh");
        assert_eq!(p.check_freshness(1301, 300, 5), Err(Refusal::Stale(300)));
        assert_eq!(p.check_freshness(994, 300, 5), Err(Refusal::Stale(300)));
        assert_eq!(p.check_freshness(1100, 300, 5), Err(Refusal::Expired));
    }

    /// RFC 9421 Appendix B.2.6: the test request signed with `test-key-ed25519` (Appendix B.1.4). The
    /// signature is the RFC's; only a signature base built exactly as the RFC says verifies it.
    #[test]
    fn the_rfc_9421_ed25519_example_verifies() {
        const PUBLIC: &str = "26b40b8f93fff3d897112f7ebc582b232dbd72517d082fe83cfb30ddce43d1bb";
        let bytes: Vec<u8> = (0..32).map(|i| u8::from_str_radix(&PUBLIC[2 * i..2 * i + 2], 16).expect("hex")).collect();
        let key = VerifyingKey::from_bytes(&bytes.try_into().expect("32 bytes")).expect("key");
        static H: &[(&str, &str)] = &[
            ("date", "Tue, 20 Apr 2021 02:07:55 GMT"),
            ("content-type", "application/json"),
            ("content-length", "18"),
        ];
        let header = headers(H);
        let request = RequestParts {
            method: "POST",
            scheme: "https",
            authority: "example.com",
            path: "/foo",
            query: Some("param=Value&Pet=dog"),
            header: &header,
        };
        let input = r#"sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519""#;
        let signature =
            "sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:";
        let parsed = parse(input, signature).expect("parse");
        assert_eq!(
            parsed.signature_base(&request).expect("base"),
            "\"date\": Tue, 20 Apr 2021 02:07:55 GMT\n\"@method\": POST\n\"@path\": /foo\n\"@authority\": example.com\n\
             \"content-type\": application/json\n\"content-length\": 18\n\"@signature-params\": (\"date\" \"@method\" \
             \"@path\" \"@authority\" \"content-type\" \"content-length\");created=1618884473;keyid=\"test-key-ed25519\""
        );
        parsed.verify(&request, &key).expect("the RFC's signature verifies");
        let mut other = RequestParts { path: "/bar", ..request };
        assert_eq!(parsed.verify(&other, &key), Err(Refusal::BadSignature));
        other.path = "/foo";
        other.authority = "example.org";
        assert_eq!(parsed.verify(&other, &key), Err(Refusal::BadSignature));
    }

    #[test]
    fn content_digest_matches_the_body_exactly() {
        let good = content_digest(BODY);
        check_content_digest(Some(&good), BODY).expect("matches");
        assert_eq!(check_content_digest(Some(&good), b"{}"), Err(Refusal::DigestMismatch));
        assert_eq!(check_content_digest(None, BODY), Err(Refusal::DigestMissing));
        assert_eq!(check_content_digest(Some("md5=:AAAA:"), BODY), Err(Refusal::DigestUnsupported));
        assert_eq!(check_content_digest(Some("sha-256=abc"), BODY), Err(Refusal::Malformed("Content-Digest")));
        let both = format!("{good}, sha-512=:{}:", B64.encode(Sha512::digest(BODY)));
        check_content_digest(Some(&both), BODY).expect("both match");
        let one_wrong = format!("{good}, sha-512=:{}:", B64.encode(Sha512::digest(b"x")));
        assert_eq!(check_content_digest(Some(&one_wrong), BODY), Err(Refusal::DigestMismatch));
    }
}
