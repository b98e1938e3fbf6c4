//! A connection's standing: counted against its network address until one of its requests presents a valid
//! credential or console session. The accept loop (`connections.rs`) admits a connection only while its
//! address holds fewer than its limit of unauthenticated ones; the bearer layer and the console's session
//! extractor mark a connection authenticated, which stops it counting.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Unauthenticated connections per address.
#[derive(Default)]
pub struct Addresses {
    open: Mutex<HashMap<IpAddr, usize>>,
}

impl Addresses {
    /// Counts a new connection from `ip`, unless the address already holds `cap` unauthenticated ones.
    pub fn admit(self: &Arc<Self>, ip: IpAddr, cap: usize) -> Option<Arc<Standing>> {
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
