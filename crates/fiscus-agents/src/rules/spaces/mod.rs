//! Agent Spaces: agents people promoted, that applications run with a prompt.
//!
//! A space's version declares the tools it may call (generated MCP tools, which are the catalogue's
//! operations; read operations only, because nobody reviews a space's calls before they happen) and its
//! knowledge bindings (references to data by id, never a secret: no URL, no credential, nothing but an
//! identifier can be written there), and a playbook: the rules its native runtime follows. Fiscus ships its
//! spaces (`library`), operators promote a version into a workspace at the console, and only a promoted
//! version runs.
//!
//! The native runtime (`model_selection: auto_native`) is deterministic and local: [`plan`] reads the
//! prompt's words and picks the playbook rules they name, in the playbook's order, with an instrument named
//! in the prompt put into the arguments where a rule asks for it. The same prompt under the same version
//! always plans the same calls.

pub mod library;

use fiscus_domain::catalogue::{self, Method};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// At most this many calls in one run.
pub const MAX_CALLS: usize = 5;
/// A prompt is 1 to this many characters.
pub const MAX_PROMPT: usize = 4000;
/// An `auto` run runs in its request when it plans at most this many calls, else on the queue.
pub const AUTO_SYNC_CALLS: usize = 3;
/// What one run costs, in AI credits.
pub const RUN_CREDITS: i64 = 1;

/// What a space's version is: its tools, knowledge and playbook.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = AgentSpaceDefinition)]
pub struct SpaceDefinition {
    #[schema(pattern = "^[a-z][a-z0-9_]{0,39}$", example = "market_watch")]
    pub key: String,
    pub name: String,
    pub description: String,
    /// The shipped definition's version: raised whenever it changes.
    #[schema(minimum = 1)]
    pub version: i64,
    /// The tools it may call (tool names, which are operation ids).
    pub tools: Vec<String>,
    pub knowledge: Vec<KnowledgeBinding>,
    pub playbook: Vec<PlaybookRule>,
}

/// What a knowledge binding refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = AgentKnowledgeKind)]
pub enum KnowledgeKind {
    Instrument,
    Dataset,
    EconomicSeries,
    Workflow,
}

/// A reference to data the space works with: an identifier, never a secret or an address.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = AgentKnowledgeBinding)]
pub struct KnowledgeBinding {
    pub kind: KnowledgeKind,
    #[schema(pattern = "^[A-Za-z0-9_.-]{1,64}$", example = "SPX")]
    pub reference: String,
    pub purpose: String,
}

/// How a rule takes a value from the prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = AgentPromptExtract)]
pub enum Extract {
    /// The first word of 2 to 5 capital letters (`AAPL`, `SPX`).
    Ticker,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = AgentPromptSlot)]
pub struct PromptSlot {
    /// The argument the value replaces.
    pub argument: String,
    pub extract: Extract,
}

/// One rule of a playbook: when the prompt holds one of its words, call its tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = AgentPlaybookRule)]
pub struct PlaybookRule {
    #[schema(pattern = "^[a-z][a-z0-9_]{0,39}$")]
    pub id: String,
    /// Lower-case words; the rule applies when the prompt holds any of them.
    pub when_any: Vec<String>,
    pub tool: String,
    #[schema(value_type = Object)]
    pub arguments: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_prompt: Option<PromptSlot>,
}

/// Whether a tool may be declared by a space: a served read operation that is not an agent entry point
/// (a space never starts another space's run or dispatches through a gateway).
pub fn declarable(tool: &str) -> bool {
    catalogue::by_id(tool).is_some_and(|op| {
        op.method == Method::Get && op.scope.is_some() && !op.path.starts_with("/agents") && !op.path.contains("a2a")
    })
}

fn identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && s.len() <= 40
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

impl SpaceDefinition {
    /// Every problem of the definition, each naming where it is.
    pub fn check(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if !identifier(&self.key) {
            problems.push(format!("key `{}` is not a lower-case identifier", self.key));
        }
        if self.version < 1 {
            problems.push("version must be at least 1".into());
        }
        for t in &self.tools {
            if !declarable(t) {
                problems.push(format!("tools: `{t}` is not a read operation a space may call"));
            }
        }
        for k in &self.knowledge {
            let ok = !k.reference.is_empty()
                && k.reference.len() <= 64
                && k.reference.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
            if !ok {
                problems.push(format!("knowledge: `{}` is not an identifier", k.reference));
            }
        }
        let mut ids = std::collections::HashSet::new();
        for r in &self.playbook {
            if !identifier(&r.id) || !ids.insert(r.id.as_str()) {
                problems.push(format!("playbook: rule id `{}` is not a unique identifier", r.id));
            }
            if !self.tools.contains(&r.tool) {
                problems.push(format!("playbook.{}: tool `{}` is not declared", r.id, r.tool));
            }
            if r.when_any.iter().any(|w| w.is_empty() || w.chars().any(|c| !c.is_ascii_lowercase())) {
                problems.push(format!("playbook.{}: when_any holds lower-case words only", r.id));
            }
            if r.arguments.values().any(|v| v.is_object() || v.is_array()) {
                problems.push(format!("playbook.{}: arguments are strings, numbers or booleans", r.id));
            }
            if let Some(slot) = &r.from_prompt
                && !r.arguments.contains_key(&slot.argument)
            {
                problems.push(format!("playbook.{}: from_prompt names `{}`, not an argument", r.id, slot.argument));
            }
        }
        if self.playbook.is_empty() {
            problems.push("playbook: at least one rule".into());
        }
        problems
    }
}

/// One call the runtime will make.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = AgentPlannedCall)]
pub struct PlannedCall {
    /// The playbook rule that asked for it.
    pub rule: String,
    pub tool: String,
    #[schema(value_type = Object)]
    pub arguments: Map<String, Value>,
}

/// The prompt's words, lower-cased.
fn words(prompt: &str) -> Vec<String> {
    prompt.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

/// The first ticker-like word of the prompt: 2 to 5 capital ASCII letters.
fn ticker(prompt: &str) -> Option<&str> {
    prompt
        .split(|c: char| !c.is_alphanumeric())
        .find(|w| (2..=5).contains(&w.len()) && w.chars().all(|c| c.is_ascii_uppercase()))
}

/// The calls the native runtime makes for `prompt`: the rules whose words the prompt holds, in the
/// playbook's order, at most [`MAX_CALLS`]. Empty when no rule applies.
pub fn plan(definition: &SpaceDefinition, prompt: &str) -> Vec<PlannedCall> {
    let said = words(prompt);
    definition
        .playbook
        .iter()
        .filter(|r| r.when_any.iter().any(|w| said.contains(w)))
        .take(MAX_CALLS)
        .map(|r| {
            let mut arguments = r.arguments.clone();
            if let Some(slot) = &r.from_prompt {
                let value = match slot.extract {
                    Extract::Ticker => ticker(prompt),
                };
                if let Some(v) = value {
                    arguments.insert(slot.argument.clone(), Value::String(v.to_string()));
                }
            }
            PlannedCall { rule: r.id.clone(), tool: r.tool.clone(), arguments }
        })
        .collect()
}

/// How a run is asked to execute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = AgentExecutionMode)]
pub enum RunMode {
    /// In the request when it plans at most three calls or no queue driver is configured, else on the queue.
    Auto,
    /// In the request (201).
    Sync,
    /// On the queue, by a worker (202).
    Async,
}

impl RunMode {
    pub fn as_str(self) -> &'static str {
        match self {
            RunMode::Auto => "auto",
            RunMode::Sync => "sync",
            RunMode::Async => "async",
        }
    }

    /// Whether a run of `calls` planned calls goes on the queue: `async` always, `auto` when it plans more
    /// than three calls and a queue exists (without one, `auto` serves the caller in the request rather than
    /// refusing what it can do).
    pub fn queued(self, calls: usize, queue_available: bool) -> bool {
        match self {
            RunMode::Auto => queue_available && calls > AUTO_SYNC_CALLS,
            RunMode::Sync => false,
            RunMode::Async => true,
        }
    }
}

/// Which model plans the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = AgentModelSelection)]
pub enum ModelSelection {
    /// The deterministic local runtime, planning from the space's playbook.
    AutoNative,
}

/// Where a run stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = AgentRunState)]
pub enum AgentRunState {
    /// On the queue, for a worker.
    Queued,
    /// A runtime is calling its tools.
    Running,
    /// Every call answered with success.
    Completed,
    /// A call failed, or the run could not be carried out (the answer says why).
    Failed,
}

impl AgentRunState {
    pub const ALL: [AgentRunState; 4] =
        [AgentRunState::Queued, AgentRunState::Running, AgentRunState::Completed, AgentRunState::Failed];

    pub fn as_str(self) -> &'static str {
        match self {
            AgentRunState::Queued => "queued",
            AgentRunState::Running => "running",
            AgentRunState::Completed => "completed",
            AgentRunState::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<AgentRunState> {
        AgentRunState::ALL.into_iter().find(|r| r.as_str() == s)
    }

    pub fn is_ended(self) -> bool {
        matches!(self, AgentRunState::Completed | AgentRunState::Failed)
    }
}

/// A decision about a space in a workspace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = AgentSpaceDecision)]
pub enum SpaceDecision {
    /// The version becomes the active one.
    Promote,
    /// No version runs until one is promoted again.
    Suspend,
}

impl SpaceDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            SpaceDecision::Promote => "promote",
            SpaceDecision::Suspend => "suspend",
        }
    }

    pub fn parse(s: &str) -> Option<SpaceDecision> {
        [SpaceDecision::Promote, SpaceDecision::Suspend].into_iter().find(|d| d.as_str() == s)
    }
}

/// Records as stored (canonical JSON, hashed and sealed).
pub mod records {
    use super::{ModelSelection, PlannedCall, RunMode, SpaceDecision, SpaceDefinition};
    use fiscus_domain::tenancy::CredentialKind;
    use serde::{Deserialize, Serialize};
    use serde_json::{Map, Value};

    /// A space of a workspace (created when an operator first promotes a version of it).
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct SpaceBody {
        pub key: String,
        pub name: String,
        pub description: String,
    }

    /// One version of a space, as promoted.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct VersionBody {
        pub space_id: String,
        /// Counts up from 1 per space in the workspace.
        pub version: i64,
        pub definition: SpaceDefinition,
        /// SHA-256 of the definition (RFC 8785).
        pub definition_hash: String,
    }

    /// An operator's decision about a space.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct DecisionBody {
        pub space_id: String,
        /// Counts up from 1 per space.
        pub seq: i64,
        pub decision: SpaceDecision,
        /// The version promoted (none for a suspension).
        pub version_id: Option<String>,
        pub note: Option<String>,
    }

    /// A run as asked for, with the plan the runtime made.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct RunBody {
        pub space_id: String,
        pub version_id: String,
        pub definition_hash: String,
        /// The execution's id (`aex_…`).
        pub execution_id: String,
        pub prompt: String,
        pub prompt_hash: String,
        pub execution_mode: RunMode,
        pub model_selection: ModelSelection,
        /// Whether it went on the queue.
        pub queued: bool,
        pub plan: Vec<PlannedCall>,
        /// Who asked: the calls are made as this application, with `scopes` only.
        pub application_id: String,
        pub credential_id: String,
        pub credential_kind: CredentialKind,
        pub service_class: String,
        /// The caller's scopes narrowed to those of the space's tools.
        pub scopes: Vec<String>,
        pub credits: i64,
    }

    /// One call a run made, with what its tool answered.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct CallBody {
        pub run_id: String,
        pub seq: i64,
        pub rule: String,
        pub tool: String,
        pub arguments: Map<String, Value>,
        /// `sha256:` of the arguments (RFC 8785).
        pub request_hash: String,
        pub status: i64,
        /// The tool's answer (JSON), or null when it was larger than a run keeps.
        pub response: Value,
        /// `sha256:` of the answer as sent.
        pub response_hash: String,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_native_plan_follows_the_prompt_and_takes_a_ticker_from_it() {
        let space = library::find("market_watch").expect("shipped").definition();
        let calls = plan(&space, "How did AAPL move? Show prices");
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].tool, "get_data_instruments_uid_prices");
        assert_eq!(calls[0].arguments["uid"], "AAPL");
        // The same prompt plans the same calls; no ticker keeps the default.
        assert_eq!(plan(&space, "How did AAPL move? Show prices"), calls);
        assert_eq!(plan(&space, "show the price trend")[0].arguments["uid"], "SPX");
        assert!(plan(&space, "hello").is_empty());
        let briefing = library::find("treasury_briefing").expect("shipped").definition();
        assert_eq!(plan(&briefing, "morning briefing").len(), 4);
    }

    #[test]
    fn a_definition_declaring_a_write_an_undeclared_tool_or_a_secret_is_refused() {
        let mut d = library::find("market_watch").expect("shipped").definition();
        d.tools.push("post_actions".into());
        d.playbook[0].tool = "get_actions".into();
        d.knowledge[0].reference = "https://user:pass@example.com".into();
        let problems = d.check();
        assert!(problems.iter().any(|p| p.contains("post_actions")), "{problems:?}");
        assert!(problems.iter().any(|p| p.contains("not declared")), "{problems:?}");
        assert!(problems.iter().any(|p| p.contains("knowledge")), "{problems:?}");
    }

    #[test]
    fn auto_runs_small_plans_in_the_request() {
        assert!(!RunMode::Auto.queued(3, true));
        assert!(RunMode::Auto.queued(4, true));
        assert!(!RunMode::Auto.queued(4, false), "without a queue, auto serves the caller in the request");
        assert!(RunMode::Async.queued(0, true) && RunMode::Async.queued(0, false));
        assert!(!RunMode::Sync.queued(5, true));
    }
}
