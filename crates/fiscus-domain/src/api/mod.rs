//! Request and response shapes of the HTTP API, by area. They are plain data with OpenAPI schemas; the
//! server fills them and the tests read them.

pub mod objects;
