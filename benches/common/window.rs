//! [`Window`]: frames measured within a fixed stretch of a scenario, as the criterion
//! benches time them.

use std::hint::black_box;
use std::time::{Duration, Instant};

use horde::{Simulation, Snapshot};

/// Frames measured within a fixed stretch of a scenario. Stepping one simulation for as long
/// as criterion asks would measure a crowd that keeps packing at its goal, so a different
/// state for every run length: at 100k units on 2 threads (`WARMUP=N
/// examples/frame_stages`) the frame grows from 3.9 ms over the first 100 frames to 4.5 at
/// frame 300, 5.1 at 600, 6.0 at 1200 and 7.5 at 2000, the candidates for separation from
/// 1.6 to 8 a unit. So every [`WINDOW`] frames the simulation is put back to the state it
/// had at the start (untimed), and the frame after the restore, which rebuilds the flow
/// fields, is not timed either.
pub struct Window {
    start: Snapshot,
    threads: usize,
    pub sim: Simulation,
    left: u32,
    /// Frames measured from the start before going back to it.
    len: u32,
    dt: f32,
}

/// Frames measured from one start before going back to it.
pub const WINDOW: u32 = 100;

impl Window {
    /// Windows of [`WINDOW`] frames of `dt` seconds that start from `sim`'s present state.
    pub fn new(sim: Simulation, threads: usize, dt: f32) -> Self {
        Self::of(sim, threads, WINDOW, dt)
    }

    /// Windows of `len` frames of `dt` seconds.
    pub fn of(sim: Simulation, threads: usize, len: u32, dt: f32) -> Self {
        let len = len.max(1);
        Self {
            start: sim.snapshot(),
            threads,
            sim,
            left: len,
            len,
            dt,
        }
    }

    /// Puts the simulation back to the window's start when the window is over (untimed).
    fn next_frame(&mut self) {
        if self.left == 0 {
            self.sim =
                Simulation::from_snapshot(&self.start, self.threads).expect("the start restores");
            self.sim.step(self.dt).expect("the frame runs");
            self.left = self.len - 1;
        }
        self.left -= 1;
    }

    /// `iters` frames' wall time, as criterion's `iter_custom` wants it; `after` runs after
    /// each frame, timed with it.
    pub fn frames(&mut self, iters: u64, after: impl Fn()) -> Duration {
        (0..iters)
            .map(|_| {
                self.next_frame();
                let t = Instant::now();
                black_box(self.sim.step(self.dt).expect("the frame runs").total());
                after();
                t.elapsed()
            })
            .sum()
    }

    /// `iters` frames' time in `stage`, from the job graph's report.
    #[allow(dead_code)] // each bench target that includes this file uses part of it
    pub fn stage(&mut self, iters: u64, stage: &str) -> Duration {
        (0..iters)
            .map(|_| {
                self.next_frame();
                let report = self.sim.step(self.dt).expect("the frame runs");
                report.stage(stage).unwrap_or_default()
            })
            .sum()
    }
}

/// The median seconds a frame of each of `windows` takes over `rounds` rounds of 20 frames,
/// the windows taking turns within each round, so that all see the same machine.
#[allow(dead_code)] // each bench target that includes this file uses part of it
pub fn interleaved_medians<const N: usize>(windows: &mut [Window; N], rounds: usize) -> [f64; N] {
    let mut per: [Vec<Duration>; N] = std::array::from_fn(|_| Vec::new());
    for _ in 0..rounds {
        for (i, window) in windows.iter_mut().enumerate() {
            per[i].push(window.frames(20, || {}) / 20);
        }
    }
    per.map(|mut t| {
        t.sort();
        t[t.len() / 2].as_secs_f64()
    })
}
