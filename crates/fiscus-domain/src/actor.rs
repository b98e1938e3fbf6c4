//! Who made a change. Every history entry, outbox event, audit event and sealed record names one actor, and
//! only these five kinds exist: an application (the machine plane, through a credential), an operator (the
//! human plane, at the console), a worker (background work of a node, e.g. settlement), the CLI (the
//! operator of the deployment, at the machine) and an agent runtime (a run's own planner, e.g.
//! `auto_native`, making the tool calls of a run a caller started). An unknown stored kind is never
//! reinterpreted: [`Actor::parse`] and [`Actor::from_label`] say no.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActorKind {
    Application,
    Operator,
    Worker,
    Cli,
    Runtime,
}

impl ActorKind {
    pub const ALL: [ActorKind; 5] =
        [ActorKind::Application, ActorKind::Operator, ActorKind::Worker, ActorKind::Cli, ActorKind::Runtime];

    pub fn as_str(self) -> &'static str {
        match self {
            ActorKind::Application => "application",
            ActorKind::Operator => "operator",
            ActorKind::Worker => "worker",
            ActorKind::Cli => "cli",
            ActorKind::Runtime => "runtime",
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

    /// An agent run's own planner (`auto_native`), making the tool calls of the run.
    pub fn runtime(id: impl Into<String>) -> Actor {
        Actor { kind: ActorKind::Runtime, id: id.into() }
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

    /// `kind:id` (`application:app_…`, `operator:opr_…`, `worker:node-1`, `cli:local`): how a record names who
    /// made it in one column and one JSON string. It is what sealed rows and canonical bodies hold, so it is
    /// written here only, and read back only by [`Actor::from_label`].
    pub fn label(&self) -> String {
        format!("{}:{}", self.kind.as_str(), self.id)
    }

    /// A label back; `None` for a kind this code does not know or a label without one.
    pub fn from_label(label: &str) -> Option<Actor> {
        let (kind, id) = label.split_once(':')?;
        (!id.is_empty()).then_some(())?;
        Actor::parse(kind, id)
    }

    /// The application, when an application is who acted (the owner of what it made).
    pub fn application_id(&self) -> Option<&str> {
        (self.kind == ActorKind::Application).then_some(self.id.as_str())
    }
}

/// A stored label that names no actor this code knows.
#[derive(Debug)]
pub struct NotAnActor(pub String);

impl std::fmt::Display for NotAnActor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} is not an actor (kind:id, kind one of application, operator, worker, cli, runtime)", self.0)
    }
}

impl std::error::Error for NotAnActor {}

impl TryFrom<String> for Actor {
    type Error = NotAnActor;

    fn try_from(label: String) -> Result<Actor, NotAnActor> {
        Actor::from_label(&label).ok_or(NotAnActor(label))
    }
}

impl std::fmt::Display for Actor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.kind.as_str(), self.id)
    }
}

/// `#[serde(with = "fiscus_domain::actor::as_label")]`: an [`Actor`] field written as its label, for the
/// records and responses whose documented form is the `kind:id` string (pair it with
/// `#[schema(value_type = String, pattern = ...)]` using [`LABEL_PATTERN`]).
pub mod as_label {
    use super::Actor;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(actor: &Actor, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(actor)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Actor, D::Error> {
        Actor::try_from(String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// As [`as_label`], for an optional actor (`null` when none).
pub mod as_optional_label {
    use super::Actor;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(actor: &Option<Actor>, s: S) -> Result<S::Ok, S::Error> {
        match actor {
            Some(a) => s.collect_str(a),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Actor>, D::Error> {
        match Option::<String>::deserialize(d)? {
            None => Ok(None),
            Some(label) => Actor::try_from(label).map(Some).map_err(serde::de::Error::custom),
        }
    }
}

/// The label's form as a JSON Schema pattern.
pub const LABEL_PATTERN: &str = "^(application|operator|worker|cli|runtime):.+$";

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

    #[test]
    fn labels_round_trip_and_a_label_without_a_known_kind_is_refused() {
        for a in [Actor::application("app_1"), Actor::operator("opr_1"), Actor::worker("node:1"), Actor::cli()] {
            assert_eq!(Actor::from_label(&a.label()), Some(a.clone()));
            assert_eq!(a.to_string(), a.label());
        }
        assert_eq!(Actor::from_label("worker:node:1").map(|a| a.id), Some("node:1".to_string()));
        for bad in ["app_1", "system:x", "operator:", ":opr_1", ""] {
            assert_eq!(Actor::from_label(bad), None, "{bad:?}");
        }
    }
}
