//! Writing recordings: 16-bit PCM WAV, and FLAC (RFC 9639) with constant and verbatim subframes.
//!
//! Tests and tools make recordings with these; the FLAC writer also writes what no encoder would (frames
//! that disagree with their stream header, streams that declare hours), which is how the decoder's limits are
//! tested. Verbatim FLAC is valid FLAC: any decoder reads it, only it does not compress.

/// A WAV file of 16-bit PCM samples (interleaved when stereo).
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

/// A 16-bit FLAC of `samples` (interleaved when stereo), in verbatim frames of 4,096 samples.
pub fn flac_of(rate: u32, channels: u8, samples: &[i16]) -> Vec<u8> {
    const BLOCK: usize = 4096;
    let per_channel = samples.len() / usize::from(channels);
    let frames = samples
        .chunks(BLOCK * usize::from(channels))
        .enumerate()
        .map(|(n, chunk)| FlacFrame {
            number: n as u32,
            block_size: (chunk.len() / usize::from(channels)) as u16,
            rate,
            bits: 16,
            subframes: (0..usize::from(channels))
                .map(|ch| {
                    Subframe::Verbatim(
                        chunk.iter().skip(ch).step_by(usize::from(channels)).map(|&s| i32::from(s)).collect(),
                    )
                })
                .collect(),
        })
        .collect::<Vec<_>>();
    let stream =
        FlacStream { rate, channels, bits: 16, max_block_size: BLOCK as u16, total_samples: per_channel as u64 };
    flac_bytes(&stream, &frames)
}

/// What the STREAMINFO block declares.
#[derive(Clone, Debug)]
pub struct FlacStream {
    pub rate: u32,
    pub channels: u8,
    pub bits: u8,
    pub max_block_size: u16,
    /// Samples per channel; 0 for unknown.
    pub total_samples: u64,
}

/// One frame: its header's block size, rate and sample size, and one subframe per channel (independent
/// channels; the header's channel count is the number of subframes).
#[derive(Clone, Debug)]
pub struct FlacFrame {
    pub number: u32,
    pub block_size: u16,
    pub rate: u32,
    pub bits: u8,
    pub subframes: Vec<Subframe>,
}

/// `count` frames of `channels` constant subframes of 65,535 16-bit samples each, numbered from 0: a few
/// bytes that declare a lot (decoder bombs are made of them).
pub fn constant_frames(count: u32, channels: usize, rate: u32) -> Vec<FlacFrame> {
    (0..count)
        .map(|number| FlacFrame {
            number,
            block_size: u16::MAX,
            rate,
            bits: 16,
            subframes: vec![Subframe::Constant(1000); channels],
        })
        .collect()
}

#[derive(Clone, Debug)]
pub enum Subframe {
    /// Every sample of the block is this value.
    Constant(i32),
    /// The block's samples as they are.
    Verbatim(Vec<i32>),
}

/// A FLAC file of `frames` under `stream`'s STREAMINFO, as given: nothing is checked.
pub fn flac_bytes(stream: &FlacStream, frames: &[FlacFrame]) -> Vec<u8> {
    let mut out = b"fLaC".to_vec();
    // The only metadata block, and the last: STREAMINFO, 34 bytes.
    out.extend_from_slice(&[0x80, 0, 0, 34]);
    let mut info = Bits::default();
    info.put(16, 16);
    info.put(u64::from(stream.max_block_size), 16);
    info.put(0, 24);
    info.put(0, 24);
    info.put(u64::from(stream.rate), 20);
    info.put(u64::from(stream.channels) - 1, 3);
    info.put(u64::from(stream.bits) - 1, 5);
    info.put(stream.total_samples, 36);
    info.put(0, 64);
    info.put(0, 64);
    out.extend_from_slice(&info.bytes);
    for frame in frames {
        write_frame(&mut out, frame);
    }
    out
}

fn write_frame(out: &mut Vec<u8>, frame: &FlacFrame) {
    let start = out.len();
    let mut h = Bits::default();
    h.put(0b11_1111_1111_1110, 14); // the frame sync code
    h.put(0, 1);
    h.put(0, 1); // fixed block size: the coded number is the frame number
    h.put(0b0111, 4); // block size - 1 follows in 16 bits
    let (rate_code, rate_bits, rate_value) = if frame.rate.is_multiple_of(1000) && frame.rate / 1000 <= 255 {
        (0b1100, 8, frame.rate / 1000)
    } else if frame.rate <= 0xFFFF {
        (0b1101, 16, frame.rate)
    } else {
        (0b0000, 0, 0)
    };
    h.put(rate_code, 4);
    h.put(frame.subframes.len() as u64 - 1, 4);
    let bits_code = match frame.bits {
        8 => 1,
        12 => 2,
        16 => 4,
        20 => 5,
        24 => 6,
        32 => 7,
        _ => 0,
    };
    h.put(bits_code, 3);
    h.put(0, 1);
    let mut header = h.bytes;
    header.extend_from_slice(&coded_number(frame.number));
    header.extend_from_slice(&(frame.block_size - 1).to_be_bytes());
    if rate_bits == 8 {
        header.push(rate_value as u8);
    } else if rate_bits == 16 {
        header.extend_from_slice(&(rate_value as u16).to_be_bytes());
    }
    header.push(crc8(&header));
    out.extend_from_slice(&header);
    let mut body = Bits::default();
    let bits = u32::from(frame.bits);
    for sub in &frame.subframes {
        match sub {
            Subframe::Constant(v) => {
                body.put(0b0000_0000, 8);
                body.put_signed(*v, bits);
            }
            Subframe::Verbatim(samples) => {
                body.put(0b0000_0010, 8);
                samples.iter().for_each(|&s| body.put_signed(s, bits));
            }
        }
    }
    out.extend_from_slice(&body.bytes);
    let crc = crc16(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// The frame number in FLAC's UTF-8-like coding.
fn coded_number(n: u32) -> Vec<u8> {
    let n = u64::from(n);
    if n < 0x80 {
        return vec![n as u8];
    }
    let len = match n {
        0..0x800 => 2,
        0x800..0x1_0000 => 3,
        0x1_0000..0x20_0000 => 4,
        0x20_0000..0x400_0000 => 5,
        _ => 6,
    };
    let mut out = vec![0u8; len];
    for (i, byte) in out.iter_mut().enumerate().skip(1) {
        *byte = 0x80 | ((n >> (6 * (len - 1 - i))) & 0x3F) as u8;
    }
    out[0] = ((0xFF00u16 >> len) as u8) | (n >> (6 * (len - 1))) as u8;
    out
}

#[derive(Default)]
struct Bits {
    bytes: Vec<u8>,
    /// Bits used in the last byte (0 when it is full or there is none).
    used: u32,
}

impl Bits {
    fn put(&mut self, value: u64, width: u32) {
        for i in (0..width).rev() {
            if self.used == 0 {
                self.bytes.push(0);
            }
            let bit = ((value >> i) & 1) as u8;
            if let Some(last) = self.bytes.last_mut() {
                *last |= bit << (7 - self.used);
            }
            self.used = (self.used + 1) % 8;
        }
    }

    fn put_signed(&mut self, value: i32, width: u32) {
        let mask = if width >= 64 { u64::MAX } else { (1u64 << width) - 1 };
        self.put(i64::from(value) as u64 & mask, width);
    }
}

fn crc8(data: &[u8]) -> u8 {
    data.iter().fold(0u8, |mut crc, &b| {
        crc ^= b;
        for _ in 0..8 {
            crc = if crc & 0x80 != 0 { (crc << 1) ^ 0x07 } else { crc << 1 };
        }
        crc
    })
}

fn crc16(data: &[u8]) -> u16 {
    data.iter().fold(0u16, |mut crc, &b| {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x8005 } else { crc << 1 };
        }
        crc
    })
}
