//! Webhook rules that need no IO: Standard Webhooks v1 signatures and secrets, which endpoint URLs may be
//! registered, which resolved addresses may be delivered to (server-side request forgery screening), and
//! the retry schedule.
//!
//! The screening is applied twice by the server: to the URL at registration, and to every address the name
//! resolves to at each delivery (a name that resolves to a private address later, DNS rebinding, is
//! refused then). The resolver is the server's; these functions only judge what it found.

use crate::events::EventType;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

pub const SECRET_PREFIX: &str = "whsec_";
/// Random bytes in a secret (Standard Webhooks asks for 24 to 64).
const SECRET_BYTES: usize = 32;
pub const MAX_URL_LEN: usize = 2048;

/// A new endpoint secret, `whsec_` + base64 of 32 random bytes (shown once; stored encrypted).
pub fn new_secret() -> String {
    let mut bytes = [0u8; SECRET_BYTES];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("{SECRET_PREFIX}{}", B64.encode(bytes))
}

/// The key bytes of a `whsec_…` secret.
pub fn secret_key(secret: &str) -> Option<Vec<u8>> {
    B64.decode(secret.strip_prefix(SECRET_PREFIX)?).ok().filter(|k| k.len() >= 24 && k.len() <= 64)
}

/// `webhook-signature` value: `v1,` + base64 HMAC-SHA256 over `{id}.{timestamp}.{body}` (Standard Webhooks v1).
pub fn signature(key: &[u8], message_id: &str, timestamp: i64, body: &[u8]) -> String {
    // HMAC accepts keys of any length: this cannot fail.
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key) else { return String::new() };
    mac.update(message_id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("v1,{}", B64.encode(mac.finalize().into_bytes()))
}

/// Why an endpoint or an address is refused. The text names the rule, for the 422 and the delivery log.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unsafe {
    #[error("the URL is not a valid absolute URL")]
    NotAUrl,
    #[error("the URL is longer than 2048 characters")]
    TooLong,
    #[error("only https:// endpoints are accepted")]
    NotHttps,
    #[error("the URL must not carry a user name or password")]
    UserInfo,
    #[error("the URL must not carry a fragment")]
    Fragment,
    #[error("the URL has no host")]
    NoHost,
    #[error("the address {0} is loopback")]
    Loopback(IpAddr),
    #[error("the address {0} is private, shared or reserved")]
    Private(IpAddr),
    #[error("the address {0} is link-local (this includes cloud metadata services)")]
    LinkLocal(IpAddr),
    #[error("the address {0} is multicast or broadcast")]
    Multicast(IpAddr),
    #[error("the address {0} is unspecified")]
    Unspecified(IpAddr),
    #[error("the host name resolves to no address")]
    Unresolved,
    #[error("name the host by its DNS name, not an IP address (certificates are issued to names)")]
    IpLiteral,
    #[error(
        "the URL must be https:// and a DNS name of letters, digits and hyphens (labels of 1 to 63 characters, the last starting with a letter), an optional port from 1 to 65535, then a path or query of visible ASCII"
    )]
    Shape,
}

/// A registrable endpoint: its URL and, when the host is an IP literal, that address (already screened).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub url: String,
    pub host: String,
    pub port: u16,
    pub literal: Option<IpAddr>,
}

/// Checks a URL for registration. `allow_loopback` is the development switch (off by default, never for
/// production endpoints): it admits `http://` and loopback addresses, nothing else.
pub fn endpoint(url: &str, allow_loopback: bool) -> Result<Endpoint, Unsafe> {
    if url.len() > MAX_URL_LEN {
        return Err(Unsafe::TooLong);
    }
    let parsed = url::Url::parse(url).map_err(|_| Unsafe::NotAUrl)?;
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(Unsafe::UserInfo);
    }
    if parsed.fragment().is_some() {
        return Err(Unsafe::Fragment);
    }
    let literal = match parsed.host() {
        None => return Err(Unsafe::NoHost),
        Some(url::Host::Ipv4(v4)) => Some(IpAddr::V4(v4)),
        Some(url::Host::Ipv6(v6)) => Some(IpAddr::V6(v6)),
        Some(url::Host::Domain(_)) => None,
    };
    let loopback_target = literal.is_some_and(|ip| is_loopback(&ip))
        || parsed.host_str().is_some_and(|h| h.eq_ignore_ascii_case("localhost"));
    match parsed.scheme() {
        "https" => {}
        "http" if allow_loopback && loopback_target => {}
        _ => return Err(Unsafe::NotHttps),
    }
    if let Some(ip) = literal {
        screen(ip, allow_loopback)?;
        // A public address passes the screen but is still refused: the document's pattern admits DNS names
        // only, as an HTTPS receiver is verified against the name its certificate carries. The development
        // switch's loopback targets are the exception.
        if !(allow_loopback && loopback_target) {
            return Err(Unsafe::IpLiteral);
        }
    }
    // The parser is lenient where the document is not (WHATWG URLs take `*` in a host, a backslash for a
    // slash, Unicode names): what is registered is what the document's pattern admits, judged on the bytes
    // sent. The development switch's loopback targets are outside the pattern by design.
    let development_target = allow_loopback && loopback_target;
    if !development_target && !documented_shape(url) {
        return Err(Unsafe::Shape);
    }
    let host = parsed.host_str().ok_or(Unsafe::NoHost)?.to_string();
    let port = parsed.port_or_known_default().ok_or(Unsafe::NotAUrl)?;
    Ok(Endpoint { url: parsed.to_string(), host, port, literal })
}

/// Whether `url` has the shape the OpenAPI document's pattern for endpoint URLs states: `https://`, DNS
/// labels of 1 to 63 letters, digits and hyphens without a hyphen at either end, at least two of them and
/// the last starting with a letter, an optional port from 1 to 65535 without leading zeros, then nothing or
/// a path or query (`/` or `?` first) of visible ASCII other than `#`.
fn documented_shape(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("https://") else { return false };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let (host, port) = match authority.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    };
    let label = |l: &str| {
        (1..=63).contains(&l.len())
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    let labels: Vec<&str> = host.split('.').collect();
    let names = labels.len() >= 2
        && labels.iter().all(|l| label(l))
        && labels.last().is_some_and(|l| l.starts_with(|c: char| c.is_ascii_alphabetic()));
    let port_ok = port.is_none_or(|p| {
        !p.is_empty()
            && p.bytes().all(|b| b.is_ascii_digit())
            && !p.starts_with('0')
            && p.parse::<u32>().is_ok_and(|n| (1..=65535).contains(&n))
    });
    names && port_ok && tail.bytes().all(|b| (b'!'..=b'~').contains(&b) && b != b'#')
}

fn is_loopback(ip: &IpAddr) -> bool {
    match canonical(*ip) {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => v6.is_loopback(),
    }
}

/// An IPv4-mapped or -compatible IPv6 address is judged as the IPv4 address it carries.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        v4 => v4,
    }
}

/// Whether a resolved address may receive a delivery.
pub fn screen(ip: IpAddr, allow_loopback: bool) -> Result<(), Unsafe> {
    match canonical(ip) {
        IpAddr::V4(v4) => screen_v4(v4, ip, allow_loopback),
        IpAddr::V6(v6) => screen_v6(v6, ip, allow_loopback),
    }
}

fn screen_v4(v4: Ipv4Addr, shown: IpAddr, allow_loopback: bool) -> Result<(), Unsafe> {
    let [a, b, c, _] = v4.octets();
    if v4.is_loopback() {
        return if allow_loopback { Ok(()) } else { Err(Unsafe::Loopback(shown)) };
    }
    if v4.is_unspecified() || a == 0 {
        return Err(Unsafe::Unspecified(shown));
    }
    if v4.is_link_local() {
        return Err(Unsafe::LinkLocal(shown));
    }
    if v4.is_multicast() || v4.is_broadcast() {
        return Err(Unsafe::Multicast(shown));
    }
    let private = v4.is_private()
        || (a == 100 && (64..128).contains(&b)) // shared address space (RFC 6598)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 192 && b == 0 && c == 2) // documentation
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || (a == 198 && b == 51 && c == 100)
        || (a == 203 && b == 0 && c == 113)
        || a >= 240; // reserved
    if private {
        return Err(Unsafe::Private(shown));
    }
    Ok(())
}

/// The IPv4 addresses an IPv6 address delivers to by construction, which must pass the IPv4 screen too:
/// 6to4 (`2002::/16`, RFC 3056: the relay's IPv4 in bits 16-47), Teredo (`2001::/32`, RFC 4380: the server's
/// IPv4 in bits 32-63 and the client's, every bit inverted, in the last 32) and IPv4-translated addresses
/// (`::ffff:0:0/96`, RFC 2765).
fn embedded_v4(v6: Ipv6Addr) -> Vec<Ipv4Addr> {
    let s = v6.segments();
    let v4 = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    match s {
        [0x2002, hi, lo, ..] => vec![v4(hi, lo)],
        [0x2001, 0x0000, server_hi, server_lo, _, _, client_hi, client_lo] => {
            vec![v4(server_hi, server_lo), v4(!client_hi, !client_lo)]
        }
        [0, 0, 0, 0, 0xffff, 0, hi, lo] => vec![v4(hi, lo)],
        _ => Vec::new(),
    }
}

fn screen_v6(v6: Ipv6Addr, shown: IpAddr, allow_loopback: bool) -> Result<(), Unsafe> {
    for v4 in embedded_v4(v6) {
        // What the embedded address is refused for, never loopback-as-allowed: the development switch is for
        // plain loopback addresses only.
        screen_v4(v4, shown, false)?;
    }
    let first = v6.segments()[0];
    if v6.is_loopback() {
        return if allow_loopback { Ok(()) } else { Err(Unsafe::Loopback(shown)) };
    }
    if v6.is_unspecified() {
        return Err(Unsafe::Unspecified(shown));
    }
    if v6.is_multicast() {
        return Err(Unsafe::Multicast(shown));
    }
    if first & 0xffc0 == 0xfe80 {
        return Err(Unsafe::LinkLocal(shown));
    }
    // Unique local (fc00::/7, which holds the fd00:ec2::254 metadata address), site-local (fec0::/10),
    // documentation (2001:db8::/32), NAT64 well-known prefix (64:ff9b::/96, which maps IPv4 inside), and
    // IPv4-compatible ::a.b.c.d.
    let segments = v6.segments();
    let private = first & 0xfe00 == 0xfc00
        || first & 0xffc0 == 0xfec0
        || (first == 0x2001 && segments[1] == 0x0db8)
        || (first == 0x0064 && segments[1] == 0xff9b)
        || segments[..6].iter().all(|s| *s == 0);
    // The NAT64 well-known prefix above maps IPv4 inside and its local-use sibling (64:ff9b:1::/48, RFC
    // 8215) maps whatever the operator chose: both refused whole, as the IPv4 inside cannot be told apart.
    if private {
        return Err(Unsafe::Private(shown));
    }
    Ok(())
}

/// The scope an application needs for its endpoints to be delivered to at all.
pub const WEBHOOKS_SCOPE: &str = "agent:execution:webhooks";

/// Whether an endpoint registered by `endpoint_application` hears an event of `event_type` about an object
/// owned by `owner` (the application that proposed the action or invoked the run; `None` when a person or
/// the CLI did). `authority` is what the endpoint's application may do now: `None` when it is not active,
/// else its scopes within the workspace's entitlement, read at fan-out time, so a suspended application or a
/// withdrawn scope stops its deliveries at once.
///
/// An endpoint hears the events of its own application's objects, and of any object of the workspace its
/// application may read anyway (`actions:read` for actions, `workflow:read` for workflow runs); never
/// another application's action ids and envelope hashes on the strength of registering a webhook alone.
pub fn may_hear(
    event_type: EventType,
    owner: Option<&str>,
    endpoint_application: &str,
    authority: Option<&crate::scopes::ScopeSet>,
) -> bool {
    let Some(scopes) = authority else { return false };
    scopes.contains(WEBHOOKS_SCOPE) && (owner == Some(endpoint_application) || scopes.contains(event_type.read_scope()))
}

/// Delay before retry `attempt` (1 = the first retry), in seconds, before jitter; `None` once the schedule
/// is exhausted (the delivery is then given up and marked failed). Immediately, 5 s, 5 min, 30 min, 2 h,
/// 5 h, 10 h, 10 h: about a day and a half in all, as Standard Webhooks' reference schedule.
pub fn retry_delay(attempt: u32) -> Option<u64> {
    const SCHEDULE: [u64; 8] = [0, 5, 300, 1800, 7200, 18_000, 36_000, 36_000];
    SCHEDULE.get(attempt as usize).copied()
}

/// `delay` with up to ±20% jitter from `random` in [0, 1), so endpoints recovering together are not hit
/// together.
pub fn jittered(delay: u64, random: f64) -> u64 {
    let factor = 0.8 + 0.4 * random.clamp(0.0, 1.0);
    (delay as f64 * factor).round() as u64
}

/// The delay a receiver asked for in `Retry-After` (RFC 9110 section 10.2.3), in seconds from `now`
/// (Unix seconds): delta-seconds, or an HTTP-date (IMF-fixdate, the form senders must use); a date in the
/// past is 0. `None` when the value is neither.
pub fn retry_after(value: &str, now: i64) -> Option<u64> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return value.parse().ok();
    }
    let at = time::PrimitiveDateTime::parse(value, crate::clock::IMF_FIXDATE).ok()?.assume_utc().unix_timestamp();
    Some(u64::try_from(at - now).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_urls_of_the_documented_shape_are_registered() {
        for good in [
            "https://hooks.example.com/fiscus",
            "https://Hooks.Example.COM",
            "https://a-b.example.com:8443/x?y=1&z=%20",
            "https://x.example.com:65535?q",
        ] {
            assert!(endpoint(good, false).is_ok(), "{good}");
        }
        for bad in [
            "https://e4.r.example.A*",
            "https://hooks.example.com\\path",
            "https://b\u{fc}cher.example.com/",
            "https://example",
            "https://-a.example.com/",
            "https://a.example.9com/",
            "https://a.example.com:0/",
            "https://a.example.com:080/",
            "https://a.example.com/a b",
            "https://a..example.com/",
        ] {
            assert_eq!(endpoint(bad, false).map(|e| e.url), Err(Unsafe::Shape), "{bad}");
        }
        assert_eq!(endpoint("https://a.example.com:65536/", false).map(|e| e.url), Err(Unsafe::NotAUrl));
    }

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        // 1994-11-06T08:49:37Z, RFC 9110's example date.
        let example = 784_111_777;
        assert_eq!(retry_after("120", example), Some(120));
        assert_eq!(retry_after(" 0 ", example), Some(0));
        assert_eq!(retry_after("Sun, 06 Nov 1994 08:51:37 GMT", example), Some(120));
        assert_eq!(retry_after("Sun, 06 Nov 1994 08:48:37 GMT", example), Some(0), "a past date: now");
        for bad in ["", "-5", "1.5", "soon", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 PST"] {
            assert_eq!(retry_after(bad, example), None, "{bad}");
        }
    }

    #[test]
    fn a_secret_round_trips_and_signs_as_standard_webhooks_does() {
        let secret = new_secret();
        assert!(secret.starts_with("whsec_"));
        let key = secret_key(&secret).expect("key");
        assert_eq!(key.len(), 32);
        assert!(secret_key("whsec_c2hvcnQ=").is_none(), "too short a key is refused");
        // The example of the Standard Webhooks specification's reference libraries (its key bytes, assembled
        // at run time so no secret-shaped literal is committed).
        let key = secret_key(&format!("{SECRET_PREFIX}{}", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")).expect("key");
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            signature(&key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn only_https_urls_without_credentials_or_fragments_are_registrable() {
        let ok = endpoint("https://hooks.example.com:8443/fiscus?x=1", false).expect("ok");
        assert_eq!((ok.host.as_str(), ok.port, ok.literal), ("hooks.example.com", 8443, None));
        assert_eq!(endpoint("http://hooks.example.com/", false), Err(Unsafe::NotHttps));
        assert_eq!(endpoint("ftp://hooks.example.com/", false), Err(Unsafe::NotHttps));
        assert_eq!(endpoint("https://user:pw@hooks.example.com/", false), Err(Unsafe::UserInfo));
        assert_eq!(endpoint("https://hooks.example.com/#frag", false), Err(Unsafe::Fragment));
        assert_eq!(endpoint("not a url", false), Err(Unsafe::NotAUrl));
        assert_eq!(endpoint(&format!("https://a.example/{}", "x".repeat(2048)), false), Err(Unsafe::TooLong));
    }

    #[test]
    fn private_loopback_link_local_and_metadata_addresses_are_refused() {
        for url in [
            "https://10.0.0.1/",
            "https://172.16.5.4/",
            "https://192.168.1.1/",
            "https://100.64.0.1/",
            "https://[fd00:ec2::254]/",
            "https://[fc00::1]/",
            "https://[::ffff:10.0.0.1]/",
            "https://240.0.0.1/",
        ] {
            assert!(matches!(endpoint(url, false), Err(Unsafe::Private(_))), "{url}");
        }
        for url in ["https://169.254.169.254/latest/meta-data/", "https://[fe80::1]/"] {
            assert!(matches!(endpoint(url, false), Err(Unsafe::LinkLocal(_))), "{url}");
        }
        for url in ["https://127.0.0.1/", "https://[::1]/", "https://[::ffff:127.0.0.1]/"] {
            assert!(matches!(endpoint(url, false), Err(Unsafe::Loopback(_))), "{url}");
        }
        assert!(matches!(endpoint("https://0.0.0.0/", false), Err(Unsafe::Unspecified(_))));
        assert!(matches!(endpoint("https://224.0.0.1/", false), Err(Unsafe::Multicast(_))));
        assert_eq!(endpoint("https://93.184.215.14/", false), Err(Unsafe::IpLiteral), "a public address, unnamed");
        assert!(screen("2606:4700::1111".parse().expect("ip"), false).is_ok());
    }

    #[test]
    fn addresses_that_embed_ipv4_are_screened_as_the_address_they_embed() {
        let ip = |s: &str| s.parse::<IpAddr>().expect("ip");
        // 6to4 relays of 127.0.0.1, 10.0.0.1 and 169.254.169.254.
        assert!(matches!(screen(ip("2002:7f00:1::1"), false), Err(Unsafe::Loopback(_))));
        assert!(matches!(screen(ip("2002:7f00:1::1"), true), Err(Unsafe::Loopback(_))), "never by the switch");
        assert!(matches!(screen(ip("2002:a00:1::1"), false), Err(Unsafe::Private(_))));
        assert!(matches!(screen(ip("2002:a9fe:a9fe::"), false), Err(Unsafe::LinkLocal(_))));
        // Teredo: a private server, and a client 10.0.0.1 (stored inverted: f5ff:fffe).
        assert!(matches!(screen(ip("2001:0:a00:1::1"), false), Err(Unsafe::Private(_))));
        assert!(matches!(screen(ip("2001:0:4136:e378:8000:63bf:f5ff:fffe"), false), Err(Unsafe::Private(_))));
        assert!(matches!(screen(ip("2001:0:4136:e378:8000:63bf:80ff:fffe"), false), Err(Unsafe::Loopback(_))));
        // IPv4-translated (RFC 2765).
        assert!(matches!(screen(ip("::ffff:0:a9fe:a9fe"), false), Err(Unsafe::LinkLocal(_))));
        // Public addresses embedded are public.
        assert!(screen(ip("2002:5db8:d70e::1"), false).is_ok());
        assert!(screen(ip("2001:0:4136:e378:8000:63bf:a247:f1f1"), false).is_ok());
    }

    #[test]
    fn an_endpoint_hears_its_own_application_s_objects_and_what_its_application_may_read() {
        use crate::scopes::ScopeSet;
        let scopes = |s: &str| ScopeSet::parse(s).expect("scopes");
        let webhooks_only = scopes("agent:execution:webhooks");
        let reader = scopes("agent:execution:webhooks actions:read");
        let approved = EventType::ActionApproved;
        assert!(may_hear(approved, Some("app_a"), "app_a", Some(&webhooks_only)));
        assert!(!may_hear(approved, Some("app_b"), "app_a", Some(&webhooks_only)), "another application's action");
        assert!(!may_hear(approved, None, "app_a", Some(&webhooks_only)), "an operator's action");
        assert!(may_hear(approved, Some("app_b"), "app_a", Some(&reader)));
        assert!(!may_hear(EventType::WorkflowCompleted, Some("app_b"), "app_a", Some(&reader)), "workflow:read");
        assert!(!may_hear(approved, Some("app_a"), "app_a", None), "an application no longer active");
        assert!(!may_hear(approved, Some("app_a"), "app_a", Some(&scopes("actions:read"))), "the webhooks scope");
    }

    #[test]
    fn the_loopback_switch_admits_loopback_only() {
        assert!(endpoint("http://127.0.0.1:9000/hook", true).is_ok());
        assert!(endpoint("http://localhost:9000/hook", true).is_ok());
        assert_eq!(endpoint("http://example.com/hook", true), Err(Unsafe::NotHttps));
        assert!(matches!(endpoint("https://10.1.1.1/", true), Err(Unsafe::Private(_))));
        assert!(screen("127.0.0.1".parse().expect("ip"), true).is_ok());
        assert!(screen("169.254.169.254".parse().expect("ip"), true).is_err());
    }

    #[test]
    fn the_retry_schedule_ends_and_jitter_stays_within_a_fifth() {
        assert_eq!(retry_delay(0), Some(0));
        assert_eq!(retry_delay(2), Some(300));
        assert_eq!(retry_delay(8), None);
        assert_eq!(jittered(100, 0.0), 80);
        assert_eq!(jittered(100, 0.999_999), 120);
    }
}
