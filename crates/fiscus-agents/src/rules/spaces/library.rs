//! The agent spaces shipped with Fiscus (`library/<key>.json`, compiled in). An operator promotes one into a
//! workspace at the console; its content hash (SHA-256 of the definition's RFC 8785 form) ties every
//! promoted version to the exact definition it came from.

use super::SpaceDefinition;

/// A shipped space.
pub struct Shipped {
    pub key: &'static str,
    definition: &'static str,
}

impl Shipped {
    /// The definition (checked by the tests below to parse and pass [`SpaceDefinition::check`]).
    pub fn definition(&self) -> SpaceDefinition {
        serde_json::from_str(self.definition).expect("shipped spaces parse (tested)")
    }
}

pub const SHIPPED: [Shipped; 2] = [
    Shipped { key: "market_watch", definition: include_str!("library/market_watch.json") },
    Shipped { key: "treasury_briefing", definition: include_str!("library/treasury_briefing.json") },
];

pub fn find(key: &str) -> Option<&'static Shipped> {
    SHIPPED.iter().find(|s| s.key == key)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_shipped_space_parses_passes_its_checks_and_is_filed_under_its_key() {
        for s in super::SHIPPED {
            let d = s.definition();
            assert_eq!(d.key, s.key);
            assert_eq!(d.check(), Vec::<String>::new(), "{}", s.key);
        }
    }
}
