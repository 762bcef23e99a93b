//! The dense army's life, the case an RTS lives in, as one standard level that the example,
//! the criterion benchmark and `horde bench` all measure: units of radius 0.45 spawned
//! packed, one per cell, marching through a band of rocks, squeezing through the 8-cell gaps
//! of a wall, and filling a goal area that holds them all, where they come to rest.
//!
//! At scale 1 the map is 1024x1024 and the army 100,000 units in a block 320 wide; scale `s`
//! divides every length of the level by `s` (the rocks, the gaps and the bodies keep their
//! size) and the army by `s * s`.
//!
//! The phases ([`ArmyPhase`]), from the crowd's state after each frame:
//! - `packed`: the first 60 frames (the block starts to move);
//! - `march`: until the front reaches the wall;
//! - `squeeze`: while more than 2% of the units are still before the wall;
//! - `fill`: until 98% of the units are at rest (arrived or settled; checked every 30
//!   frames);
//! - `settled`: the 300 frames after that.

use std::ops::Range;
use std::time::Duration;

use glam::Vec2;
use horde_core::{Cell, GoalSet, Grid, Map, Position, Terrain, UnitSpec};

use crate::{FrameTimes, SimConfig, SimError, Simulation};

/// A phase of the army's life (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ArmyPhase {
    /// The first 60 frames.
    Packed,
    /// Until the front reaches the wall.
    March,
    /// While more than 2% of the army is before the wall.
    Squeeze,
    /// Until 98% of the army is at rest.
    Fill,
    /// The 300 frames after that.
    Settled,
}

impl ArmyPhase {
    /// Every phase, in order.
    pub const ALL: [Self; 5] = [
        Self::Packed,
        Self::March,
        Self::Squeeze,
        Self::Fill,
        Self::Settled,
    ];

    /// Its name in reports: `packed`, `march`, `squeeze`, `fill`, `settled`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Packed => "packed",
            Self::March => "march",
            Self::Squeeze => "squeeze",
            Self::Fill => "fill",
            Self::Settled => "settled",
        }
    }
}

/// One phase's measurements, from [`DenseArmy::run`].
#[derive(Clone, Debug)]
pub struct PhaseReport {
    /// The phase.
    pub phase: ArmyPhase,
    /// The frames it spanned (counted from the army's spawn).
    pub frames: Range<usize>,
    /// The median wall time of its frames.
    pub median: Duration,
    /// The 95th percentile of its frames' wall times.
    pub p95: Duration,
    /// Each stage's median wall time, in the frame's stage order.
    pub stages: Vec<(String, Duration)>,
}

/// The level at one scale (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DenseArmy {
    scale: u32,
}

/// Frames of [`ArmyPhase::Packed`] and of [`ArmyPhase::Settled`].
const PACKED_FRAMES: usize = 60;
const SETTLED_FRAMES: usize = 300;

impl DenseArmy {
    /// Seconds per frame.
    pub const DT: f32 = 1.0 / 30.0;

    /// The level at `scale` (1, 2 or 4: 100,000, 25,000 or 6,250 units); `None` for any
    /// other scale.
    #[must_use]
    pub fn new(scale: u32) -> Option<Self> {
        matches!(scale, 1 | 2 | 4).then_some(Self { scale })
    }

    /// Units in the army.
    #[must_use]
    pub fn units(&self) -> u32 {
        100_000 / (self.scale * self.scale)
    }

    /// The west face of the wall (x, in cells); the wall is 4 cells thick with 8-cell gaps
    /// every 24 cells.
    #[must_use]
    pub fn wall_x(&self) -> u32 {
        600 / self.scale
    }

    /// The map: open ground, a band of 3x3 rocks 8 cells apart across the way, the wall.
    #[must_use]
    pub fn map(&self) -> Map {
        let s = self.scale;
        let side = 1024 / s;
        let mut map = Map::new(Grid::new(side, side).expect("a side of 256 to 1024 cells"));
        for x in (400 / s..560 / s).step_by(8) {
            for y in (40 / s..1000 / s).step_by(8) {
                let shift = if (x / 8) % 2 == 0 { 0 } else { 4 };
                for (dx, dy) in (0..3).flat_map(|dx| (0..3).map(move |dy| (dx, dy))) {
                    map.set_terrain(Cell::new(x + dx, y + shift + dy), Terrain::SteelPlate);
                }
            }
        }
        for y in (0..side).filter(|y| y % 24 >= 8) {
            for x in self.wall_x()..self.wall_x() + 4 {
                map.set_terrain(Cell::new(x, y), Terrain::SteelPlate);
            }
        }
        map
    }

    /// The goal area: x 700..1000, y 200..800 at scale 1 (it holds the whole army).
    #[must_use]
    pub fn goal(&self) -> GoalSet {
        let s = self.scale;
        GoalSet::new(
            (700 / s..1000 / s).flat_map(|x| (200 / s..800 / s).map(move |y| Cell::new(x, y))),
        )
        .expect("a goal of open cells")
    }

    /// The army, spawned packed one per cell, on `threads` threads.
    ///
    /// # Errors
    /// Whatever [`Simulation::new`] returns for `threads` (0 is refused).
    pub fn simulation(&self, threads: usize) -> Result<Simulation, SimError> {
        let s = self.scale;
        let mut sim = Simulation::new(self.map(), SimConfig::default().with_threads(threads))?;
        let group = sim.add_group(self.goal())?;
        let width = 320 / s;
        let (x0, y0) = ((40 / s) as f32 + 0.5, (352 / s) as f32 + 0.5);
        for i in 0..self.units() {
            let at = Vec2::new(x0 + (i % width) as f32, y0 + (i / width) as f32);
            sim.spawn(UnitSpec::at(at).with_radius(0.45).with_group(group))?;
        }
        Ok(sim)
    }

    /// The phase after a frame, given the phase before it and the frames spent in it
    /// (that frame included); `None` when the life is over.
    #[must_use]
    pub fn phase_after(
        &self,
        sim: &Simulation,
        phase: ArmyPhase,
        frames_in: usize,
    ) -> Option<ArmyPhase> {
        // How many units stand where `at` says, read from the world without a copy.
        let count = |at: &dyn Fn(f32) -> bool| {
            sim.world()
                .query::<&Position>()
                .iter()
                .filter(|p| at(p.0.x))
                .count()
        };
        let wall = self.wall_x() as f32;
        let next = match phase {
            ArmyPhase::Packed if frames_in >= PACKED_FRAMES => ArmyPhase::March,
            ArmyPhase::March if count(&|x| x >= wall - 1.0) > 0 => ArmyPhase::Squeeze,
            ArmyPhase::Squeeze if count(&|x| x < wall + 4.0) * 50 <= self.units() as usize => {
                ArmyPhase::Fill
            }
            ArmyPhase::Fill if frames_in % 30 == 0 => {
                let at_rest = sim
                    .group_status()
                    .first()
                    .is_some_and(|s| (s.arrived + s.settled) * 100 >= s.units * 98);
                if at_rest {
                    ArmyPhase::Settled
                } else {
                    ArmyPhase::Fill
                }
            }
            ArmyPhase::Settled if frames_in >= SETTLED_FRAMES => return None,
            p => p,
        };
        Some(next)
    }

    /// Steps `sim` (from [`Self::simulation`], at frame 0) through the army's life, at most
    /// `max_frames` frames. `at_start` sees the simulation as each phase begins (before its
    /// first frame); `report` gets each phase's measurements as it ends (the last one cut
    /// short by `max_frames` too).
    ///
    /// # Errors
    /// A frame's error, at once.
    pub fn run(
        &self,
        sim: &mut Simulation,
        max_frames: usize,
        mut at_start: impl FnMut(ArmyPhase, &Simulation),
        mut report: impl FnMut(PhaseReport),
    ) -> Result<(), SimError> {
        let mut phase = Measuring::new(ArmyPhase::Packed, 0);
        at_start(phase.phase, sim);
        for frame in 0..max_frames {
            phase.times.step(sim, Self::DT)?;
            match self.phase_after(sim, phase.phase, phase.times.frames()) {
                Some(next) if next == phase.phase => {}
                Some(next) => {
                    report(phase.finish());
                    phase = Measuring::new(next, frame + 1);
                    at_start(next, sim);
                }
                None => {
                    report(phase.finish());
                    return Ok(());
                }
            }
        }
        if phase.times.frames() > 0 {
            report(phase.finish());
        }
        Ok(())
    }
}

/// The phase being measured.
struct Measuring {
    phase: ArmyPhase,
    start: usize,
    times: FrameTimes,
}

impl Measuring {
    fn new(phase: ArmyPhase, start: usize) -> Self {
        Self {
            phase,
            start,
            times: FrameTimes::new(),
        }
    }

    fn finish(self) -> PhaseReport {
        PhaseReport {
            phase: self.phase,
            frames: self.start..self.start + self.times.frames(),
            median: self.times.total(50),
            p95: self.times.total(95),
            stages: self.times.stages(50),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_keep_the_level_whole() {
        assert!(DenseArmy::new(3).is_none());
        for scale in [1, 2, 4] {
            let army = DenseArmy::new(scale).unwrap();
            let map = army.map();
            // The goal area holds the army, and every goal cell is open.
            assert!(
                army.goal().cells().len() >= army.units() as usize,
                "scale {scale}"
            );
            assert!(
                army.goal()
                    .cells()
                    .iter()
                    .all(|&c| map.terrain_at(c) == Terrain::Empty)
            );
        }
    }

    #[test]
    fn a_small_army_lives_through_its_first_phases() {
        let army = DenseArmy::new(4).unwrap();
        let mut sim = army.simulation(1).unwrap();
        assert_eq!(sim.unit_count(), 6250);
        let (mut started, mut reports) = (Vec::new(), Vec::new());
        army.run(
            &mut sim,
            90,
            |p, s| started.push((p, s.frame())),
            |r| reports.push(r),
        )
        .unwrap();
        assert_eq!(started, [(ArmyPhase::Packed, 0), (ArmyPhase::March, 60)]);
        assert_eq!(reports.len(), 2);
        assert_eq!(reports[0].frames, 0..60);
        assert_eq!(reports[1].frames, 60..90);
        assert!(
            reports
                .iter()
                .all(|r| r.p95 >= r.median && !r.stages.is_empty())
        );
    }
}
