//! Stage `integrate_units` (SPEC §7, §11): moves every unit by its final velocity as a solid
//! disc: the centre swept cell by cell (no speed crosses a wall), the body pushed out of
//! cells its layer cannot enter, sliding along walls (the rules: `horde_core::body`).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use glam::Vec2;
use hecs::Entity;
use horde_core::{
    Agent, Blocked, ExternalForce, Position, Steering, Stun, Velocity, centre_is_open,
    clear_of_walls, escape_wall, move_body, push_out_of_walls,
};

use crate::frame::{FrameData, UNIT_CHUNK, for_each_unit_chunk};
use crate::job_graph::StageContext;

/// Integrates every unit's position.
pub(crate) fn integrate_units(data: &FrameData, ctx: &StageContext<'_>) {
    let map = data.map.read();
    let clearance = data.clearance.read();
    let grid = map.grid();
    let dt = data.clock.dt;
    let half_cell = grid.cell_size() * 0.5;
    // In chunks: first every unit's clearance (a cache miss per unit in a sparse crowd, so
    // they are issued back to back), then the moves.
    let found_non_finite = AtomicBool::new(false);
    let walled_in = AtomicUsize::new(0);
    for_each_unit_chunk::<
        (
            &Agent,
            &Stun,
            &Steering,
            &mut Position,
            &mut Velocity,
            &mut ExternalForce,
        ),
        _,
    >(&data.world, ctx, data.config.batch_size, |chunk| {
        // Steering read most units' clearance this frame, at the same position: its memo
        // has it.
        let mut clear = [0u8; UNIT_CHUNK];
        for (c, (agent, _, steering, pos, _, _)) in clear.iter_mut().zip(chunk.iter()) {
            if let Some(cell) = grid.cell_at(pos.0) {
                let layer = &clearance[agent.layer as usize];
                let index = grid.index(cell) as u32;
                *c = steering
                    .cell_memo
                    .clearance_if_known(index, layer.stamp())
                    .unwrap_or_else(|| layer.get(cell.x, cell.y));
            }
        }
        for (&clear, (agent, stun, _, pos, velocity, external)) in
            clear.iter().zip(chunk.iter_mut())
        {
            let own = if stun.0 > 0.0 { Vec2::ZERO } else { velocity.0 };
            let delta = (own + external.0) * dt;
            // Fast path: a disc whose cells, and those it can move into this frame, are
            // all open (its clearance says how far the nearest blocked cell is; the map edge
            // counts as one) needs no wall test. `delta` is finite only if both velocities
            // are (or dt is 0 and they are). A unit outside the map has clearance 0 here.
            let moving = delta.abs().max_element();
            if delta.is_finite()
                && velocity.0.is_finite()
                && stun.0.is_finite()
                && moving < half_cell
                && clear_of_walls(grid, clear, agent.radius, moving)
            {
                pos.0 += delta;
                continue;
            }
            if !finite(pos, velocity, external, stun) {
                // Something outside horde's maths (a caller writing to the world, say) made
                // the unit non-finite: leave it where it is and take it out after the frame.
                found_non_finite.store(true, Ordering::Relaxed);
                continue;
            }
            let cost = map.cost_field(agent.layer);
            let blocked = if centre_is_open(cost, grid, pos.0) {
                let (new_pos, blocked) = move_body(cost, grid, pos.0, agent.radius, delta);
                pos.0 = new_pos;
                blocked
            } else {
                // A wall was placed on the unit (or it was spawned by hand into one): it
                // steps out through that wall, or stays put when walled in.
                match escape_wall(cost, grid, pos.0, agent.radius) {
                    Some(out) => pos.0 = push_out_of_walls(cost, grid, out, agent.radius),
                    None => {
                        walled_in.fetch_add(1, Ordering::Relaxed);
                    }
                }
                Blocked::BOTH
            };
            // Drop the velocity components that went into a wall.
            if blocked.x {
                velocity.0.x = 0.0;
                external.0.x = 0.0;
            }
            if blocked.y {
                velocity.0.y = 0.0;
                external.0.y = 0.0;
            }
        }
    });
    *data.walled_in.lock() = walled_in.into_inner();
    // Rare: name the non-finite units (a second pass keeps `Entity` out of the hot query).
    if found_non_finite.into_inner() {
        let mut query = data
            .world
            .query::<(Entity, &Position, &Velocity, &ExternalForce, &Stun)>()
            .with::<&Agent>();
        let mut quarantine = data.quarantine.lock();
        quarantine.extend(
            query
                .iter()
                .filter(|&(_, pos, velocity, external, stun)| {
                    !finite(pos, velocity, external, stun)
                })
                .map(|(entity, ..)| entity),
        );
    }
}

/// Whether a unit's position, velocities and stun are all finite numbers.
fn finite(pos: &Position, velocity: &Velocity, external: &ExternalForce, stun: &Stun) -> bool {
    pos.0.is_finite() && velocity.0.is_finite() && external.0.is_finite() && stun.0.is_finite()
}
