//! Times as people read them: in the operator's chosen zone, with the UTC instant on hover and in the
//! `datetime` attribute (what the audit trail and the API say).

use jiff::tz::TimeZone;

use super::html::escape;

/// The zone named `name` in the compiled-in IANA database, if it is one.
pub fn zone(name: &str) -> Option<TimeZone> {
    if name.is_empty() || name.len() > 64 {
        return None;
    }
    TimeZone::get(name).ok()
}

/// Every zone name the console offers, sorted.
pub fn names() -> &'static [String] {
    static NAMES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        let mut names: Vec<String> = jiff::tz::db().available().map(|n| n.as_str().to_string()).collect();
        names.sort();
        names
    })
}

/// `<time>` showing the instant (microseconds since the epoch) in `zone`, e.g. `2026-11-26 21:10 CET`, with
/// the UTC instant on hover.
pub fn time(micros: i64, zone: &TimeZone) -> String {
    let utc = fiscus_domain::clock::rfc3339(micros);
    let Ok(at) = jiff::Timestamp::from_microsecond(micros) else { return format!("<time>{}</time>", escape(&utc)) };
    let local = at.to_zoned(zone.clone()).strftime("%Y-%m-%d %H:%M %Z").to_string();
    let hover = at.strftime("%Y-%m-%d %H:%M:%S UTC").to_string();
    format!("<time datetime=\"{}\" title=\"{}\">{}</time>", escape(&utc), escape(&hover), escape(&local))
}

#[cfg(test)]
mod tests {
    use super::{names, time, zone};

    #[test]
    fn a_time_is_shown_in_the_operator_s_zone_with_utc_on_hover() {
        // 2026-07-01T12:00:00Z: summer time in Paris, standard time in Tokyo.
        let at = 1_782_907_200_000_000;
        let paris = zone("Europe/Paris").expect("zone");
        assert_eq!(
            time(at, &paris),
            "<time datetime=\"2026-07-01T12:00:00Z\" title=\"2026-07-01 12:00:00 UTC\">2026-07-01 14:00 CEST</time>"
        );
        let tokyo = zone("Asia/Tokyo").expect("zone");
        assert!(time(at, &tokyo).contains(">2026-07-01 21:00 JST</time>"), "{}", time(at, &tokyo));
        assert!(time(at, &zone("UTC").expect("utc")).contains(">2026-07-01 12:00 UTC</time>"));
    }

    #[test]
    fn only_iana_zones_are_offered_and_accepted() {
        assert!(zone("Mars/Olympus_Mons").is_none());
        assert!(zone("").is_none());
        assert!(zone("../../etc/passwd").is_none());
        assert!(names().iter().any(|n| n == "America/New_York"));
        assert!(names().windows(2).all(|w| w[0] <= w[1]));
    }
}
