//! Stage `apply_forces` (SPEC §7): force fields change each unit's external velocity and
//! stun; drag decays the external velocity (less on slippery terrain).

use glam::Vec2;
use horde_core::{Agent, ExternalForce, Mass, Position, Stun, apply_impulse, decay_external};

use crate::frame::{FrameData, for_each_unit};
use crate::job_graph::StageContext;

/// Applies the summed force of every field to every unit, then drag.
pub(crate) fn apply_forces(data: &FrameData, ctx: &StageContext<'_>) {
    let map = data.map.read();
    let forces = data.forces.read();
    let params = &data.config.knockback;
    let dt = data.clock.dt;
    let grid = map.grid();
    let no_forces = forces.is_empty();
    for_each_unit::<(&Position, &Agent, &Mass, &mut ExternalForce, &mut Stun), _>(
        &data.world,
        ctx,
        data.config.batch_size,
        |(pos, agent, mass, external, stun)| {
            if no_forces && external.0 == Vec2::ZERO && stun.0 == 0.0 {
                return;
            }
            let mut v = external.0;
            let mut s = stun.0;
            if !no_forces {
                let force = forces.force_at(pos.0, agent.controllable);
                if force != Vec2::ZERO {
                    (v, s) = apply_impulse(v, s, force, mass.0, dt, params);
                }
            }
            // A unit at rest and not stunned stays so: `decay_external(+0, +0, ..)` is `(+0, +0)`
            // exactly, so skip its terrain lookup (most of a big crowd is in this state).
            if v.x.to_bits() == 0 && v.y.to_bits() == 0 && s.to_bits() == 0 {
                (external.0, stun.0) = (v, s);
                return;
            }
            let slippery = map.terrain_at(grid.clamped_cell_at(pos.0)).props().slippery;
            (external.0, stun.0) = decay_external(v, s, slippery, dt, params);
        },
    );
}
