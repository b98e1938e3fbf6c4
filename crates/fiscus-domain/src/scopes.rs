//! The 75 scopes: the seed's 72 plus `qlm:evaluate`, `qlm:invoke` and `qlm:read`, which its QLM operations use.

/// Every scope, sorted.
pub const SCOPES: [&str; 75] = [
    "actions:autonomous",
    "actions:create",
    "actions:execute",
    "actions:read",
    "agent:execution:execute",
    "agent:execution:invoke",
    "agent:execution:propose",
    "agent:execution:read",
    "agent:execution:submit",
    "agent:execution:webhooks",
    "agents:mcp:read",
    "agents:spaces:read",
    "agents:spaces:run",
    "ai:connections:read",
    "ai:credits:read",
    "ai:governance:read",
    "ai:governance:write",
    "ai:models:read",
    "ai:routing:read",
    "benchmark:read",
    "client:intelligence:read",
    "client:intelligence:run",
    "client:intelligence:write",
    "commercial:read",
    "commercial:write",
    "data:economics:read",
    "data:fundamentals:read",
    "data:market:read",
    "data:reference:read",
    "data:tables:read",
    "data:tables:run",
    "finance-core:close:read",
    "finance-core:evidence:write",
    "finance-core:intake:write",
    "finance-core:read",
    "finance-core:recommendations:read",
    "finance-core:reports:read",
    "financial:analysis:read",
    "financial:analysis:run",
    "financial:read",
    "generative:inference",
    "generative:models:read",
    "infrastructure:lineage",
    "infrastructure:read",
    "integrations:read",
    "intelligence:read",
    "investment:execute",
    "investment:read",
    "investment:run",
    "lqm:build:read",
    "lqm:build:run",
    "lqm:build:write",
    "lqm:promote:write",
    "lqm:publish:write",
    "marketplace:invoke",
    "marketplace:read",
    "ml:inference",
    "ml:read",
    "planning:forecast:create",
    "planning:read",
    "qlm:evaluate",
    "qlm:invoke",
    "qlm:read",
    "quant:compute:read",
    "quant:compute:run",
    "quant:features:read",
    "quant:models:read",
    "quant:models:run",
    "quant:research:read",
    "quant:research:run",
    "trust:read",
    "trust:write",
    "workflow:manage",
    "workflow:read",
    "workspace:read",
];

use std::fmt;

/// True when `s` is one of the 75 registered scopes.
pub fn is_registered(s: &str) -> bool {
    index_of(s).is_some()
}

fn index_of(s: &str) -> Option<usize> {
    SCOPES.binary_search(&s).ok()
}

/// A set of registered scopes, as a bit set over [`SCOPES`] (75 scopes fit one `u128`), so that checking,
/// intersecting and copying a set costs nothing on the request path.
///
/// Parsing refuses unknown scopes so that a typo never silently grants nothing (or, worse, is stored and
/// later matched by a scope added under that name).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ScopeSet(u128);

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("unknown scope `{0}`")]
pub struct UnknownScope(pub String);

impl ScopeSet {
    /// Every registered scope.
    pub fn all() -> Self {
        ScopeSet((1u128 << SCOPES.len()) - 1)
    }

    /// Parses scopes separated by spaces or commas (RFC 6749 uses spaces; the CLI accepts commas).
    pub fn parse(s: &str) -> Result<Self, UnknownScope> {
        let mut bits = 0u128;
        for item in s.split([' ', ',']).filter(|p| !p.is_empty()) {
            match index_of(item) {
                Some(i) => bits |= 1 << i,
                None => return Err(UnknownScope(item.to_string())),
            }
        }
        Ok(ScopeSet(bits))
    }

    /// Parses a stored set, dropping anything no longer registered: a scope that left the registry grants
    /// nothing (fail closed), and the store never holds unparsed input anyway.
    pub fn from_stored(s: &str) -> Self {
        ScopeSet(s.split(' ').filter_map(index_of).fold(0u128, |bits, i| bits | (1 << i)))
    }

    pub fn contains(&self, scope: &str) -> bool {
        index_of(scope).is_some_and(|i| self.0 & (1 << i) != 0)
    }

    pub fn intersection(&self, other: &ScopeSet) -> ScopeSet {
        ScopeSet(self.0 & other.0)
    }

    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }

    pub fn len(&self) -> usize {
        self.0.count_ones() as usize
    }

    /// The scopes in registry (alphabetical) order.
    pub fn iter(&self) -> impl Iterator<Item = &'static str> + '_ {
        let bits = self.0;
        SCOPES.iter().enumerate().filter(move |(i, _)| bits & (1 << i) != 0).map(|(_, s)| *s)
    }

    /// Space-separated, sorted: the RFC 6749 `scope` form and the stored form.
    pub fn to_space_separated(&self) -> String {
        self.iter().collect::<Vec<_>>().join(" ")
    }
}

impl fmt::Display for ScopeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_space_separated())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_holds_75_sorted_unique_scopes() {
        assert_eq!(SCOPES.len(), 75);
        assert!(SCOPES.windows(2).all(|w| w[0] < w[1]), "sorted and unique");
        for qlm in ["qlm:read", "qlm:evaluate", "qlm:invoke"] {
            assert!(is_registered(qlm));
        }
    }

    #[test]
    fn parsing_refuses_unknown_scopes_and_accepts_both_separators() {
        let set = ScopeSet::parse("workspace:read,actions:read trust:read").expect("known");
        assert_eq!(set.to_space_separated(), "actions:read trust:read workspace:read");
        assert_eq!(ScopeSet::parse("workspace:write"), Err(UnknownScope("workspace:write".into())));
        assert_eq!(ScopeSet::from_stored("workspace:read gone:scope").len(), 1);
        assert_eq!(ScopeSet::all().len(), 75);
        let a = ScopeSet::parse("trust:read workspace:read").expect("known");
        let b = ScopeSet::parse("workspace:read qlm:read").expect("known");
        assert_eq!(a.intersection(&b).to_space_separated(), "workspace:read");
        assert!(!a.contains("no:such") && a.contains("trust:read"));
    }
}
