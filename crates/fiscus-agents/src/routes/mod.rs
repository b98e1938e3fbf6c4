//! Agents, workflows and client calls over HTTP: the tool catalogue, MCP and A2A endpoints and Agent Spaces
//! (`agents`), workflow studio, library, runs and value (`workflows`), and client calls with their
//! recordings and transcripts (`calls`). Routes parse and render; `workflows`, `spaces` and `calls` at the
//! crate root are what they call.

pub mod agents;
pub mod calls;
pub mod workflows;
