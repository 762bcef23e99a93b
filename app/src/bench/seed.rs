//! Table `seed`: the reference points of the steering article that horde started from
//! (Unity: 2000 units at 60 fps unoptimised, 16.7 ms per frame; 5000 units with physics at
//! about 100 fps with jobs, 10 ms per frame) next to horde's measured frame for the same
//! unit counts: the frame benchmark's scenario (clustered level, 8 force fields).

use super::frame::measure;
use super::scenario::Layout;
use super::{Ctx, Row, ratio, round, row};
use crate::AppError;

/// `(units, what the article measured, its ms per frame)`.
const REFERENCES: [(usize, &str, f64); 2] = [
    (2_000, "Unity, unoptimised, 60 fps", 1000.0 / 60.0),
    (5_000, "Unity, physics + jobs, ~100 fps", 10.0),
];

/// Runs the table.
pub fn run(ctx: &Ctx) -> Result<Vec<Row>, AppError> {
    let frames = if ctx.quick { 20 } else { 100 };
    let mut rows = Vec::new();
    for (units, what, reference_ms) in REFERENCES {
        ctx.status(format!("seed: {units} units"));
        let one = measure(&ctx.clustered, Layout::Spread, units, 1, frames, true)?;
        let two = measure(&ctx.clustered, Layout::Spread, units, 2, frames, true)?;
        rows.push(row([
            ("units", one.units.into()),
            ("reference", what.into()),
            ("reference_ms", round(reference_ms).into()),
            ("horde_1_thread_ms", round(one.frame_ms).into()),
            ("horde_2_threads_ms", round(two.frame_ms).into()),
            (
                "ratio_reference_over_horde_2_threads",
                ratio(reference_ms, two.frame_ms),
            ),
        ]));
    }
    Ok(rows)
}
