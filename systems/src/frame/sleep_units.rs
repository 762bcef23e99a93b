//! Stage `sleep_units` (docs/behaviour.md, "Sleeping"): once the frame has moved every unit,
//! units still at rest among still neighbours fall asleep, and sleeping units that something
//! reached this frame wake up.
//!
//! The rules, in one place:
//! - A unit is *still* when it is at rest (arrived or settled), not stunned, its own
//!   velocity is zero and its external velocity is under [`Steering::still_speed`];
//!   [`Steering::still`] counts how long it has been so.
//! - A unit at rest, still for [`SLEEP_AFTER`] seconds with every unit within
//!   [`wake_reach`] calm as the frame began (asleep, or still that long), falls asleep where
//!   it stands ([`Steering::asleep`]); its velocities are zeroed. A resting island sleeps a
//!   frame after all of it is still; units near one still on its way stay awake. An arrived
//!   unit (at rest in its goal) of an army with no settled unit (the goal holds all of the
//!   army that rests) may sleep while others of its army still come. A settled unit (at rest
//!   outside its goal), and the arrived units its blob is anchored to, sleep only once every
//!   unit of their army was at rest as the frame began: while some still come, whether a
//!   settled unit may stay depends on the blob around it, which its steering keeps checking
//!   (sleeping then froze blobs with gaps).
//! - A sleeping unit wakes when a unit not at rest comes within [`wake_reach`] of it, or a
//!   unit the contacts pushed toward it touches it (`resolve_contacts` marks both), when a
//!   force gave it an external velocity or a stun, or when it moved (a force, a caller).
//!   `Horde::step` wakes the units its callers reach between frames: a changed goal, a
//!   terrain edit near them, a caller moving them or despawning a unit beside them.
//!
//! Every decision reads the unit's own state and the frame-start snapshot, so the result is
//! the same on every thread count.

use glam::Vec2;
use horde_core::{Agent, ExternalForce, Position, SLEEP_AFTER, Steering, Stun, UnitId, Velocity};
use parking_lot::Mutex;

use crate::frame::{FrameData, Neighbours, query};
use crate::job_graph::StageContext;

/// Cells beyond the separation range within which a unit not at rest keeps the units at
/// rest around it awake (and wakes sleeping ones): the crowd near anything moving behaves
/// as a crowd awake at rest, which shifts to let walkers through.
pub(crate) const WAKE_CELLS: f32 = 1.0;

/// How near (centre to centre) a unit not at rest keeps a unit at rest awake, for radii
/// `a` and `b`: their separation range (at least touching with the contact margin) plus
/// [`WAKE_CELLS`].
pub(crate) fn wake_reach(a: f32, b: f32, separation_range: f32, cell_size: f32) -> f32 {
    (a + b) * wake_range(separation_range) + WAKE_CELLS * cell_size
}

fn wake_range(separation_range: f32) -> f32 {
    separation_range.max(1.0 + crate::frame::CONTACT_MARGIN)
}

/// The radius and range to ask the neighbour snapshot about
/// ([`Neighbours::for_each_candidate`]) for a unit of `radius`, so that every unit within
/// [`wake_reach`] of it is a candidate.
pub(crate) fn wake_query(radius: f32, separation_range: f32, cell_size: f32) -> (f32, f32) {
    let range = wake_range(separation_range);
    (radius + WAKE_CELLS * cell_size / range, range)
}

/// How many units are awake after the frame (`Horde::awake_units`), kept by the stage.
#[derive(Debug, Default)]
pub struct Sleep {
    /// Units not asleep after the last frame that ran this stage.
    pub(crate) awake: usize,
}

/// Puts still units to sleep and wakes the ones reached this frame.
pub(crate) fn sleep_units(data: &FrameData, ctx: &StageContext<'_>) {
    let neighbours = data.neighbours.read();
    let contacts = data.contacts.read();
    let cell = data.map.read().grid().cell_size();
    let groups = data.groups.read();
    let dt = data.clock.dt;
    let range = data.config.steering.separation_range;
    let batch_size = data.config.batch_size.clamp(1, u32::MAX as usize) as u32;
    // The same units, in the same order, as the contacts' storage.
    let mut query = query::<(
        &UnitId,
        &Position,
        &Agent,
        &Stun,
        &mut Velocity,
        &mut ExternalForce,
        &mut Steering,
    )>(&data.world);
    let lengths: Vec<usize> = query
        .iter_batched(batch_size)
        .map(Iterator::count)
        .collect();
    let mut jobs = Vec::with_capacity(lengths.len());
    let mut offset = 0usize;
    for (batch, &len) in query.iter_batched(batch_size).zip(&lengths) {
        jobs.push(Mutex::new(Some((batch, offset))));
        offset += len;
    }
    let awake = ctx.map_batches(jobs.len(), 1, |i, _| {
        let Some((batch, offset)) = jobs[i].lock().take() else {
            return 0;
        };
        let mut awake = 0usize;
        for ((id, pos, agent, stun, velocity, external, steering), s) in batch.zip(offset..) {
            if let Some(at) = steering.asleep {
                let reached =
                    contacts.woken(s) || external.0 != Vec2::ZERO || stun.0 != 0.0 || pos.0 != at;
                if reached {
                    steering.wake();
                    awake += 1;
                }
                continue;
            }
            let still = (steering.arrived || steering.settled)
                && stun.0 == 0.0
                && velocity.0 == Vec2::ZERO
                && external.0.length() < Steering::still_speed(agent.radius);
            steering.still = if still {
                (steering.still + dt).min(SLEEP_AFTER)
            } else {
                0.0
            };
            let army = groups.army(agent.group.0);
            let army_at_rest = neighbours
                .coming
                .get(usize::from(army))
                .is_none_or(|&n| n == 0);
            let may_sleep = (steering.arrived && !neighbours.settling.contains(&army))
                || ((steering.arrived || steering.settled) && army_at_rest);
            if may_sleep
                && steering.still >= SLEEP_AFTER
                && pos.0.is_finite()
                && calm_around(&neighbours, id.0, pos.0, agent.radius, range, cell)
            {
                steering.asleep = Some(pos.0);
                velocity.0 = Vec2::ZERO;
                external.0 = Vec2::ZERO;
            } else {
                awake += 1;
            }
        }
        awake
    });
    drop(jobs);
    drop(query);
    data.sleep.write().awake = awake.into_iter().sum();
}

/// Whether every unit within [`wake_reach`] of unit `id` (at `pos` with `radius`) was calm
/// as the frame began: the same reach in which a unit not at rest wakes a sleeping one, so
/// no unit falls asleep only to be woken the next frame.
fn calm_around(n: &Neighbours, id: u32, pos: Vec2, radius: f32, range: f32, cell: f32) -> bool {
    let mut calm = true;
    let (query, query_range) = wake_query(radius, range, cell);
    n.for_each_candidate(pos, query, query_range, n.near_spans(pos), |others| {
        for other in others {
            if calm && other.id != id && !other.calm {
                let reach = wake_reach(radius, other.radius, range, cell);
                calm = pos.distance_squared(other.pos) >= reach * reach;
            }
        }
    });
    calm
}
