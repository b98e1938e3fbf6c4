//! List parameters: `limit` and `after_id`, an exclusive cursor on the sortable id. The one page rule of
//! every list: a page of objects is 1 to 100 (default 20, [`ITEMS`]); a page of a series' points is 1 to
//! 10,000 (default 1,000, [`POINTS`]).
//!
//! Bad values are refused, never clamped: a client asking for 500 rows and silently getting 100 would
//! believe it had seen everything.

pub const DEFAULT_LIMIT: u32 = ITEMS.default;
pub const MAX_LIMIT: u32 = ITEMS.max;

/// How many a page may hold: `1..=max`, `default` when the client does not say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageSize {
    pub default: u32,
    pub max: u32,
}

/// Objects (actions, runs, datasets, …).
pub const ITEMS: PageSize = PageSize { default: 20, max: 100 };
/// Points of a series (observations, feature values).
pub const POINTS: PageSize = PageSize { default: 1000, max: 10_000 };

impl PageSize {
    /// A requested `limit`, checked: the default when absent, refused (naming `limit`) outside `1..=max`.
    pub fn check(self, raw: Option<i64>) -> Result<u32, (&'static str, String)> {
        match raw {
            None => Ok(self.default),
            Some(n) if n >= 1 && n <= i64::from(self.max) => Ok(n as u32),
            Some(_) => Err(("limit", format!("must be an integer from 1 to {}", self.max))),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageRequest {
    pub limit: u32,
    pub after_id: Option<String>,
}

/// Validates raw `limit` and `after_id` values. The error names the field.
pub fn parse_page(limit: Option<&str>, after_id: Option<&str>) -> Result<PageRequest, (&'static str, String)> {
    let limit = match limit {
        None => ITEMS.default,
        Some(raw) => ITEMS.check(Some(raw.parse::<i64>().unwrap_or(0)))?,
    };
    let after_id = match after_id {
        None => None,
        Some(raw)
            if !raw.is_empty()
                && raw.len() <= 64
                && raw.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') =>
        {
            Some(raw.to_string())
        }
        Some(_) => return Err(("after_id", "must be an object id".to_string())),
    };
    Ok(PageRequest { limit, after_id })
}

/// `limit` and `after_id` as the OpenAPI document states them (the rule is [`parse_page`]).
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageParams {
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<u32>,
    /// Return the objects after this id (exclusive; ids sort in creation order).
    #[param(pattern = "^[A-Za-z0-9_-]{1,64}$")]
    pub after_id: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_outside_the_range_are_refused() {
        assert_eq!(parse_page(None, None).map(|p| p.limit), Ok(20));
        assert_eq!(parse_page(Some("100"), None).map(|p| p.limit), Ok(100));
        for bad in ["0", "101", "-1", "ten", "", "1.5"] {
            assert_eq!(parse_page(Some(bad), None).map_err(|e| e.0), Err("limit"), "{bad}");
        }
        assert_eq!(parse_page(None, Some("x y")).map_err(|e| e.0), Err("after_id"));
        assert_eq!(POINTS.check(None), Ok(1000));
        assert_eq!(POINTS.check(Some(10_000)), Ok(10_000));
        assert!(POINTS.check(Some(10_001)).is_err() && ITEMS.check(Some(0)).is_err());
    }
}
