//! The local speech runtime (PocketSphinx from the operating system's packages), loaded at the first
//! transcription: the service builds and runs without it and answers 503 `speech_runtime_unavailable` while
//! it is missing.

use std::sync::Arc;

use fiscus_domain::error_code::ErrorCode;
use fiscus_speech::{ModelPaths, Runtime};

use crate::governed::Failure;
use crate::settings::Settings;

/// The local speech runtime, loaded when first needed. A failed load is not kept: installing the packages
/// makes the next transcription work without a restart.
pub struct Speech {
    loaded: tokio::sync::Mutex<Option<Arc<Runtime>>>,
}

impl Default for Speech {
    fn default() -> Self {
        Speech { loaded: tokio::sync::Mutex::new(None) }
    }
}

impl Speech {
    pub async fn runtime(&self, settings: &Settings) -> Result<Arc<Runtime>, Failure> {
        let mut loaded = self.loaded.lock().await;
        if let Some(r) = loaded.as_ref() {
            return Ok(r.clone());
        }
        let library = settings.speech_library.clone();
        let model = ModelPaths::debian_en_us(&settings.speech_model_dir);
        let runtime = tokio::task::spawn_blocking(move || Runtime::load(library.as_deref(), model))
            .await
            .map_err(|_| Failure::internal("loading the speech runtime panicked"))?
            .map_err(|e| Failure::refused(ErrorCode::SpeechRuntimeUnavailable, e.to_string()))?;
        let runtime = Arc::new(runtime);
        *loaded = Some(runtime.clone());
        Ok(runtime)
    }
}
