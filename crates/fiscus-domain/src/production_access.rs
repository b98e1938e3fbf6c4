//! Production access: off for every new workspace, on only when two distinct admins agree. Turning it off
//! needs one admin (the safe direction). Credentials can do neither.

use crate::people::Role;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Move {
    Enable,
    Disable,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The first admin asked; a second, different admin must confirm.
    Requested,
    /// A second admin confirmed: access is on.
    Enabled,
    /// Access is off (and any open request withdrawn).
    Disabled,
}

impl Outcome {
    /// The outcome's name in the audit chain.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Requested => "requested",
            Outcome::Enabled => "enabled",
            Outcome::Disabled => "disabled",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("only admins change production access")]
    NotAdmin,
    #[error("the same admin cannot both request and confirm production access")]
    SameAdmin,
    #[error("production access is already on")]
    AlreadyOn,
}

/// `open_request_by` is the admin whose request is open, if any.
pub fn decide(
    mv: Move,
    role: Role,
    operator_id: &str,
    enabled: bool,
    open_request_by: Option<&str>,
) -> Result<Outcome, Refusal> {
    if role != Role::Admin {
        return Err(Refusal::NotAdmin);
    }
    match mv {
        Move::Disable => Ok(Outcome::Disabled),
        Move::Enable if enabled => Err(Refusal::AlreadyOn),
        Move::Enable => match open_request_by {
            None => Ok(Outcome::Requested),
            Some(by) if by == operator_id => Err(Refusal::SameAdmin),
            Some(_) => Ok(Outcome::Enabled),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_distinct_admins_enable_and_one_disables() {
        assert_eq!(decide(Move::Enable, Role::Admin, "a", false, None), Ok(Outcome::Requested));
        assert_eq!(decide(Move::Enable, Role::Admin, "a", false, Some("a")), Err(Refusal::SameAdmin));
        assert_eq!(decide(Move::Enable, Role::Admin, "b", false, Some("a")), Ok(Outcome::Enabled));
        assert_eq!(decide(Move::Enable, Role::Approver, "b", false, Some("a")), Err(Refusal::NotAdmin));
        assert_eq!(decide(Move::Disable, Role::Admin, "a", true, None), Ok(Outcome::Disabled));
    }
}
