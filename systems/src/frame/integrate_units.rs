//! Stage `integrate_units` (SPEC §7): moves every unit by its final velocity and keeps its
//! centre out of cells its layer cannot enter, sliding along walls.

use std::sync::atomic::{AtomicBool, Ordering};

use glam::Vec2;
use hecs::Entity;
use horde_core::{
    Agent, CostField, ExternalForce, Grid, Position, Steering, Stun, Velocity, WALL, floor,
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
            // Fast path: a move shorter than half a cell from a cell whose eight neighbours
            // are open (clearance >= 2; the map edge counts as a wall) cannot reach a wall.
            // `delta` is finite only if both velocities are (or dt is 0 and they are). A unit
            // outside the map has clearance 0 here.
            if delta.is_finite()
                && velocity.0.is_finite()
                && stun.0.is_finite()
                && delta.abs().max_element() < half_cell
                && clear >= 2
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
            let (new_pos, blocked) = move_with_walls(cost, grid, pos.0, delta);
            pos.0 = new_pos;
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

/// Which axes a move was stopped on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Blocked {
    pub x: bool,
    pub y: bool,
}

/// Moves `pos` by `delta` in steps of at most half a cell; a step whose end lies in a wall
/// cell (or off the map) is retried along each axis alone, so the unit slides. A centre that
/// starts in an open cell never ends in a wall cell. A non-finite move is dropped.
pub(crate) fn move_with_walls(
    cost: &CostField,
    grid: &Grid,
    pos: Vec2,
    delta: Vec2,
) -> (Vec2, Blocked) {
    let mut blocked = Blocked::default();
    if !delta.is_finite() || !pos.is_finite() {
        return (pos, Blocked { x: true, y: true });
    }
    let open = |p: Vec2| {
        let local = (p - grid.origin()) / grid.cell_size();
        cost.get_or_wall(floor(local.x), floor(local.y)) != WALL
    };
    if !open(pos) {
        // A wall was placed on the unit (or it was spawned by hand into one): step out to the
        // nearest open cell before moving.
        return (escape_wall(cost, grid, pos), Blocked { x: true, y: true });
    }
    let half = grid.cell_size() * 0.5;
    let steps = ((delta.abs().max_element() / half).ceil() as u32).clamp(1, 64);
    let step = delta / steps as f32;
    let mut p = pos;
    for _ in 0..steps {
        let full = p + step;
        if open(full) {
            p = full;
            continue;
        }
        let along_x = Vec2::new(full.x, p.y);
        let along_y = Vec2::new(p.x, full.y);
        if step.x != 0.0 && open(along_x) {
            p = along_x;
            blocked.y = true;
        } else if step.y != 0.0 && open(along_y) {
            p = along_y;
            blocked.x = true;
        } else {
            blocked = Blocked { x: true, y: true };
            break;
        }
    }
    (p, blocked)
}

/// The point nearest `pos` inside the nearest open cell (searching rings of cells up to 8
/// away, then anywhere on the map), a hair inside the cell's edge; `pos` itself when the map
/// has no open cell.
pub(crate) fn escape_wall(cost: &CostField, grid: &Grid, pos: Vec2) -> Vec2 {
    let size = grid.cell_size();
    let local = (pos - grid.origin()) / size;
    let (cx, cy) = (floor(local.x), floor(local.y));
    let inset = 1e-3;
    let nearest_in = |x: i64, y: i64| {
        let min = Vec2::new(x as f32 + inset, y as f32 + inset);
        let max = Vec2::new(x as f32 + 1.0 - inset, y as f32 + 1.0 - inset);
        local.clamp(min, max)
    };
    let consider = |best: &mut Option<(f32, Vec2)>, x: i64, y: i64| {
        if cost.get_or_wall(x, y) != WALL {
            let p = nearest_in(x, y);
            let d = (p - local).length_squared();
            if best.is_none_or(|(bd, _)| d < bd) {
                *best = Some((d, p));
            }
        }
    };
    let mut best: Option<(f32, Vec2)> = None;
    for r in 1..=8i64 {
        for y in cy - r..=cy + r {
            for x in cx - r..=cx + r {
                if (x - cx).abs().max((y - cy).abs()) == r {
                    consider(&mut best, x, y);
                }
            }
        }
        if best.is_some() {
            break;
        }
    }
    if best.is_none() {
        for y in 0..i64::from(cost.height()) {
            for x in 0..i64::from(cost.width()) {
                consider(&mut best, x, y);
            }
        }
    }
    best.map_or(pos, |(_, p)| grid.origin() + p * size)
}

#[cfg(test)]
mod tests {
    use super::*;
    use horde_core::{Cell, Grid as G};

    #[test]
    fn slides_along_walls_and_never_enters_them() {
        let grid = G::new(5, 5).unwrap();
        let mut cost = CostField::filled(&grid, 1);
        for y in 0..5 {
            cost.set(Cell::new(3, y), WALL);
        }
        let (p, b) = move_with_walls(&cost, &grid, Vec2::new(2.5, 2.5), Vec2::new(2.0, 1.0));
        assert!(p.x < 3.0 && p.y > 2.5, "{p}");
        assert!(b.x && !b.y);
        // Off the map is a wall too.
        let (p, _) = move_with_walls(&cost, &grid, Vec2::new(0.5, 0.5), Vec2::new(-3.0, 0.0));
        assert!(p.x >= 0.0);
        // A unit caught inside a new wall steps out to the nearest open cell.
        let (p, _) = move_with_walls(&cost, &grid, Vec2::new(3.2, 1.5), Vec2::ZERO);
        assert!(p.x < 3.0 && p.x > 2.99 && p.y == 1.5, "{p}");
        let (p, b) = move_with_walls(&cost, &grid, Vec2::new(0.5, 0.5), Vec2::new(f32::NAN, 0.0));
        assert_eq!(p, Vec2::new(0.5, 0.5));
        assert!(b.x && b.y);
    }
}
