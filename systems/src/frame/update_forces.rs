//! Stage `update_forces`: advances every force field's clock and drops expired ones.

use crate::frame::FrameData;
use crate::job_graph::StageContext;

/// Advances the force fields by the frame's `dt`.
pub(crate) fn update_forces(data: &FrameData, _ctx: &StageContext<'_>) {
    data.forces.write().advance(data.clock.dt);
}
