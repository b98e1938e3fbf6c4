//! FLAC (RFC 9639), 16- or 24-bit, mono or stereo.
//!
//! `claxon` decodes each frame as its own header says, whatever the stream header said; a frame of 8
//! channels × 65,535 samples in a stereo stream is decoded as such. So the stream header (STREAMINFO) is read
//! here, every frame's header is read here before `claxon` decodes the frame, and a frame whose channels,
//! sample rate, sample size or block size disagree with the stream header is refused, as is a frame that
//! would take the recording past the duration budget. `claxon` then decodes one frame at a time from the
//! position this reader checked.

use super::{AudioError, Mono, bad};
use claxon::frame::FrameReader;
use std::io::Cursor;

pub(super) fn decode(b: &[u8]) -> Result<super::Audio, AudioError> {
    if b.len() < 4 || &b[0..4] != b"fLaC" {
        return Err(bad("not a FLAC file (no fLaC marker)"));
    }
    let (info, audio_at) = metadata(b)?;
    if info.bits != 16 && info.bits != 24 {
        return Err(bad(format!("{}-bit FLAC: 16- or 24-bit is read", info.bits)));
    }
    let mut mono = Mono::new(info.rate, info.channels)?;
    if info.total_samples != 0 {
        mono.declared(info.total_samples)?;
    }
    let shift = info.bits - 16;
    let channels = info.channels as usize;
    let mut cursor = Cursor::new(b);
    cursor.set_position(audio_at as u64);
    let mut buffer = Vec::new();
    let mut frame = [0i32; 2];
    loop {
        let at = cursor.position() as usize;
        if at >= b.len() {
            break;
        }
        let header = FrameHeader::read(&b[at..]).map_err(|why| bad(format!("the FLAC frame at byte {at}: {why}")))?;
        header.agrees_with(&info).map_err(|why| bad(format!("the FLAC frame at byte {at}: {why}")))?;
        mono.admit(u64::from(header.block_size))?;
        let block = match FrameReader::new(&mut cursor).read_next_or_eof(buffer) {
            Ok(Some(block)) => block,
            Ok(None) => break,
            Err(e) => return Err(bad(format!("the FLAC is damaged or truncated: {e}"))),
        };
        if block.channels() != info.channels || block.duration() != header.block_size {
            return Err(bad(format!("the FLAC frame at byte {at} is not what its header declares")));
        }
        let decoded: Vec<&[i32]> = (0..info.channels).map(|ch| block.channel(ch)).collect();
        for i in 0..header.block_size as usize {
            for (ch, samples) in decoded.iter().enumerate() {
                frame[ch] = samples[i] >> shift;
            }
            mono.push(&frame[..channels]);
        }
        drop(decoded);
        buffer = block.into_buffer();
    }
    if info.total_samples != 0 && mono.frames != info.total_samples {
        return Err(bad(format!(
            "the FLAC is damaged or truncated: it holds {} samples per channel where its header declares {}",
            mono.frames, info.total_samples
        )));
    }
    mono.finish()
}

/// The stream header (STREAMINFO) as far as decoding needs it.
struct StreamInfo {
    max_block_size: u32,
    rate: u32,
    channels: u32,
    bits: u32,
    /// 0 when unknown.
    total_samples: u64,
}

/// The stream header, and where the first frame starts (after the last metadata block).
fn metadata(b: &[u8]) -> Result<(StreamInfo, usize), AudioError> {
    let mut at = 4;
    let mut info = None;
    loop {
        let Some(h) = b.get(at..at + 4) else {
            return Err(bad("the FLAC's metadata is truncated"));
        };
        let (last, kind) = (h[0] & 0x80 != 0, h[0] & 0x7F);
        let len = (usize::from(h[1]) << 16) | (usize::from(h[2]) << 8) | usize::from(h[3]);
        let body = at + 4;
        let Some(block) = b.get(body..body + len) else {
            return Err(bad("the FLAC's metadata is truncated"));
        };
        match (kind, info.is_some()) {
            (0, false) if len == 34 => info = Some(stream_info(block)?),
            (0, _) => return Err(bad("the FLAC has a second or malformed STREAMINFO block")),
            (_, false) => return Err(bad("the FLAC's first metadata block is not its STREAMINFO")),
            (127, _) => return Err(bad("the FLAC has an invalid metadata block type")),
            _ => {}
        }
        at = body + len;
        if last {
            break;
        }
    }
    info.map(|i| (i, at)).ok_or_else(|| bad("the FLAC has no STREAMINFO block"))
}

fn stream_info(s: &[u8]) -> Result<StreamInfo, AudioError> {
    let min_block_size = u32::from(u16::from_be_bytes([s[0], s[1]]));
    let max_block_size = u32::from(u16::from_be_bytes([s[2], s[3]]));
    let rate = (u32::from(s[10]) << 12) | (u32::from(s[11]) << 4) | (u32::from(s[12]) >> 4);
    let channels = u32::from((s[12] >> 1) & 0x7) + 1;
    let bits = ((u32::from(s[12]) & 1) << 4 | u32::from(s[13]) >> 4) + 1;
    let total_samples = (u64::from(s[13] & 0xF) << 32) | u64::from(u32::from_be_bytes([s[14], s[15], s[16], s[17]]));
    if min_block_size < 16 || max_block_size < min_block_size {
        return Err(bad(format!("the FLAC's block sizes ({min_block_size} to {max_block_size}) are invalid")));
    }
    Ok(StreamInfo { max_block_size, rate, channels, bits, total_samples })
}

/// What a frame header declares (RFC 9639 §9.1); `None` where it defers to the stream header.
#[derive(Debug)]
struct FrameHeader {
    block_size: u32,
    rate: Option<u32>,
    channels: u32,
    bits: Option<u32>,
}

impl FrameHeader {
    fn read(h: &[u8]) -> Result<FrameHeader, String> {
        let byte = |i: usize| h.get(i).copied().ok_or_else(|| "its header is truncated".to_string());
        if byte(0)? != 0xFF || byte(1)? & 0xFE != 0xF8 {
            return Err("no frame starts here".into());
        }
        let (size_code, rate_code) = (byte(2)? >> 4, byte(2)? & 0xF);
        let (channel_code, bits_code) = (byte(3)? >> 4, (byte(3)? >> 1) & 0x7);
        // The frame or sample number, coded like UTF-8 in one to seven bytes.
        let lead = byte(4)?.leading_ones() as usize;
        let mut at = 4 + match lead {
            0 => 1,
            2..=7 => lead,
            _ => return Err("its frame number is malformed".into()),
        };
        let mut take = |n: usize| -> Result<u32, String> {
            let v = (0..n).try_fold(0u32, |v, i| Ok::<u32, String>(v << 8 | u32::from(byte(at + i)?)))?;
            at += n;
            Ok(v)
        };
        let block_size = match size_code {
            0 => return Err("its block size code is reserved".into()),
            1 => 192,
            2..=5 => 576 << (size_code - 2),
            6 => take(1)? + 1,
            7 => take(2)? + 1,
            _ => 256 << (size_code - 8),
        };
        let rate = match rate_code {
            0 => None,
            1 => Some(88_200),
            2 => Some(176_400),
            3 => Some(192_000),
            4 => Some(8_000),
            5 => Some(16_000),
            6 => Some(22_050),
            7 => Some(24_000),
            8 => Some(32_000),
            9 => Some(44_100),
            10 => Some(48_000),
            11 => Some(96_000),
            12 => Some(take(1)? * 1000),
            13 => Some(take(2)?),
            14 => Some(take(2)? * 10),
            _ => return Err("its sample rate code is invalid".into()),
        };
        let channels = match channel_code {
            0..=7 => u32::from(channel_code) + 1,
            8..=10 => 2,
            _ => return Err("its channel assignment is reserved".into()),
        };
        let bits = match bits_code {
            0 => None,
            1 => Some(8),
            2 => Some(12),
            4 => Some(16),
            5 => Some(20),
            6 => Some(24),
            7 => Some(32),
            _ => return Err("its sample size code is reserved".into()),
        };
        Ok(FrameHeader { block_size, rate, channels, bits })
    }

    fn agrees_with(&self, info: &StreamInfo) -> Result<(), String> {
        if self.channels != info.channels {
            return Err(format!("{} channels in a stream of {}", self.channels, info.channels));
        }
        if let Some(rate) = self.rate.filter(|&r| r != info.rate) {
            return Err(format!("{rate} Hz in a stream of {} Hz", info.rate));
        }
        if let Some(bits) = self.bits.filter(|&b| b != info.bits) {
            return Err(format!("{bits}-bit samples in a stream of {}-bit", info.bits));
        }
        if self.block_size > info.max_block_size {
            return Err(format!(
                "a block of {} samples where the stream's blocks are at most {}",
                self.block_size, info.max_block_size
            ));
        }
        Ok(())
    }
}
