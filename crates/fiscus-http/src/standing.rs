//! A connection's standing: counted against its network address until one of its requests presents a valid
//! credential or console session. The accept loop (`connections.rs`) admits a connection only while its
//! address holds fewer than its limit of unauthenticated ones; the bearer layer and the console's session
//! extractor mark a connection authenticated, which stops it counting.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The network an address stands for when counting per address: an IPv4 address (IPv4-mapped IPv6 too)
/// as itself, an IPv6 address as its /64, the smallest block one subscriber is given, so rotating through
/// one's own /64 buys nothing.
pub fn network_of(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(std::net::Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
        v4 => v4,
    }
}

/// Unauthenticated connections per address.
#[derive(Default)]
pub struct Addresses {
    open: Mutex<HashMap<IpAddr, usize>>,
}

impl Addresses {
    /// Counts a new connection from `ip`, unless the address already holds `cap` unauthenticated ones.
    pub fn admit(self: &Arc<Self>, ip: IpAddr, cap: usize) -> Option<Arc<Standing>> {
        let ip = network_of(ip);
        if cap > 0 {
            let mut open = self.open.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let count = open.entry(ip).or_insert(0);
            if *count >= cap {
                return None;
            }
            *count += 1;
        }
        Some(Arc::new(Standing { ip, counted: AtomicBool::new(cap > 0), addresses: self.clone() }))
    }

    fn release(&self, ip: IpAddr) {
        let mut open = self.open.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(count) = open.get_mut(&ip) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                open.remove(&ip);
            }
        }
    }
}

/// A connection's standing: counted against its address until one of its requests authenticates.
pub struct Standing {
    ip: IpAddr,
    counted: AtomicBool,
    addresses: Arc<Addresses>,
}

impl Standing {
    /// A request on this connection presented a valid credential or session: the connection no longer
    /// counts against its address.
    pub fn authenticated(&self) {
        if self.counted.swap(false, Ordering::SeqCst) {
            self.addresses.release(self.ip);
        }
    }
}

impl Drop for Standing {
    fn drop(&mut self) {
        self.authenticated();
    }
}

/// Marks the connection a request came on as authenticated (see [`Standing`]).
pub fn authenticated(extensions: &axum::http::Extensions) {
    if let Some(standing) = extensions.get::<Arc<Standing>>() {
        standing.authenticated();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_addresses_count_as_their_64_and_mapped_ipv4_as_ipv4() {
        let ip = |s: &str| s.parse::<IpAddr>().expect("ip");
        assert_eq!(network_of(ip("2001:db8:1:2:aaaa:bbbb:cccc:dddd")), ip("2001:db8:1:2::"));
        assert_eq!(network_of(ip("2001:db8:1:2::1")), network_of(ip("2001:db8:1:2:ffff::9")));
        assert_ne!(network_of(ip("2001:db8:1:2::1")), network_of(ip("2001:db8:1:3::1")));
        assert_eq!(network_of(ip("::ffff:192.0.2.7")), ip("192.0.2.7"));
        assert_eq!(network_of(ip("192.0.2.7")), ip("192.0.2.7"));
    }

    #[test]
    fn an_address_holds_at_most_its_cap_until_a_connection_authenticates() {
        let addresses = Arc::new(Addresses::default());
        let ip = "2001:db8::1".parse::<IpAddr>().expect("ip");
        let first = addresses.admit(ip, 2).expect("first");
        let _second = addresses.admit("2001:db8::2".parse().expect("ip"), 2).expect("second, same /64");
        assert!(addresses.admit(ip, 2).is_none(), "the /64 holds its cap");
        first.authenticated();
        assert!(addresses.admit(ip, 2).is_some(), "an authenticated connection no longer counts");
    }
}
