//! Linear resampling as samples arrive, so that a recording is never held at its own rate.
//!
//! Output sample `i` sits at input position `x = i · rate / target` and is the linear interpolation of
//! input samples `floor(x)` and `floor(x) + 1` (the last input sample past the end). A recording of `n`
//! input samples gives `floor(n · target / rate)` output samples. Output `i` is written as soon as both
//! of its input samples have arrived and enough input has arrived to know that `i` is one of the outputs;
//! the rest, at the end. Only the last few input samples are kept.

/// Input samples kept behind the newest: more than the widest step (48 kHz to 16 kHz is 3) plus the pair.
const KEEP: usize = 8;

pub struct Resampler {
    rate: u64,
    target: u64,
    step: f64,
    /// Input samples from index `base` on.
    window: Vec<i16>,
    base: u64,
    received: u64,
    out: Vec<i16>,
}

impl Resampler {
    pub fn new(rate: u32, target: u32) -> Resampler {
        Resampler {
            rate: u64::from(rate),
            target: u64::from(target),
            step: f64::from(rate) / f64::from(target),
            window: Vec::with_capacity(4 * KEEP),
            base: 0,
            received: 0,
            out: Vec::new(),
        }
    }

    pub fn push(&mut self, sample: i16) {
        if self.rate == self.target {
            self.out.push(sample);
            self.received += 1;
            return;
        }
        self.window.push(sample);
        self.received += 1;
        loop {
            let i = self.out.len() as u64;
            // `i` is an output only once (i + 1) · rate <= received · target.
            if (i + 1) * self.rate > self.received * self.target {
                break;
            }
            let (j, frac) = self.position(i);
            if j + 1 >= self.received {
                break;
            }
            let v = interpolate(self.at(j), self.at(j + 1), frac);
            self.out.push(v);
        }
        if self.window.len() >= 4 * KEEP {
            let drop = self.window.len() - KEEP;
            self.window.drain(..drop);
            self.base += drop as u64;
        }
    }

    pub fn finish(mut self) -> Vec<i16> {
        if self.rate == self.target || self.received == 0 {
            return self.out;
        }
        let n = self.received * self.target / self.rate;
        let last = self.received - 1;
        while (self.out.len() as u64) < n {
            let (j, frac) = self.position(self.out.len() as u64);
            let v = interpolate(self.at(j.min(last)), self.at((j + 1).min(last)), frac);
            self.out.push(v);
        }
        self.out
    }

    fn position(&self, i: u64) -> (u64, f64) {
        let x = i as f64 * self.step;
        let j = x.floor();
        (j as u64, x - j)
    }

    fn at(&self, index: u64) -> i16 {
        // Outputs still to come never reach behind the kept window (see KEEP); the first kept sample stands in
        // if arithmetic ever said otherwise.
        let k = index.saturating_sub(self.base) as usize;
        self.window.get(k).or(self.window.last()).copied().unwrap_or(0)
    }
}

fn interpolate(a: i16, b: i16, frac: f64) -> i16 {
    let (a, b) = (f64::from(a), f64::from(b));
    (a + (b - a) * frac).round() as i16
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole-buffer definition the streaming one must equal.
    fn batch(mono: &[i16], rate: u32, target: u32) -> Vec<i16> {
        if rate == target {
            return mono.to_vec();
        }
        let n = (mono.len() as u64 * u64::from(target) / u64::from(rate)) as usize;
        let step = f64::from(rate) / f64::from(target);
        (0..n)
            .map(|i| {
                let x = i as f64 * step;
                let j = x.floor() as usize;
                let frac = x - j as f64;
                interpolate(mono[j.min(mono.len() - 1)], mono[(j + 1).min(mono.len() - 1)], frac)
            })
            .collect()
    }

    #[test]
    fn streaming_equals_the_whole_buffer_definition_at_every_rate_and_length() {
        for rate in [8_000, 11_025, 16_000, 22_050, 32_000, 44_100, 48_000] {
            for len in [1usize, 2, 3, 4, 5, 7, 100, 1_001, 44_101] {
                let mono: Vec<i16> = (0..len).map(|i| ((i * 7919) % 65_536) as u16 as i16).collect();
                let mut r = Resampler::new(rate, 16_000);
                mono.iter().for_each(|&s| r.push(s));
                assert_eq!(r.finish(), batch(&mono, rate, 16_000), "rate {rate}, {len} samples");
            }
        }
    }
}
