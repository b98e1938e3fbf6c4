//! Speech for call recordings: decoding what people upload (`audio`), transcribing it with PocketSphinx from
//! the operating system's packages (`pocketsphinx`, loaded at run time so that Fiscus builds and runs
//! without it), and the word error rate by which transcripts are measured (`wer`).
//!
//! Nothing here reaches the network: the runtime and its acoustic and language models are local files.

pub mod audio;
mod pocketsphinx;
pub mod wer;

pub use pocketsphinx::{DEFAULT_LIBRARY, DEFAULT_MODEL_DIR, ModelPaths, Runtime, Unavailable};
