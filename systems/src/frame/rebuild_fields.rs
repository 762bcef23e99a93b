//! Stage `rebuild_fields`: brings the dirty flow fields up to date (one batch per field, in
//! parallel): fields with a few pending cost edits are repaired, the others rebuilt; a field
//! whose goal moved is rebuilt only as far as the cells its followers (and a formation's
//! anchor) stand in, and completed
//! a slice per frame once its goal rests (`SimConfig::partial_fields`); none with
//! `Navigation::Hierarchical`. Also rebuilds the clearance of layers whose costs
//! changed.

use horde_core::Job;
use std::convert::Infallible;

use horde_core::{
    Agent, Cell, Clearance, DeltaStepping, FieldId, Layer, MAX_SIZE_CLASSES, Map, NavField,
    Position, fill_direction_rows,
};
use parking_lot::Mutex;

use crate::frame::{FrameData, StageError, query};
use crate::job_graph::StageContext;
use horde_core::Navigation;

/// From this many threads the integration field of a lone field to rebuild is built by all
/// of them ([`DeltaStepping`], exact: the same field as one thread builds). On 16 cores it
/// measured 1.4x faster at 8 threads; on two it costs as much as it saves
/// (docs/PERFORMANCE.md, "Fields").
const PARALLEL_INTEGRATION_THREADS: usize = 8;

/// Rebuilds every dirty field and stale clearance field.
pub(crate) fn rebuild_fields(data: &FrameData, ctx: &StageContext<'_>) {
    let map = data.map.read();
    {
        let mut clearance = data.clearance.write();
        for layer in Layer::ALL {
            let cost = map.cost_field(layer);
            if !clearance[layer as usize].is_current(cost) {
                clearance[layer as usize] = Clearance::build(cost);
            }
        }
    }
    let mut fields = data.fields.write();
    let config = *fields.config();
    let mut edits = data.edits.write();
    // Hierarchical navigation takes directions and distances from the sector fields
    // (`update_hierarchy`, which has read the edit log already): no full-map field is built.
    let flat = data.config.navigation == Navigation::Flat;
    let pending: Vec<(FieldId, Mutex<&mut NavField>)> = fields
        .pending_mut(&map)
        .filter(|_| flat)
        .map(|(id, f)| (id, Mutex::new(f)))
        .collect();
    let jobs: Vec<FieldWork> = pending
        .iter()
        .map(|(_, f)| {
            let f = f.lock();
            if f.wants_partial() && data.config.partial_fields {
                return if f.is_dirty(&map) {
                    FieldWork::Partial
                } else {
                    FieldWork::Serve
                };
            }
            // Fields built before a few edits are repaired (only what the edits can
            // change); the rest are rebuilt. A repair is exact, so the choice never changes
            // the result.
            f.built_from()
                .and_then(|built| edits.since_class(f.key().layer, f.key().class, built))
                .filter(|log| log.len() <= map.grid().len() / REPAIR_FRACTION)
                .map_or(FieldWork::Rebuild, FieldWork::Repair)
        })
        .collect();
    let demand = demand(data, &map, &pending, &jobs);
    let report = |result: Result<(), horde_core::FieldError>| {
        if let Err(e) = result {
            data.errors.report(ctx, StageError::Field(e));
        }
    };
    if let ([(_, only)], [FieldWork::Rebuild]) = (pending.as_slice(), jobs.as_slice()) {
        // One field to rebuild: fill its flow rows in parallel bands, and from
        // `PARALLEL_INTEGRATION_THREADS` threads build its integration field on all of them.
        report(only.lock().rebuild_with(
            &map,
            &config,
            |cost, goals, integration| {
                let threads = ctx.threads();
                if threads < PARALLEL_INTEGRATION_THREADS {
                    return integration.rebuild(cost, goals);
                }
                // Every batch of a stage runs at once when there are as many as threads (a
                // thread waiting for its batches runs queued ones), as the builder's barriers
                // need; a panicking batch unwinds through the stage, which reports it.
                let run = |n: usize, job: &Job<'_>| {
                    ctx.for_each_batch(n, 1, |i, _| job(i));
                    Ok::<(), Infallible>(())
                };
                match DeltaStepping::default().rebuild(integration, cost, goals, threads, run) {
                    Ok(built) => built,
                    Err(never) => match never {},
                }
            },
            |cost, integration, out| {
                let width = cost.width() as usize;
                ctx.for_each_chunk_mut(out, ROWS_PER_BATCH * width, |_, range, chunk| {
                    let rows = (range.start / width) as u32..(range.end / width) as u32;
                    fill_direction_rows(cost, integration, rows, chunk);
                });
            },
        ));
    } else {
        // Otherwise one batch per field. A partial field's served cells are exactly what a
        // complete build gives, so steering is the same whichever way a field was made.
        let slice = (map.grid().len() / SERVE_SLICES).max(1);
        ctx.for_each_batch(pending.len(), 1, |i, _| {
            let mut field = pending[i].1.lock();
            report(match &jobs[i] {
                FieldWork::Repair(log) => field.repair(&map, &config, log),
                FieldWork::Rebuild => field.rebuild(&map, &config),
                FieldWork::Partial => field.rebuild_for(&map, &config, &demand[i]),
                FieldWork::Serve => field.serve(&map, &config, &demand[i], slice),
            });
        });
    }
    drop(pending);
    // Every field is current now: their edits are no longer needed.
    for layer in Layer::ALL {
        edits.prune(layer, map.cost_field(layer).version());
        for class in 1..MAX_SIZE_CLASSES {
            if let Some(cost) = map.prepared_class_cost_field(layer, class) {
                edits.prune_class(layer, class, cost.version());
            }
        }
    }
}

/// What `rebuild_fields` does with a field this frame.
enum FieldWork {
    /// Rebuild it completely.
    Rebuild,
    /// Repair it after these edits (cell, cost before).
    Repair(Vec<(Cell, u8)>),
    /// Its goals moved: rebuild it only as far as its followers need.
    Partial,
    /// Partial and current: extend it to its followers' cells and go on completing it.
    Serve,
}

/// For each field in `pending` that is partial (`FieldWork::Partial` or `FieldWork::Serve`), the cells
/// its followers stand in (where steering reads it); empty for the others.
fn demand(
    data: &FrameData,
    map: &Map,
    pending: &[(FieldId, Mutex<&mut NavField>)],
    jobs: &[FieldWork],
) -> Vec<Vec<Cell>> {
    let mut demand = vec![Vec::new(); pending.len()];
    let mut slot_of: Vec<Option<usize>> = Vec::new();
    for (k, ((id, _), job)) in pending.iter().zip(jobs).enumerate() {
        if matches!(job, FieldWork::Partial | FieldWork::Serve) {
            let i = id.0 as usize;
            if slot_of.len() <= i {
                slot_of.resize(i + 1, None);
            }
            slot_of[i] = Some(k);
        }
    }
    if slot_of.is_empty() {
        return demand;
    }
    let groups = data.groups.read();
    let grid = map.grid();
    for (pos, agent) in query::<(&Position, &Agent)>(&data.world).iter() {
        // Units with a non-finite position are not steered (they are quarantined).
        if !pos.0.is_finite() {
            continue;
        }
        let class = data.config.size_class(agent.radius, grid.cell_size());
        let slot = groups
            .sized_field(agent.group.0, agent.layer, class)
            .and_then(|id| slot_of.get(id.0 as usize).copied().flatten());
        if let Some(k) = slot {
            demand[k].push(grid.clamped_cell_at(pos.0));
        }
    }
    // A formation's anchor reads its group's field too (and ahead of it along the way,
    // which is nearer the goal: built whenever the anchor's cell is).
    for (g, f) in data.formations.read().iter() {
        let class = data.config.size_class(f.radius, grid.cell_size());
        let slot = groups
            .sized_field(g, f.layer, class)
            .and_then(|id| slot_of.get(id.0 as usize).copied().flatten());
        if let (Some(k), true) = (slot, f.is_laid_out()) {
            demand[k].push(grid.clamped_cell_at(f.anchor));
        }
    }
    demand
}

/// A partial field that is not rebuilt this frame goes on toward completion by
/// `cells / SERVE_SLICES` cells a frame.
const SERVE_SLICES: usize = 16;

/// A field is repaired rather than rebuilt while its pending edits number at most
/// `cells / REPAIR_FRACTION`.
const REPAIR_FRACTION: usize = 16;

/// Rows of a flow field per batch when one field's rows are filled in parallel.
const ROWS_PER_BATCH: usize = 64;
