//! The Fiscus service assembled: the router over every area's operations with the cross-cutting layers
//! (`app`), the OpenAPI document (`openapi`), starting and stopping (`serve`), the background workers
//! (`workers`), the administration the command line uses (`admin`, `demo`, `demo_data`), and the one
//! listing that spans areas (`areas::marketplace`). It holds no area's rules: those are in the area crates
//! (`fiscus-data`, `fiscus-investment`, `fiscus-models`, `fiscus-agents`, `fiscus-platform`) over the
//! kernel (`fiscus-kernel`) and the HTTP layers (`fiscus-http`); the console is `fiscus-console`.

pub mod admin;
pub mod app;
pub mod areas;
pub mod demo;
pub mod demo_data;
pub mod openapi;
pub mod serve;
pub mod start;
pub mod workers;
