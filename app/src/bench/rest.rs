//! Table `rest`: what an army at rest costs ([`horde_fixtures::Garrison`]: units packed inside
//! a goal area that holds them twice over, with nothing to do but rest; docs/behaviour.md,
//! "Sleeping"). The garrison walks in on 2 threads until 99% of it is at rest; then, from a
//! snapshot taken there, the same [`WINDOW`] frames run on 1 and on 2 threads. A row gives
//! the frames the walk in took, how many units are still awake, the window's median and
//! p95 per thread count, and each stage's median in ns per unit on 2 threads.
//!
//! `--quick` runs 6,250 units; the full run 100,000 (its walk in takes minutes).

use std::time::Instant;

use horde::jobs::FrameTimes;
use horde::{Simulation, Snapshot};
use horde_fixtures::Garrison;
use serde_json::Value;

use super::{Ctx, Row, round};
use crate::AppError;

/// Frames timed from the snapshot on each thread count.
const WINDOW: usize = 60;

/// The most frames the walk in may take.
const MAX_FRAMES: usize = 6000;

fn failed(e: impl std::fmt::Display) -> AppError {
    AppError::Failed(format!("garrison: {e}"))
}

/// The window's frame times on `threads` threads from `start` (the first frame after the
/// restore, which rebuilds the flow fields, untimed).
fn window(start: &Snapshot, threads: usize) -> Result<FrameTimes, AppError> {
    let mut sim = Simulation::from_snapshot(start, threads).map_err(failed)?;
    sim.step(Garrison::DT).map_err(failed)?;
    let mut times = FrameTimes::new();
    for _ in 0..WINDOW {
        times.step(&mut sim, Garrison::DT).map_err(failed)?;
    }
    Ok(times)
}

/// Runs the table.
pub fn run(ctx: &Ctx) -> Result<Vec<Row>, AppError> {
    let garrison = Garrison::new(if ctx.quick { 6_250 } else { 100_000 });
    let units = garrison.units();
    ctx.status(format!("rest: {units} units walking in"));
    let walk = Instant::now();
    let mut sim = garrison.simulation(2).map_err(failed)?;
    let frames = garrison.walk_in(&mut sim, MAX_FRAMES).map_err(failed)?;
    let walk_s = walk.elapsed().as_secs_f64();
    let start = sim.snapshot();
    let awake = sim.horde().awake_units();
    ctx.status(format!("rest: {units} units at rest, on 1 and 2 threads"));
    let one = window(&start, 1)?;
    let two = window(&start, 2)?;
    let ms = |d: std::time::Duration| round(d.as_secs_f64() * 1e3);
    let (one_ms, two_ms) = (ms(one.total(50)), ms(two.total(50)));
    let mut row: Row = vec![
        ("units".into(), Value::from(units)),
        ("walk_in_frames".into(), Value::from(frames)),
        ("walk_in_s".into(), Value::from(round(walk_s))),
        ("awake".into(), Value::from(awake)),
        ("median_1t_ms".into(), Value::from(one_ms)),
        ("median_2t_ms".into(), Value::from(two_ms)),
        ("p95_2t_ms".into(), Value::from(ms(two.total(95)))),
        ("speedup".into(), super::ratio(one_ms, two_ms)),
    ];
    for (name, d) in two.stages(50) {
        let ns = d.as_secs_f64() * 1e9 / f64::from(units);
        if ns >= 0.5 {
            row.push((format!("{name}_ns"), Value::from(round(ns))));
        }
    }
    Ok(vec![row])
}
