//! [`FrameTimes`]: the wall time of each frame of a run and of each of its stages, for the
//! medians and quantiles the benchmarks report: one definition for [`crate::DenseArmy`]'s
//! phases, `horde bench`'s frame table and the examples.

use std::time::{Duration, Instant};

use crate::{FrameReport, SimError, Simulation};

/// The wall times of the frames of a run, whole and per stage.
#[derive(Clone, Debug, Default)]
pub struct FrameTimes {
    totals: Vec<Duration>,
    /// Each stage's times by name, in the order the stages first reported.
    stages: Vec<(String, Vec<Duration>)>,
}

impl FrameTimes {
    /// No frame yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Steps `sim` one frame of `dt` seconds and records how long it took, whole (the call,
    /// timed here) and each stage (from its report).
    ///
    /// # Errors
    /// The frame's error (nothing is recorded then).
    pub fn step<'s>(
        &mut self,
        sim: &'s mut Simulation,
        dt: f32,
    ) -> Result<&'s FrameReport, SimError> {
        let t = Instant::now();
        let report = sim.step(dt)?;
        let total = t.elapsed();
        self.add(total, stage_times(report));
        Ok(report)
    }

    /// Records the frame `report` tells of: its total and each stage's wall time (for a
    /// [`Horde`](crate::Horde) on the caller's world: `times.record(horde.step(..)?)`).
    pub fn record(&mut self, report: &FrameReport) {
        self.add(report.total(), stage_times(report));
    }

    /// Records a frame that took `total`, its stages `stages` (name, time).
    pub fn add(&mut self, total: Duration, stages: impl IntoIterator<Item = (String, Duration)>) {
        self.totals.push(total);
        for (name, time) in stages {
            match self.stages.iter_mut().find(|(n, _)| *n == name) {
                Some((_, times)) => times.push(time),
                None => self.stages.push((name, vec![time])),
            }
        }
    }

    /// Frames recorded.
    #[must_use]
    pub fn frames(&self) -> usize {
        self.totals.len()
    }

    /// The `percent` quantile of the frames' wall times (50: the median, the upper one of an
    /// even count; zero without frames).
    #[must_use]
    pub fn total(&self, percent: usize) -> Duration {
        quantile(&self.totals, percent)
    }

    /// The `percent` quantile of each stage's wall times, in the order the stages ran.
    #[must_use]
    pub fn stages(&self, percent: usize) -> Vec<(String, Duration)> {
        self.stages
            .iter()
            .map(|(name, times)| (name.clone(), quantile(times, percent)))
            .collect()
    }
}

/// A report's stages as (name, wall time).
fn stage_times(report: &FrameReport) -> impl Iterator<Item = (String, Duration)> + '_ {
    (report.stages().iter()).map(|stage| (stage.name.to_string(), stage.duration))
}

/// The `percent` quantile of `times`: the one at index `len * percent / 100` once sorted.
fn quantile(times: &[Duration], percent: usize) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort_unstable();
    sorted
        .get((sorted.len() * percent / 100).min(sorted.len().saturating_sub(1)))
        .copied()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_of_frames_and_stages() {
        let ms = Duration::from_millis;
        let mut times = FrameTimes::new();
        assert_eq!(times.total(50), Duration::ZERO);
        for i in [5u64, 1, 4, 2, 3] {
            times.add(ms(i * 10), [("a".into(), ms(i)), ("b".into(), ms(10 - i))]);
        }
        assert_eq!(times.frames(), 5);
        assert_eq!(times.total(50), ms(30));
        assert_eq!(times.total(95), ms(50));
        assert_eq!(times.total(0), ms(10));
        assert_eq!(
            times.stages(50),
            vec![("a".to_string(), ms(3)), ("b".to_string(), ms(7))]
        );
    }
}
