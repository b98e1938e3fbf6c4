//! The workflow library: templates shipped with Fiscus, installable into a workspace
//! (`POST /workflows/library/{key}/install`). Each is a definition (`library/<key>.json`, compiled in) with
//! its own version number; its content hash is the SHA-256 of the definition's RFC 8785 form, so an
//! installed version can be traced to the exact template it came from.

use super::definition::Definition;

/// A template of the library.
pub struct Template {
    /// The key in `/workflows/library/{key}`.
    pub key: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    /// The template's version: raised whenever its definition changes.
    pub version: u32,
    definition: &'static str,
}

impl Template {
    /// The template's definition (checked by the library's tests to parse and pass [`Definition::check`]).
    pub fn definition(&self) -> Definition {
        serde_json::from_str(self.definition).expect("library templates parse (tested)")
    }
}

pub const TEMPLATES: [Template; 3] = [
    Template {
        key: "liquidity_report",
        name: "Liquidity report",
        description: "Reads oil prices and Aaa funding yields, measures their volatility and level, checks \
                      the funding cost against a limit and seals a liquidity report.",
        version: 1,
        definition: include_str!("library/liquidity_report.json"),
    },
    Template {
        key: "model_monitoring",
        name: "Model monitoring",
        description: "Measures one-day 95 % value at risk and volatility of the S&P 500 over a year, checks \
                      VaR against the risk appetite, waits, and asks model risk to review before a \
                      monitoring report is sealed.",
        version: 1,
        definition: include_str!("library/model_monitoring.json"),
    },
    Template {
        key: "month_end_close_review",
        name: "Month-end close review",
        description: "Measures the month's market move and drawdown and the Baa credit level, flags a \
                      drawdown beyond 15 %, and asks a controller to sign off before the close pack is \
                      sealed.",
        version: 1,
        definition: include_str!("library/month_end_close_review.json"),
    },
];

/// The template with this key.
pub fn find(key: &str) -> Option<&'static Template> {
    TEMPLATES.iter().find(|t| t.key == key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_parses_and_passes_its_checks_with_local_steps_only() {
        for t in &TEMPLATES {
            let d = t.definition();
            assert_eq!(d.check(), Ok(()), "{}", t.key);
            assert!(d.connected_steps().is_empty(), "{} would not validate", t.key);
            assert!(fiscus_domain::fields::text_ok(t.name, 1, 200));
        }
        let keys: Vec<&str> = TEMPLATES.iter().map(|t| t.key).collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        assert_eq!(keys, sorted, "listed in key order");
    }
}
