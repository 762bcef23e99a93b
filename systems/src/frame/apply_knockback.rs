//! Stage `apply_knockback` (docs/behaviour.md, "Force fields", "Bodies and crowds"): each
//! unit's external ("knock-back") velocity, the part of its motion that is not its own.
//! Force fields add to it and stun; drag decays it (less on slippery terrain); and a body is
//! not driven into what stops it: the part of its external velocity that points into a wall
//! it touches is dropped, and towards each unit near it the velocity closes at most the gap
//! between their discs this frame (so a crowd pressed against a wall or into an attractor
//! packs instead of being crushed).
//!
//! Contact shoves (`resolve_contacts`) ride on the same velocity, so in a crowd that touches
//! this stage has work with no force field at all: every unit with external velocity left
//! decays it and reads its neighbours for the body limits (its neighbour list when the list
//! reaches as far as the unit travels, else its buckets). A unit with none, unstunned, costs
//! a load and a compare.
use glam::Vec2;
use horde_core::{
    Agent, ExternalForce, Mass, Position, Stun, UnitId, always_snaps_below, apply_impulse,
    clear_of_walls, decay_external, limit_approach, slide_velocity,
};

use crate::frame::{
    Asker, FrameData, NeighbourLists, Neighbours, TOUCHING, for_each_unit_in_batches,
};
use crate::job_graph::StageContext;

/// Applies the summed force of every field to every unit, then drag.
pub(crate) fn apply_knockback(data: &FrameData, ctx: &StageContext<'_>) {
    let map = data.map.read();
    let forces = data.forces.read();
    let neighbours = data.neighbours.read();
    let lists = data.lists.read();
    let near = (&*neighbours, &*lists);
    let clearance = data.clearance.read();
    let params = &data.config.knockback;
    let separation_range = data.config.steering.separation_range;
    let dt = data.clock.dt;
    let grid = map.grid();
    let no_forces = forces.is_empty();
    let snaps_below = always_snaps_below(dt, params);
    for_each_unit_in_batches::<
        (
            &UnitId,
            &Position,
            &Agent,
            &Mass,
            &mut ExternalForce,
            &mut Stun,
        ),
        _,
    >(
        &data.world,
        ctx,
        data.config.batch_size,
        |batch, k, (id, pos, agent, mass, external, stun)| {
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
            // A velocity that drag snaps to zero this frame ends at zero whatever walls and
            // bodies do to it first (they only shorten it): skip them. A packed army at rest
            // is shoved by its contacts every frame by less than that (measured: nine in
            // ten settled units), so this is most of it.
            if v.length() < snaps_below {
                (external.0, stun.0) = decay_external(Vec2::ZERO, s, false, dt, params);
                return;
            }
            if v != Vec2::ZERO && pos.0.is_finite() {
                // Walls, then bodies and walls twice: each limit can turn the velocity
                // towards what an earlier one held it from (measured: one round leaves a
                // pushed crowd ten times the overlap of two).
                let cost = map.cost_field(agent.layer);
                // Far from walls (the clearance of its cell says so) a disc touches none.
                let near_wall = grid.cell_at(pos.0).is_none_or(|c| {
                    let clear = clearance[agent.layer as usize].get(c.x, c.y);
                    !clear_of_walls(grid, clear, agent.radius * 1.05, 0.0)
                });
                let slide = |v| {
                    if near_wall {
                        slide_velocity(cost, grid, pos.0, agent.radius, v)
                    } else {
                        v
                    }
                };
                v = slide(v);
                let who = Asker {
                    storage: lists.storage_of(batch, k),
                    id: id.0,
                    pos: pos.0,
                    radius: agent.radius,
                };
                for _ in 0..2 {
                    v = blocked_by_bodies(near, who, separation_range, v, dt);
                    v = slide(v);
                }
            }
            let slippery = map.terrain_at(grid.clamped_cell_at(pos.0)).props().slippery;
            (external.0, stun.0) = decay_external(v, s, slippery, dt, params);
        },
    );
}

/// `v` limited so the unit does not drive into the units around it (at their positions in
/// the snapshot, which are this frame's: nobody has moved yet): towards each neighbour it
/// may close at most the gap between their discs this frame. A force does not drive a body
/// into another: a crowd pressed into an attractor packs instead of being crushed, and a
/// pushed crowd moves from its free side in, a row per frame.
fn blocked_by_bodies(
    (n, lists): (&Neighbours, &NeighbourLists),
    who: Asker,
    separation_range: f32,
    v: Vec2,
    dt: f32,
) -> Vec2 {
    let (id, pos, radius) = (who.id, who.pos, who.radius);
    let mut v = v;
    let travel = v.length() * dt;
    let reach = Some((TOUCHING, travel));
    n.for_each_near(lists, who, separation_range, reach, |others| {
        for other in others {
            if other.id == id {
                continue;
            }
            let away = pos - other.pos;
            let touch = (radius + other.radius) * TOUCHING;
            let reach = touch + travel;
            let d2 = away.length_squared();
            if d2 < reach * reach && d2 > 0.0 {
                let d = d2.sqrt();
                v = limit_approach(
                    v,
                    away / d,
                    (d - touch).max(0.0) / dt.max(f32::MIN_POSITIVE),
                );
            }
        }
    });
    v
}
