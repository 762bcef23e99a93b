//! Table `neighbours`: horde's `SpatialGrid` (counting-sort rebuild, then one fixed-radius
//! query per point with an exact distance check) against a `kiddo` k-d tree (build, then
//! `within_unsorted` per point) on the same points and radius, on one thread.

use horde::crowd::SpatialGrid;
use horde::glam::Vec2;
use kiddo::{ImmutableKdTree, SquaredEuclidean};

use super::{Ctx, Row, median_ms, ratio, round, row};
use crate::AppError;

/// Query radius: two unit radii plus a margin, the reach of separation.
const QUERY_RADIUS: f32 = 1.0;

/// A dense crowd: the centres of the first `count` open cells of the clustered level (one
/// point per open cell, rows from the top), each moved by a fixed pseudo-random offset of up
/// to 0.3 so that points do not sit on cell centres.
fn points(ctx: &Ctx, count: usize) -> Vec<Vec2> {
    ctx.clustered
        .open
        .iter()
        .take(count)
        .enumerate()
        .map(|(i, c)| {
            let p = Vec2::new(c.x as f32 + 0.5, c.y as f32 + 0.5);
            let h = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let jx = ((h >> 40) & 0xFFFF) as f32 / 65535.0 - 0.5;
            let jy = ((h >> 16) & 0xFFFF) as f32 / 65535.0 - 0.5;
            p + Vec2::new(jx, jy) * 0.6
        })
        .collect()
}

/// Runs the table.
pub fn run(ctx: &Ctx) -> Result<Vec<Row>, AppError> {
    let (count, reps) = if ctx.quick { (10_000, 5) } else { (100_000, 7) };
    ctx.status(format!("neighbours: {count} points"));
    let pts = points(ctx, count);
    let failed = |e: horde::crowd::SpatialGridError| AppError::Failed(e.to_string());
    let r2 = QUERY_RADIUS * QUERY_RADIUS;

    let mut grid = SpatialGrid::new(
        ctx.clustered.map.grid(),
        SpatialGrid::cell_size_for_radius(QUERY_RADIUS / 2.0),
    )
    .map_err(failed)?;
    let mut error = None;
    let horde_build = median_ms(reps, || {
        if let Err(e) = grid.rebuild(&pts) {
            error = Some(e);
        }
    });
    if let Some(e) = error {
        return Err(failed(e));
    }
    let mut horde_pairs = 0u64;
    let horde_query = median_ms(reps, || {
        horde_pairs = 0;
        for &p in &pts {
            grid.for_each_neighbour(p, QUERY_RADIUS, |j| {
                if pts[j as usize].distance_squared(p) <= r2 {
                    horde_pairs += 1;
                }
            });
        }
    });

    let arrays: Vec<[f32; 2]> = pts.iter().map(|p| [p.x, p.y]).collect();
    let mut tree: ImmutableKdTree<f32, 2> = ImmutableKdTree::new_from_slice(&arrays[..1]);
    let kiddo_build = median_ms(reps, || {
        tree = ImmutableKdTree::new_from_slice(&arrays);
    });
    let mut kiddo_pairs = 0u64;
    let kiddo_query = median_ms(reps, || {
        kiddo_pairs = 0;
        for q in &arrays {
            kiddo_pairs += tree.within_unsorted::<SquaredEuclidean>(q, r2).len() as u64;
        }
    });

    let horde = horde_build + horde_query;
    let kiddo = kiddo_build + kiddo_query;
    Ok(vec![row([
        ("points", pts.len().into()),
        ("radius", f64::from(QUERY_RADIUS).into()),
        ("horde_build_ms", round(horde_build).into()),
        ("horde_query_ms", round(horde_query).into()),
        ("horde_ms", round(horde).into()),
        ("kiddo_build_ms", round(kiddo_build).into()),
        ("kiddo_query_ms", round(kiddo_query).into()),
        ("kiddo_ms", round(kiddo).into()),
        ("ratio_kiddo_over_horde", ratio(kiddo, horde)),
        ("pairs_horde", horde_pairs.into()),
        ("pairs_kiddo", kiddo_pairs.into()),
    ])])
}
