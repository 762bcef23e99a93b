//! Stage `integrate_units` (SPEC §7): moves every unit by its final velocity and keeps its
//! centre out of cells its layer cannot enter, sliding along walls.

use glam::Vec2;
use horde_core::{Agent, CostField, ExternalForce, Grid, Position, Stun, Velocity, WALL, floor};

use crate::frame::{FrameData, for_each_unit};
use crate::job_graph::StageContext;

/// Integrates every unit's position.
pub(crate) fn integrate_units(data: &FrameData, ctx: &StageContext<'_>) {
    let map = data.map.read();
    let grid = map.grid();
    let dt = data.clock.dt;
    for_each_unit::<
        (
            &Agent,
            &Stun,
            &mut Position,
            &mut Velocity,
            &mut ExternalForce,
        ),
        _,
    >(
        &data.world,
        ctx,
        data.config.batch_size,
        |(agent, stun, pos, velocity, external)| {
            let cost = map.cost_field(agent.layer);
            let own = if stun.0 > 0.0 { Vec2::ZERO } else { velocity.0 };
            let total = own + external.0;
            let (new_pos, blocked) = move_with_walls(cost, grid, pos.0, total * dt);
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
        },
    );
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
        let (p, b) = move_with_walls(&cost, &grid, Vec2::new(0.5, 0.5), Vec2::new(f32::NAN, 0.0));
        assert_eq!(p, Vec2::new(0.5, 0.5));
        assert!(b.x && b.y);
    }
}
