//! The change ledger: the lifecycle of every catalogued operation, and the recorded changes to it.
//!
//! The seed: "A change ledger publishes lifecycle metadata, deprecation and sunset evidence, and checks
//! scopes against the catalogue. It records no history diffs that were never stored." So the ledger holds
//! only what is known: the publication of catalogue 2.0.0 (the seed's operations, every one Stable and
//! Published), the operations Fiscus adds to fill the seed's gaps (published with this build, no earlier
//! history invented), and the deprecations a deployment announces in its settings (`[[deprecations]]`: an
//! operation, when it is deprecated, when it sunsets, what replaces it, why). Each entry carries the
//! SHA-256 of its RFC 8785 form, so a client can pin the entry it relied on.
//!
//! A deprecation never changes what an operation does or who may call it (the seed: "changing metadata
//! never grants scopes or authority"); it adds the `Deprecation` (RFC 9745) and `Sunset` (RFC 8594) headers
//! to the operation's responses, with a `Link` to the ledger (`rel="deprecation"`).

use fiscus_domain::catalogue::{self, OPERATIONS, Source};
use fiscus_domain::clock::{Micros, http_date, parse_rfc3339};
use serde::{Deserialize, Serialize};

/// The catalogue's version (the seed's; the path prefix `/api/v2` carries its major version).
pub const CATALOGUE_VERSION: &str = "2.0.0";

/// An operation's lifecycle as the catalogue states it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Published and not deprecated.
    Published,
    /// Published, with a deprecation in the ledger (whose date may be in the future: announced).
    Deprecated,
}

/// A deprecation a deployment announces (settings, `[[deprecations]]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Deprecation {
    /// The operation (`operationId`, e.g. `get_trust_audit_head`).
    pub operation_id: String,
    /// When it is (or was) deprecated, RFC 3339.
    pub deprecated_at: String,
    /// When it stops being served, RFC 3339; after `deprecated_at`.
    #[serde(default)]
    pub sunset_at: Option<String>,
    /// The operation to use instead (`operationId`).
    #[serde(default)]
    pub successor: Option<String>,
    /// Why, for integrators.
    pub reason: String,
}

/// What a deprecation is wrong about, if anything: checked when settings are loaded, so a node never
/// starts announcing a deprecation of something that does not exist.
pub fn check(d: &Deprecation) -> Result<(), String> {
    if catalogue::by_id(&d.operation_id).is_none() {
        return Err(format!("deprecation of unknown operation `{}`", d.operation_id));
    }
    let at = parse_rfc3339(&d.deprecated_at)
        .ok_or_else(|| format!("{}: deprecated_at is not an RFC 3339 time", d.operation_id))?;
    if let Some(sunset) = &d.sunset_at {
        let sunset =
            parse_rfc3339(sunset).ok_or_else(|| format!("{}: sunset_at is not an RFC 3339 time", d.operation_id))?;
        if sunset <= at {
            return Err(format!("{}: sunset_at must come after deprecated_at", d.operation_id));
        }
    }
    if let Some(successor) = &d.successor
        && (catalogue::by_id(successor).is_none() || successor == &d.operation_id)
    {
        return Err(format!("{}: successor `{successor}` is not another catalogued operation", d.operation_id));
    }
    if d.reason.trim().is_empty() || d.reason.chars().count() > 500 {
        return Err(format!("{}: reason must be 1 to 500 characters", d.operation_id));
    }
    Ok(())
}

/// What an entry records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// Operations published, Stable.
    Published,
    /// An operation deprecated (with its sunset, if announced).
    Deprecated,
}

/// One entry of the ledger.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Entry {
    /// 1, 2, … in ledger order.
    pub sequence: u32,
    pub catalogue_version: String,
    pub change: Change,
    /// `seed` (the seed's catalogue), `added` (operations Fiscus adds) or `deployment` (this deployment's
    /// settings).
    pub source: String,
    /// The operations the entry is about (`operationId`s).
    pub operations: Vec<String>,
    pub note: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecated_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sunset_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub successor: Option<String>,
    /// `sha256:` of the entry without this member (RFC 8785).
    pub entry_hash: String,
}

fn sealed(mut entry: Entry) -> Entry {
    let value = serde_json::to_value(&entry).unwrap_or_default();
    let mut value = value;
    if let Some(obj) = value.as_object_mut() {
        obj.remove("entry_hash");
    }
    let canonical = fiscus_domain::jcs::canonicalize(&value).unwrap_or_default();
    entry.entry_hash = fiscus_domain::evidence::seal_bytes(canonical.as_bytes());
    entry
}

fn ids_of(source: Source) -> Vec<String> {
    OPERATIONS.iter().filter(|op| op.source == source).map(|op| op.id.to_string()).collect()
}

/// The ledger: the catalogue's publication, Fiscus's additions, then the deployment's deprecations in the
/// order they take effect.
pub fn ledger(deprecations: &[Deprecation]) -> Vec<Entry> {
    let mut entries = vec![
        Entry {
            sequence: 1,
            catalogue_version: CATALOGUE_VERSION.into(),
            change: Change::Published,
            source: "seed".into(),
            operations: ids_of(Source::Seed),
            note: "The seed's catalogue: every operation Stable and Published".into(),
            deprecated_at: None,
            sunset_at: None,
            successor: None,
            entry_hash: String::new(),
        },
        Entry {
            sequence: 2,
            catalogue_version: CATALOGUE_VERSION.into(),
            change: Change::Published,
            source: "added".into(),
            operations: ids_of(Source::Added),
            note: "Operations Fiscus adds where the seed leaves a gap (each marked added in the catalogue), \
                   Stable and Published with this build"
                .into(),
            deprecated_at: None,
            sunset_at: None,
            successor: None,
            entry_hash: String::new(),
        },
    ];
    let mut ordered: Vec<&Deprecation> = deprecations.iter().collect();
    ordered.sort_by_key(|d| (parse_rfc3339(&d.deprecated_at).unwrap_or(Micros::MAX), d.operation_id.clone()));
    for d in ordered {
        entries.push(Entry {
            sequence: entries.len() as u32 + 1,
            catalogue_version: CATALOGUE_VERSION.into(),
            change: Change::Deprecated,
            source: "deployment".into(),
            operations: vec![d.operation_id.clone()],
            note: d.reason.clone(),
            deprecated_at: Some(d.deprecated_at.clone()),
            sunset_at: d.sunset_at.clone(),
            successor: d.successor.clone(),
            entry_hash: String::new(),
        });
    }
    entries.into_iter().map(sealed).collect()
}

/// The response headers that announce a deprecation: `Deprecation` as an RFC 9745 structured date
/// (`@` and Unix seconds), `Sunset` as an RFC 8594 HTTP-date, and a `Link` to the ledger with the
/// `deprecation` relation RFC 9745 registers. `ledger_url` is the ledger's absolute URL.
pub fn headers(d: &Deprecation, ledger_url: &str) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some(at) = parse_rfc3339(&d.deprecated_at) {
        out.push(("deprecation", format!("@{}", at.div_euclid(1_000_000))));
    }
    if let Some(sunset) = d.sunset_at.as_deref().and_then(parse_rfc3339) {
        out.push(("sunset", http_date(sunset)));
    }
    out.push(("link", format!("<{ledger_url}>; rel=\"deprecation\"; type=\"application/json\"")));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deprecation() -> Deprecation {
        Deprecation {
            operation_id: "get_trust_audit_head".into(),
            deprecated_at: "2026-12-01T00:00:00Z".into(),
            sunset_at: Some("2027-06-30T23:59:59Z".into()),
            successor: Some("get_workspace".into()),
            reason: "Superseded".into(),
        }
    }

    #[test]
    fn headers_follow_rfc_9745_and_rfc_8594() {
        let h = headers(&deprecation(), "https://fiscus.example/api/v2/catalogue/ledger");
        assert_eq!(h[0], ("deprecation", "@1796083200".to_string()));
        assert_eq!(h[1], ("sunset", "Wed, 30 Jun 2027 23:59:59 GMT".to_string()));
        assert_eq!(
            h[2],
            (
                "link",
                "<https://fiscus.example/api/v2/catalogue/ledger>; rel=\"deprecation\"; type=\"application/json\""
                    .into()
            )
        );
        assert_eq!(http_date(784_111_777_000_000), "Sun, 06 Nov 1994 08:49:37 GMT");
    }

    #[test]
    fn the_ledger_covers_every_operation_once_and_hashes_each_entry() {
        let entries = ledger(&[deprecation()]);
        assert_eq!(entries.len(), 3);
        let published: usize =
            entries.iter().filter(|e| e.change == Change::Published).map(|e| e.operations.len()).sum();
        assert_eq!(published, OPERATIONS.len());
        assert_eq!(entries[0].operations.len(), catalogue::SEED_OPERATION_COUNT);
        assert_eq!(entries[2].sequence, 3);
        assert!(entries.iter().all(|e| e.entry_hash.starts_with("sha256:") && e.entry_hash.len() == 71));
        assert_ne!(ledger(&[]).len(), entries.len());
        assert_eq!(ledger(&[])[0].entry_hash, entries[0].entry_hash, "a built-in entry does not move");
    }

    #[test]
    fn a_deprecation_of_nothing_or_out_of_order_is_refused() {
        assert_eq!(check(&deprecation()), Ok(()));
        let mut d = deprecation();
        d.operation_id = "get_nothing".into();
        assert!(check(&d).is_err());
        let mut d = deprecation();
        d.sunset_at = Some("2026-01-01T00:00:00Z".into());
        assert!(check(&d).is_err());
        let mut d = deprecation();
        d.successor = Some("get_trust_audit_head".into());
        assert!(check(&d).is_err());
        let mut d = deprecation();
        d.reason = " ".into();
        assert!(check(&d).is_err());
    }
}
