//! Stage `resolve_contacts` (docs/behaviour.md, "Bodies and crowds"): after the units have moved,
//! bodies that overlap are pushed apart, so a packed crowd stands shoulder to shoulder instead of
//! stacking.
//!
//! The rules, in one place:
//! - A contact is a pair of units whose discs overlap (`distance < r_a + r_b`).
//! - Each pass moves every unit by the sum of its contacts' corrections: for each contact,
//!   the overlap along the line of centres, times its share `w_a / (w_a + w_b)` of it, where
//!   `w = 1 / mass` (a heavier unit is pushed less; two equal units each take half). A unit
//!   at rest (arrived or settled) takes the whole correction against one still on its way:
//!   resting units give way, so a group passing through a resting one is not held. The sum
//!   is scaled by `relaxation / contacts` when the unit has more contacts than that, so a
//!   unit squeezed from several sides does not overshoot.
//! - A unit asleep (`Steering::asleep`) does not move: it has no contacts of its own, and a
//!   unit touching it takes the whole correction. A unit not at rest within its separation
//!   range, or one the passes pushed into it, wakes it for the next frame (`sleep_units`).
//! - The passes stop early once one moved no unit: the passes left would change nothing.
//! - Passes are Jacobi passes: every unit's correction is computed from the positions
//!   before the pass and the contacts are summed in the snapshot's bucket order, so the
//!   result does not depend on thread count or batch order.
//! - A unit near a wall moves as a body ([`horde_core::move_body`]): a push never carries
//!   its centre across a blocked cell, and its disc ends out of the walls.
//! - Candidates come from the frame-start snapshot (`bucket_units`): every pair within the
//!   separation range then. Units that closed faster than that margin in one frame are found
//!   the next frame. They are read from each unit's neighbour list (`NeighbourLists`) when
//!   neither it nor any unit moved farther than the list's slack allows, else from its
//!   buckets: the same candidates either way.
//!
//! Separation steering keeps spacing; this step removes what overlap is left.

use glam::Vec2;
use horde_core::{
    Agent, Clearance, ExternalForce, Grid, Layer, Map, Mass, Position, Steering, UnitId,
    centre_is_open, move_body,
};
use parking_lot::Mutex;

use crate::frame::sleep_units::{wake_query, wake_reach};
use crate::frame::{Asker, FrameData, NeighbourLists, Neighbours, query};
use crate::job_graph::StageContext;

/// The most contacts a unit keeps for a frame's passes: a disc has at most six neighbours
/// of its own size touching it without overlap; more is a squeeze, and the deepest ones
/// matter most, so those are kept.
pub const MAX_CONTACTS: usize = 8;

/// A pair is kept as a contact when its gap is within this fraction of the sum of radii, so
/// that units that come into touch during the passes are pushed too.
pub(crate) const CONTACT_MARGIN: f32 = 0.05;

/// A unit the passes pushed faster than this many times [`Steering::still_speed`] wakes
/// the sleeping units it is pushed toward. Slower pushes are the jitter of a packed crowd
/// at rest (at 1x, a garrison of 20,000 woke itself: 60% awake for good).
const PUSH_WAKE: f32 = 10.0;

/// The stage's scratch buffers, kept between frames.
#[derive(Debug, Default)]
pub struct Contacts {
    /// Positions in the world's storage order.
    storage: Vec<Vec2>,
    /// Bodies in the world's storage order (radius, mass, layer).
    storage_bodies: Vec<Body>,
    /// Per storage index, its slot (`u32::MAX`: not in the snapshot).
    slot_of: Vec<u32>,
    /// Per slot (the snapshot's fine units, then its large ones): the body.
    bodies: Vec<Body>,
    /// Per slot, its position (before a pass; after the last, the result).
    before: Vec<Vec2>,
    /// Per slot, its contacts (slots).
    contacts: Vec<ContactList>,
    /// The slots with contacts: the only ones a pass moves (in a sparse crowd, a few).
    active: Vec<u32>,
    /// Per active slot, its free drift (see [`Body`]) and its position after a pass.
    drift: Vec<f32>,
    after: Vec<Vec2>,
    /// Per storage index: whether a unit not at rest overlapped it while it slept, which
    /// wakes it (read by `sleep_units`).
    woken: Vec<bool>,
    /// How many passes the last frame ran.
    passes_run: u32,
}

impl Contacts {
    /// Whether the unit at storage index `storage` (the frame's unit query order) was
    /// touched while asleep by a unit not at rest this frame.
    pub(crate) fn woken(&self, storage: usize) -> bool {
        self.woken.get(storage).copied().unwrap_or(false)
    }

    /// How many contact passes the last frame ran (at most `ContactConfig::passes`; fewer
    /// once the crowd was resolved).
    #[cfg(test)]
    pub(crate) fn passes_run(&self) -> u32 {
        self.passes_run
    }
}

/// What the passes know about one unit.
#[derive(Clone, Copy, Debug, Default)]
struct Body {
    /// Its storage index.
    storage: u32,
    radius: f32,
    /// `1 / mass`.
    inv_mass: f32,
    /// Its id, to break exact ties (two centres on one point) the same way every run.
    id: u32,
    /// Layer index.
    layer: u8,
    /// How it gives way (at the frame's start): 3 at rest (arrived or settled), 2 giving
    /// way in a jam ([`horde_core::Steering::yielding`]), 1 on its way, 0 asleep (it does
    /// not move). Of two touching units the one that gives way more takes the whole
    /// correction.
    gives_way: u8,
}

#[derive(Clone, Copy, Debug, Default)]
struct ContactList {
    slots: [u32; MAX_CONTACTS],
    len: u8,
}

/// Resolves the frame's contacts (see the module docs).
pub(crate) fn resolve_contacts(data: &FrameData, ctx: &StageContext<'_>) {
    let passes = data.config.contacts.passes;
    let mut guard = data.contacts.write();
    let c = &mut *guard;
    c.passes_run = 0;
    c.woken.clear();
    if passes == 0 {
        return;
    }
    let neighbours = data.neighbours.read();
    let map = data.map.read();
    let clearance = data.clearance.read();
    let chunk = data.config.batch_size.max(1) * 4;
    gather(data, ctx, c, &neighbours, chunk);
    if c.bodies.is_empty() {
        return;
    }
    find_contacts(
        ctx,
        c,
        (&neighbours, &data.lists.read()),
        data.config.steering.separation_range,
        chunk,
    );
    wake_near_walkers(
        ctx,
        c,
        &neighbours,
        data.config.steering.separation_range,
        map.grid().cell_size(),
        chunk,
    );
    c.active.clear();
    c.active.extend(
        c.contacts
            .iter()
            .enumerate()
            .filter(|(_, l)| l.len > 0)
            .map(|(slot, _)| slot as u32),
    );
    if c.active.is_empty() {
        return;
    }
    free_drifts(ctx, c, &map, &clearance, chunk);
    let relaxation = data.config.contacts.relaxation;
    for _ in 0..passes {
        pass(ctx, c, &map, relaxation, chunk);
        c.passes_run += 1;
        let mut largest = 0f32;
        for (&slot, &at) in c.active.iter().zip(&c.after) {
            let before = &mut c.before[slot as usize];
            largest = largest.max((at - *before).abs().max_element());
            *before = at;
        }
        // A pass that moved nobody leaves every later pass the same work and the same
        // result: stop (bit for bit what the remaining passes would give). Any slop above
        // zero changed trajectories: tried 0.005 down to 0.00001 cells, and each flipped
        // the outcome of some crowd family members, so the passes stop only once done.
        if largest == 0.0 {
            break;
        }
    }
    wake_pushed_against(ctx, c, &neighbours, data.clock.dt, chunk);
    write_back(data, ctx, c);
}

/// Copies every unit's body (storage order) and builds the slots from the snapshot.
fn gather(
    data: &FrameData,
    ctx: &StageContext<'_>,
    c: &mut Contacts,
    n: &Neighbours,
    chunk: usize,
) {
    let batch_size = data.config.batch_size.clamp(1, u32::MAX as usize) as u32;
    // The same units, in the same order, as `bucket_units`' query.
    let mut query =
        query::<(&Position, &Agent, Option<&Mass>)>(&data.world).with::<(&UnitId, &Steering)>();
    let lengths: Vec<usize> = query
        .iter_batched(batch_size)
        .map(Iterator::count)
        .collect();
    let total: usize = lengths.iter().sum();
    c.storage.resize(total, Vec2::ZERO);
    c.storage_bodies.resize(total, Body::default());
    let mut jobs = Vec::with_capacity(lengths.len());
    let (mut positions, mut bodies) = (c.storage.as_mut_slice(), c.storage_bodies.as_mut_slice());
    for (batch, &len) in query.iter_batched(batch_size).zip(&lengths) {
        let (p, rest) = positions.split_at_mut(len);
        positions = rest;
        let (b, rest) = bodies.split_at_mut(len);
        bodies = rest;
        jobs.push(Mutex::new(Some((batch, p, b))));
    }
    ctx.for_each_batch(jobs.len(), 1, |i, _| {
        let Some((batch, p, b)) = jobs[i].lock().take() else {
            return;
        };
        for (((pos, agent, mass), p), b) in batch.zip(p).zip(b) {
            *p = pos.0;
            *b = Body {
                radius: agent.radius,
                inv_mass: mass.map_or(1.0, |m| 1.0 / m.0),
                layer: agent.layer as u8,
                ..Body::default()
            };
        }
    });
    drop(jobs);
    drop(query);

    // Slots: the snapshot's fine units in bucket order, then its large ones. A snapshot that
    // does not match the world (units spawned or removed since it was taken) leaves the
    // frame alone.
    let fine = n.grid.order();
    let large = n.large.as_ref();
    let large_storage = large.map_or(&[][..], |l| &l.storage[..]);
    let large_units = large.map_or(&[][..], |l| &l.units[..]);
    let fits = n.units.len() == fine.len()
        && fine
            .iter()
            .chain(large_storage)
            .all(|&s| (s as usize) < total);
    if !fits {
        c.bodies.clear();
        return;
    }
    let slots = fine.len() + large_storage.len();
    c.bodies.resize(slots, Body::default());
    c.before.resize(slots, Vec2::ZERO);
    let (storage, storage_bodies) = (&c.storage, &c.storage_bodies);
    let storage_of = |slot: usize| {
        if slot < fine.len() {
            (fine[slot], &n.units[slot])
        } else {
            let k = slot - fine.len();
            (large_storage[k], &large_units[k])
        }
    };
    ctx.for_each_chunk_mut(&mut c.bodies, chunk, |_, range, out| {
        for (slot, body) in range.zip(out.iter_mut()) {
            let (s, info) = storage_of(slot);
            let mut b = storage_bodies[s as usize];
            b.storage = s;
            b.id = info.id;
            b.gives_way = if info.asleep {
                0
            } else if info.at_rest {
                3
            } else {
                1 + u8::from(info.yields != horde_core::GiveWay::No)
            };
            *body = b;
        }
    });
    ctx.for_each_chunk_mut(&mut c.before, chunk, |_, range, out| {
        for (slot, at) in range.zip(out.iter_mut()) {
            *at = storage[storage_of(slot).0 as usize];
        }
    });
    // Storage index -> slot, to write the results back in storage order.
    c.slot_of.clear();
    c.slot_of.resize(total, u32::MAX);
    for (slot, &s) in fine.iter().chain(large_storage).enumerate() {
        c.slot_of[s as usize] = slot as u32;
    }
}

/// Each slot's contacts: the candidates of the snapshot's buckets whose discs touch (or
/// nearly touch) its own at the positions after the move.
fn find_contacts(
    ctx: &StageContext<'_>,
    c: &mut Contacts,
    (n, lists): (&Neighbours, &NeighbourLists),
    separation_range: f32,
    chunk: usize,
) {
    let fine = n.units.len();
    let (bodies, before) = (&c.bodies, &c.before);
    // Where the unit stood when the snapshot was taken: its buckets.
    let seen = |slot: usize| {
        if slot < fine {
            n.units[slot].pos
        } else {
            n.large
                .as_ref()
                .map_or(before[slot], |l| l.units[slot - fine].pos)
        }
    };
    // The farthest any unit moved since the snapshot (infinite when one's position is no
    // longer a number): with its own move, how much nearer a pair can have come.
    let farthest = ctx
        .map_batches(bodies.len(), chunk, |_, slots| {
            slots.fold(0f32, |far, slot| {
                let moved = before[slot].distance(seen(slot));
                if moved.is_nan() {
                    f32::INFINITY
                } else {
                    far.max(moved)
                }
            })
        })
        .into_iter()
        .fold(0f32, f32::max);
    c.contacts.resize(bodies.len(), ContactList::default());
    ctx.for_each_chunk_mut(&mut c.contacts, chunk, |_, range, out| {
        for (slot, list) in range.zip(out.iter_mut()) {
            list.len = 0;
            let me = &bodies[slot];
            if me.gives_way == 0 {
                // Asleep: it does not move, so it needs no contacts of its own.
                continue;
            }
            let at = before[slot];
            // The deepest `MAX_CONTACTS`, by gap over the sum of radii (ties keep candidate
            // order, so the list is the same on every run).
            let mut gaps = [0f32; MAX_CONTACTS];
            let consider = |(start, end): (u32, u32)| {
                for other in start as usize..end as usize {
                    if other == slot {
                        continue;
                    }
                    let touch = me.radius + bodies[other].radius;
                    let reach = touch * (1.0 + CONTACT_MARGIN);
                    let d2 = at.distance_squared(before[other]);
                    if d2 >= reach * reach {
                        continue;
                    }
                    let gap = d2.sqrt() / touch;
                    let len = usize::from(list.len);
                    if len == MAX_CONTACTS && gap >= gaps[len - 1] {
                        continue;
                    }
                    let mut k = len.min(MAX_CONTACTS - 1);
                    while k > 0 && gaps[k - 1] > gap {
                        gaps[k] = gaps[k - 1];
                        list.slots[k] = list.slots[k - 1];
                        k -= 1;
                    }
                    gaps[k] = gap;
                    list.slots[k] = other as u32;
                    list.len = (len + 1).min(MAX_CONTACTS) as u8;
                }
            };
            // Its list holds every unit that came within the contact reach, unless it or
            // someone else moved more than the list's slack allows.
            let who = Asker {
                storage: me.storage as usize,
                id: me.id,
                pos: seen(slot),
                radius: me.radius,
            };
            let closed = at.distance(who.pos) + farthest;
            let reach = Some((1.0 + CONTACT_MARGIN, closed));
            n.for_each_near_slot(lists, who, separation_range, reach, consider);
        }
    });
}

/// Marks the sleeping units within reach of a unit not at rest ([`Contacts::woken`]): within
/// [`wake_reach`] (its separation range, at least its contact reach, plus a cell), beyond
/// the range its steering keeps from what it walks into. They wake after this frame and, at
/// rest, make room as resting units do; a walker held short of a sleeping crowd by its own
/// steering would otherwise never touch it. Only while some unit sleeps; one neighbour walk
/// per unit not at rest.
fn wake_near_walkers(
    ctx: &StageContext<'_>,
    c: &mut Contacts,
    n: &Neighbours,
    separation_range: f32,
    cell: f32,
    chunk: usize,
) {
    c.woken.clear();
    if n.asleep == 0 {
        return;
    }
    let (bodies, before) = (&c.bodies, &c.before);
    let fine = n.units.len();
    let found: Vec<Vec<u32>> = ctx.map_batches(bodies.len(), chunk, |_, slots| {
        let mut found = Vec::new();
        for slot in slots {
            let me = &bodies[slot];
            if !(me.gives_way == 1 || me.gives_way == 2) {
                continue;
            }
            let at = before[slot];
            let seen = if slot < fine {
                n.units[slot].pos
            } else {
                n.large.as_ref().map_or(at, |l| l.units[slot - fine].pos)
            };
            let near = n.near_spans(seen);
            let (query, range) = wake_query(me.radius, separation_range, cell);
            n.for_each_candidate_slots(seen, query, range, near, |(start, end)| {
                for other in start as usize..end as usize {
                    let o = &bodies[other];
                    let reach = wake_reach(me.radius, o.radius, separation_range, cell);
                    if o.gives_way == 0 && at.distance_squared(before[other]) < reach * reach {
                        found.push(o.storage);
                    }
                }
            });
        }
        found
    });
    if found.iter().all(Vec::is_empty) {
        return;
    }
    c.woken.resize(c.storage.len(), false);
    for storage in found.into_iter().flatten() {
        c.woken[storage as usize] = true;
    }
}

/// Marks the sleeping units that a unit the passes pushed touches (pushed faster than
/// [`PUSH_WAKE`] times a still unit's drift over the frame of `dt` seconds):
/// a push spreads through a crowd, so the sleeping units it reaches wake and give way in
/// turn, a layer a frame, instead of standing as a wall. Only while some unit sleeps.
fn wake_pushed_against(
    ctx: &StageContext<'_>,
    c: &mut Contacts,
    n: &Neighbours,
    dt: f32,
    chunk: usize,
) {
    if n.asleep == 0 {
        return;
    }
    let (bodies, before, contacts, storage) = (&c.bodies, &c.before, &c.contacts, &c.storage);
    let active = &c.active;
    let found: Vec<Vec<u32>> = ctx.map_batches(active.len(), chunk, |_, range| {
        let mut found = Vec::new();
        for &slot in &active[range] {
            let me = &bodies[slot as usize];
            let pushed = before[slot as usize] - storage[me.storage as usize];
            if pushed.length() <= PUSH_WAKE * Steering::still_speed(me.radius) * dt {
                continue;
            }
            // Only a push toward the sleeping unit: the correction a sleeping unit itself
            // gives (away from it) wakes nobody, or every overlap in a packed crowd would.
            let list = &contacts[slot as usize];
            for &other in &list.slots[..usize::from(list.len)] {
                let o = &bodies[other as usize];
                let toward = before[other as usize] - before[slot as usize];
                if o.gives_way == 0 && pushed.dot(toward) > 0.0 {
                    found.push(o.storage);
                }
            }
        }
        found
    });
    if found.iter().all(Vec::is_empty) {
        return;
    }
    c.woken.resize(c.storage.len(), false);
    for s in found.into_iter().flatten() {
        c.woken[s as usize] = true;
    }
}

/// Each active slot's free drift: how far (world units, per axis) it may drift from where
/// the passes started before a push could reach a blocked cell; below zero it always moves
/// as a body. Cells within `clearance - 1` of the unit's cell are open, so a disc reaching
/// `radius + drift` from anywhere in its cell stays inside them while `radius + drift <=
/// (clearance - 1)` cells.
fn free_drifts(
    ctx: &StageContext<'_>,
    c: &mut Contacts,
    map: &Map,
    clearance: &[Clearance],
    chunk: usize,
) {
    let grid = map.grid();
    let cell_size = grid.cell_size();
    let (active, bodies, storage) = (&c.active, &c.bodies, &c.storage);
    c.drift.resize(active.len(), 0.0);
    c.after.resize(active.len(), Vec2::ZERO);
    ctx.for_each_chunk_mut(&mut c.drift, chunk, |_, range, out| {
        for (&slot, drift) in active[range].iter().zip(out.iter_mut()) {
            let b = &bodies[slot as usize];
            let pos = storage[b.storage as usize];
            *drift = grid.cell_at(pos).map_or(-1.0, |cell| {
                let clear = clearance[usize::from(b.layer)].get(cell.x, cell.y);
                (f32::from(clear) - 1.0) * cell_size - b.radius
            });
        }
    });
}

/// One Jacobi pass: each active slot's position after it (`after`) from the positions
/// before it (see the module docs); slots without contacts do not move.
fn pass(ctx: &StageContext<'_>, c: &mut Contacts, map: &Map, relaxation: f32, chunk: usize) {
    let (bodies, before, contacts, storage) = (&c.bodies, &c.before, &c.contacts, &c.storage);
    let (active, drift) = (&c.active, &c.drift);
    let grid = map.grid();
    ctx.for_each_chunk_mut(&mut c.after, chunk, |_, range, out| {
        let slots = active[range.clone()].iter().zip(&drift[range]);
        for ((&slot, &free_drift), after) in slots.zip(out.iter_mut()) {
            let slot = slot as usize;
            let at = before[slot];
            let list = &contacts[slot];
            let me = &bodies[slot];
            let mut push = Vec2::ZERO;
            let mut touching = 0u32;
            for &other in &list.slots[..usize::from(list.len)] {
                let o = &bodies[other as usize];
                let away = at - before[other as usize];
                let touch = me.radius + o.radius;
                let d2 = away.length_squared();
                if d2 >= touch * touch {
                    continue;
                }
                let d = d2.sqrt();
                let normal = if d > 1e-6 * touch {
                    away / d
                } else if me.id < o.id {
                    // On one point: the lower id goes one way, the other the opposite way.
                    Vec2::X
                } else {
                    Vec2::NEG_X
                };
                let share = match me.gives_way.cmp(&o.gives_way) {
                    std::cmp::Ordering::Greater => 1.0,
                    std::cmp::Ordering::Less => 0.0,
                    std::cmp::Ordering::Equal => me.inv_mass / (me.inv_mass + o.inv_mass),
                };
                push += normal * ((touch - d) * share);
                touching += 1;
            }
            if touching > 1 {
                push *= (relaxation / touching as f32).min(1.0);
            }
            *after = if push == Vec2::ZERO {
                at
            } else {
                let start = storage[me.storage as usize];
                move_slot(map, grid, me, free_drift, start, at, push)
            };
        }
    });
}

/// Moves a slot's unit from `at` by `push`: freely while it stays within `free_drift` of
/// where the passes started (`start`) and so far from walls, else as a body against its
/// layer's cells.
#[inline]
fn move_slot(
    map: &Map,
    grid: &Grid,
    me: &Body,
    free_drift: f32,
    start: Vec2,
    at: Vec2,
    push: Vec2,
) -> Vec2 {
    let to = at + push;
    if (to - start).abs().max_element() < free_drift {
        return to;
    }
    let cost = map.cost_field(Layer::ALL[usize::from(me.layer)]);
    if centre_is_open(cost, grid, at) {
        move_body(cost, grid, at, me.radius, to - at).0
    } else {
        at
    }
}

/// A unit's external velocity after contacts pushed it by `pushed`: the push becomes
/// external velocity (a shove, which drag then decays like a force's knock-back), as in
/// position-based dynamics. A unit pressed into a crowd and pushed back loses the velocity
/// it pressed with (contacts are inelastic), and the frame's displacement is the unit's own
/// motion plus its external velocity, never more (docs/behaviour.md, "Bodies and crowds").
fn shoved(external: Vec2, pushed: Vec2, dt: f32, max_external: f32) -> Vec2 {
    // dt is finite and >= 0 (`Horde::step` checks it): a frame of length 0 moves nothing.
    if dt <= 0.0 {
        return external;
    }
    (external + pushed / dt).clamp_length_max(max_external)
}

/// Writes the final positions into the world (storage order).
fn write_back(data: &FrameData, ctx: &StageContext<'_>, c: &Contacts) {
    let batch_size = data.config.batch_size.clamp(1, u32::MAX as usize) as u32;
    let dt = data.clock.dt;
    let mut query =
        query::<(&mut Position, &mut ExternalForce)>(&data.world)
            .with::<(&UnitId, &Agent, &Steering)>();
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
    let max_external = data.config.knockback.max_external_speed;
    let (slot_of, positions, moved) = (&c.slot_of, &c.before, &c.storage);
    ctx.for_each_batch(jobs.len(), 1, |i, _| {
        let Some((batch, offset)) = jobs[i].lock().take() else {
            return;
        };
        for ((pos, external), s) in batch.zip(offset..) {
            if let Some(&slot) = slot_of.get(s)
                && slot != u32::MAX
            {
                let final_pos = positions[slot as usize];
                let pushed = final_pos - moved[s];
                if pushed != Vec2::ZERO {
                    pos.0 = final_pos;
                    external.0 = shoved(external.0, pushed, dt, max_external);
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use glam::Vec2;
    use horde_core::{Cell, GoalSet, Grid, Map, UnitSpec};

    use crate::{SimConfig, Simulation};

    fn pile(threads: usize, masses: &[f32]) -> Simulation {
        let map = Map::new(Grid::new(32, 32).unwrap());
        let mut sim = Simulation::new(map, SimConfig::default().with_threads(threads)).unwrap();
        let group = sim.add_group(GoalSet::single(Cell::new(2, 2))).unwrap();
        for (i, &mass) in masses.iter().enumerate() {
            let at = Vec2::new(16.0 + 0.1 * (i % 6) as f32, 16.0 + 0.1 * (i / 6) as f32);
            let spec = UnitSpec::at(at)
                .with_radius(0.5)
                .with_max_speed(0.0)
                .with_mass(mass)
                .with_group(group);
            sim.spawn(spec).unwrap();
        }
        sim
    }

    #[test]
    fn overlapping_bodies_are_pushed_apart_the_heavy_one_less() {
        let mut sim = pile(1, &[1.0, 3.0]);
        sim.step(1.0 / 30.0).unwrap();
        let units = sim.units();
        let (light, heavy) = (units[0].position, units[1].position);
        assert!(light.distance(heavy) > 0.99, "{light} {heavy}");
        let moved = |u: Vec2, from: f32| (u.x - from).abs();
        assert!(
            moved(light, 16.0) > 2.5 * moved(heavy, 16.1),
            "{light} {heavy}"
        );
    }

    #[test]
    fn a_pile_spreads_out_in_two_seconds_on_any_thread_count() {
        let masses = [1.0; 30];
        let mut hashes = Vec::new();
        for threads in [1, 2, 4] {
            let mut sim = pile(threads, &masses);
            for _ in 0..60 {
                sim.step(1.0 / 30.0).unwrap();
            }
            let stats = sim.body_stats();
            assert!(stats.overlap_mean() < 0.1, "{threads} threads: {stats:?}");
            hashes.push(sim.state_hash());
        }
        assert!(hashes.windows(2).all(|w| w[0] == w[1]), "{hashes:x?}");
    }

    /// The passes stop once one moves nobody: a pile needs every pass at first, a spread one
    /// one pass, on every thread count alike.
    #[test]
    fn contact_passes_stop_once_the_crowd_is_resolved() {
        let masses = [1.0; 30];
        let mut runs = Vec::new();
        for threads in [1, 2] {
            let mut sim = pile(threads, &masses);
            let passes = |sim: &Simulation| sim.horde().data.contacts.read().passes_run();
            sim.step(1.0 / 30.0).unwrap();
            let first = passes(&sim);
            for _ in 0..90 {
                sim.step(1.0 / 30.0).unwrap();
            }
            runs.push((first, passes(&sim), sim.state_hash()));
        }
        let configured = crate::ContactConfig::default().passes;
        assert_eq!(runs[0].0, configured, "{runs:?}");
        assert!(runs[0].1 < configured, "{runs:?}");
        assert_eq!(runs[0], runs[1]);
    }
}
