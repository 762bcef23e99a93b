//! Stage `bucket_units`: sorts a snapshot of every unit into the spatial grid, so steering
//! finds neighbours in the 3x3 buckets around it and reads them from contiguous memory.

use glam::Vec2;
use horde_core::{Agent, Position, SpatialGrid, SpatialGridError, Steering, UnitId};
use parking_lot::Mutex;

use crate::frame::neighbours::{
    FAR_ROWS, LargeUnits, NeighbourInfo, Neighbours, bucket_side, reaches_past,
};
use crate::frame::{FrameData, StageError, query};
use crate::job_graph::StageContext;

/// Adds one to `counts[army]`, growing `counts` as needed.
fn add_one(counts: &mut Vec<u32>, army: u16) {
    let a = usize::from(army);
    if counts.len() <= a {
        counts.resize(a + 1, 0);
    }
    counts[a] += 1;
}

/// What one batch of units adds to the snapshot's counts.
struct BatchTally {
    /// Its units at rest (army, position, radius).
    resting: Vec<(u16, Vec2, f32)>,
    /// Far jumps ([`Neighbours::far_jumps`]).
    far: usize,
    /// Units that need at most half a bucket.
    small: usize,
    /// Its large units, with their storage indices.
    large: Vec<(NeighbourInfo, u32)>,
    /// Its units asleep.
    asleep: usize,
    /// The armies with a settled unit in it.
    settling: Vec<u16>,
    /// Per army, its units not at rest.
    coming: Vec<u32>,
    /// The smallest and largest radius.
    radii: (f32, f32),
    /// The highest top speed.
    fastest: f32,
}

impl Default for BatchTally {
    fn default() -> Self {
        Self {
            resting: Vec::new(),
            far: 0,
            small: 0,
            large: Vec::new(),
            asleep: 0,
            settling: Vec::new(),
            coming: Vec::new(),
            radii: (f32::INFINITY, 0.0),
            fastest: 0.0,
        }
    }
}

/// Snapshots every unit and sorts the snapshot by bucket.
pub(crate) fn bucket_units(data: &FrameData, ctx: &StageContext<'_>) {
    let mut guard = data.neighbours.write();
    let n = &mut *guard;
    let groups = data.groups.read();
    let batch_size = data.config.batch_size.clamp(1, u32::MAX as usize) as u32;
    let mut query = query::<(&UnitId, &Position, &Agent, &Steering)>(&data.world);
    // Each batch's length first (walking a batch reads no component), so every batch can
    // write its part of the snapshot on any thread.
    let lengths: Vec<usize> = query
        .iter_batched(batch_size)
        .map(Iterator::count)
        .collect();
    let total = lengths.iter().sum();
    n.grid.fit_to(total);
    let sparse = n.grid.table_rows() < n.grid.rows() && n.grid.bucket_count() >= n.occupancy_from;
    let (columns, rows) = (n.grid.columns(), n.grid.rows());
    n.occupancy.reset(sparse, columns, rows, ctx);
    n.scratch.resize(total, NeighbourInfo::default());
    n.buckets.resize(total, 0);
    let mut jobs = Vec::with_capacity(lengths.len());
    let (mut scratch, mut buckets) = (n.scratch.as_mut_slice(), n.buckets.as_mut_slice());
    let mut offset = 0u32;
    for (batch, &len) in query.iter_batched(batch_size).zip(&lengths) {
        let (units, rest) = scratch.split_at_mut(len);
        scratch = rest;
        let (unit_buckets, rest) = buckets.split_at_mut(len);
        buckets = rest;
        jobs.push(Mutex::new(Some((batch, units, unit_buckets, offset))));
        offset += len as u32;
    }
    let grid = &n.grid;
    let occupancy = n.occupancy.is_on().then_some(&n.occupancy);
    let separation_range = data.config.steering.separation_range;
    // Units that need at most half a bucket (see `Neighbours::refit_side`).
    let half_bucket = grid.cell_size() * 0.5;
    let tallies: Vec<Mutex<BatchTally>> = jobs.iter().map(|_| Mutex::default()).collect();
    ctx.for_each_batch(jobs.len(), 1, |i, _| {
        let Some((batch, units, unit_buckets, offset)) = jobs[i].lock().take() else {
            return;
        };
        let mut t = BatchTally::default();
        let mut previous_row = None;
        let items = batch.zip(units).zip(unit_buckets).zip(offset..);
        for ((((id, pos, agent, steering), unit), bucket), storage) in items {
            *unit = NeighbourInfo {
                pos: pos.0,
                radius: agent.radius,
                id: id.0,
                army: groups.army(agent.group.0),
                at_rest: steering.arrived || steering.settled,
                calm: steering.is_calm(),
                asleep: steering.asleep.is_some(),
                yields: steering.yielding,
                heading: NeighbourInfo::pack_heading(steering.heading),
            };
            // A unit whose position is not finite (it will be quarantined this frame) is
            // nobody's neighbour: its NaN must not spread through separation.
            if !pos.0.is_finite() {
                *bucket = SpatialGrid::UNPLACED;
                continue;
            }
            t.radii = (t.radii.0.min(agent.radius), t.radii.1.max(agent.radius));
            t.fastest = t.fastest.max(agent.max_speed);
            let (x, y) = grid.coords_of(pos.0);
            if reaches_past(agent.radius, separation_range, grid.cell_size()) {
                *bucket = SpatialGrid::UNPLACED;
                t.large.push((*unit, storage));
            } else {
                *bucket = grid.bucket_at(x, y);
                if let Some(occupancy) = occupancy {
                    occupancy.mark(x, y);
                }
                t.small += usize::from(bucket_side(agent.radius, separation_range) <= half_bucket);
            }
            if unit.at_rest {
                t.resting.push((unit.army, unit.pos, unit.radius));
            } else {
                add_one(&mut t.coming, unit.army);
            }
            t.asleep += usize::from(unit.asleep);
            if steering.settled && !t.settling.contains(&unit.army) {
                t.settling.push(unit.army);
            }
            t.far += usize::from(previous_row.is_some_and(|r: u32| r.abs_diff(y) > FAR_ROWS));
            previous_row = Some(y);
        }
        *tallies[i].lock() = t;
    });
    drop(jobs);
    drop(query);
    n.far_jumps = 0;
    n.resting.clear();
    n.small = 0;
    n.asleep = 0;
    n.settling.clear();
    n.coming.clear();
    let mut large = Vec::new();
    let (mut radii, mut fastest) = ((f32::INFINITY, 0f32), 0f32);
    for tally in tallies {
        let t = tally.into_inner();
        if n.coming.len() < t.coming.len() {
            n.coming.resize(t.coming.len(), 0);
        }
        for (total, count) in n.coming.iter_mut().zip(t.coming) {
            *total += count;
        }
        for army in t.settling {
            if !n.settling.contains(&army) {
                n.settling.push(army);
            }
        }
        n.resting.extend(t.resting);
        n.far_jumps += t.far;
        n.small += t.small;
        n.asleep += t.asleep;
        large.extend(t.large);
        radii = (radii.0.min(t.radii.0), radii.1.max(t.radii.1));
        fastest = fastest.max(t.fastest);
    }
    (n.radii, n.fastest) = (radii, fastest);
    n.streams
        .build(data.map.read().grid(), &n.scratch, &n.coming);
    let chunk = data.config.batch_size.max(1) * 4;
    let (large, storage): (Vec<_>, Vec<_>) = large.into_iter().unzip();
    if let Err(e) = bucket_large(n, large, &storage, separation_range, chunk, ctx) {
        data.errors.report(ctx, StageError::LargeBuckets(e));
        n.units.clear();
        n.large = None;
        return;
    }
    if let Err(e) = sort_by_bucket(
        &mut n.grid,
        &n.buckets,
        &n.scratch,
        &mut n.units,
        chunk,
        ctx,
    ) {
        data.errors.report(ctx, StageError::Buckets(e));
        n.units.clear();
    }
}

/// Sorts `units` (whose buckets of `grid` are `buckets`) into `sorted`, on the pool: the
/// counting sort in bands of buckets, then the copy in chunks of `chunk` units.
fn sort_by_bucket(
    grid: &mut SpatialGrid,
    buckets: &[u32],
    units: &[NeighbourInfo],
    sorted: &mut Vec<NeighbourInfo>,
    chunk: usize,
    ctx: &StageContext<'_>,
) -> Result<(), SpatialGridError> {
    // The sort's result does not depend on how many bands it is cut into, so one band per
    // thread is safe here (unlike a split of floating-point work).
    grid.rebuild_from_buckets_in(buckets, ctx.threads(), |jobs, job| {
        ctx.for_each_batch(jobs, 1, |i, _| job(i));
    })?;
    let order = grid.order();
    sorted.resize(order.len(), NeighbourInfo::default());
    ctx.for_each_chunk_mut(sorted, chunk, |_, range, out| {
        for (unit, &i) in out.iter_mut().zip(&order[range]) {
            *unit = units[i as usize];
        }
    });
    Ok(())
}

/// Sorts the large units (in world order) into their own grid, whose buckets are as wide as
/// the largest one's reach; `None` when there are no large units.
fn bucket_large(
    n: &mut Neighbours,
    large: Vec<NeighbourInfo>,
    storage: &[u32],
    separation_range: f32,
    chunk: usize,
    ctx: &StageContext<'_>,
) -> Result<(), SpatialGridError> {
    let Some(widest) = large.iter().map(|u| u.radius).reduce(f32::max) else {
        n.large = None;
        return Ok(());
    };
    let size = (2.0 * widest * separation_range).max(n.grid.cell_size());
    let (mut grid, mut units) = match n.large.take() {
        Some(old) if old.grid.cell_size() == size => (old.grid, old.units),
        _ => {
            // Over the same rectangle as the fine grid.
            let fine = &n.grid;
            let extent = Vec2::new(fine.columns() as f32, fine.rows() as f32) * fine.cell_size();
            (
                SpatialGrid::from_rect(fine.origin(), extent, size)?,
                Vec::new(),
            )
        }
    };
    grid.fit_to(large.len());
    let mut buckets = vec![0; large.len()];
    ctx.for_each_chunk_mut(&mut buckets, chunk, |_, range, out| {
        for (bucket, unit) in out.iter_mut().zip(&large[range]) {
            *bucket = grid.bucket_of(unit.pos);
        }
    });
    sort_by_bucket(&mut grid, &buckets, &large, &mut units, chunk, ctx)?;
    let (low, high) = large.iter().fold(
        (Vec2::splat(f32::INFINITY), Vec2::splat(f32::NEG_INFINITY)),
        |(low, high), u| (low.min(u.pos), high.max(u.pos)),
    );
    let near_box = (low - size, high + size);
    let storage = grid.order().iter().map(|&i| storage[i as usize]).collect();
    n.large = Some(LargeUnits {
        grid,
        units,
        storage,
        near_box,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use glam::Vec2;
    use hecs::World;
    use horde_core::{Cell, GoalSet, Grid, Map, Position, UnitSpec};

    use crate::frame::neighbours::{Occupancy, bucket_side};
    use crate::{Horde, SimConfig};

    /// A crowd of mixed sizes, bucketed by one frame of zero length (nobody moves); with
    /// `bits`, the occupancy bits are kept whenever the table folds.
    fn bucketed(seed: u32, radii: &[f32], units: usize, bits: bool) -> (Horde, World) {
        let map = Map::new(Grid::new(64, 64).unwrap());
        // Without contacts, so the world's positions stay those the snapshot holds.
        let mut config = SimConfig::default();
        config.contacts.passes = 0;
        let mut horde = Horde::new(map, config).unwrap();
        if bits {
            horde.data.neighbours.write().occupancy_from = 0;
        }
        let group = horde.add_group(GoalSet::single(Cell::new(60, 60))).unwrap();
        let mut world = World::new();
        let mut state = seed;
        let mut next = || {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (state >> 8) as f32 / (1 << 24) as f32
        };
        for i in 0..units {
            let radius = radii[i % radii.len()];
            // Clustered, so that units touch and big ones sit among small ones.
            let pos = Vec2::new(20.0 + next() * 16.0, 20.0 + next() * 16.0);
            let spec = UnitSpec::at(pos).with_radius(radius).with_group(group);
            horde.spawn(&mut world, spec).unwrap();
        }
        horde.step(&mut world, 0.0).unwrap();
        (horde, world)
    }

    #[test]
    fn every_touching_pair_is_a_candidate_exactly_once() {
        let separation_range = SimConfig::default().steering.separation_range;
        // The last crowd is small enough for the fine bucket table to fold its rows (a few
        // table rows serve the whole map), which a big unit's window must not visit twice.
        for (seed, radii, count) in [
            (1, &[0.45, 0.45, 0.45, 3.0][..], 600),
            (2, &[0.3, 0.5, 1.2, 0.45, 2.0, 0.45][..], 600),
            (3, &[0.45][..], 600),
            (4, &[1.5, 0.45, 6.0][..], 600),
            (5, &[0.45, 0.45, 4.0][..], 30),
            (6, &[0.45][..], 40),
        ] {
            for bits in [false, true] {
                let (horde, world) = bucketed(seed, radii, count, bits);
                let n = horde.data.neighbours.read();
                // The folded crowds keep the bits (and some of their units stand alone).
                let folded = n.grid.table_rows() < n.grid.rows();
                assert_eq!(n.occupancy.is_on(), bits && folded, "seed {seed}");
                assert_eq!(folded, count < 100, "seed {seed}");
                assert!(n.is_large(3.0, separation_range));
                let large = n.large.as_ref().map_or(0, |l| l.units.len());
                let expected_large = radii
                    .iter()
                    .filter(|&&r| n.is_large(r, separation_range))
                    .count();
                assert_eq!(large > 0, expected_large > 0, "seed {seed}");
                assert_eq!(n.units.len() + large, count);
                let units: Vec<(u32, Vec2, f32)> = world
                    .query::<(&horde_core::UnitId, &Position, &horde_core::Agent)>()
                    .iter()
                    .map(|(id, p, a)| (id.0, p.0, a.radius))
                    .collect();
                let mut alone = 0;
                for &(id, pos, radius) in &units {
                    let mut seen: Vec<u32> = Vec::new();
                    n.for_each_candidate(pos, radius, separation_range, n.near_spans(pos), |run| {
                        seen.extend(run.iter().map(|u| u.id));
                    });
                    let mut sorted = seen.clone();
                    sorted.sort_unstable();
                    sorted.dedup();
                    assert_eq!(
                        sorted.len(),
                        seen.len(),
                        "seed {seed}: unit {id} sees a unit twice"
                    );
                    for &(other, other_pos, other_radius) in &units {
                        let reach = (radius + other_radius) * separation_range;
                        // The unit itself may be left out (when it stands alone).
                        if other != id && pos.distance(other_pos) < reach {
                            assert!(
                                sorted.binary_search(&other).is_ok(),
                                "seed {seed}: unit {id} (radius {radius}) misses unit {other} \
                             (radius {other_radius}) {} away, reach {reach}",
                                pos.distance(other_pos)
                            );
                        }
                    }
                    alone += usize::from(n.near_spans(pos) == [(0, 0); 3]);
                }
                if n.occupancy.is_on() {
                    assert!(alone > 0, "seed {seed}: no unit was found alone");
                }
            }
        }
    }

    #[test]
    fn alone_reads_the_same_bits_as_nine_tests() {
        // Grids whose rows cross word boundaries anywhere, edges included, against the
        // plain definition: no second unit in its own bucket, none in the eight around.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for (columns, rows) in [
            (1u32, 1u32),
            (1, 5),
            (3, 1),
            (63, 4),
            (64, 3),
            (67, 5),
            (130, 3),
        ] {
            for density in [1, 4, 16] {
                let words = (columns * rows).div_ceil(64) as usize;
                let mut bits = |density: u64| -> Vec<AtomicU64> {
                    (0..words)
                        .map(|_| {
                            // Each bit set with chance 1 / (2 * density).
                            let mut w = next();
                            for _ in 0..density.trailing_zeros() {
                                w &= next();
                            }
                            AtomicU64::new(w)
                        })
                        .collect()
                };
                let any = bits(density);
                let many: Vec<AtomicU64> = bits(density * 4)
                    .into_iter()
                    .zip(&any)
                    .map(|(m, a)| AtomicU64::new(m.into_inner() & a.load(Ordering::Relaxed)))
                    .collect();
                let occupancy = Occupancy {
                    columns,
                    rows,
                    any,
                    many,
                };
                for y in 0..rows {
                    for x in 0..columns {
                        let at = |bx: u32, by: u32| (by * columns + bx) as usize;
                        let mut plain = !Occupancy::test(&occupancy.many, at(x, y));
                        for by in y.saturating_sub(1)..=(y + 1).min(rows - 1) {
                            for bx in x.saturating_sub(1)..=(x + 1).min(columns - 1) {
                                if (bx, by) != (x, y) {
                                    plain &= !Occupancy::test(&occupancy.any, at(bx, by));
                                }
                            }
                        }
                        assert_eq!(
                            occupancy.alone(x, y),
                            plain,
                            "{columns}x{rows} at ({x}, {y})"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn occupancy_bits_find_who_stands_alone() {
        // Two units in one bucket, two in buckets side by side, two in buckets one above
        // the other, one far from everybody; folded table, bits kept.
        let positions = [
            Vec2::new(30.1, 30.1),
            Vec2::new(30.5, 30.4),
            Vec2::new(50.2, 50.2),
            Vec2::new(51.3, 50.2),
            Vec2::new(40.3, 12.2),
            Vec2::new(40.3, 13.1),
            Vec2::new(10.0, 50.0),
        ];
        let map = Map::new(Grid::new(64, 64).unwrap());
        let mut horde = Horde::new(map, SimConfig::default()).unwrap();
        horde.data.neighbours.write().occupancy_from = 0;
        let group = horde.add_group(GoalSet::single(Cell::new(60, 60))).unwrap();
        let mut world = World::new();
        for pos in positions {
            let spec = UnitSpec::at(pos).with_radius(0.45).with_group(group);
            horde.spawn(&mut world, spec).unwrap();
        }
        horde.step(&mut world, 0.0).unwrap();
        let n = horde.data.neighbours.read();
        assert!(n.occupancy.is_on());
        let sees = |pos: Vec2| {
            let mut seen = 0;
            n.for_each_candidate(pos, 0.45, 1.2, n.near_spans(pos), |run| {
                seen += run.iter().filter(|u| u.pos != pos).count();
            });
            seen
        };
        for pair in positions[..6].chunks(2) {
            assert_eq!(sees(pair[0]), 1, "{pair:?}");
            assert_eq!(sees(pair[1]), 1, "{pair:?}");
        }
        assert_eq!(n.near_spans(positions[6]), [(0, 0); 3]);
    }

    /// A crowd led by a first unit of radius `first`, then `count` units of radius `rest`,
    /// clustered so that they touch; `threads` threads.
    fn led_crowd(first: f32, rest: f32, count: usize, threads: usize) -> crate::Simulation {
        let map = Map::new(Grid::new(64, 64).unwrap());
        let config = SimConfig::default().with_seed(3).with_threads(threads);
        let mut sim = crate::Simulation::new(map, config).unwrap();
        let group = sim.add_group(GoalSet::single(Cell::new(60, 60))).unwrap();
        for i in 0..=count {
            let radius = if i == 0 { first } else { rest };
            let (x, y) = ((i * 7) % 40, (i * 13) % 40);
            let pos = Vec2::new(10.0 + x as f32, 10.0 + y as f32);
            sim.spawn(UnitSpec::at(pos).with_radius(radius).with_group(group))
                .unwrap();
        }
        sim
    }

    fn bucket(sim: &crate::Simulation) -> f32 {
        sim.horde().data.neighbours.read().grid.cell_size()
    }

    #[test]
    fn buckets_are_refitted_to_a_crowd_unlike_its_first_unit() {
        let range = SimConfig::default().steering.separation_range;
        // (the first unit's radius, the others')
        for (first, rest) in [(0.45, 1.2), (3.0, 0.45), (0.45, 0.45), (2.0, 2.0)] {
            let mut sim = led_crowd(first, rest, 400, 1);
            assert_eq!(
                bucket(&sim),
                bucket_side(first, range),
                "sized by the first unit"
            );
            sim.step(1.0 / 60.0).unwrap();
            assert_eq!(
                bucket(&sim),
                bucket_side(rest, range),
                "{first} then {rest}"
            );
            // Refitted for the median unit: the next frames keep the buckets, every unit of
            // the crowd's size is in the fine grid and only the odd first unit may be large.
            for _ in 0..3 {
                sim.step(1.0 / 60.0).unwrap();
                assert_eq!(bucket(&sim), bucket_side(rest, range));
            }
            let n = sim.horde().data.neighbours.read();
            let large = n.large.as_ref().map_or(0, |l| l.units.len());
            assert_eq!(large, usize::from(n.is_large(first, range)));
            assert_eq!(n.len(), 401);
        }
    }

    #[test]
    fn a_refit_is_the_same_on_every_thread_count_and_after_a_restore() {
        let run = |threads: usize, restore_at: Option<u64>| {
            let mut sim = led_crowd(0.45, 1.2, 400, threads);
            for frame in 0..30 {
                if restore_at == Some(frame) {
                    sim = crate::Simulation::from_snapshot(&sim.snapshot(), threads).unwrap();
                }
                sim.step(1.0 / 60.0).unwrap();
            }
            (sim.state_hash(), bucket(&sim))
        };
        let reference = run(1, None);
        // Restored before the refit (frame 0) and after it (frame 5).
        for (threads, restore_at) in [(2, None), (3, None), (1, Some(0)), (3, Some(5))] {
            assert_eq!(run(threads, restore_at), reference, "{threads} threads");
        }
    }
}
