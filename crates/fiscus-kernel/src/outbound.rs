//! Outbound HTTP to customers' endpoints (webhook deliveries): where a host name points, and a client that
//! can only connect to addresses that pass the server-side request forgery screen.
//!
//! The screen runs inside the client's own DNS resolver, so the addresses that were screened are exactly the
//! addresses it connects to: a name that resolved to a public address at registration and to a private one
//! now (DNS rebinding) is refused at this delivery, before any connection. An IP literal in a URL never goes
//! through a resolver, so a delivery screens the URL itself too (`fiscus_domain::webhooks::endpoint`).
//! Redirects are not followed and no proxy from the environment is used: either could lead elsewhere.

use fiscus_domain::webhooks::{Unsafe, screen};
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// Fixed answers for host names, consulted before DNS: an air-gapped deployment's pins from the settings,
/// and the tests' way to answer a name with a private, metadata or (later) different address. Every answer
/// is screened like a DNS answer.
#[derive(Clone, Default)]
pub struct HostPins(Arc<RwLock<BTreeMap<String, Vec<IpAddr>>>>);

impl HostPins {
    pub fn new(pins: BTreeMap<String, Vec<IpAddr>>) -> HostPins {
        HostPins(Arc::new(RwLock::new(pins.into_iter().map(|(k, v)| (k.to_ascii_lowercase(), v)).collect())))
    }

    /// Answers `host` with `addresses` from now on.
    pub fn pin(&self, host: &str, addresses: Vec<IpAddr>) {
        if let Ok(mut pins) = self.0.write() {
            pins.insert(host.to_ascii_lowercase(), addresses);
        }
    }

    fn get(&self, host: &str) -> Option<Vec<IpAddr>> {
        self.0.read().ok().and_then(|pins| pins.get(&host.to_ascii_lowercase()).cloned())
    }

    /// The addresses of `host`: pinned, or from DNS within 3 s (none when it does not resolve).
    pub async fn resolve(&self, host: &str, port: u16) -> Vec<IpAddr> {
        if let Some(pinned) = self.get(host) {
            return pinned;
        }
        match tokio::time::timeout(Duration::from_secs(3), tokio::net::lookup_host((host, port))).await {
            Ok(Ok(addrs)) => addrs.map(|a| a.ip()).collect(),
            _ => Vec::new(),
        }
    }
}

/// The client's resolver: resolve, then refuse the whole name if any address fails the screen.
struct Screening {
    pins: HostPins,
    allow_loopback: bool,
}

impl reqwest::dns::Resolve for Screening {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let pins = self.pins.clone();
        let allow_loopback = self.allow_loopback;
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addresses = pins.resolve(&host, 0).await;
            if addresses.is_empty() {
                return Err(Box::new(Unsafe::Unresolved) as Box<dyn std::error::Error + Send + Sync>);
            }
            for ip in &addresses {
                screen(*ip, allow_loopback).map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)?;
            }
            // The port is the URL's; the connector sets it.
            let addrs: reqwest::dns::Addrs = Box::new(addresses.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

/// A delivery client: HTTPS with the Mozilla roots, the screening resolver, no redirects, no proxy, a
/// connect timeout and an overall timeout per request, and kept-alive connections per host.
pub fn client(pins: &HostPins, allow_loopback: bool, timeout: Duration) -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .dns_resolver(Arc::new(Screening { pins: pins.clone(), allow_loopback }))
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .connect_timeout(timeout.min(Duration::from_secs(5)))
        .timeout(timeout)
        .pool_idle_timeout(Duration::from_secs(30))
        .user_agent(concat!("Fiscus-Webhooks/", env!("CARGO_PKG_VERSION")))
        .build()
}

/// Why an answer's body was not read whole.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("the answer is larger than the {0} bytes read of it")]
    TooLarge(usize),
    #[error(transparent)]
    Http(#[from] reqwest::Error),
}

/// Reads at most `max` bytes of a third party's answer: one that says or turns out to be larger is refused
/// after no more than `max` bytes (plus the chunk that crossed it) were held, whatever it sends.
pub async fn read_at_most(mut response: reqwest::Response, max: usize) -> Result<Vec<u8>, ReadError> {
    if response.content_length().is_some_and(|n| n > max as u64) {
        return Err(ReadError::TooLarge(max));
    }
    let mut out = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if out.len() + chunk.len() > max {
            return Err(ReadError::TooLarge(max));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}
