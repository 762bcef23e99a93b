//! [`DurationStats`]: median, 95th percentile and maximum of a stream of durations in
//! bounded memory, however many frames a run has.
//!
//! The first [`DurationStats::EXACT`] samples are kept as they are, so a run of up to that many
//! frames reports exactly the sorted samples' `n / 2`-th and `n * 95 / 100`-th values (as
//! `horde run` always did). From then on the samples go into a log-scale histogram with 1024
//! bins per power of two: a quantile is the midpoint of its bin, within 0.05% of the exact
//! value, and the maximum stays exact. Memory: at most 512 KiB of exact samples, then a few
//! hundred KiB of bins at most (bins are grown only up to the largest sample).

use std::time::Duration;

/// Bits of the mantissa kept per power of two (1024 bins per octave).
const SUB_BITS: u32 = 10;
const SUB: u64 = 1 << SUB_BITS;

/// Bin of `v` nanoseconds: exact below [`SUB`], then [`SUB`] bins per power of two.
fn bin_of(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let m = 63 - v.leading_zeros(); // >= SUB_BITS
    let shift = m - SUB_BITS;
    let mantissa = (v >> shift) - SUB;
    (SUB + u64::from(shift) * SUB + mantissa) as usize
}

/// The smallest value of bin `i` and the bin's width.
fn bin_range(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < SUB {
        return (i, 1);
    }
    let k = i - SUB;
    let shift = k / SUB;
    let mantissa = k % SUB;
    ((SUB + mantissa) << shift, 1 << shift)
}

/// Durations summarised as median, p95 and maximum (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct DurationStats {
    exact: Vec<u64>,
    bins: Vec<u64>,
    count: u64,
    max: u64,
}

impl DurationStats {
    /// Samples kept exactly before the histogram takes over.
    pub const EXACT: usize = 1 << 16;

    /// No samples yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    fn bin(&mut self, v: u64) {
        let i = bin_of(v);
        if self.bins.len() <= i {
            self.bins.resize(i + 1, 0);
        }
        self.bins[i] += 1;
    }

    /// Adds one sample.
    pub fn add(&mut self, d: Duration) {
        let v = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.count += 1;
        self.max = self.max.max(v);
        if self.bins.is_empty() && self.exact.len() < Self::EXACT {
            self.exact.push(v);
            return;
        }
        if !self.exact.is_empty() {
            for v in std::mem::take(&mut self.exact) {
                self.bin(v);
            }
        }
        self.bin(v);
    }

    /// Samples added.
    #[cfg(test)]
    #[must_use]
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Bytes held for the samples.
    #[cfg(test)]
    #[must_use]
    pub fn memory_bytes(&self) -> usize {
        (self.exact.capacity() + self.bins.capacity()) * std::mem::size_of::<u64>()
    }

    /// The value at 0-based `rank` of the sorted samples, in nanoseconds.
    fn at_rank(&self, sorted: Option<&[u64]>, rank: u64) -> u64 {
        if let Some(s) = sorted {
            return s[rank as usize];
        }
        let mut seen = 0;
        for (i, &n) in self.bins.iter().enumerate() {
            seen += n;
            if seen > rank {
                let (low, width) = bin_range(i);
                return (low + width / 2).min(self.max);
            }
        }
        self.max
    }

    /// Median, 95th percentile and maximum in milliseconds: the sorted samples' `n / 2`-th,
    /// `min(n * 95 / 100, n - 1)`-th and last; zeros without samples.
    #[must_use]
    pub fn summary_ms(&self) -> (f64, f64, f64) {
        let n = self.count;
        if n == 0 {
            return (0.0, 0.0, 0.0);
        }
        let sorted = (self.bins.is_empty()).then(|| {
            let mut s = self.exact.clone();
            s.sort_unstable();
            s
        });
        let ms = |ns: u64| ns as f64 / 1e6;
        let p95 = (n.saturating_mul(95) / 100).min(n - 1);
        (
            ms(self.at_rank(sorted.as_deref(), n / 2)),
            ms(self.at_rank(sorted.as_deref(), p95)),
            ms(self.max),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_cover_every_value_in_order() {
        let mut last = 0;
        for v in (0..5000u64).chain([u64::MAX / 3, u64::MAX - 1, u64::MAX]) {
            let i = bin_of(v);
            assert!(i >= last, "{v}");
            last = i;
            let (low, width) = bin_range(i);
            assert!(low <= v && v - low < width, "{v}: bin {i} is {low}+{width}");
        }
        for shift in 0..54u32 {
            let v = (SUB + 7) << shift;
            let (low, width) = bin_range(bin_of(v));
            assert!(low <= v && v - low < width);
            assert!(width as f64 / low as f64 <= 1.0 / SUB as f64);
        }
    }

    #[test]
    fn few_samples_are_exact() {
        let mut s = DurationStats::new();
        for ms in [5u64, 1, 4, 2, 3] {
            s.add(Duration::from_millis(ms));
        }
        // The sorted samples' n/2-th and min(n*95/100, n-1)-th, as before.
        assert_eq!(s.summary_ms(), (3.0, 5.0, 5.0));
        let mut s = DurationStats::new();
        for ms in (1..=100u64).rev() {
            s.add(Duration::from_millis(ms));
        }
        assert_eq!(s.summary_ms(), (51.0, 96.0, 100.0));
        assert_eq!(DurationStats::new().summary_ms(), (0.0, 0.0, 0.0));
    }

    #[test]
    fn millions_of_samples_stay_small_and_close() {
        let mut s = DurationStats::new();
        let n = 3_000_000u64;
        // A spread of frame times from 20 us to about 60 ms, in a scrambled order.
        let value = |i: u64| 20_000 + (i.wrapping_mul(2_654_435_761) % 60_000_000);
        for i in 0..n {
            s.add(Duration::from_nanos(value(i)));
        }
        assert_eq!(s.count(), n);
        assert!(s.memory_bytes() < 512 << 10, "{} bytes", s.memory_bytes());
        let mut exact: Vec<u64> = (0..n).map(value).collect();
        exact.sort_unstable();
        let (med, p95, max) = s.summary_ms();
        let close = |got: f64, want: u64| {
            let want = want as f64 / 1e6;
            assert!((got - want).abs() <= want * 5e-4, "{got} vs {want}");
        };
        close(med, exact[(n / 2) as usize]);
        close(p95, exact[(n * 95 / 100) as usize]);
        assert_eq!(max, *exact.last().unwrap() as f64 / 1e6);
    }
}
