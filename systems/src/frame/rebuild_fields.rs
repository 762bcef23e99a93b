//! Stage `rebuild_fields`: brings the dirty flow fields up to date (one batch per field, in
//! parallel): fields with a few pending cost edits are repaired, the others rebuilt; none
//! with `Navigation::Hierarchical`. Also rebuilds the clearance of layers whose costs
//! changed.

use horde_core::{Cell, Clearance, Layer, NavField, fill_direction_rows};
use parking_lot::Mutex;

use crate::frame::FrameData;
use crate::hierarchy_nav::Navigation;
use crate::job_graph::StageContext;

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
    let dirty: Vec<Mutex<&mut NavField>> = fields
        .dirty_mut(&map)
        .filter(|_| flat)
        .map(Mutex::new)
        .collect();
    // Fields built before a few edits are repaired (only what the edits can change); the
    // rest are rebuilt. A repair is exact, so the choice never changes the result.
    let repairs: Vec<Option<Vec<(Cell, u8)>>> = dirty
        .iter()
        .map(|f| {
            let f = f.lock();
            let built = f.built_from()?;
            let log = edits.since(f.key().layer, built)?;
            (log.len() <= map.grid().len() / REPAIR_FRACTION).then_some(log)
        })
        .collect();
    let report = |result: Result<(), horde_core::FieldError>| {
        if let Err(e) = result {
            data.errors.lock().push(format!("field update failed: {e}"));
        }
    };
    if let ([only], [None]) = (dirty.as_slice(), repairs.as_slice()) {
        // One field to rebuild: fill its flow rows in parallel bands. The integration field
        // stays on one thread: `ParallelIntegration` is exact but slower on two cores
        // (PERFORMANCE.md).
        report(only.lock().rebuild_with(
            &map,
            &config,
            |cost, goals, integration| integration.rebuild(cost, goals),
            |cost, integration, out| {
                let width = cost.width() as usize;
                ctx.for_each_chunk_mut(out, ROWS_PER_BATCH * width, |_, range, chunk| {
                    let rows = (range.start / width) as u32..(range.end / width) as u32;
                    fill_direction_rows(cost, integration, rows, chunk);
                });
            },
        ));
    } else {
        // Otherwise one batch per field, repaired or rebuilt.
        ctx.for_each_batch(dirty.len(), 1, |i, _| {
            let mut field = dirty[i].lock();
            report(match &repairs[i] {
                Some(log) => field.repair(&map, &config, log),
                None => field.rebuild(&map, &config),
            });
        });
    }
    drop(dirty);
    // Every field is current now: their edits are no longer needed.
    for layer in Layer::ALL {
        edits.prune(layer, map.cost_field(layer).version());
    }
}

/// A field is repaired rather than rebuilt while its pending edits number at most
/// `cells / REPAIR_FRACTION`.
const REPAIR_FRACTION: usize = 16;

/// Rows of a flow field per batch when one field's rows are filled in parallel.
const ROWS_PER_BATCH: usize = 64;
