//! The decoders' limits, tried as an attacker would: recordings that declare far more than their bytes hold
//! are refused, and decoding them never takes the memory of the process that serves everyone. Each test runs
//! in its own process under the project's runner (nextest), so the peak resident size read from
//! `/proc/self/status` is this test's.
//!
//! The bounded fuzz run mutates well-formed WAV and FLAC files and decodes them: nothing may panic, and
//! whatever decodes stays within the duration budget. `FISCUS_FUZZ_CASES` sets how many (default 2,000).

use fiscus_speech::audio::{
    FlacStream, Format, MAX_OUTPUT_SAMPLES, MAX_SECONDS, constant_frames, decode, flac_bytes, flac_of, wav_bytes,
};
use proptest::prelude::*;

/// The resident-size ceiling the issue sets while a hostile upload is decoded.
const RSS_CEILING_KB: u64 = 300 * 1024;

fn peak_rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM")
}

fn stereo(rate: u32, total_samples: u64) -> FlacStream {
    FlacStream { rate, channels: 2, bits: 16, max_block_size: u16::MAX, total_samples }
}

#[test]
fn a_flac_of_eight_channel_frames_in_a_stereo_stream_is_refused_without_decoding_it() {
    // ~700 KB: frames that each declare 8 channels × 65,535 samples against a stereo STREAMINFO, the shape
    // that made the decoder ask for 4 GiB.
    let bomb = flac_bytes(&stereo(48_000, 0), &constant_frames(19_000, 8, 48_000));
    assert!(bomb.len() > 600_000, "{} bytes", bomb.len());
    let e = decode(Format::Flac, &bomb).expect_err("refused");
    assert!(e.0.contains("8 channels in a stream of 2"), "{e}");
    assert!(peak_rss_kb() < RSS_CEILING_KB, "peak RSS {} kB", peak_rss_kb());
}

#[test]
fn frames_that_disagree_with_the_stream_on_rate_or_sample_size_are_refused() {
    let mut frames = constant_frames(2, 2, 48_000);
    frames[1].rate = 8_000;
    let e = decode(Format::Flac, &flac_bytes(&stereo(48_000, 0), &frames)).expect_err("rate");
    assert!(e.0.contains("8000 Hz in a stream of 48000 Hz"), "{e}");
    let mut frames = constant_frames(2, 2, 48_000);
    frames[0].bits = 24;
    let e = decode(Format::Flac, &flac_bytes(&stereo(48_000, 0), &frames)).expect_err("bits");
    assert!(e.0.contains("24-bit samples in a stream of 16-bit"), "{e}");
    let small = FlacStream { max_block_size: 4096, ..stereo(48_000, 0) };
    let e = decode(Format::Flac, &flac_bytes(&small, &constant_frames(1, 2, 48_000))).expect_err("block");
    assert!(e.0.contains("at most 4096"), "{e}");
}

#[test]
fn a_small_flac_that_decodes_past_the_duration_budget_is_refused_as_it_goes() {
    // ~7 KB of stereo frames that agree with their header and decode to 50 minutes at 8 kHz: refused at the
    // frame that passes 30 minutes, holding no more than the budget's output meanwhile.
    let frames = constant_frames(370, 2, 8_000);
    let file = flac_bytes(&stereo(8_000, 0), &frames);
    assert!(file.len() < 8_000, "{} bytes", file.len());
    let e = decode(Format::Flac, &file).expect_err("too long");
    assert!(e.0.contains(&format!("more than {MAX_SECONDS} s")), "{e}");
    // Declared in the header: refused before any frame is read.
    let declared = flac_bytes(&stereo(8_000, 370 * 65_535), &frames[..1]);
    assert!(decode(Format::Flac, &declared).expect_err("declared").0.contains("more than"));
    assert!(peak_rss_kb() < RSS_CEILING_KB, "peak RSS {} kB", peak_rss_kb());
}

#[test]
fn a_recording_just_under_the_budget_decodes_within_four_times_its_output() {
    // 29 minutes of 48 kHz stereo: what is held is the 16 kHz mono output (55.7 MB), not 334 MB of input
    // samples.
    let frames = constant_frames(29 * 60 * 48_000 / 65_535, 2, 48_000);
    let audio = decode(Format::Flac, &flac_bytes(&stereo(48_000, 0), &frames)).expect("decodes");
    let output_kb = audio.samples.len() as u64 * 2 / 1024;
    assert!(audio.samples.len() as u64 <= MAX_OUTPUT_SAMPLES);
    assert!(audio.duration_ms > 28 * 60 * 1000, "{} ms", audio.duration_ms);
    assert!(peak_rss_kb() < 4 * output_kb, "peak RSS {} kB for {output_kb} kB of output", peak_rss_kb());
}

#[test]
fn a_damaged_flac_is_named_damaged() {
    let samples: Vec<i16> = (0..16_000).map(|i| (i % 300) as i16).collect();
    let mut file = flac_of(16_000, 1, &samples);
    let n = file.len();
    file[n - 10] ^= 0x55;
    assert!(decode(Format::Flac, &file).expect_err("crc").0.contains("damaged"));
    let cut = flac_of(16_000, 1, &samples);
    assert!(decode(Format::Flac, &cut[..cut.len() - 1000]).is_err());
}

fn cases() -> u32 {
    std::env::var("FISCUS_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2_000)
}

/// Small well-formed recordings the fuzzer starts from.
fn seeds() -> Vec<(Format, Vec<u8>)> {
    let mono: Vec<i16> = (0..3_000).map(|i| ((i * 131) % 4_000) as i16).collect();
    let two: Vec<i16> = (0..6_000).map(|i| ((i * 97) % 6_000 - 3_000) as i16).collect();
    vec![
        (Format::Wav, wav_bytes(16_000, 1, &mono)),
        (Format::Wav, wav_bytes(44_100, 2, &two)),
        (Format::Flac, flac_of(16_000, 1, &mono)),
        (Format::Flac, flac_of(48_000, 2, &two)),
        (Format::Flac, flac_bytes(&stereo(8_000, 0), &constant_frames(3, 2, 8_000))),
    ]
}

#[derive(Clone, Debug)]
enum Mutation {
    Set(usize, u8),
    Flip(usize, u8),
    Truncate(usize),
    Insert(usize, Vec<u8>),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Set(i, b)),
        4 => (any::<usize>(), 0u8..8).prop_map(|(i, b)| Mutation::Flip(i, b)),
        1 => any::<usize>().prop_map(Mutation::Truncate),
        1 => (any::<usize>(), proptest::collection::vec(any::<u8>(), 1..16)).prop_map(|(i, b)| Mutation::Insert(i, b)),
    ]
}

fn apply(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let n = bytes.len().max(1);
        match m {
            Mutation::Set(i, b) => {
                if let Some(x) = bytes.get_mut(i % n) {
                    *x = *b;
                }
            }
            Mutation::Flip(i, bit) => {
                if let Some(x) = bytes.get_mut(i % n) {
                    *x ^= 1 << bit;
                }
            }
            Mutation::Truncate(i) => bytes.truncate(i % n),
            Mutation::Insert(i, b) => {
                let at = i % n;
                bytes.splice(at..at, b.iter().copied());
            }
        }
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_recordings_never_panic_and_never_pass_the_budget(
        seed in 0usize..5,
        mutations in proptest::collection::vec(mutation(), 1..6),
    ) {
        let (format, bytes) = seeds().swap_remove(seed);
        let bytes = apply(bytes, &mutations);
        if let Ok(audio) = decode(format, &bytes) {
            prop_assert!(audio.samples.len() as u64 <= MAX_OUTPUT_SAMPLES);
            prop_assert!(audio.duration_ms <= MAX_SECONDS * 1000);
            prop_assert!((1..=2).contains(&audio.channels));
        }
    }
}
