//! Stage `rebuild_fields`: rebuilds the dirty flow fields (one batch per field, in parallel)
//! and the clearance of layers whose costs changed.

use horde_core::{Clearance, Layer, NavField};
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
    ctx.for_each_batch(dirty.len(), 1, |i, _| {
        let mut field = dirty[i].lock();
        if let Err(e) = field.rebuild(&map, &config) {
            data.errors
                .lock()
                .push(format!("field rebuild failed: {e}"));
        }
    });
}
