//! Decoding an uploaded recording into what the recogniser reads: 16 kHz, mono, 16-bit samples.
//!
//! Uploads come from any tenant, so decoding is bounded before it is fast: a compressed format can declare
//! far more samples than its bytes hold (a FLAC frame of constant subframes is a few bytes for 65,535
//! samples per channel), and one such file must never take the memory of the process that serves everyone.
//! So both readers check what each stream and frame declares against the stream's header before decoding
//! it, count every sample against the duration budget as they go ([`MAX_SECONDS`], refused the moment it
//! would be passed, never after decoding), and hand each frame straight to a [`Mono`] sink that downmixes
//! and resamples it: what is held is the 16 kHz mono output (at most [`MAX_OUTPUT_SAMPLES`]) and one frame,
//! never the recording at its own rate and channel count.
//!
//! WAV (RIFF, PCM 16-bit, or WAVE_FORMAT_EXTENSIBLE carrying PCM) is read in `wav`; FLAC frames are checked
//! in `flac` and decoded by `claxon`. `encode` writes both formats (tests and tools make recordings with it).

mod encode;
mod flac;
mod resample;
mod wav;

pub use encode::{FlacFrame, FlacStream, Subframe, constant_frames, flac_bytes, flac_of, wav_bytes};

use std::fmt;

/// The rate the recogniser's acoustic model was trained at.
pub const TARGET_RATE: u32 = 16_000;
/// Longer recordings are refused (the recogniser decodes one utterance in memory).
pub const MAX_SECONDS: u64 = 30 * 60;
/// The most samples a decoded recording holds: [`MAX_SECONDS`] at [`TARGET_RATE`], mono (57.6 MB of
/// 16-bit samples). Decoding holds this, one frame of the input and the input itself, nothing more.
pub const MAX_OUTPUT_SAMPLES: u64 = MAX_SECONDS * TARGET_RATE as u64;
/// Sample rates read, in Hz.
pub const RATES: std::ops::RangeInclusive<u32> = 8_000..=48_000;

/// What was uploaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Wav,
    Flac,
}

impl Format {
    pub fn media_type(self) -> &'static str {
        match self {
            Format::Wav => "audio/wav",
            Format::Flac => "audio/flac",
        }
    }

    pub fn parse(media_type: &str) -> Option<Format> {
        match media_type {
            "audio/wav" | "audio/x-wav" | "audio/wave" => Some(Format::Wav),
            "audio/flac" | "audio/x-flac" => Some(Format::Flac),
            _ => None,
        }
    }
}

/// Why bytes are not a recording this service reads.
#[derive(Debug, PartialEq, Eq)]
pub struct AudioError(pub String);

impl fmt::Display for AudioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn bad(why: impl Into<String>) -> AudioError {
    AudioError(why.into())
}

/// A decoded recording.
#[derive(Debug)]
pub struct Audio {
    /// As uploaded.
    pub sample_rate: u32,
    pub channels: u16,
    pub duration_ms: u64,
    /// 16 kHz mono.
    pub samples: Vec<i16>,
}

/// Decodes `bytes` as `format`.
pub fn decode(format: Format, bytes: &[u8]) -> Result<Audio, AudioError> {
    match format {
        Format::Wav => wav::decode(bytes),
        Format::Flac => flac::decode(bytes),
    }
}

/// Where both readers put what they decode: frames (one sample per channel) are counted against the
/// duration budget before they are decoded ([`Mono::admit`]), then averaged to mono and resampled to 16 kHz
/// as they arrive.
struct Mono {
    rate: u32,
    channels: u16,
    /// Frames admitted so far.
    admitted: u64,
    /// Frames received so far.
    frames: u64,
    resampler: resample::Resampler,
}

impl Mono {
    fn new(rate: u32, channels: u32) -> Result<Mono, AudioError> {
        if !RATES.contains(&rate) {
            return Err(bad(format!("a sample rate of {rate} Hz is outside 8000 to 48000 Hz")));
        }
        if !(1..=2).contains(&channels) {
            return Err(bad(format!("{channels} channels: mono or stereo is read")));
        }
        Ok(Mono {
            rate,
            channels: channels as u16,
            admitted: 0,
            frames: 0,
            resampler: resample::Resampler::new(rate, TARGET_RATE),
        })
    }

    /// The most frames the budget allows at this rate.
    fn limit(&self) -> u64 {
        MAX_SECONDS * u64::from(self.rate)
    }

    /// Refuses a recording that declares more than the budget, before anything is decoded.
    fn declared(&self, frames: u64) -> Result<(), AudioError> {
        if frames > self.limit() {
            return Err(too_long(frames, self.rate));
        }
        Ok(())
    }

    /// Counts `frames` more against the budget, before they are decoded.
    fn admit(&mut self, frames: u64) -> Result<(), AudioError> {
        let total = self.admitted.saturating_add(frames);
        if total > self.limit() {
            return Err(too_long(total, self.rate));
        }
        self.admitted = total;
        Ok(())
    }

    /// One frame of admitted samples, one per channel.
    fn push(&mut self, frame: &[i32]) {
        debug_assert!(self.frames < self.admitted, "a frame pushed before it was admitted");
        let mono = frame.iter().sum::<i32>() / i32::from(self.channels);
        self.resampler.push(mono as i16);
        self.frames += 1;
    }

    fn finish(self) -> Result<Audio, AudioError> {
        if self.frames == 0 {
            return Err(bad("the recording holds no samples"));
        }
        Ok(Audio {
            sample_rate: self.rate,
            channels: self.channels,
            duration_ms: self.frames * 1000 / u64::from(self.rate),
            samples: self.resampler.finish(),
        })
    }
}

fn too_long(frames: u64, rate: u32) -> AudioError {
    bad(format!(
        "the recording lasts more than {MAX_SECONDS} s ({} s or more); longer ones are not transcribed",
        frames / u64::from(rate)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wav_decodes_and_a_truncated_or_foreign_file_is_named() {
        let samples: Vec<i16> = (0..16_000).map(|i| ((i % 100) * 100) as i16).collect();
        let wav = wav_bytes(16_000, 1, &samples);
        let audio = decode(Format::Wav, &wav).expect("decodes");
        assert_eq!((audio.sample_rate, audio.channels, audio.duration_ms), (16_000, 1, 1000));
        assert_eq!(audio.samples, samples);
        let cut = decode(Format::Wav, &wav[..wav.len() - 100]).expect_err("truncated");
        assert!(cut.0.contains("truncated"), "{cut}");
        assert!(decode(Format::Wav, b"%PDF-1.7 not audio").expect_err("foreign").0.contains("not a WAV"));
        assert!(decode(Format::Flac, &wav).expect_err("not flac").0.contains("not a FLAC"));
    }

    #[test]
    fn stereo_is_averaged_and_8_khz_is_resampled_to_16_khz() {
        let stereo: Vec<i16> = (0..8_000).flat_map(|_| [1000i16, 3000]).collect();
        let audio = decode(Format::Wav, &wav_bytes(8_000, 2, &stereo)).expect("decodes");
        assert_eq!(audio.duration_ms, 1000);
        assert_eq!(audio.samples.len(), 16_000);
        assert!(audio.samples.iter().all(|&s| s == 2000));
    }

    #[test]
    fn a_flac_decodes_to_the_same_samples_as_the_wav_of_the_same_recording() {
        let stereo: Vec<i16> = (0..44_100 * 2).map(|i| ((i * 37) % 20_000 - 10_000) as i16).collect();
        let from_wav = decode(Format::Wav, &wav_bytes(44_100, 2, &stereo)).expect("wav");
        let from_flac = decode(Format::Flac, &flac_of(44_100, 2, &stereo)).expect("flac");
        assert_eq!((from_flac.sample_rate, from_flac.channels, from_flac.duration_ms), (44_100, 2, 1000));
        assert_eq!(from_flac.samples, from_wav.samples);
    }

    #[test]
    fn a_wav_longer_than_the_budget_is_refused_from_its_header() {
        // 30 min and one second at 8 kHz, declared by the data chunk: refused before a sample is read (the
        // file holds eight).
        let frames = (MAX_SECONDS + 1) * 8_000;
        let mut wav = wav_bytes(8_000, 1, &[0; 8]);
        wav[40..44].copy_from_slice(&((frames * 2) as u32).to_le_bytes());
        let e = decode(Format::Wav, &wav).expect_err("too long");
        assert!(e.0.contains("more than 1800 s"), "{e}");
    }
}
