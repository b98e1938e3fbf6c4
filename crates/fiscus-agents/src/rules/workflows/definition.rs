//! A workflow definition: a directed acyclic graph of typed steps.
//!
//! A step names the steps it runs after (`after`); the graph must be acyclic, every dependency must name a
//! step of the definition, and ids are unique. Each kind has its own parameters, refused when unknown, so
//! a definition either parses into exactly these types or is refused with the step and field named.
//!
//! Kinds come in two families. The **local** kinds are deterministic computations on the workspace's own
//! data and people's decisions, which Fiscus runs itself: reading an observed series, measuring it,
//! checking a measure against a limit, waiting, a person's review, and a report. The **connected** kinds
//! (agent, integration, Financial Action, code runner, sub-workflow, external network) reach outside the
//! run; they may be written in a definition, but a validation campaign refuses them (the seed's rule) and
//! this runtime does not run them yet (a run of such a version is refused before it starts).
//!
//! It is long because a language's types and its validation are read together: each step kind's fields beside the
//! checks that refuse them.

use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// Steps a definition may hold.
pub const MAX_STEPS: usize = 50;
/// Dependencies one step may name.
pub const MAX_AFTER: usize = 20;
/// Observations a read step may take.
pub const MAX_OBSERVATIONS: u32 = 5000;
/// The longest wait a step may ask for (seven days).
pub const MAX_WAIT_SECONDS: u32 = 604_800;

/// A workflow definition as written in the studio or shipped in the library.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = WorkflowDefinition)]
pub struct Definition {
    /// The steps, in the order they are listed (ties between ready steps run in this order).
    #[schema(min_items = 1, max_items = 50)]
    pub steps: Vec<Step>,
}

/// One step of a definition. `kind` selects the parameters. (Its schema is written below: each variant's
/// own object with `kind` added, so that the document refuses unknown members as the server does.)
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Step {
    /// Reads the last `observations` daily closes of an instrument from its newest observed prices dataset
    /// (pinned when the run starts).
    ReadPrices(ReadPrices),
    /// Reads the last `observations` values of an economic series (pinned when the run starts).
    ReadSeries(ReadSeries),
    /// Measures a series read by an earlier step.
    Measure(Measure),
    /// Compares a measure with a limit; a failed check fails the run unless `on_fail` is `continue`.
    Check(Check),
    /// Waits (a durable timer; virtual in a validation campaign).
    Wait(Wait),
    /// Waits for a person's review at the console (`workflow.awaiting_review`).
    Review(Review),
    /// Seals a report of earlier steps' outputs (virtual in a validation campaign).
    Report(Report),
    /// Runs an agent (connected: refused by validation, not run by this runtime).
    Agent(Connected),
    /// Calls an integration (connected).
    Integration(Connected),
    /// Proposes a Financial Action (connected).
    FinancialAction(Connected),
    /// Runs code (connected).
    CodeRunner(Connected),
    /// Runs another workflow (connected).
    SubWorkflow(Connected),
    /// Calls the network (connected).
    ExternalNetwork(Connected),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = WorkflowReadPrices)]
pub struct ReadPrices {
    #[schema(pattern = "^[a-z][a-z0-9_]{0,39}$", example = "prices")]
    pub id: String,
    #[serde(default)]
    #[schema(max_items = 20, value_type = Vec<String>)]
    pub after: Vec<String>,
    /// The instrument's symbol.
    #[schema(pattern = "^[A-Za-z0-9][A-Za-z0-9._^=-]{0,39}$", example = "SPY")]
    pub instrument: String,
    #[schema(minimum = 2, maximum = 5000, example = 250)]
    pub observations: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = WorkflowReadSeries)]
pub struct ReadSeries {
    #[schema(pattern = "^[a-z][a-z0-9_]{0,39}$", example = "rates")]
    pub id: String,
    #[serde(default)]
    #[schema(max_items = 20, value_type = Vec<String>)]
    pub after: Vec<String>,
    /// The economic series' key.
    #[schema(pattern = "^[A-Za-z0-9][A-Za-z0-9._^=-]{0,39}$", example = "DGS10")]
    pub series: String,
    #[schema(minimum = 2, maximum = 5000, example = 60)]
    pub observations: u32,
}

/// What a measure step computes on a series.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = WorkflowMeasureKind)]
pub enum MeasureKind {
    /// The last value.
    Last,
    /// The mean of the values.
    Mean,
    /// The last value over the first, less one.
    Change,
    /// Annualised volatility of the simple returns (252 periods a year).
    Volatility,
    /// One-period historical value at risk at 95 % of the simple returns, as a positive loss.
    ValueAtRisk95,
    /// Maximum drawdown of the values, as a positive fraction.
    MaxDrawdown,
}

impl MeasureKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MeasureKind::Last => "last",
            MeasureKind::Mean => "mean",
            MeasureKind::Change => "change",
            MeasureKind::Volatility => "volatility",
            MeasureKind::ValueAtRisk95 => "value_at_risk95",
            MeasureKind::MaxDrawdown => "max_drawdown",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = WorkflowMeasure)]
pub struct Measure {
    #[schema(pattern = "^[a-z][a-z0-9_]{0,39}$", example = "risk")]
    pub id: String,
    #[serde(default)]
    #[schema(max_items = 20, value_type = Vec<String>)]
    pub after: Vec<String>,
    /// The read step whose series is measured (it must be among this step's ancestors).
    #[schema(pattern = "^[a-z][a-z0-9_]{0,39}$", example = "prices")]
    pub input: String,
    pub measure: MeasureKind,
}

/// How a check compares its measure with the limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = WorkflowComparison)]
pub enum CheckComparison {
    Lt,
    Le,
    Gt,
    Ge,
}

impl CheckComparison {
    pub fn holds(self, value: f64, limit: f64) -> bool {
        match self {
            CheckComparison::Lt => value < limit,
            CheckComparison::Le => value <= limit,
            CheckComparison::Gt => value > limit,
            CheckComparison::Ge => value >= limit,
        }
    }
}

/// What a failed check does to its run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = WorkflowOnFail)]
pub enum OnFail {
    /// The run fails (`workflow.failed`).
    #[default]
    Fail,
    /// The run goes on; the check's output says it failed (a reviewer sees it).
    Continue,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = WorkflowCheck)]
pub struct Check {
    #[schema(pattern = "^[a-z][a-z0-9_]{0,39}$", example = "within_limit")]
    pub id: String,
    #[serde(default)]
    #[schema(max_items = 20, value_type = Vec<String>)]
    pub after: Vec<String>,
    /// The measure step compared (it must be among this step's ancestors).
    #[schema(pattern = "^[a-z][a-z0-9_]{0,39}$", example = "risk")]
    pub input: String,
    pub comparison: CheckComparison,
    #[schema(minimum = -1e12, maximum = 1e12, example = 0.05)]
    pub limit: f64,
    #[serde(default)]
    pub on_fail: OnFail,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = WorkflowWait)]
pub struct Wait {
    #[schema(pattern = "^[a-z][a-z0-9_]{0,39}$", example = "settle")]
    pub id: String,
    #[serde(default)]
    #[schema(max_items = 20, value_type = Vec<String>)]
    pub after: Vec<String>,
    #[schema(minimum = 1, maximum = 604800, example = 60)]
    pub seconds: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = WorkflowReview)]
pub struct Review {
    #[schema(pattern = "^[a-z][a-z0-9_]{0,39}$", example = "sign_off")]
    pub id: String,
    #[serde(default)]
    #[schema(max_items = 20, value_type = Vec<String>)]
    pub after: Vec<String>,
    /// What the reviewer is asked, shown at the console.
    #[schema(value_type = fiscus_domain::fields::Text<1, 200>, inline, example = "Sign off the month-end risk figures")]
    pub title: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = WorkflowReport)]
pub struct Report {
    #[schema(pattern = "^[a-z][a-z0-9_]{0,39}$", example = "report")]
    pub id: String,
    #[serde(default)]
    #[schema(max_items = 20, value_type = Vec<String>)]
    pub after: Vec<String>,
    #[schema(value_type = fiscus_domain::fields::Text<1, 200>, inline, example = "Month-end risk report")]
    pub title: String,
    /// Steps whose outputs the report carries (each must be among this step's ancestors).
    #[schema(min_items = 1, max_items = 20, value_type = Vec<String>)]
    pub include: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = WorkflowConnectedStep)]
pub struct Connected {
    #[schema(pattern = "^[a-z][a-z0-9_]{0,39}$", example = "notify")]
    pub id: String,
    #[serde(default)]
    #[schema(max_items = 20, value_type = Vec<String>)]
    pub after: Vec<String>,
    /// What the step is for.
    #[serde(default)]
    #[schema(value_type = Option<fiscus_domain::fields::Prose<500>>, inline)]
    pub description: Option<String>,
}

impl utoipa::PartialSchema for Step {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::RefOr;
        use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Schema, Type};
        let variant = |kind: StepKind, schema: RefOr<Schema>, doc: &str| -> RefOr<Schema> {
            let RefOr::T(Schema::Object(mut o)) = schema else { return schema };
            let tag = ObjectBuilder::new().schema_type(Type::String).enum_values(Some([kind.as_str()])).build();
            o.properties.insert("kind".into(), tag.into());
            o.required.insert(0, "kind".into());
            o.description = Some(doc.into());
            RefOr::T(Schema::Object(o))
        };
        let connected = |kind: StepKind, doc: &str| variant(kind, Connected::schema(), doc);
        let one_of = OneOfBuilder::new()
            .item(variant(StepKind::ReadPrices, ReadPrices::schema(), "Reads an instrument's newest daily closes."))
            .item(variant(StepKind::ReadSeries, ReadSeries::schema(), "Reads an economic series' newest values."))
            .item(variant(StepKind::Measure, Measure::schema(), "Measures a series read by an earlier step."))
            .item(variant(StepKind::Check, Check::schema(), "Compares a measure with a limit."))
            .item(variant(StepKind::Wait, Wait::schema(), "A durable timer."))
            .item(variant(StepKind::Review, Review::schema(), "A person's review at the console."))
            .item(variant(StepKind::Report, Report::schema(), "A sealed report of earlier outputs."))
            .item(connected(StepKind::Agent, "Runs an agent (connected: not validated, not run here)."))
            .item(connected(StepKind::Integration, "Calls an integration (connected)."))
            .item(connected(StepKind::FinancialAction, "Proposes a Financial Action (connected)."))
            .item(connected(StepKind::CodeRunner, "Runs code (connected)."))
            .item(connected(StepKind::SubWorkflow, "Runs another workflow (connected)."))
            .item(connected(StepKind::ExternalNetwork, "Calls the network (connected)."))
            .build();
        RefOr::T(Schema::OneOf(one_of))
    }
}

impl utoipa::ToSchema for Step {
    fn name() -> std::borrow::Cow<'static, str> {
        "WorkflowStep".into()
    }

    fn schemas(schemas: &mut Vec<(String, utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>)>) {
        // The variants are inlined above; what they refer to by name is registered through them.
        <Measure as utoipa::ToSchema>::schemas(schemas);
        <Check as utoipa::ToSchema>::schemas(schemas);
        for (name, schema) in [
            (<MeasureKind as utoipa::ToSchema>::name(), <MeasureKind as utoipa::PartialSchema>::schema()),
            (<CheckComparison as utoipa::ToSchema>::name(), <CheckComparison as utoipa::PartialSchema>::schema()),
            (<OnFail as utoipa::ToSchema>::name(), <OnFail as utoipa::PartialSchema>::schema()),
        ] {
            schemas.push((name.into_owned(), schema));
        }
    }
}

/// A step's kind, without its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = WorkflowStepKind)]
pub enum StepKind {
    ReadPrices,
    ReadSeries,
    Measure,
    Check,
    Wait,
    Review,
    Report,
    Agent,
    Integration,
    FinancialAction,
    CodeRunner,
    SubWorkflow,
    ExternalNetwork,
}

impl StepKind {
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::ReadPrices => "read_prices",
            StepKind::ReadSeries => "read_series",
            StepKind::Measure => "measure",
            StepKind::Check => "check",
            StepKind::Wait => "wait",
            StepKind::Review => "review",
            StepKind::Report => "report",
            StepKind::Agent => "agent",
            StepKind::Integration => "integration",
            StepKind::FinancialAction => "financial_action",
            StepKind::CodeRunner => "code_runner",
            StepKind::SubWorkflow => "sub_workflow",
            StepKind::ExternalNetwork => "external_network",
        }
    }

    /// Connected kinds reach outside the run: prohibited in validation, not run by this runtime.
    pub fn is_connected(self) -> bool {
        matches!(
            self,
            StepKind::Agent
                | StepKind::Integration
                | StepKind::FinancialAction
                | StepKind::CodeRunner
                | StepKind::SubWorkflow
                | StepKind::ExternalNetwork
        )
    }
}

impl Step {
    pub fn id(&self) -> &str {
        self.common().0
    }

    pub fn after(&self) -> &[String] {
        self.common().1
    }

    pub fn kind(&self) -> StepKind {
        match self {
            Step::ReadPrices(_) => StepKind::ReadPrices,
            Step::ReadSeries(_) => StepKind::ReadSeries,
            Step::Measure(_) => StepKind::Measure,
            Step::Check(_) => StepKind::Check,
            Step::Wait(_) => StepKind::Wait,
            Step::Review(_) => StepKind::Review,
            Step::Report(_) => StepKind::Report,
            Step::Agent(_) => StepKind::Agent,
            Step::Integration(_) => StepKind::Integration,
            Step::FinancialAction(_) => StepKind::FinancialAction,
            Step::CodeRunner(_) => StepKind::CodeRunner,
            Step::SubWorkflow(_) => StepKind::SubWorkflow,
            Step::ExternalNetwork(_) => StepKind::ExternalNetwork,
        }
    }

    fn common(&self) -> (&String, &[String]) {
        match self {
            Step::ReadPrices(s) => (&s.id, &s.after),
            Step::ReadSeries(s) => (&s.id, &s.after),
            Step::Measure(s) => (&s.id, &s.after),
            Step::Check(s) => (&s.id, &s.after),
            Step::Wait(s) => (&s.id, &s.after),
            Step::Review(s) => (&s.id, &s.after),
            Step::Report(s) => (&s.id, &s.after),
            Step::Agent(s)
            | Step::Integration(s)
            | Step::FinancialAction(s)
            | Step::CodeRunner(s)
            | Step::SubWorkflow(s)
            | Step::ExternalNetwork(s) => (&s.id, &s.after),
        }
    }

    /// Steps whose outputs this step reads (each must be an ancestor).
    fn reads(&self) -> Vec<(&'static str, &str)> {
        match self {
            Step::Measure(s) => vec![("input", s.input.as_str())],
            Step::Check(s) => vec![("input", s.input.as_str())],
            Step::Report(s) => s.include.iter().map(|i| ("include", i.as_str())).collect(),
            _ => Vec::new(),
        }
    }
}

/// Why a definition is refused: the field (a JSON path such as `steps[2].after`) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid {
    pub field: String,
    pub message: String,
}

fn invalid(field: String, message: impl Into<String>) -> Invalid {
    Invalid { field, message: message.into() }
}

impl Definition {
    /// Checks everything the types cannot ([`Self::check_fields`], then [`Self::check_graph`]).
    pub fn check(&self) -> Result<(), Vec<Invalid>> {
        self.check_fields()?;
        self.check_graph()
    }

    /// The rules of each step on its own, which the API's schema states too (limits, id patterns, text):
    /// every problem.
    pub fn check_fields(&self) -> Result<(), Vec<Invalid>> {
        let mut problems = Vec::new();
        if self.steps.is_empty() || self.steps.len() > MAX_STEPS {
            problems.push(invalid("steps".into(), format!("must hold 1 to {MAX_STEPS} steps")));
            return Err(problems);
        }
        for (i, step) in self.steps.iter().enumerate() {
            let field = |f: &str| format!("steps[{i}].{f}");
            if !step_id_ok(step.id()) {
                problems.push(invalid(field("id"), "must match ^[a-z][a-z0-9_]{0,39}$"));
            }
            if step.after().len() > MAX_AFTER {
                problems.push(invalid(field("after"), format!("at most {MAX_AFTER} dependencies")));
            }
            match step {
                Step::ReadPrices(s) => {
                    check_source(&s.instrument, field("instrument"), &mut problems);
                    check_observations(s.observations, field("observations"), &mut problems);
                }
                Step::ReadSeries(s) => {
                    check_source(&s.series, field("series"), &mut problems);
                    check_observations(s.observations, field("observations"), &mut problems);
                }
                Step::Check(s) => {
                    if !s.limit.is_finite() || s.limit.abs() > 1e12 {
                        problems.push(invalid(field("limit"), "must be a number from -1e12 to 1e12"));
                    }
                }
                Step::Wait(s) => {
                    if s.seconds == 0 || s.seconds > MAX_WAIT_SECONDS {
                        problems.push(invalid(field("seconds"), format!("must be 1 to {MAX_WAIT_SECONDS}")));
                    }
                }
                Step::Review(s) => {
                    if !fiscus_domain::fields::text_ok(&s.title, 1, 200) {
                        problems.push(invalid(field("title"), "must be 1 to 200 characters of text"));
                    }
                }
                Step::Report(s) => {
                    if !fiscus_domain::fields::text_ok(&s.title, 1, 200) {
                        problems.push(invalid(field("title"), "must be 1 to 200 characters of text"));
                    }
                    if s.include.is_empty() || s.include.len() > MAX_AFTER {
                        problems.push(invalid(field("include"), format!("must name 1 to {MAX_AFTER} steps")));
                    }
                }
                Step::Measure(_) => {}
                Step::Agent(s)
                | Step::Integration(s)
                | Step::FinancialAction(s)
                | Step::CodeRunner(s)
                | Step::SubWorkflow(s)
                | Step::ExternalNetwork(s) => {
                    if s.description.as_deref().is_some_and(|d| !fiscus_domain::fields::prose_ok(d, 500)) {
                        problems.push(invalid(field("description"), "at most 500 characters, no control characters"));
                    }
                }
            }
        }
        if problems.is_empty() { Ok(()) } else { Err(problems) }
    }

    /// How the steps fit together, which no schema states: unique ids, dependencies that exist, no cycle,
    /// and a step reading only the outputs of its ancestors, of the right kind. Every problem.
    pub fn check_graph(&self) -> Result<(), Vec<Invalid>> {
        let mut problems = Vec::new();
        let mut index: HashMap<&str, usize> = HashMap::new();
        for (i, step) in self.steps.iter().enumerate() {
            if index.insert(step.id(), i).is_some() {
                problems.push(invalid(format!("steps[{i}].id"), format!("`{}` names two steps", step.id())));
            }
        }
        for (i, step) in self.steps.iter().enumerate() {
            for dep in step.after() {
                if !index.contains_key(dep.as_str()) {
                    problems.push(invalid(format!("steps[{i}].after"), format!("`{dep}` is not a step")));
                } else if dep == step.id() {
                    problems.push(invalid(format!("steps[{i}].after"), "a step cannot run after itself"));
                }
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        if let Some(cycle) = self.cycle() {
            problems.push(invalid("steps".into(), format!("the steps form a cycle: {}", cycle.join(" -> "))));
            return Err(problems);
        }
        // Reads: only ancestors' outputs, of a kind that has what is read.
        for (i, step) in self.steps.iter().enumerate() {
            let ancestors = self.ancestors(i);
            for (member, read) in step.reads() {
                let field = format!("steps[{i}].{member}");
                let Some(&j) = index.get(read) else {
                    problems.push(invalid(field, format!("`{read}` is not a step")));
                    continue;
                };
                if !ancestors.contains(&j) {
                    problems.push(invalid(field, format!("`{read}` must run before this step (list it in `after`)")));
                    continue;
                }
                let source = self.steps[j].kind();
                let fits = match step {
                    Step::Measure(_) => matches!(source, StepKind::ReadPrices | StepKind::ReadSeries),
                    Step::Check(_) => source == StepKind::Measure,
                    _ => true,
                };
                if !fits {
                    problems.push(invalid(field, format!("`{read}` is a {} step", source.as_str())));
                }
            }
        }
        if problems.is_empty() { Ok(()) } else { Err(problems) }
    }

    /// The index of the step with this id.
    pub fn position(&self, id: &str) -> Option<usize> {
        self.steps.iter().position(|s| s.id() == id)
    }

    /// Steps of connected kinds, in order: (id, kind).
    pub fn connected_steps(&self) -> Vec<(String, StepKind)> {
        self.steps.iter().filter(|s| s.kind().is_connected()).map(|s| (s.id().to_string(), s.kind())).collect()
    }

    /// Indices of every step `i` runs after, directly or not.
    fn ancestors(&self, i: usize) -> HashSet<usize> {
        let mut seen = HashSet::new();
        let mut stack: Vec<usize> = self.deps(i);
        while let Some(j) = stack.pop() {
            if seen.insert(j) {
                stack.extend(self.deps(j));
            }
        }
        seen
    }

    fn deps(&self, i: usize) -> Vec<usize> {
        self.steps[i].after().iter().filter_map(|d| self.position(d)).collect()
    }

    /// A cycle, if the graph has one (as step ids, the first repeated at the end).
    fn cycle(&self) -> Option<Vec<String>> {
        // Colours: 0 unvisited, 1 on the current path, 2 done. Iterative, so a long chain cannot overflow.
        let n = self.steps.len();
        let mut colour = vec![0u8; n];
        for start in 0..n {
            if colour[start] != 0 {
                continue;
            }
            let mut path: Vec<(usize, usize)> = vec![(start, 0)];
            colour[start] = 1;
            while let Some((node, next)) = path.last().copied() {
                let deps = self.deps(node);
                if next < deps.len() {
                    path.last_mut().expect("path is not empty").1 += 1;
                    let dep = deps[next];
                    match colour[dep] {
                        0 => {
                            colour[dep] = 1;
                            path.push((dep, 0));
                        }
                        1 => {
                            let from = path.iter().position(|(p, _)| *p == dep).unwrap_or(0);
                            let mut ids: Vec<String> =
                                path[from..].iter().map(|(p, _)| self.steps[*p].id().to_string()).collect();
                            ids.push(self.steps[dep].id().to_string());
                            return Some(ids);
                        }
                        _ => {}
                    }
                } else {
                    colour[node] = 2;
                    path.pop();
                }
            }
        }
        None
    }
}

fn step_id_ok(id: &str) -> bool {
    let bytes = id.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 40
        && bytes[0].is_ascii_lowercase()
        && bytes.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_')
}

fn check_source(key: &str, field: String, problems: &mut Vec<Invalid>) {
    let bytes = key.as_bytes();
    let ok = !bytes.is_empty()
        && bytes.len() <= 40
        && bytes[0].is_ascii_alphanumeric()
        && bytes.iter().all(|b| b.is_ascii_alphanumeric() || b"._^=-".contains(b));
    if !ok {
        problems.push(invalid(field, "must match ^[A-Za-z0-9][A-Za-z0-9._^=-]{0,39}$"));
    }
}

fn check_observations(n: u32, field: String, problems: &mut Vec<Invalid>) {
    if !(2..=MAX_OBSERVATIONS).contains(&n) {
        problems.push(invalid(field, format!("must be 2 to {MAX_OBSERVATIONS}")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: serde_json::Value) -> Definition {
        serde_json::from_value(v).expect("parses")
    }

    fn problems(v: serde_json::Value) -> Vec<Invalid> {
        parse(v).check().expect_err("refused")
    }

    #[test]
    fn a_well_formed_graph_passes() {
        let d = parse(json!({"steps": [
            {"kind": "read_prices", "id": "prices", "instrument": "SPY", "observations": 250},
            {"kind": "measure", "id": "risk", "after": ["prices"], "input": "prices", "measure": "value_at_risk95"},
            {"kind": "check", "id": "limit", "after": ["risk"], "input": "risk", "comparison": "le", "limit": 0.05},
            {"kind": "review", "id": "sign_off", "after": ["limit"], "title": "Sign off"},
            {"kind": "report", "id": "report", "after": ["sign_off"], "title": "Report", "include": ["risk", "limit"]}
        ]}));
        assert_eq!(d.check(), Ok(()));
    }

    #[test]
    fn unknown_kinds_and_unknown_parameters_are_refused_by_the_types() {
        let unknown = json!({"steps": [{"kind": "teleport", "id": "a"}]});
        assert!(serde_json::from_value::<Definition>(unknown).is_err());
        let extra = json!({"steps": [{"kind": "wait", "id": "a", "seconds": 5, "colour": "red"}]});
        assert!(serde_json::from_value::<Definition>(extra).is_err());
        let array = json!({"steps": [["wait", "a", 5]]});
        assert!(serde_json::from_value::<Definition>(array).is_err());
    }

    #[test]
    fn a_cycle_is_named() {
        let p = problems(json!({"steps": [
            {"kind": "wait", "id": "a", "after": ["c"], "seconds": 1},
            {"kind": "wait", "id": "b", "after": ["a"], "seconds": 1},
            {"kind": "wait", "id": "c", "after": ["b"], "seconds": 1}
        ]}));
        assert_eq!(p.len(), 1);
        assert!(p[0].message.contains("cycle"), "{p:?}");
        assert!(p[0].message.contains("a -> c -> b -> a") || p[0].message.contains("->"), "{p:?}");
    }

    #[test]
    fn missing_dependencies_duplicates_and_self_loops_are_refused() {
        let p = problems(json!({"steps": [
            {"kind": "wait", "id": "a", "after": ["nowhere"], "seconds": 1},
            {"kind": "wait", "id": "a", "seconds": 1},
            {"kind": "wait", "id": "b", "after": ["b"], "seconds": 1}
        ]}));
        let fields: Vec<&str> = p.iter().map(|i| i.field.as_str()).collect();
        assert_eq!(fields, vec!["steps[1].id", "steps[0].after", "steps[2].after"]);
    }

    #[test]
    fn a_step_reads_only_its_ancestors_of_the_right_kind() {
        let p = problems(json!({"steps": [
            {"kind": "read_prices", "id": "prices", "instrument": "SPY", "observations": 10},
            {"kind": "measure", "id": "risk", "input": "prices", "measure": "mean"},
            {"kind": "check", "id": "limit", "after": ["prices"], "input": "prices", "comparison": "le", "limit": 1}
        ]}));
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(p[0].message.contains("must run before"));
        assert!(p[1].message.contains("is a read_prices step"));
    }

    #[test]
    fn limits_are_enforced() {
        let p = problems(json!({"steps": [
            {"kind": "read_prices", "id": "Prices", "instrument": "SPY", "observations": 1},
            {"kind": "wait", "id": "w", "seconds": 0}
        ]}));
        let fields: Vec<&str> = p.iter().map(|i| i.field.as_str()).collect();
        assert_eq!(fields, vec!["steps[0].id", "steps[0].observations", "steps[1].seconds"]);
    }
}
