//! Stage `steer_units` (SPEC §6): every controllable unit picks its velocity from the flow
//! field, the ray-fan wall probe and separation from its neighbours.

use glam::Vec2;
use horde_core::{
    Agent, Fan, Position, Steering, Stun, TurnLimit, UnitId, UnitSpec, Velocity, avoid_walls,
    blend_and_turn, unit_noise,
};

use crate::frame::{FrameData, for_each_unit};
use crate::job_graph::StageContext;

/// Steers every unit for this frame.
pub(crate) fn steer_units(data: &FrameData, ctx: &StageContext<'_>) {
    let map = data.map.read();
    let fields = data.fields.read();
    let groups = data.groups.read();
    let hierarchy = data.hierarchy.read();
    let clearance = data.clearance.read();
    let neighbours = data.neighbours.read();
    let config = &data.config;
    let sc = &config.steering;
    let grid = map.grid();
    let cell_size = grid.cell_size();
    let (dt, frame) = (data.clock.dt, data.clock.frame);
    // Most units keep the default turn rate: share its sine and cosine.
    let common_rate = UnitSpec::at(Vec2::ZERO).turn_rate;
    let common_limit = TurnLimit::new(common_rate * dt);
    let fan = Fan::new(sc);

    for_each_unit::<
        (
            &UnitId,
            &Position,
            &Agent,
            &Stun,
            &mut Velocity,
            &mut Steering,
        ),
        _,
    >(
        &data.world,
        ctx,
        config.batch_size,
        |(id, pos, agent, stun, velocity, steering)| {
            if stun.0 > 0.0 {
                velocity.0 = Vec2::ZERO;
                return;
            }
            let pos = pos.0;
            let cell = grid.clamped_cell_at(pos);
            let field = groups
                .field(agent.group.0, agent.layer)
                .map(|id| fields.get(id));
            // Direction and path distance: from the flat field, or with hierarchical
            // navigation from the sector fields (or the coarse route's waypoint).
            let (ideal, distance) = hierarchy.guide(grid, agent, pos, cell, field);

            // Step 5: separation, and whether an arrived friend is touching us. Written as a
            // branch-free loop over contiguous slices with local accumulators: crowds make the
            // in-range test a coin flip, and this loop is the hottest of the frame.
            let mut separation = Vec2::ZERO;
            let mut touching_arrived = false;
            let mut stacked = false;
            for slice in neighbours.near(pos) {
                for other in slice {
                    let away = pos - other.pos;
                    let d2 = away.length_squared();
                    let touch = agent.radius + other.radius;
                    let range = touch * sc.separation_range;
                    let inside = d2 < range * range && other.id != id.0;
                    let d = d2.sqrt();
                    // separation_strength(), divided by d to normalise `away`.
                    let ramp = touch * (sc.separation_range - 1.0).max(0.05);
                    let weight = if inside && d > 1e-6 {
                        (range - d) / (ramp * d)
                    } else {
                        0.0
                    };
                    separation += away * weight;
                    stacked |= inside && d <= 1e-6;
                    touching_arrived |= inside && other.arrived && other.group == agent.group.0;
                }
            }
            if stacked {
                // Someone stands exactly on us: leave along a direction fixed per unit.
                let n = unit_noise(config.seed, id.0, 0);
                separation +=
                    Vec2::new(n, 1.0 - n.abs()).normalize_or(Vec2::X) * sc.separation_range;
            }

            // A group that has arrived covers more than its goal cells once the units that
            // stand there outgrow the goal's area: friends touching them within that
            // crowd's radius have arrived too (else big groups push forever).
            let crowd = if touching_arrived {
                let g = usize::from(agent.group.0);
                let arrived_units = neighbours.arrived_per_group.get(g).copied().unwrap_or(0);
                let goal_cells = groups
                    .get(agent.group.0)
                    .map_or(1, |g| g.goal.cells().len());
                let unit_area = 4.0 * agent.radius * agent.radius / (cell_size * cell_size);
                let excess = arrived_units as f32 * unit_area - goal_cells as f32;
                (excess.max(0.0) / std::f32::consts::PI).sqrt()
            } else {
                0.0
            };
            let arrived = distance <= sc.arrival_distance
                || (touching_arrived && distance <= config.crowd_arrival_distance + crowd);
            steering.arrived = arrived;
            if arrived {
                // Stand still, but let separation resolve overlaps.
                velocity.0 = separation.clamp_length_max(1.0) * (agent.max_speed * 0.5);
                return;
            }

            // Steps 2-4: probe only near walls (the clearance field says how far they are).
            // The probe's farthest point is the end of an edge ray; every point of a wall
            // cell at Chebyshev distance `c` is at least `c - 1` cells away from anywhere in
            // the unit's cell, so clearance `c > reach + 1` means no ray can hit.
            let ahead = agent.radius + sc.probe_length;
            let aside = agent.radius * sc.probe_inflate;
            let reach = (ahead * ahead + aside * aside).sqrt() / cell_size;
            let layer = agent.layer as usize;
            let avoid = if ideal == Vec2::ZERO
                || f32::from(clearance[layer].get(cell.x, cell.y)) > reach + 1.0
            {
                ideal
            } else {
                let cost = map.cost_field(agent.layer);
                let (dir, side) = avoid_walls(
                    cost,
                    grid,
                    pos,
                    ideal,
                    agent.radius,
                    steering.avoid_side,
                    &fan,
                );
                steering.avoid_side = side;
                dir
            };

            // Steps 6-7: blend, bounded turn, jitter, speed.
            let jitter = unit_noise(config.seed, id.0, frame) * sc.jitter;
            let own_limit;
            let limit = if agent.turn_rate == common_rate {
                &common_limit
            } else {
                own_limit = TurnLimit::new(agent.turn_rate * dt);
                &own_limit
            };
            steering.heading =
                blend_and_turn(steering.heading, avoid, separation, limit, jitter, sc);
            let slow = (distance / sc.slow_distance).clamp(0.25, 1.0);
            let speed = if avoid == Vec2::ZERO && separation == Vec2::ZERO {
                0.0
            } else {
                agent.max_speed * slow
            };
            // Separation also pushes directly (not only by turning the heading): in a jam
            // everyone heads the same way, and only a push keeps bodies from overlapping.
            velocity.0 = steering.heading * speed
                + separation.clamp_length_max(2.0) * (agent.max_speed * sc.separation_push);
        },
    );
}
