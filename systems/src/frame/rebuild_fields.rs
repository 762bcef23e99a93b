//! Stage `rebuild_fields`: rebuilds the dirty flow fields (one batch per field, in parallel)
//! and the clearance of layers whose costs changed.

use horde_core::{Clearance, Layer, NavField, fill_direction_rows};
use parking_lot::Mutex;

use crate::frame::FrameData;
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
    let dirty: Vec<Mutex<&mut NavField>> = fields.dirty_mut(&map).map(Mutex::new).collect();
    let outcome = if let [only] = dirty.as_slice() {
        // One field: fill its flow rows in parallel bands. The integration field stays on one
        // thread: `ParallelIntegration` is exact but slower on two cores (PERFORMANCE.md).
        only.lock().rebuild_with(
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
        )
    } else {
        ctx.for_each_batch(dirty.len(), 1, |i, _| {
            if let Err(e) = dirty[i].lock().rebuild(&map, &config) {
                data.errors
                    .lock()
                    .push(format!("field rebuild failed: {e}"));
            }
        });
        Ok(())
    };
    if let Err(e) = outcome {
        data.errors
            .lock()
            .push(format!("field rebuild failed: {e}"));
    }
}

/// Rows of a flow field per batch when one field's rows are filled in parallel.
const ROWS_PER_BATCH: usize = 64;
