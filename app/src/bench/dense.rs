//! Table `dense`: the dense army's life ([`horde_fixtures::DenseArmy`]), each phase on its own.
//! The life runs once on 2 threads: per phase its frames, the frame's median and p95 and
//! each stage's median in ns per unit. Then, from a snapshot taken as each phase began, the
//! same [`WINDOW`] frames are run on 1 and on 2 threads, so the speed-up of a second thread
//! is read per phase from identical work measured in the same minutes.
//!
//! `--quick` runs the army at scale 4 (6,250 units, about 5,300 frames); the full run at
//! scale 2 (25,000 units, about 12,000 frames: minutes). At scale 1 (100,000 units) the life
//! takes about 25,000 frames, too long for this table: `examples/dense_march.rs` measures
//! its first phases.

use std::time::Instant;

use horde::{Simulation, Snapshot};
use horde_fixtures::{DenseArmy, PhaseReport};
use serde_json::Value;

use super::{Ctx, Row, median, round};
use crate::AppError;

/// Frames timed from each phase's start on 1 and on 2 threads (fewer when the phase is
/// shorter).
const WINDOW: usize = 30;

/// The most frames the life may take (the full army needs well under this).
const MAX_FRAMES: usize = 40_000;

fn failed(e: impl std::fmt::Display) -> AppError {
    AppError::Failed(format!("dense army: {e}"))
}

/// Median frame ms of `frames` frames from `start` on `threads` threads (the first frame
/// after the restore, which rebuilds the flow fields, untimed).
fn window_ms(start: &Snapshot, threads: usize, frames: usize) -> Result<f64, AppError> {
    let mut sim = Simulation::from_snapshot(start, threads).map_err(failed)?;
    sim.step(DenseArmy::DT).map_err(failed)?;
    let mut times = Vec::with_capacity(frames);
    for _ in 0..frames {
        let t = Instant::now();
        sim.step(DenseArmy::DT).map_err(failed)?;
        times.push(t.elapsed());
    }
    Ok(median(&mut times))
}

/// Runs the table.
pub fn run(ctx: &Ctx) -> Result<Vec<Row>, AppError> {
    let army = DenseArmy::new(if ctx.quick { 4 } else { 2 }).ok_or_else(|| failed("scale"))?;
    let units = army.units();
    ctx.status(format!("dense: {units} units spawning"));
    let mut sim = army.simulation(2).map_err(failed)?;
    let mut starts: Vec<Snapshot> = Vec::new();
    let mut reports: Vec<PhaseReport> = Vec::new();
    army.run(
        &mut sim,
        MAX_FRAMES,
        |phase, s| {
            ctx.status(format!(
                "dense: {units} units, {} from frame {}",
                phase.name(),
                s.frame()
            ));
            starts.push(s.snapshot());
        },
        |r| reports.push(r),
    )
    .map_err(failed)?;
    let mut rows = Vec::new();
    for (report, start) in reports.iter().zip(&starts) {
        let frames = WINDOW.min(report.frames.len()).max(1);
        ctx.status(format!("dense: {} on 1 and 2 threads", report.phase.name()));
        let one = window_ms(start, 1, frames)?;
        let two = window_ms(start, 2, frames)?;
        let ms = |d: std::time::Duration| Value::from(round(d.as_secs_f64() * 1e3));
        let mut row: Row = vec![
            ("phase".into(), Value::from(report.phase.name())),
            ("units".into(), Value::from(units)),
            (
                "frames".into(),
                Value::from(format!("{}-{}", report.frames.start, report.frames.end)),
            ),
            ("median_ms".into(), ms(report.median)),
            ("p95_ms".into(), ms(report.p95)),
            ("window_1t_ms".into(), Value::from(round(one))),
            ("window_2t_ms".into(), Value::from(round(two))),
            ("speedup".into(), super::ratio(one, two)),
        ];
        for (name, d) in &report.stages {
            let ns = d.as_secs_f64() * 1e9 / f64::from(units.max(1));
            if ns >= 0.5 {
                row.push((format!("{name}_ns"), Value::from(round(ns))));
            }
        }
        rows.push(row);
    }
    Ok(rows)
}
