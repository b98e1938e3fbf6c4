//! Who made a change. Every history entry, outbox event and audit event names one actor, and only these
//! four kinds exist: an application (the machine plane, through a credential), an operator (the human
//! plane, at the console), a worker (background work of a node, e.g. settlement) and the CLI (the operator of
//! the deployment, at the machine). An unknown stored kind is never reinterpreted: [`Actor::parse`] says no.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActorKind {
    Application,
    Operator,
    Worker,
    Cli,
}

impl ActorKind {
    pub const ALL: [ActorKind; 4] = [ActorKind::Application, ActorKind::Operator, ActorKind::Worker, ActorKind::Cli];

    pub fn as_str(self) -> &'static str {
        match self {
            ActorKind::Application => "application",
            ActorKind::Operator => "operator",
            ActorKind::Worker => "worker",
            ActorKind::Cli => "cli",
        }
    }

    pub fn parse(s: &str) -> Option<ActorKind> {
        ActorKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// An actor: its kind and the id of the application, operator, worker or CLI session.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Actor {
    pub kind: ActorKind,
    /// `app_…` for applications, `opr_…` for operators, the worker's node name, `local` (or `demo`) for the CLI.
    #[schema(example = "app_01M81GEC05EFB9183ZPGT2DR8T")]
    pub id: String,
}

impl Actor {
    pub fn application(id: impl Into<String>) -> Actor {
        Actor { kind: ActorKind::Application, id: id.into() }
    }

    pub fn operator(id: impl Into<String>) -> Actor {
        Actor { kind: ActorKind::Operator, id: id.into() }
    }

    pub fn worker(id: impl Into<String>) -> Actor {
        Actor { kind: ActorKind::Worker, id: id.into() }
    }

    /// The operator of the deployment at the machine's command line.
    pub fn cli() -> Actor {
        Actor { kind: ActorKind::Cli, id: "local".into() }
    }

    /// The demo seeding that `fiscus serve --demo` runs (a CLI invocation).
    pub fn demo() -> Actor {
        Actor { kind: ActorKind::Cli, id: "demo".into() }
    }

    /// An actor as stored; `None` for a kind this code does not know.
    pub fn parse(kind: &str, id: &str) -> Option<Actor> {
        Some(Actor { kind: ActorKind::parse(kind)?, id: id.to_string() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_and_unknown_kinds_are_refused() {
        for k in ActorKind::ALL {
            assert_eq!(ActorKind::parse(k.as_str()), Some(k));
            assert_eq!(serde_json::to_value(k).expect("kind"), k.as_str());
        }
        assert_eq!(Actor::parse("system", "x"), None);
        assert_eq!(Actor::parse("operator", "opr_1"), Some(Actor::operator("opr_1")));
    }
}
