//! The agents' rules, pure and with their unit tests: client calls and their consent (`calls`), Agent Spaces'
//! definitions, grants and planner (`spaces`), and workflows' definitions, runs, reviews, campaigns and
//! gateway (`workflows`). The state of a workflow run, which other layers show, is
//! `fiscus_domain::workflows::RunState`.

pub mod calls;
pub mod spaces;
pub mod workflows;
