//! PCM 16-bit WAV, read chunk by chunk: a data chunk that claims more bytes than the file holds is named
//! truncated rather than read short, and one that declares more than the duration budget is refused before
//! a sample is read.

use super::{AudioError, Mono, bad};

pub(super) fn decode(b: &[u8]) -> Result<super::Audio, AudioError> {
    if b.len() < 12 || &b[0..4] != b"RIFF" || &b[8..12] != b"WAVE" {
        return Err(bad("not a WAV file (no RIFF/WAVE header)"));
    }
    let mut at = 12;
    let mut format: Option<Fmt> = None;
    while at + 8 <= b.len() {
        let id = &b[at..at + 4];
        let size = u32_at(b, at + 4) as usize;
        let body = at + 8;
        if id == b"fmt " {
            if size < 16 || body + size > b.len() {
                return Err(bad("the WAV fmt chunk is truncated"));
            }
            format = Some(Fmt::read(&b[body..body + size]));
        } else if id == b"data" {
            let Some(fmt) = format else {
                return Err(bad("the WAV data chunk comes before its fmt chunk"));
            };
            return samples(&fmt, b, body, size);
        }
        // Chunks are padded to an even size.
        at = body.saturating_add(size).saturating_add(size & 1);
    }
    Err(bad("the WAV has no data chunk"))
}

struct Fmt {
    tag: u16,
    channels: u16,
    rate: u32,
    block_align: u16,
    bits: u16,
}

impl Fmt {
    fn read(c: &[u8]) -> Fmt {
        let mut tag = u16_at(c, 0);
        // WAVE_FORMAT_EXTENSIBLE: the sub-format GUID's first two bytes are the format tag.
        if tag == 0xFFFE && c.len() >= 26 {
            tag = u16_at(c, 24);
        }
        Fmt { tag, channels: u16_at(c, 2), rate: u32_at(c, 4), block_align: u16_at(c, 12), bits: u16_at(c, 14) }
    }
}

fn samples(fmt: &Fmt, b: &[u8], body: usize, size: usize) -> Result<super::Audio, AudioError> {
    if fmt.tag != 1 || fmt.bits != 16 {
        return Err(bad(format!("WAV format {} with {}-bit samples: only 16-bit PCM is read", fmt.tag, fmt.bits)));
    }
    let mut mono = Mono::new(fmt.rate, u32::from(fmt.channels))?;
    let width = usize::from(fmt.channels) * 2;
    if usize::from(fmt.block_align) != width {
        return Err(bad(format!(
            "the WAV's block alignment is {} bytes where {} channels of 16 bits take {width}",
            fmt.block_align, fmt.channels
        )));
    }
    let frames = (size / width) as u64;
    mono.declared(frames)?;
    if body + size > b.len() {
        return Err(bad(format!(
            "the WAV is truncated: its data chunk declares {size} bytes and {} are present",
            b.len() - body
        )));
    }
    mono.admit(frames)?;
    let mut frame = [0i32; 2];
    for bytes in b[body..body + size].chunks_exact(width) {
        for (ch, s) in bytes.chunks_exact(2).enumerate() {
            frame[ch] = i32::from(i16::from_le_bytes([s[0], s[1]]));
        }
        mono.push(&frame[..usize::from(fmt.channels)]);
    }
    mono.finish()
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
