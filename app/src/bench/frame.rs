//! Table `frame`: whole-frame ms and per-stage ns/unit of horde's frame, at several crowd
//! sizes on 1 and 2 threads, on the clustered-obstacle level and on Cauldron.map.

use std::time::Duration;

use horde::jobs::FrameTimes;
use serde_json::Value;

use super::scenario::{DT, Layout, Level};
use super::{Ctx, Row, round};
use crate::AppError;

/// Crowd sizes and the frames measured at each.
fn sizes(quick: bool) -> &'static [(usize, usize)] {
    if quick {
        &[(2_000, 20), (10_000, 10)]
    } else {
        &[(10_000, 100), (100_000, 30), (1_000_000, 10)]
    }
}

/// What [`measure`] found: units actually placed, median frame ms, median ms per stage.
pub struct Measured {
    /// Units in the crowd.
    pub units: usize,
    /// Median wall time of a frame, ms.
    pub frame_ms: f64,
    /// Median wall time of each stage, ms, in declaration order.
    pub stages: Vec<(String, f64)>,
    /// Mean speed of the units in the last frame: distance moved / dt (world units per
    /// second), to check that the crowd really walks.
    pub mean_speed: f64,
}

/// Medians over `frames` frames: the frame's wall time in ms and each stage's wall time.
pub fn measure(
    level: &Level,
    layout: Layout,
    units: usize,
    threads: usize,
    frames: usize,
    forces: bool,
) -> Result<Measured, AppError> {
    let mut sim = super::scenario::simulation(level, layout, units, threads, forces)?;
    let mut times = FrameTimes::new();
    let mut before = Vec::new();
    for frame in 0..frames.max(1) {
        if frame + 1 == frames.max(1) {
            before = sim.units();
        }
        times
            .step(&mut sim, DT)
            .map_err(|e| AppError::Failed(e.to_string()))?;
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let after = sim.units();
    let moved: f64 = after
        .iter()
        .zip(&before)
        .map(|(a, b)| f64::from(a.position.distance(b.position)))
        .sum();
    Ok(Measured {
        mean_speed: moved / f64::from(DT) / after.len().max(1) as f64,
        units: sim.unit_count(),
        frame_ms: ms(times.total(50)),
        stages: times
            .stages(50)
            .into_iter()
            .map(|(n, d)| (n, ms(d)))
            .collect(),
    })
}

/// Runs the table.
pub fn run(ctx: &Ctx) -> Result<Vec<Row>, AppError> {
    let mut rows = Vec::new();
    let levels = std::iter::once(&ctx.clustered).chain(ctx.cauldron.as_ref());
    for level in levels {
        for &(units, frames) in sizes(ctx.quick) {
            for threads in [1, 2] {
                ctx.status(format!(
                    "frame: {} units, {threads} thread(s), {}",
                    units, level.name
                ));
                let Measured {
                    units: count,
                    frame_ms: ms,
                    stages,
                    ..
                } = measure(level, Layout::Spread, units, threads, frames, true)?;
                let mut row: Row = vec![
                    ("map".into(), Value::from(level.name.as_str())),
                    ("units".into(), Value::from(count)),
                    ("threads".into(), Value::from(threads)),
                    ("frames".into(), Value::from(frames)),
                    ("frame_ms".into(), Value::from(round(ms))),
                ];
                for (name, stage_ms) in stages {
                    let ns_per_unit = stage_ms * 1e6 / count.max(1) as f64;
                    row.push((format!("{name}_ns"), Value::from(round(ns_per_unit))));
                }
                rows.push(row);
            }
        }
    }
    Ok(rows)
}
