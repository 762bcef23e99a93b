//! The rules every simulated unit keeps, shared by the frame and the snapshot loader.
//!
//! A bring-your-own-world caller may write anything into its units' components between
//! frames (a NaN top speed, mass 0, a radius of 1e30, a group that does not exist, a
//! duplicate or made-up [`UnitId`]). Each frame starts with the exclusive stage
//! `check_units`, which checks every simulated unit against [`unit_problem`], the same rules
//! [`Snapshot::from_bytes`](crate::Snapshot::from_bytes) checks a saved unit by, and
//! quarantines the units that break one before any stage sees them. A quarantined unit is
//! saved as it is and the loader accepts it whatever it holds (no stage reads it), so every
//! snapshot taken after a frame loads.

use std::sync::atomic::{AtomicU64, Ordering};

use glam::Vec2;
use hecs::{Entity, World};
use parking_lot::Mutex;

use crate::job_graph::StageContext;
use horde_core::{Agent, ExternalForce, Grid, Position, Steering, Stun, UnitId, UnitSpec};

/// What [`unit_problem`] needs to know about the simulation.
pub(crate) struct Rules<'a> {
    /// The frame about to run (the snapshot's frame).
    pub frame: u64,
    /// The unit counter: every id is below it.
    pub next_unit: u32,
    /// The map's grid: positions lie on it.
    pub grid: &'a Grid,
    /// The frame each group's goal was set, by group id (its length: the group count).
    pub goal_frames: &'a [u64],
}

/// One unit's state as the rules see it.
pub(crate) struct UnitView {
    pub id: u32,
    /// Parameters and position.
    pub spec: UnitSpec,
    pub external: Vec2,
    pub stun: f32,
    pub heading: Vec2,
    pub avoid_side: i8,
    pub stall: f32,
    pub anchor: Vec2,
    pub arrived_frame: Option<u64>,
    pub still: f32,
    pub asleep: Option<Vec2>,
}

/// Why a simulated unit breaks the rules, or `Ok`: its id is below the counter, its group
/// exists, its parameters are those [`UnitSpec::validate_parameters`] accepts, its position
/// is on the map, its external velocity, heading and stun are finite (stun >= 0), its
/// avoidance side is 1 or -1, and it arrived (if it did) no earlier than its group's goal
/// was set and no later than now. (Velocity is not checked: steering recomputes it every
/// frame, so a NaN written there heals.)
pub(crate) fn unit_problem(u: &UnitView, rules: &Rules<'_>) -> Result<(), String> {
    if u.id >= rules.next_unit {
        return Err(format!(
            "id is not below the unit counter {}",
            rules.next_unit
        ));
    }
    let goal_frame = *rules
        .goal_frames
        .get(usize::from(u.spec.group.0))
        .ok_or_else(|| format!("group {} does not exist", u.spec.group.0))?;
    u.spec.validate_parameters().map_err(|e| e.to_string())?;
    if let Some(frame) = u.arrived_frame
        && (frame > rules.frame || frame < goal_frame)
    {
        return Err(format!(
            "arrived in frame {frame}, outside frames {goal_frame}..={} (its goal's, the snapshot's)",
            rules.frame
        ));
    }
    // The position must lie on the map, but its cell may be a wall: a wall may be placed on
    // a unit between frames (the next frame steps it out).
    if rules.grid.cell_at(u.spec.position).is_none() {
        return Err(format!("position {} lies outside the map", u.spec.position));
    }
    let finite = |name: &str, v: Vec2| {
        if v.is_finite() {
            Ok(())
        } else {
            Err(format!("{name} {v} is not finite"))
        }
    };
    finite("external velocity", u.external)?;
    finite("heading", u.heading)?;
    if !(u.stun.is_finite() && u.stun >= 0.0) {
        return Err(format!("stun {} must be finite and >= 0", u.stun));
    }
    if u.avoid_side != 1 && u.avoid_side != -1 {
        return Err(format!("avoidance side {} must be 1 or -1", u.avoid_side));
    }
    if !(u.stall.is_finite() && u.stall >= 0.0) {
        return Err(format!("stall {} must be finite and >= 0", u.stall));
    }
    finite("stall anchor", u.anchor)?;
    if !(u.still.is_finite() && u.still >= 0.0) {
        return Err(format!("still {} must be finite and >= 0", u.still));
    }
    if let Some(at) = u.asleep {
        finite("sleeping point", at)?;
    }
    Ok(())
}

/// What [`check_world`] found: the units to quarantine (in storage order) and the
/// (group, layer, size class) of rule-abiding units whose group has no field for them yet.
#[derive(Default)]
pub(crate) struct Found {
    pub bad: Vec<Entity>,
    pub fields: Vec<(horde_core::GroupId, horde_core::Layer, u8)>,
    /// Simulated units checked (the bad ones included).
    pub units: usize,
    /// Rule-abiding units awake after the check.
    pub awake: usize,
}

/// Discs that wake the sleeping units they overlap (terrain edits, removed units), sorted
/// into square buckets twice as wide as the widest disc, so a unit no wider than that disc
/// tests only the discs of the 3x3 buckets around it (a wider one tests them all).
#[derive(Debug, Default)]
pub(crate) struct WakeDiscs {
    discs: Vec<(Vec2, f32)>,
    /// The widest disc's radius (at least 1); buckets are twice as wide. `discs` are sorted
    /// by bucket, `buckets` holds its (bucket, start) runs.
    widest: f32,
    buckets: Vec<((i64, i64), usize)>,
}

impl WakeDiscs {
    /// Adds a disc (centre, radius), both finite.
    pub fn push(&mut self, centre: Vec2, radius: f32) {
        if centre.is_finite() && radius.is_finite() {
            self.discs.push((centre, radius));
            self.buckets.clear();
        }
    }

    /// The discs, (centre, radius).
    pub fn discs(&self) -> &[(Vec2, f32)] {
        &self.discs
    }

    pub fn clear(&mut self) {
        self.discs.clear();
        self.buckets.clear();
    }

    fn bucket(&self, p: Vec2) -> (i64, i64) {
        let b = (p / (2.0 * self.widest)).floor();
        (b.x as i64, b.y as i64)
    }

    /// Sorts the discs into buckets (before [`Self::wakes`]).
    fn prepare(&mut self) {
        if self.discs.is_empty() || !self.buckets.is_empty() {
            return;
        }
        self.widest = self.discs.iter().map(|d| d.1).fold(1.0, f32::max);
        let mut discs = std::mem::take(&mut self.discs);
        discs.sort_by_key(|d| self.bucket(d.0));
        self.discs = discs;
        for (i, d) in self.discs.iter().enumerate() {
            let b = self.bucket(d.0);
            if self.buckets.last().is_none_or(|&(last, _)| last != b) {
                self.buckets.push((b, i));
            }
        }
    }

    /// Whether a unit at `pos` of `radius` overlaps a disc.
    fn wakes(&self, pos: Vec2, radius: f32) -> bool {
        let overlaps =
            |&(c, r): &(Vec2, f32)| c.distance_squared(pos) < (r + radius) * (r + radius);
        if self.discs.is_empty() {
            return false;
        }
        // Within one bucket of the unit's when it is no wider than the widest disc.
        if radius > self.widest || !pos.is_finite() {
            return self.discs.iter().any(overlaps);
        }
        let (bx, by) = self.bucket(pos);
        (by - 1..=by + 1).any(|y| {
            (bx - 1..=bx + 1).any(|x| {
                let Ok(k) = self.buckets.binary_search_by_key(&(x, y), |b| b.0) else {
                    return false;
                };
                let end = self.buckets.get(k + 1).map_or(self.discs.len(), |b| b.1);
                self.discs[self.buckets[k].1..end].iter().any(overlaps)
            })
        })
    }
}

/// Checks every simulated unit of `world`: those that break [`unit_problem`], and every
/// unit after the first (in storage order) with an id another one has, are `bad`. A sleeping
/// unit that a caller moved from where it fell asleep, or took out of rest, wakes
/// (docs/behaviour.md, "Sleeping"). `lacks_field(group, layer, radius)` says which size
/// class's field a unit of that group, layer and radius needs when its group has none yet
/// (`None`: it has one). The units are checked in batches of `batch_size` on the stage's
/// threads; the result does not depend on the thread count.
pub(crate) fn check_world(
    world: &mut World,
    rules: &Rules<'_>,
    lacks_field: impl Fn(horde_core::GroupId, horde_core::Layer, f32) -> Option<u8> + Sync,
    seen: &mut Vec<AtomicU64>,
    discs: &mut WakeDiscs,
    stage: &StageContext<'_>,
    batch_size: usize,
) -> Found {
    let mut found = Found::default();
    let mut query = world.query::<(
        Entity,
        &UnitId,
        &Position,
        &ExternalForce,
        &Stun,
        &horde_core::Mass,
        &Agent,
        &mut Steering,
    )>();
    let batch_size = batch_size.clamp(1, u32::MAX as usize) as u32;
    let batches: Vec<_> = query
        .iter_batched(batch_size)
        .map(|b| Mutex::new(Some(b)))
        .collect();
    // Duplicate ids: a bit per id below the counter when that is not far more than the
    // units (the usual case), else a sort. Each batch marks its ids; a bit found already
    // set means some id may be twice, and the ids are then sorted to tell which unit is
    // the second.
    let units_hint = batches.len() * batch_size as usize;
    let bitmap = u64::from(rules.next_unit) <= 16 * units_hint as u64 + (1 << 20);
    if bitmap {
        let words = (rules.next_unit as usize).div_ceil(64);
        seen.truncate(words);
        for word in seen.iter_mut() {
            *word.get_mut() = 0;
        }
        seen.resize_with(words, AtomicU64::default);
    }
    let seen = &*seen;
    discs.prepare();
    let discs = &*discs;
    let parts = stage.map_batches(batches.len(), 1, |i, _| {
        let batch = batches[i].lock().take().expect("each batch runs once");
        let mut part = BatchFound::default();
        // Most units of a batch share a group, layer and radius: whether they lack a field
        // is asked once per run of them.
        let mut lacks: Option<((u16, horde_core::Layer, u32), Option<u8>)> = None;
        for (entity, id, p, e, s, m, a, st) in batch {
            part.units += 1;
            let view = UnitView {
                id: id.0,
                spec: UnitSpec {
                    position: p.0,
                    radius: a.radius,
                    max_speed: a.max_speed,
                    turn_rate: a.turn_rate,
                    mass: m.0,
                    layer: a.layer,
                    group: a.group,
                    controllable: a.controllable,
                },
                external: e.0,
                stun: s.0,
                heading: st.heading,
                avoid_side: st.avoid_side,
                stall: st.stall,
                anchor: st.anchor,
                arrived_frame: st.arrived_frame,
                still: st.still,
                asleep: st.asleep,
            };
            if unit_problem(&view, rules).is_err() {
                part.bad.push(entity);
                continue;
            }
            if bitmap {
                let bit = 1u64 << (id.0 % 64);
                let before = seen[(id.0 / 64) as usize].fetch_or(bit, Ordering::Relaxed);
                part.twice |= before & bit != 0;
            } else {
                part.ids.push((id.0, entity));
            }
            let key = (a.group.0, a.layer, a.radius.to_bits());
            let class = match lacks {
                Some((k, class)) if k == key => class,
                _ => {
                    let class = lacks_field(a.group, a.layer, a.radius);
                    lacks = Some((key, class));
                    class
                }
            };
            if let Some(class) = class
                && !part.fields.contains(&(a.group, a.layer, class))
            {
                part.fields.push((a.group, a.layer, class));
            }
            if st.asleep.is_some_and(|at| at != p.0)
                || !(st.arrived || st.settled)
                || (st.asleep.is_some() && discs.wakes(p.0, a.radius))
            {
                st.wake();
            }
            part.awake += usize::from(st.asleep.is_none());
        }
        part
    });
    drop(batches);
    let twice = !bitmap || parts.iter().any(|p| p.twice);
    let mut ids: Vec<(u32, u32, Entity)> = Vec::new();
    for part in parts {
        found.units += part.units;
        found.awake += part.awake;
        found.bad.extend(part.bad);
        for field in part.fields {
            if !found.fields.contains(&field) {
                found.fields.push(field);
            }
        }
        let order = ids.len() as u32;
        ids.extend((order..).zip(part.ids).map(|(o, (id, e))| (id, o, e)));
    }
    if twice && bitmap {
        // Some id is twice (a caller's bug, so rare): the rule-abiding units' ids, in
        // storage order, read again.
        let mut bad = found.bad.clone();
        bad.sort_unstable();
        let abiding = query.iter().filter(|(e, ..)| bad.binary_search(e).is_err());
        ids.extend((0..).zip(abiding).map(|(o, (e, id, ..))| (id.0, o, e)));
    }
    drop(query);
    if twice {
        // Storage order decides which of two units with one id is the second.
        ids.sort_unstable_by_key(|&(id, order, _)| (id, order));
        let second: Vec<Entity> = ids
            .windows(2)
            .filter(|w| w[0].0 == w[1].0)
            .map(|w| w[1].2)
            .collect();
        found.bad.extend(second);
    }
    found
}

/// What one batch of [`check_world`] found.
#[derive(Default)]
struct BatchFound {
    units: usize,
    awake: usize,
    bad: Vec<Entity>,
    fields: Vec<(horde_core::GroupId, horde_core::Layer, u8)>,
    /// The ids of its rule-abiding units, in storage order.
    ids: Vec<(u32, Entity)>,
    /// Whether one of its ids had been marked already.
    twice: bool,
}
