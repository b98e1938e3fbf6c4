//! The recordings of Debian's `pocketsphinx-testdata` (LibriVox, read speech) transcribed by the runtime
//! with Debian's `pocketsphinx-en-us` model: the word error rate must not exceed the one documented for
//! that model on these recordings, which is the error rate of PocketSphinx's own expected output for them
//! (`librivox/test-lm.match`, its regression test's decoding with the same model) against their reference
//! transcription. `scripts/test` installs the packages; without them this test fails and says which.

use fiscus_speech::audio::{Format, decode};
use fiscus_speech::{DEFAULT_MODEL_DIR, ModelPaths, Runtime, wer};
use std::collections::BTreeMap;
use std::path::Path;

const DATA: &str = "/usr/share/pocketsphinx/test/data/librivox";

/// `id → text` from a Sphinx transcription or hypothesis file (`text (id …)` per line).
fn by_id(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| {
            let open = l.rfind('(')?;
            let id = l[open + 1..].trim_end_matches(')').split_whitespace().next()?.to_string();
            Some((id, l[..open].trim().to_string()))
        })
        .collect()
}

#[test]
fn librivox_recordings_are_transcribed_within_the_documented_word_error_rate() {
    let read = |name: &str| {
        std::fs::read_to_string(Path::new(DATA).join(name))
            .unwrap_or_else(|e| panic!("{DATA}/{name}: {e}; install Debian's pocketsphinx-testdata"))
    };
    let reference = by_id(&read("transcription"));
    let documented = by_id(&read("test-lm.match"));
    let runtime =
        Runtime::load(None, ModelPaths::debian_en_us(Path::new(DEFAULT_MODEL_DIR))).unwrap_or_else(|e| panic!("{e}"));
    let (mut ours, mut theirs, mut words) = (0, 0, 0);
    let mut heard_first = Vec::new();
    for (id, text) in &reference {
        let bytes = std::fs::read(Path::new(DATA).join(format!("{id}.wav"))).expect("recording");
        let audio = decode(Format::Wav, &bytes).expect("decodes");
        let heard = runtime.transcribe(&audio.samples).expect("transcribes");
        heard_first.push((audio.samples, heard.clone()));
        let (e, n) = wer::edits(text, &heard);
        let (d, _) = wer::edits(text, documented.get(id).expect("documented hypothesis"));
        println!("{id}: {e}/{n} (documented {d}/{n}): {heard}");
        ours += e;
        theirs += d;
        words += n;
    }
    let (rate, documented_rate) = (ours as f64 / words as f64, theirs as f64 / words as f64);
    println!("WER {rate:.4} ({ours}/{words}); documented {documented_rate:.4} ({theirs}/{words})");
    assert_eq!(reference.len(), 5);
    // The same recording is heard the same way whatever was transcribed before it (in reverse order now).
    for (samples, heard) in heard_first.iter().rev() {
        assert_eq!(&runtime.transcribe(samples).expect("transcribes"), heard);
    }
    assert!(ours <= theirs, "WER {rate:.4} is above the documented {documented_rate:.4}");
}
