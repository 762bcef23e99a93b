//! Stage `integrate_units` (docs/behaviour.md, "Force fields", "Bodies and crowds"): moves every
//! unit by its final velocity as a solid disc: the centre swept cell by cell (no speed crosses a
//! wall), the body pushed out of cells its layer cannot enter, sliding along walls (the rules:
//! `horde_core::body`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use glam::Vec2;
use hecs::Entity;
use horde_core::{
    Agent, Blocked, ExternalForce, Map, Position, Steering, Stun, Velocity, cell_coords,
    cell_share, centre_is_open, clear_of_walls, escape_wall_where, move_body, push_out_of_walls,
};

use crate::frame::{FrameData, UNIT_CHUNK, for_each_unit_chunk, query};
use crate::job_graph::StageContext;
use crate::unit::Memo;

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
    let found_in_wall = AtomicBool::new(false);
    for_each_unit_chunk::<
        (
            &Agent,
            &Stun,
            &Memo,
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
        // A sleeping unit that no force reached (no external velocity) stays put.
        let sleeps = |steering: &Steering, external: &ExternalForce| {
            steering.asleep.is_some() && external.0 == Vec2::ZERO
        };
        for (c, (agent, _, memo, steering, pos, _, external)) in clear.iter_mut().zip(chunk.iter())
        {
            if sleeps(steering, external) {
                continue;
            }
            if let Some(cell) = grid.cell_at(pos.0) {
                let layer = &clearance[agent.layer as usize];
                let index = grid.index(cell) as u32;
                *c = memo
                    .0
                    .clearance_if_known(index, layer.stamp())
                    .unwrap_or_else(|| layer.get(cell.x, cell.y));
            }
        }
        for (&clear, (agent, stun, _, steering, pos, velocity, external)) in
            clear.iter().zip(chunk.iter_mut())
        {
            if sleeps(steering, external) {
                continue;
            }
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
            let (blocked, moved) = if centre_is_open(cost, grid, pos.0) {
                let (new_pos, blocked) = move_body(cost, grid, pos.0, agent.radius, delta);
                let moved = new_pos - pos.0;
                pos.0 = new_pos;
                (blocked, moved)
            } else {
                // A wall was placed on the unit (or it was spawned by hand into one): it
                // steps out after this pass (`escape_walls`).
                found_in_wall.store(true, Ordering::Relaxed);
                (Blocked::BOTH, Vec2::ZERO)
            };
            // A wall stopped the unit along an axis: what it did move there becomes
            // external velocity (the frame's motion is its velocity, as after contacts),
            // and its own velocity there is dropped.
            let stopped = |moved: f32| if dt > 0.0 { moved / dt } else { 0.0 };
            if blocked.x {
                velocity.0.x = 0.0;
                external.0.x = stopped(moved.x);
            }
            if blocked.y {
                velocity.0.y = 0.0;
                external.0.y = stopped(moved.y);
            }
        }
    });
    data.walled_in.write().0 = if found_in_wall.into_inner() {
        escape_walls(data, &map)
    } else {
        0
    };
    // Rare: name the non-finite units (a second pass keeps `Entity` out of the hot query).
    if found_non_finite.into_inner() {
        let mut query = query::<(Entity, &Position, &Velocity, &ExternalForce, &Stun)>(&data.world)
            .with::<&Agent>();
        data.quarantine.write().0.extend(
            query
                .iter()
                .filter(|&(_, pos, velocity, external, stun)| {
                    !finite(pos, velocity, external, stun)
                })
                .map(|(entity, ..)| entity),
        );
    }
}

/// Units whose centre stands in a wall (one was placed on them, or they were spawned into
/// one) step out of it, one after another in storage order so that the result does not
/// depend on the thread count: each to the nearest open cell next to the wall it stands in
/// ([`escape_wall_where`]) that holds fewer units than fit in it, else to the nearest that
/// holds fewer than twice that; a unit with neither stays put, walled in. Units are counted
/// where the frame-start snapshot saw them, plus those that stepped out this frame. Returns
/// how many stay walled in.
fn escape_walls(data: &FrameData, map: &Map) -> usize {
    let grid = map.grid();
    let neighbours = data.neighbours.read();
    let range = data.config.steering.separation_range;
    let size = grid.cell_size();
    let mut placed: HashMap<(i64, i64), u32> = HashMap::new();
    let mut walled_in = 0;
    let mut query =
        query::<(&Agent, &mut Position)>(&data.world)
            .with::<(&Steering, &Velocity, &ExternalForce, &Stun)>();
    for (agent, pos) in query.iter() {
        let cost = map.cost_field(agent.layer);
        if !pos.0.is_finite() || centre_is_open(cost, grid, pos.0) {
            continue;
        }
        // Discs of this size that fit in a cell side by side (at least one).
        let fit = (1.0 / cell_share(agent.radius, size)).round() as u32;
        let occupancy = |cell: (i64, i64)| {
            let centre = grid.origin() + (Vec2::new(cell.0 as f32, cell.1 as f32) + 0.5) * size;
            let mut count = placed.get(&cell).copied().unwrap_or(0);
            let near = neighbours.near_spans(centre);
            neighbours.for_each_candidate(centre, size, range, near, |others| {
                let inside = others.iter().filter(|o| cell_coords(grid, o.pos) == cell);
                count += inside.count() as u32;
            });
            count
        };
        let out = escape_wall_where(cost, grid, pos.0, agent.radius, |c| occupancy(c) < fit)
            .or_else(|| {
                escape_wall_where(cost, grid, pos.0, agent.radius, |c| occupancy(c) < 2 * fit)
            });
        match out {
            Some(out) => {
                pos.0 = push_out_of_walls(cost, grid, out, agent.radius);
                *placed.entry(cell_coords(grid, pos.0)).or_default() += 1;
            }
            None => walled_in += 1,
        }
    }
    walled_in
}

/// Whether a unit's position, velocities and stun are all finite numbers.
fn finite(pos: &Position, velocity: &Velocity, external: &ExternalForce, stun: &Stun) -> bool {
    pos.0.is_finite() && velocity.0.is_finite() && external.0.is_finite() && stun.0.is_finite()
}
