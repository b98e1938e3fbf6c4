//! PocketSphinx (5prealpha, Debian's `libpocketsphinx3`) loaded with `dlopen` when the service first needs
//! it, so that Fiscus builds and runs on machines without it and says so (the caller answers 503).
//!
//! This is the only module of Fiscus that uses `unsafe`: each block calls one C function of the library's
//! documented API with pointers this module owns. The decoder is created once (loading the acoustic model,
//! dictionary and language model takes a second) and used by one transcription at a time: PocketSphinx's
//! decoder is not thread-safe, so it lives behind a mutex.
#![allow(unsafe_code)]

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use libloading::Library;

/// The library's soname in Debian's `libpocketsphinx3`.
pub const DEFAULT_LIBRARY: &str = "libpocketsphinx.so.3";
/// Where Debian's `pocketsphinx-en-us` puts the US English model.
pub const DEFAULT_MODEL_DIR: &str = "/usr/share/pocketsphinx/model/en-us";

/// The model's files: acoustic model directory, language model and pronunciation dictionary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelPaths {
    pub acoustic: PathBuf,
    pub language: PathBuf,
    pub dictionary: PathBuf,
}

impl ModelPaths {
    /// The layout of Debian's `pocketsphinx-en-us` under `dir`.
    pub fn debian_en_us(dir: &Path) -> ModelPaths {
        ModelPaths {
            acoustic: dir.join("en-us"),
            language: dir.join("en-us.lm.bin"),
            dictionary: dir.join("cmudict-en-us.dict"),
        }
    }
}

/// Why the runtime cannot be used: what is missing, in words an operator can act on.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Unavailable(pub String);

type ArgsFn = unsafe extern "C" fn() -> *const c_void;
type ParseFn = unsafe extern "C" fn(*mut c_void, *const c_void, i32, *mut *mut c_char, i32) -> *mut c_void;
type InitFn = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
type UttFn = unsafe extern "C" fn(*mut c_void) -> c_int;
type ProcessFn = unsafe extern "C" fn(*mut c_void, *const i16, usize, c_int, c_int) -> c_int;
type HypFn = unsafe extern "C" fn(*mut c_void, *mut i32) -> *const c_char;
type FreeFn = unsafe extern "C" fn(*mut c_void) -> c_int;

struct Api {
    start_utt: UttFn,
    process_raw: ProcessFn,
    end_utt: UttFn,
    get_hyp: HypFn,
    free: FreeFn,
    free_config: FreeFn,
}

/// A decoder and its configuration, owned here and freed on drop.
struct Decoder {
    ps: *mut c_void,
    config: *mut c_void,
}

// SAFETY: the decoder is only ever used behind the runtime's mutex, by one thread at a time; PocketSphinx
// keeps no thread-local state.
unsafe impl Send for Decoder {}

/// A loaded runtime with its decoder.
pub struct Runtime {
    api: Api,
    decoder: Mutex<Decoder>,
    pub library: String,
    pub model: ModelPaths,
    // Last: the library is unloaded after the decoder was freed (fields drop in order, after `drop`).
    _library: Library,
}

fn symbol<T: Copy>(lib: &Library, name: &[u8]) -> Result<T, Unavailable> {
    // SAFETY: `T` is the C signature of `name` as PocketSphinx 5prealpha and SphinxBase declare it.
    unsafe { lib.get::<T>(name) }
        .map(|s| *s)
        .map_err(|e| Unavailable(format!("{} is missing from the speech library: {e}", String::from_utf8_lossy(name))))
}

impl Runtime {
    /// Loads the library (`library`, default [`DEFAULT_LIBRARY`]) and builds a decoder on `model`.
    pub fn load(library: Option<&Path>, model: ModelPaths) -> Result<Runtime, Unavailable> {
        for (what, path) in [
            ("acoustic model", &model.acoustic),
            ("language model", &model.language),
            ("dictionary", &model.dictionary),
        ] {
            if !path.exists() {
                return Err(Unavailable(format!(
                    "the speech {what} {} is not installed (Debian: apt-get install pocketsphinx-en-us)",
                    path.display()
                )));
            }
        }
        let name = library.map_or_else(|| DEFAULT_LIBRARY.to_string(), |p| p.display().to_string());
        // SAFETY: loading runs the library's initialisers; PocketSphinx's have no preconditions.
        let lib = unsafe { Library::new(&name) }.map_err(|e| {
            Unavailable(format!(
                "the speech runtime {name} cannot be loaded ({e}); Debian: apt-get install libpocketsphinx3"
            ))
        })?;
        let args: ArgsFn = symbol(&lib, b"ps_args\0")?;
        let parse: ParseFn = symbol(&lib, b"cmd_ln_parse_r\0")?;
        let init: InitFn = symbol(&lib, b"ps_init\0")?;
        let api = Api {
            start_utt: symbol(&lib, b"ps_start_utt\0")?,
            process_raw: symbol(&lib, b"ps_process_raw\0")?,
            end_utt: symbol(&lib, b"ps_end_utt\0")?,
            get_hyp: symbol(&lib, b"ps_get_hyp\0")?,
            free: symbol(&lib, b"ps_free\0")?,
            free_config: symbol(&lib, b"cmd_ln_free_r\0")?,
        };
        let text = |p: &Path| {
            CString::new(p.display().to_string()).map_err(|_| Unavailable("a model path holds a NUL byte".into()))
        };
        let owned: Vec<CString> = vec![
            CString::new("fiscus").map_err(|_| Unavailable("argv".into()))?,
            CString::new("-hmm").map_err(|_| Unavailable("argv".into()))?,
            text(&model.acoustic)?,
            CString::new("-lm").map_err(|_| Unavailable("argv".into()))?,
            text(&model.language)?,
            CString::new("-dict").map_err(|_| Unavailable("argv".into()))?,
            text(&model.dictionary)?,
            CString::new("-logfn").map_err(|_| Unavailable("argv".into()))?,
            CString::new("/dev/null").map_err(|_| Unavailable("argv".into()))?,
        ];
        let mut argv: Vec<*mut c_char> = owned.iter().map(|s| s.as_ptr().cast_mut()).collect();
        // SAFETY: `argv` points into `owned`, alive for the call; cmd_ln_parse_r copies what it keeps. The
        // first element is a program name, which it skips, as in `main`.
        let config = unsafe { parse(std::ptr::null_mut(), args(), argv.len() as i32, argv.as_mut_ptr(), 1) };
        if config.is_null() {
            return Err(Unavailable("the speech runtime refused its configuration".into()));
        }
        // SAFETY: `config` is the configuration just parsed; ps_init takes its own reference to it.
        let ps = unsafe { init(config) };
        if ps.is_null() {
            // SAFETY: the configuration is ours and unused.
            unsafe { (api.free_config)(config) };
            return Err(Unavailable("the speech runtime could not load its model".into()));
        }
        Ok(Runtime { api, decoder: Mutex::new(Decoder { ps, config }), library: name, model, _library: lib })
    }

    /// The words heard in `samples` (16 kHz, mono, 16-bit), as one utterance.
    pub fn transcribe(&self, samples: &[i16]) -> Result<String, Unavailable> {
        let decoder = self.decoder.lock().map_err(|_| Unavailable("the speech decoder failed earlier".into()))?;
        let ps = decoder.ps;
        // SAFETY: `ps` is the live decoder, used by this thread alone while the lock is held; `samples`
        // outlives the call and its length is passed with it.
        unsafe {
            if (self.api.start_utt)(ps) < 0 {
                return Err(Unavailable("the speech decoder did not start an utterance".into()));
            }
            if (self.api.process_raw)(ps, samples.as_ptr(), samples.len(), 0, 1) < 0 {
                (self.api.end_utt)(ps);
                return Err(Unavailable("the speech decoder could not read the samples".into()));
            }
            if (self.api.end_utt)(ps) < 0 {
                return Err(Unavailable("the speech decoder did not end the utterance".into()));
            }
            let mut score = 0i32;
            let hyp = (self.api.get_hyp)(ps, &mut score);
            if hyp.is_null() {
                return Ok(String::new());
            }
            // The hypothesis belongs to the decoder and stays valid until the next utterance; it is copied.
            Ok(CStr::from_ptr(hyp).to_string_lossy().into_owned())
        }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        if let Ok(d) = self.decoder.get_mut() {
            // SAFETY: both were created in `load` and are freed once, before the library is unloaded.
            unsafe {
                (self.api.free)(d.ps);
                (self.api.free_config)(d.config);
            }
        }
    }
}
