//! The rules every simulated unit keeps, shared by the frame and the snapshot loader.
//!
//! A bring-your-own-world caller may write anything into its units' components between
//! frames (a NaN top speed, mass 0, a radius of 1e30, a group that does not exist, a
//! duplicate or made-up [`UnitId`]). Before each frame [`Horde::step`](crate::Horde::step)
//! checks every simulated unit against [`unit_problem`], the same rules
//! [`Snapshot::from_bytes`](crate::Snapshot::from_bytes) checks a saved unit by, and
//! quarantines the units that break one before any stage sees them. A quarantined unit is
//! saved as it is and the loader accepts it whatever it holds (no stage reads it), so every
//! snapshot taken after a frame loads.

use glam::Vec2;
use hecs::{Entity, World};
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
    Ok(())
}

/// What [`check_world`] found: the units to quarantine (in storage order) and the
/// (group, layer, size class) of rule-abiding units whose group has no field for them yet.
#[derive(Default)]
pub(crate) struct Found {
    pub bad: Vec<Entity>,
    pub fields: Vec<(horde_core::GroupId, horde_core::Layer, u8)>,
}

/// Checks every simulated unit of `world`: those that break [`unit_problem`], and every
/// unit after the first (in storage order) with an id another one has, are `bad`.
/// `lacks_field(group, layer, radius)` says which size class's field a unit of that group,
/// layer and radius needs when its group has none yet (`None`: it has one).
pub(crate) fn check_world(
    world: &World,
    rules: &Rules<'_>,
    lacks_field: impl Fn(horde_core::GroupId, horde_core::Layer, f32) -> Option<u8>,
    seen: &mut Vec<u64>,
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
        &Steering,
    )>();
    let count = query.iter().len();
    // Duplicate ids: a bit per id below the counter when that is not far more than the
    // units (the usual case), else a sort.
    let bitmap = u64::from(rules.next_unit) <= 16 * count as u64 + (1 << 20);
    if bitmap {
        seen.clear();
        seen.resize((rules.next_unit as usize).div_ceil(64), 0);
    }
    let mut ids: Vec<(u32, u32, Entity)> = Vec::new();
    for (order, (entity, id, p, e, s, m, a, st)) in (0u32..).zip(query.iter()) {
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
        };
        if unit_problem(&view, rules).is_err() {
            found.bad.push(entity);
            continue;
        }
        if bitmap {
            let (word, bit) = ((id.0 / 64) as usize, id.0 % 64);
            if seen[word] >> bit & 1 == 1 {
                found.bad.push(entity);
                continue;
            }
            seen[word] |= 1 << bit;
        } else {
            ids.push((id.0, order, entity));
        }
        if let Some(class) = lacks_field(a.group, a.layer, a.radius)
            && !found.fields.contains(&(a.group, a.layer, class))
        {
            found.fields.push((a.group, a.layer, class));
        }
    }
    if !bitmap {
        ids.sort_unstable_by_key(|&(id, order, _)| (id, order));
        found
            .bad
            .extend(ids.windows(2).filter(|w| w[0].0 == w[1].0).map(|w| w[1].2));
    }
    found
}
