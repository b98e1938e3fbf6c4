//! The Fiscus HTTP service: the axum application, its cross-cutting layers, the business areas, the
//! administration used by the CLI, and OpenAPI.

pub mod admin;
pub mod anchor;
pub mod app;
pub mod areas;
pub mod calls;
pub mod catalogue_check;
pub mod compute;
pub mod connections;
pub mod connectors;
pub mod console;
pub mod cpu;
pub mod demo;
pub mod demo_data;
pub mod docs;
pub mod governed;
pub mod http;
pub mod import;
pub mod investment;
pub mod lqm;
pub mod openapi;
pub mod outbound;
pub mod secret_box;
pub mod secret_key;
pub mod series_cache;
pub mod serve;
pub mod settings;
pub mod spaces;
pub mod state;
pub mod verify;
pub mod workers;
pub mod workflows;

pub use settings::Settings;
pub use state::AppState;
