//! Decoding an uploaded recording into what the recogniser reads: 16 kHz, mono, 16-bit samples.
//!
//! WAV (RIFF, PCM 16-bit, or WAVE_FORMAT_EXTENSIBLE carrying PCM) is parsed here, chunk by chunk, so that
//! a file whose data chunk claims more bytes than it holds is named truncated rather than read short; FLAC
//! is decoded by `claxon`. Two channels are averaged; another sample rate is resampled linearly.

use std::fmt;

/// The rate the recogniser's acoustic model was trained at.
pub const TARGET_RATE: u32 = 16_000;
/// Longer recordings are refused (the recogniser decodes one utterance in memory).
pub const MAX_SECONDS: u64 = 30 * 60;

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
    let (rate, channels, interleaved) = match format {
        Format::Wav => wav(bytes)?,
        Format::Flac => flac(bytes)?,
    };
    if !(8_000..=48_000).contains(&rate) {
        return Err(bad(format!("a sample rate of {rate} Hz is outside 8000 to 48000 Hz")));
    }
    let frames = interleaved.len() / usize::from(channels);
    if frames == 0 {
        return Err(bad("the recording holds no samples"));
    }
    let duration_ms = frames as u64 * 1000 / u64::from(rate);
    if duration_ms > MAX_SECONDS * 1000 {
        return Err(bad(format!(
            "the recording lasts {} s; at most {MAX_SECONDS} s are transcribed",
            duration_ms / 1000
        )));
    }
    let mono: Vec<i16> = if channels == 1 {
        interleaved
    } else {
        interleaved
            .chunks_exact(usize::from(channels))
            .map(|f| (f.iter().map(|&s| i32::from(s)).sum::<i32>() / i32::from(channels)) as i16)
            .collect()
    };
    Ok(Audio { sample_rate: rate, channels, duration_ms, samples: resample(&mono, rate) })
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// PCM 16-bit WAV: (rate, channels, interleaved samples).
fn wav(b: &[u8]) -> Result<(u32, u16, Vec<i16>), AudioError> {
    if b.len() < 12 || &b[0..4] != b"RIFF" || &b[8..12] != b"WAVE" {
        return Err(bad("not a WAV file (no RIFF/WAVE header)"));
    }
    let mut at = 12;
    let mut format: Option<(u16, u16, u32, u16)> = None;
    while at + 8 <= b.len() {
        let id = &b[at..at + 4];
        let size = u32_at(b, at + 4) as usize;
        let body = at + 8;
        if id == b"fmt " {
            if size < 16 || body + size > b.len() {
                return Err(bad("the WAV fmt chunk is truncated"));
            }
            let mut tag = u16_at(b, body);
            // WAVE_FORMAT_EXTENSIBLE: the sub-format GUID's first two bytes are the format tag.
            if tag == 0xFFFE && size >= 26 {
                tag = u16_at(b, body + 24);
            }
            format = Some((tag, u16_at(b, body + 2), u32_at(b, body + 4), u16_at(b, body + 14)));
        } else if id == b"data" {
            let Some((tag, channels, rate, bits)) = format else {
                return Err(bad("the WAV data chunk comes before its fmt chunk"));
            };
            if tag != 1 || bits != 16 {
                return Err(bad(format!("WAV format {tag} with {bits}-bit samples: only 16-bit PCM is read")));
            }
            if !(1..=2).contains(&channels) {
                return Err(bad(format!("{channels} channels: mono or stereo is read")));
            }
            if body + size > b.len() {
                return Err(bad(format!(
                    "the WAV is truncated: its data chunk declares {size} bytes and {} are present",
                    b.len() - body
                )));
            }
            let samples = b[body..body + size].chunks_exact(2).map(|s| i16::from_le_bytes([s[0], s[1]])).collect();
            return Ok((rate, channels, samples));
        }
        // Chunks are padded to an even size.
        at = body.saturating_add(size).saturating_add(size & 1);
    }
    Err(bad("the WAV has no data chunk"))
}

/// FLAC (16- or 24-bit, mono or stereo): (rate, channels, interleaved samples scaled to 16 bits).
fn flac(b: &[u8]) -> Result<(u32, u16, Vec<i16>), AudioError> {
    if b.len() < 4 || &b[0..4] != b"fLaC" {
        return Err(bad("not a FLAC file (no fLaC marker)"));
    }
    let mut reader =
        claxon::FlacReader::new(std::io::Cursor::new(b)).map_err(|e| bad(format!("the FLAC cannot be read: {e}")))?;
    let info = reader.streaminfo();
    if !(1..=2).contains(&info.channels) {
        return Err(bad(format!("{} channels: mono or stereo is read", info.channels)));
    }
    if info.bits_per_sample != 16 && info.bits_per_sample != 24 {
        return Err(bad(format!("{}-bit FLAC: 16- or 24-bit is read", info.bits_per_sample)));
    }
    let shift = info.bits_per_sample - 16;
    let mut samples = Vec::new();
    for s in reader.samples() {
        let s = s.map_err(|e| bad(format!("the FLAC is damaged or truncated: {e}")))?;
        samples.push((s >> shift) as i16);
    }
    Ok((info.sample_rate, info.channels as u16, samples))
}

/// Linear resampling to [`TARGET_RATE`].
fn resample(mono: &[i16], rate: u32) -> Vec<i16> {
    if rate == TARGET_RATE {
        return mono.to_vec();
    }
    let n = (mono.len() as u64 * u64::from(TARGET_RATE) / u64::from(rate)) as usize;
    let step = f64::from(rate) / f64::from(TARGET_RATE);
    (0..n)
        .map(|i| {
            let x = i as f64 * step;
            let j = x.floor() as usize;
            let frac = x - j as f64;
            let a = f64::from(mono[j.min(mono.len() - 1)]);
            let b = f64::from(mono[(j + 1).min(mono.len() - 1)]);
            (a + (b - a) * frac).round() as i16
        })
        .collect()
}

/// A WAV file of 16-bit PCM samples (tests and tools write recordings with it).
pub fn wav_bytes(rate: u32, channels: u16, samples: &[i16]) -> Vec<u8> {
    let data = samples.len() * 2;
    let mut out = Vec::with_capacity(44 + data);
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&((36 + data) as u32).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&channels.to_le_bytes());
    out.extend_from_slice(&rate.to_le_bytes());
    out.extend_from_slice(&(rate * u32::from(channels) * 2).to_le_bytes());
    out.extend_from_slice(&(channels * 2).to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&(data as u32).to_le_bytes());
    for s in samples {
        out.extend_from_slice(&s.to_le_bytes());
    }
    out
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
}
