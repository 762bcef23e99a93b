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
#[derive(Clone, Debug)]
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

/// Whether `u` keeps every rule [`unit_problem`] checks: the same rules as one expression
/// without early returns or messages, because the frame asks it of every unit every frame
/// (with the checks as `unit_problem` makes them, it was most of the time a frame of a
/// sleeping army costs). `tests::the_quick_check_agrees_with_the_rules` holds the two
/// together over generated units; ask `unit_problem` which rule a unit breaks.
#[inline]
pub(crate) fn keeps_rules(u: &UnitView, rules: &Rules<'_>) -> bool {
    let Some(&goal_frame) = rules.goal_frames.get(usize::from(u.spec.group.0)) else {
        return false;
    };
    let s = &u.spec;
    let asleep = u.asleep.unwrap_or(Vec2::ZERO);
    // Every number finite: `x * 0.0` is 0 for a finite `x` and NaN for an infinite or NaN
    // one, so their sum is 0 only when all are finite. One sum in place of fifteen tests, and the
    // signs below then need no test for NaN.
    let finite = [
        s.radius,
        s.mass,
        s.turn_rate,
        s.max_speed,
        u.stun,
        u.stall,
        u.still,
        u.external.x,
        u.external.y,
        u.heading.x,
        u.heading.y,
        u.anchor.x,
        u.anchor.y,
        asleep.x,
        asleep.y,
    ]
    .iter()
    .map(|x| x * 0.0)
    .sum::<f32>()
        == 0.0;
    let arrived = u
        .arrived_frame
        .is_none_or(|f| (f <= rules.frame) & (f >= goal_frame));
    finite
        & (u.id < rules.next_unit)
        & (s.radius > 0.0)
        & (s.radius <= horde_core::MAX_RADIUS)
        & (s.mass > 0.0)
        & (s.turn_rate > 0.0)
        & (s.max_speed >= 0.0)
        & (s.max_speed <= horde_core::MAX_SPEED)
        & (u.stun >= 0.0)
        & (u.stall >= 0.0)
        & (u.still >= 0.0)
        & ((u.avoid_side == 1) | (u.avoid_side == -1))
        & arrived
        & rules.grid.cell_at(s.position).is_some()
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

    pub fn is_empty(&self) -> bool {
        self.discs.is_empty()
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
    seen: &mut Vec<u64>,
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
    discs.prepare();
    let discs = &*discs;
    let parts = stage.map_batches(batches.len(), 1, |i, _| {
        let batch = batches[i].lock().take().expect("each batch runs once");
        let mut part = BatchFound {
            ids: Vec::with_capacity(batch_size as usize),
            ..BatchFound::default()
        };
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
            if !keeps_rules(&view, rules) {
                part.bad.push(entity);
                continue;
            }
            part.ids.push(id.0);
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
                || (st.asleep.is_some() && !discs.is_empty() && discs.wakes(p.0, a.radius))
            {
                st.wake();
            }
            part.awake += usize::from(st.asleep.is_none());
        }
        part
    });
    drop(batches);
    let mut ids = Vec::with_capacity(parts.len());
    for part in parts {
        found.units += part.units;
        found.awake += part.awake;
        found.bad.extend(part.bad);
        for field in part.fields {
            if !found.fields.contains(&field) {
                found.fields.push(field);
            }
        }
        ids.push(part.ids);
    }
    let seconds = second_of_an_id(&ids, rules.next_unit, seen);
    if !seconds.is_empty() {
        // Some id is twice (a caller's bug, so rare): the rule-abiding units, in storage
        // order, walked again for the entities of the second ones.
        let mut bad = found.bad.clone();
        bad.sort_unstable();
        let abiding = query
            .iter()
            .map(|(e, ..)| e)
            .filter(|e| bad.binary_search(e).is_err());
        let mut seconds = seconds.into_iter().peekable();
        for (i, entity) in abiding.enumerate() {
            if seconds.next_if_eq(&i).is_some() {
                found.bad.push(entity);
            }
        }
    }
    found
}

/// Which of the rule-abiding units (their ids in storage order, a run per batch) have an id
/// an earlier one has, by their place in that order: storage order decides which of two is
/// the second. A bit per id below the counter (`seen`, its scratch) tells whether any id is
/// twice, in one serial pass (the bits of 100,000 ids fit the first-level cache; atomic bits
/// set by the batches cost more); the ids are sorted only then (a caller's bug, so rare), or
/// when the counter is far beyond the units, where the bits would cost more than the sort.
fn second_of_an_id(ids: &[Vec<u32>], next_unit: u32, seen: &mut Vec<u64>) -> Vec<usize> {
    let units: usize = ids.iter().map(Vec::len).sum();
    let bitmap = u64::from(next_unit) <= 16 * units as u64 + (1 << 20);
    if bitmap {
        seen.clear();
        seen.resize((next_unit as usize).div_ceil(64), 0);
        // Units next to each other in storage (map order) mostly have ids in one word of
        // bits: that word is built in a register and merged once the id leaves it, which
        // halves this pass against writing each bit to memory (the next id's read waited
        // for the last one's write).
        let mut twice = false;
        let (mut at, mut word) = (0usize, 0u64);
        for run in ids {
            for &id in run {
                // Every id is below the counter (`keeps_rules`).
                let (w, bit) = ((id / 64) as usize, 1u64 << (id % 64));
                if w != at {
                    twice |= seen[at] & word != 0;
                    seen[at] |= word;
                    (at, word) = (w, 0);
                }
                twice |= word & bit != 0;
                word |= bit;
            }
        }
        if let Some(last) = seen.get_mut(at) {
            twice |= *last & word != 0;
            *last |= word;
        }
        if !twice {
            return Vec::new();
        }
    }
    let mut ids: Vec<(u32, usize)> = ids.iter().flatten().copied().zip(0..).collect();
    ids.sort_unstable();
    let mut seconds: Vec<usize> = ids
        .windows(2)
        .filter(|w| w[0].0 == w[1].0)
        .map(|w| w[1].1)
        .collect();
    seconds.sort_unstable();
    seconds
}

/// What one batch of [`check_world`] found.
#[derive(Default)]
struct BatchFound {
    units: usize,
    awake: usize,
    bad: Vec<Entity>,
    fields: Vec<(horde_core::GroupId, horde_core::Layer, u8)>,
    /// The ids of its rule-abiding units, in storage order.
    ids: Vec<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use horde_core::{GroupId, Layer, MAX_RADIUS, MAX_SPEED};
    use proptest::prelude::*;

    /// Mostly an ordinary number, now and then one at or past an edge of the rules.
    fn number() -> impl Strategy<Value = f32> {
        prop_oneof![
            12 => 0.25f32..4.0,
            1 => prop::sample::select(vec![
                f32::NAN,
                f32::INFINITY,
                f32::NEG_INFINITY,
                0.0,
                -0.0,
                -1.0,
                f32::MIN_POSITIVE,
                1.0e-42,
                MAX_RADIUS,
                MAX_RADIUS.next_up(),
                MAX_SPEED,
                MAX_SPEED.next_up(),
                f32::MAX,
                f32::MIN,
            ]),
            1 => any::<f32>(),
        ]
    }

    fn vec2() -> impl Strategy<Value = Vec2> {
        (number(), number()).prop_map(|(x, y)| Vec2::new(x, y))
    }

    prop_compose! {
        fn unit_view()(
            (id, group) in (0u32..12, 0u16..4),
            (radius, max_speed, turn_rate, mass) in (number(), number(), number(), number()),
            position in prop_oneof![
                4 => (-1.0f32..9.0, -1.0f32..9.0).prop_map(|(x, y)| Vec2::new(x, y)),
                1 => vec2(),
            ],
            (external, heading, anchor) in (vec2(), vec2(), vec2()),
            (stun, stall, still) in (number(), number(), number()),
            avoid_side in prop_oneof![4 => prop::sample::select(vec![1i8, -1]), 1 => any::<i8>()],
            arrived_frame in prop::option::of(0u64..12),
            asleep in prop::option::of(vec2()),
        ) -> UnitView {
            UnitView {
                id,
                spec: UnitSpec {
                    position,
                    radius,
                    max_speed,
                    turn_rate,
                    mass,
                    layer: Layer::Ground,
                    group: GroupId(group),
                    controllable: false,
                },
                external,
                stun,
                heading,
                avoid_side,
                stall,
                anchor,
                arrived_frame,
                still,
                asleep,
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        /// The frame's quick check and the rules with their messages accept the same units.
        #[test]
        fn the_quick_check_agrees_with_the_rules(u in unit_view()) {
            let grid = Grid::new(8, 8).unwrap().with_placement(1.0, Vec2::new(0.5, -0.25)).unwrap();
            let rules = Rules { frame: 9, next_unit: 10, grid: &grid, goal_frames: &[0, 3, 7] };
            prop_assert_eq!(keeps_rules(&u, &rules), unit_problem(&u, &rules).is_ok());
        }
    }

    /// The duplicate-id pass: the later unit (in storage order) of each id shared, across
    /// batches and within one, with the bits and with the sort.
    #[test]
    fn the_second_unit_of_an_id_is_found() {
        let runs = vec![vec![3, 64, 65], vec![200, 3], vec![65, 3]];
        let mut seen = Vec::new();
        assert_eq!(second_of_an_id(&runs, 300, &mut seen), vec![4, 5, 6]);
        let unique = vec![vec![0, 63, 64], vec![1], vec![], vec![299]];
        assert!(second_of_an_id(&unique, 300, &mut seen).is_empty());
        // A counter far beyond the units: the ids are sorted instead.
        assert_eq!(second_of_an_id(&runs, u32::MAX, &mut seen), vec![4, 5, 6]);
        assert!(second_of_an_id(&unique, u32::MAX, &mut seen).is_empty());
    }
}
