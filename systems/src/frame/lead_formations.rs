//! Stage `lead_formations` (docs/behaviour.md, "Formations"): hands out each formation's
//! slots when its members change, walks its anchor along the group's field at the pace of
//! the slowest member, waiting for members that lag, turns it no faster than its widest
//! slot can follow, and lays the slots out for `steer_units`.
//!
//! A frame with no formation costs one look at an empty list.

use glam::Vec2;
use horde_core::{
    Agent, Cell, FieldCache, GoalSet, Grid, Map, NavField, Position, UnitId, Velocity,
    assign_slots, assign_slots_ranked, open_reach, slot_offsets, spread_slots, squeeze, sweep,
    to_world, turn_toward,
};

use crate::formations::{Formation, LaidFor};
use crate::frame::{FrameData, query};
use crate::groups::Group;
use crate::job_graph::StageContext;

/// Lag (how far the member farthest from its slot is from it) up to which the anchor walks
/// at full pace, in spacings; past it the anchor slows, down to [`SLOWEST`] of its pace at
/// `FULL_PACE_LAG + LAG_SPAN` spacings.
const FULL_PACE_LAG: f32 = 0.5;

/// Every this many frames the slots are handed out again from where the members stand,
/// when that brings them nearer their slots by more than [`REASSIGN_GAIN`] (summed squared
/// distances) and takes none farther than the farthest is now: after a squeeze through a
/// gap the members come out in another order, and walking back to the old slots would
/// cross the whole formation.
const REASSIGN_EVERY: u64 = 30;

/// See [`REASSIGN_EVERY`]: the share the summed squared distance must drop by. A formed
/// formation keeps its slots (no unit swaps back and forth).
const REASSIGN_GAIN: f32 = 0.2;

/// [`FULL_PACE_LAG`] for a column, whose lag is measured along its way ([`is_column`]).
const COLUMN_FULL_PACE_LAG: f32 = 1.5;

/// See [`FULL_PACE_LAG`].
const LAG_SPAN: f32 = 2.0;

/// The least share of its pace the anchor keeps while members lag: a member that can never
/// reach its slot does not hold the formation for ever.
const SLOWEST: f32 = 0.2;

/// Seconds the anchor takes to change its speed by its whole pace.
const SPEED_CHANGE: f32 = 0.5;

/// The anchor is on its goal point within this many cells.
const ON_GOAL: f32 = 1e-3;

/// One member as the stage reads it.
#[derive(Clone, Copy)]
struct Member {
    id: u32,
    pos: Vec2,
    /// Its own velocity as the last frame left it.
    vel: Vec2,
    radius: f32,
    max_speed: f32,
    layer: horde_core::Layer,
    /// How far along the formation's way it is (minus the path length it has left to the
    /// goal, in world units; minus infinity where the formation's field has no path), or
    /// `None` where there is no flat field.
    along: Option<f32>,
}

/// Moves every formation's anchor and lays out its slots.
pub(crate) fn lead_formations(data: &FrameData, _ctx: &StageContext<'_>) {
    let mut formations = data.formations.write();
    if formations.is_empty() {
        return;
    }
    puffin::profile_scope!("lead_formations");
    let groups = data.groups.read();
    let map = data.map.read();
    let fields = data.fields.read();
    let clearance = data.clearance.read();
    let mut members: Vec<Vec<Member>> = vec![Vec::new(); formations.list.len()];
    for (id, pos, vel, agent) in
        query::<(&UnitId, &Position, &Velocity, &Agent)>(&data.world).iter()
    {
        let g = usize::from(agent.group.0);
        if formations.list.get(g).is_some_and(Option::is_some) && pos.0.is_finite() {
            members[g].push(Member {
                id: id.0,
                pos: pos.0,
                vel: vel.0,
                radius: agent.radius,
                max_speed: agent.max_speed,
                layer: agent.layer,
                along: None,
            });
        }
    }
    for (g, formation) in formations.list.iter_mut().enumerate() {
        let (Some(formation), Some(group)) = (formation.as_mut(), groups.list.get(g)) else {
            continue;
        };
        lead(
            formation,
            group,
            &members[g],
            &map,
            &fields,
            &clearance,
            data,
        );
    }
}

/// One formation's frame.
fn lead(
    f: &mut Formation,
    group: &Group,
    members: &[Member],
    map: &Map,
    fields: &FieldCache,
    clearance: &[horde_core::Clearance],
    data: &FrameData,
) {
    let grid = map.grid();
    let dt = data.clock.dt;
    if members.is_empty() {
        f.speed = 0.0;
        return;
    }
    // The largest body (the lowest id of those) sets where the anchor walks and the
    // spacing; the slowest the pace. `members` come in the world's order.
    let big = members.iter().fold(members[0], |b, m| {
        if m.radius > b.radius || (m.radius == b.radius && m.id < b.id) {
            *m
        } else {
            b
        }
    });
    f.radius = big.radius;
    f.layer = big.layer;
    f.pace = members
        .iter()
        .map(|m| m.max_speed)
        .fold(f32::INFINITY, f32::min);
    let class = data.config.size_class(f.radius, grid.cell_size());
    let cost = map
        .prepared_class_cost_field(f.layer, class)
        .unwrap_or_else(|| map.cost_field(f.layer));
    let field = group
        .field(f.layer, class)
        .map(|id| fields.get(id))
        .filter(|field| field.built_from().is_some());
    // Following a unit: the point `distance` short of it on the anchor's side, facing it;
    // else the goal's point, facing as ordered.
    let followed = group.target.zip(group.target_seen.map(|(_, at)| at));
    let stopped = matches!(group.target_state, crate::TargetState::Lost { .. });
    let goal = match followed {
        // It lost the unit it followed: it stops where it is.
        _ if stopped => f.anchor,
        Some((target, at)) => {
            let from = f.anchor - at;
            if from.length() > target.distance {
                at + from.normalize_or_zero() * target.distance
            } else {
                f.anchor
            }
        }
        None => destination(&group.goal, grid),
    };
    // Whether the anchor stands on its goal point: there the field's distances run out
    // from the point in every direction, and no longer give the order of a column.
    let on_goal = |f: &Formation| f.anchor.distance(goal) <= ON_GOAL * grid.cell_size();
    // How far along the way each member is, for a column (which ranks its members and
    // waits for them by it) and on the goal point (where slots are matched by it); a
    // formation walking in the open needs it only for its laggards.
    let measured: Vec<Member>;
    let members = match field.filter(|_| is_column(f) || on_goal(f)) {
        Some(field) => {
            measured = (members.iter())
                .map(|&m| Member {
                    along: Some(along(field, grid, m.pos)),
                    ..m
                })
                .collect();
            &measured[..]
        }
        None => members,
    };
    let way_at = |p: Vec2| -> Vec2 {
        if p.distance(goal) <= 1.5 * grid.cell_size() {
            return (goal - p).normalize_or_zero();
        }
        match (field, grid.cell_at(p)) {
            (Some(field), Some(c)) => field.flow().sample_byte(grid, field.flow().byte_at(c), p),
            // No flat field (hierarchical navigation builds none): straight for the goal,
            // sliding along walls.
            _ => (goal - p).normalize_or_zero(),
        }
    };

    // The members are the ones the slots were handed to, unless a unit joined or left.
    let same = members.len() == f.members.len()
        && members
            .iter()
            .all(|m| f.members.binary_search(&m.id).is_ok());
    if !same {
        lay_out(f, members, &way_at);
    }
    // Narrower where the way ahead is narrower: a line or a box walks as a column through a
    // gap and widens after it.
    if let Some(full) = f.ordered_width(members.len()) {
        let free = free_width(cost, grid, f, full, &way_at);
        let fit = ((free / f.spacing).floor() as u32).clamp(1, full);
        let width = if fit == full { 0 } else { fit };
        if width != f.width {
            f.width = width;
            f.offsets = slot_offsets(&f.shape_now(), members.len(), f.spacing);
            f.slots = assignment(f, members, on_goal(f));
            f.targets.clear();
        }
    }
    if f.goal_changes != group.goal_changes {
        f.goal_changes = group.goal_changes;
        f.arrived = false;
    }

    if data.clock.frame % REASSIGN_EVERY == 0 && !f.targets.is_empty() {
        let at_goal = on_goal(f);
        reassign(f, members, field.filter(|_| at_goal), grid);
    }
    // Within this many cells of the anchor no slot needs a ray: the anchor's clearance
    // says every cell that near is open to the class (its cost field blocks cells within
    // its class of a wall).
    let open_reach = (clearance[f.layer as usize].get(
        grid.clamped_cell_at(f.anchor).x,
        grid.clamped_cell_at(f.anchor).y,
    ) as f32)
        - f32::from(class)
        - 2.0;
    // The way behind a column: its rearmost member (along the way) and the field.
    let behind = field.zip(
        (members.iter())
            .filter_map(|m| Some((m.along.filter(|a| a.is_finite())?, m.id, m.pos)))
            .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
            .map(|(_, _, pos)| pos),
    );
    if f.targets.is_empty() {
        let column_way = (is_column(f) && !on_goal(f)).then_some(behind);
        let _ = lay_targets(f, cost, grid, open_reach, &way_at, column_way);
    }
    // How far the members lag behind their slots (as laid out last frame), in spacings.
    // While it walks as a column ([`is_column`]: through a gap or along a corridor), the
    // lag is measured along the way, and only for the ranks behind the anchor: a column's
    // members stand one behind another along a bent way, not on straight lines about the
    // anchor, and the ranks ahead walk on to their places while the anchor keeps its pace
    // (a rank ahead that falls back is handed a slot behind at the next reassignment).
    let column = is_column(f)
        .then(|| field.map(|field| along(field, grid, f.anchor)))
        .flatten()
        .filter(|a| a.is_finite());
    let slot_vel = f.heading * f.speed;
    let lag = members
        .iter()
        .filter_map(|m| {
            let s = horde_core::slot_of(&f.slots, m.id)? as usize;
            let target = *f.targets.get(s)?;
            match (column, m.along) {
                (Some(anchor), Some(at)) if at.is_finite() => {
                    let o = f.offsets[s].y;
                    (o <= 0.0).then(|| (anchor + o - at).max(0.0))
                }
                (Some(_), _) => None,
                (None, _) => {
                    // A member ahead of its slot along the way waits for it (`steer_units`):
                    // the formation walks on to bring the slot up, it does not wait for it.
                    let d = m.pos.distance(target);
                    let ahead =
                        |field| along(field, grid, m.pos) > along(field, grid, target) + f.spacing;
                    let lags = d > FULL_PACE_LAG * f.spacing;
                    (!(lags && field.is_some_and(ahead))).then(|| lag_ahead(m, target, slot_vel))
                }
            }
        })
        .fold(0.0, f32::max)
        / f.spacing;
    // A column's members weave round what they meet one behind another: it stretches a
    // little as it walks, and only a longer lag is a gap in it.
    // A formation following a unit keeps its distance first: its members have the speed
    // the unit leaves them to catch up, and it waits only for a longer lag.
    let full_pace = if column.is_some() || followed.is_some() {
        COLUMN_FULL_PACE_LAG
    } else {
        FULL_PACE_LAG
    };
    let wait = (1.0 - (lag - full_pace) / LAG_SPAN).clamp(SLOWEST, 1.0);

    // The widest slot turns no faster than the pace lets it follow. A column's ranks ahead
    // lie along its way and turn with it; only its width turns about the anchor.
    let extent = f
        .offsets
        .iter()
        .map(|o| if is_column(f) { o.x.abs() } else { o.length() })
        .fold(f.spacing, f32::max);
    let max_turn = f.pace * dt / extent;
    let before = f.anchor;
    if f.anchor.distance(goal) > ON_GOAL * grid.cell_size() {
        f.arrived = false;
        let way = way_at(f.anchor);
        if way != Vec2::ZERO {
            f.heading = turn_toward(f.heading, way, max_turn);
            // Walk on as far as it faces its way: a sharp turn is made on the spot.
            let along = f.heading.dot(way).max(0.0);
            // Its speed changes by at most its pace in `SPEED_CHANGE` seconds: a member
            // lagging for a moment (shoved, or its slot just handed to another) slows the
            // formation a little, not at once.
            let change = f.pace * dt / SPEED_CHANGE;
            let speed = (f.pace * wait * along).clamp(f.speed - change, f.speed + change);
            let step = (speed * dt).min(f.anchor.distance(goal));
            f.anchor = sweep(cost, grid, f.anchor, way * step).0;
        }
    } else {
        f.anchor = goal;
        let facing = match followed {
            Some((_, at)) => (at - f.anchor).try_normalize().unwrap_or(f.heading),
            None => f.order.unit_facing().unwrap_or(f.heading),
        };
        f.heading = turn_toward(f.heading, facing, max_turn);
        // `turn_toward` gives the facing itself once it is within a turn.
        f.arrived = f.heading == facing;
    }
    f.speed = f.anchor.distance(before) / dt.max(1e-6);
    let moved = (f.anchor - before).length() / grid.cell_size();
    let column_way = (is_column(f) && !on_goal(f)).then_some(behind);
    // On its goal point the slots' places depend only on these: while they stay the same,
    // last frame's places stand (a formation at rest lays nothing out).
    let laid_for = on_goal(f).then_some(LaidFor {
        anchor: f.anchor,
        heading: f.heading,
        width: f.width,
        slots: f.offsets.len(),
        spacing: f.spacing,
        radius: f.radius,
        cost_version: cost.version(),
    });
    if laid_for.is_some() && laid_for == f.laid_for && !f.targets.is_empty() {
        return;
    }
    f.laid_for = laid_for;
    let reach = open_reach - moved.ceil();
    let moved_off = lay_targets(f, cost, grid, reach, &way_at, column_way);
    // On its goal point, where its shape may not fit (a pocket, a corridor's end), no two
    // slots may share a place: the members would jostle for them for ever. Slots all in
    // their places in the shape are a spacing apart already (a formation at rest in the
    // open pays nothing for this).
    if moved_off && on_goal(f) {
        spread_slots(cost, grid, f.anchor, &f.offsets, &mut f.targets, f.spacing);
    }
}

/// Lays the slots out about the anchor for its heading, squeezed in from behind walls: a
/// ray from the anchor for each slot farther than `open_reach` cells (plus its radius) from
/// it, none for the nearer ones. A column on its way (`column`: the way behind it, if
/// known) lays its ranks along the way instead ([`lay_column`]); on its goal point it stands
/// laid out like any formation. Returns whether a slot may have been moved off its place in
/// the shape (squeezed, or laid along a way).
fn lay_targets(
    f: &mut Formation,
    cost: &horde_core::CostField,
    grid: &Grid,
    open_reach: f32,
    way_at: &impl Fn(Vec2) -> Vec2,
    column: Option<Option<(&NavField, Vec2)>>,
) -> bool {
    let (anchor, heading, radius) = (f.anchor, f.heading, f.radius);
    let open = (open_reach * grid.cell_size() - radius).max(0.0);
    f.targets.clear();
    if let Some(behind) = column {
        lay_column(f, cost, grid, way_at, behind);
        return true;
    }
    let mut squeezed = false;
    f.targets.extend((f.offsets.iter()).map(|&o| {
        let slot = anchor + to_world(o, heading);
        if o.length() < open {
            slot
        } else {
            let there = squeeze(cost, grid, anchor, slot, radius);
            squeezed |= there != slot;
            there
        }
    }));
    squeezed
}

/// The slots of a column ([`is_column`]): each rank is centred on the point of its way as
/// far ahead of the anchor (or behind it) along the way as the rank is in the shape, across
/// the way there. Ahead, the way is the anchor's field walked in steps of half a spacing;
/// behind, it is the field walked the same way from the column's rearmost member (`behind`)
/// up to the anchor: the corridor the column fills, not a straight line behind the anchor
/// (in a maze that runs into a side passage, whose slots the members would wait for in
/// vain). A rank past either end of the way stands at that end (ahead, straight on past
/// the goal point). Without a field (hierarchical navigation) the ranks behind lie straight
/// behind the anchor. Every slot is squeezed ([`squeeze`]) from its rank's centre. In a bent
/// corridor a straight line ahead or behind runs into the walls and squeezes whole ranks
/// onto one point no member can share; along the way each rank has a place of its own.
fn lay_column(
    f: &mut Formation,
    cost: &horde_core::CostField,
    grid: &Grid,
    way_at: &impl Fn(Vec2) -> Vec2,
    behind: Option<(&NavField, Vec2)>,
) {
    let step = f.spacing * 0.5;
    let walk = |from: Vec2, first: Vec2, steps: usize, until: &dyn Fn(Vec2) -> bool| {
        let mut way = vec![(from, first)];
        let mut p = from;
        for _ in 0..steps {
            let dir = way_at(p);
            if dir == Vec2::ZERO || until(p) {
                break;
            }
            let next = sweep(cost, grid, p, dir * step).0;
            if next == p {
                break;
            }
            p = next;
            way.push((p, dir));
        }
        way
    };
    let front = f.offsets.iter().map(|o| o.y).fold(0.0, f32::max);
    let steps = ((front / step).ceil() as usize).min(MAX_WAY_STEPS);
    let ahead = walk(f.anchor, f.heading, steps, &|_| false);
    // Behind: from the rearmost member up to the anchor, with each point's distance
    // behind the anchor along the way.
    let back: Vec<(f32, Vec2, Vec2)> = match behind {
        Some((field, tail)) => {
            let at = along(field, grid, f.anchor);
            let until = |p: Vec2| along(field, grid, p) >= at;
            let way = walk(tail, way_at(tail), 2 * MAX_WAY_STEPS, &until);
            (way.into_iter())
                .map(|(p, dir)| (at - along(field, grid, p), p, dir))
                .filter(|(d, ..)| d.is_finite())
                .collect()
        }
        None => Vec::new(),
    };
    let (anchor, heading, radius) = (f.anchor, f.heading, f.radius);
    f.targets.extend(f.offsets.iter().map(|&o| {
        let (base, dir, beyond) = if o.y > 0.0 {
            let k = ((o.y / step).round() as usize).min(ahead.len() - 1);
            let (base, dir) = ahead[k];
            (base, dir, (o.y - k as f32 * step).max(0.0))
        } else if let Some(&(_, base, dir)) =
            (back.iter()).find(|(d, ..)| *d <= -o.y).or(back.last())
        {
            (base, dir, 0.0)
        } else {
            return squeeze(cost, grid, anchor, anchor + to_world(o, heading), radius);
        };
        let centre = squeeze(cost, grid, base, base + dir * beyond, radius);
        squeeze(cost, grid, centre, centre + dir.perp() * o.x, radius)
    }));
}

/// The most steps of half a spacing [`lay_column`] walks along the way.
const MAX_WAY_STEPS: usize = 512;

/// Hands the slots out to `members` where they stand. The first time, the anchor starts on
/// the member nearest their middle (a point the army stands on, never in a wall), facing
/// the way its field leads.
fn lay_out(f: &mut Formation, members: &[Member], way_at: &impl Fn(Vec2) -> Vec2) {
    let spacing = f
        .order
        .spacing
        .unwrap_or(2.0 * f.radius * horde_core::SPACING_MARGIN);
    f.spacing = spacing;
    f.offsets = slot_offsets(&f.shape_now(), members.len(), spacing);
    if !f.is_laid_out() {
        // Summed in id order: the world's order of the units must not change the sum.
        let mut by_id = members.to_vec();
        by_id.sort_unstable_by_key(|m| m.id);
        let n = members.len() as f32;
        let middle = by_id.iter().fold(Vec2::ZERO, |a, m| a + m.pos) / n;
        f.anchor = members
            .iter()
            .min_by(|a, b| {
                (a.pos.distance_squared(middle))
                    .total_cmp(&b.pos.distance_squared(middle))
                    .then(a.id.cmp(&b.id))
            })
            .map_or(middle, |m| m.pos);
        let way = way_at(f.anchor);
        f.heading = if way != Vec2::ZERO {
            way
        } else {
            f.order.unit_facing().unwrap_or(Vec2::X)
        };
    }
    f.slots = assignment(f, members, false);
    f.members = members.iter().map(|m| m.id).collect();
    f.members.sort_unstable();
    f.targets.clear();
}

/// The narrowest free width across the way (world units, at most the ordered width plus a
/// spacing; twice the free room on the nearer side, as the formation is centred on its
/// anchor) at the anchor and at points a spacing apart along its way for as far as half
/// the ordered formation is deep plus [`LOOK_AHEAD`] spacings: the formation narrows before
/// it reaches a gap.
fn free_width(
    cost: &horde_core::CostField,
    grid: &Grid,
    f: &Formation,
    full: u32,
    way_at: &impl Fn(Vec2) -> Vec2,
) -> f32 {
    let wide = (full as f32 + 1.0) * f.spacing;
    // As deep as it walks now: a column widens only where the way ahead is wide for as far
    // as its own front half reaches (a column widening for a short room between two doors
    // would only have to narrow again before its tail caught up).
    let now = if f.width > 0 { f.width } else { full };
    let ranks = f.members.len().div_ceil(now.max(1) as usize) as f32;
    let steps = ((ranks * 0.5 + LOOK_AHEAD).ceil() as usize).min(MAX_LOOK);
    let mut p = f.anchor;
    let mut narrowest = wide;
    for _ in 0..=steps {
        let way = way_at(p);
        let across = if way == Vec2::ZERO { f.heading } else { way }.perp();
        let reach = |dir: Vec2| open_reach(cost, grid, p, dir, wide * 0.5);
        // The formation is centred on its anchor: the nearer side bounds it.
        narrowest = narrowest.min(2.0 * reach(across).min(reach(-across)));
        if way == Vec2::ZERO {
            break;
        }
        let next = sweep(cost, grid, p, way * f.spacing).0;
        if next == p {
            break;
        }
        p = next;
    }
    narrowest
}

/// See [`free_width`].
const LOOK_AHEAD: f32 = 2.0;

/// The most points [`free_width`] looks at.
const MAX_LOOK: usize = 128;

/// Whether the formation walks as a column: narrower than ordered, and at least twice as
/// many ranks deep as it is wide. A column's members stand one behind another along its
/// way, which may bend within its length; a line narrowed a little (by the map's edge, say)
/// is still a line.
fn is_column(f: &Formation) -> bool {
    let width = f.width as usize;
    width > 0 && f.offsets.len() >= 2 * width * width
}

/// The slots handed out to `members` where they stand, about the anchor for its heading
/// ([`assign_slots`]). A column on its way ([`is_column`]; its members cannot pass one
/// another in a corridor) ranks them by how far along the way they are rather than along
/// the heading: in a bent corridor the heading's order is not the order they walk in.
fn assignment(f: &Formation, members: &[Member], on_goal: bool) -> Vec<(u32, u32)> {
    if is_column(f) && !on_goal && members.iter().all(|m| m.along.is_some()) {
        let at: Vec<(u32, Vec2, f32)> = (members.iter())
            .map(|m| (m.id, m.pos, m.along.unwrap_or(f32::NEG_INFINITY)))
            .collect();
        return assign_slots_ranked(&at, &f.offsets, f.anchor, f.heading);
    }
    let at: Vec<(u32, Vec2)> = members.iter().map(|m| (m.id, m.pos)).collect();
    assign_slots(&at, &f.offsets, f.anchor, f.heading)
}

/// How far along `field`'s way the point `p` is: minus its path length to the goal (world
/// units), less the part of its cell already walked along the cell's flow; minus infinity
/// where the field has no path from there.
fn along(field: &NavField, grid: &Grid, p: Vec2) -> f32 {
    let Some(cell) = grid.cell_at(p) else {
        return f32::NEG_INFINITY;
    };
    let Some(cells) = field.integration().distance(cell) else {
        return f32::NEG_INFINITY;
    };
    let flow = field
        .flow()
        .sample_byte(grid, field.flow().byte_at(cell), p);
    (p - grid.cell_centre(cell)).dot(flow) - cells as f32 * grid.cell_size()
}

/// How far member `m` will still be from its slot at `target` (moving at `slot_vel`) in
/// [`LAG_AHEAD`] seconds, at the rate it closes on it now: a member catching up (the
/// formation walks slower than the member can, following a slower unit say) does not hold
/// the formation back for the way it has yet to close.
fn lag_ahead(m: &Member, target: Vec2, slot_vel: Vec2) -> f32 {
    let to = target - m.pos;
    let d = to.length();
    if d <= 1e-6 {
        return 0.0;
    }
    let closing = (m.vel - slot_vel).dot(to / d).max(0.0);
    (d - closing * LAG_AHEAD).max(0.0)
}

/// See [`lag_ahead`].
const LAG_AHEAD: f32 = 0.5;

/// Hands the slots out again from where `members` stand (laid about the slots' places this
/// frame) when that brings them nearer by more than [`REASSIGN_GAIN`].
fn reassign(f: &mut Formation, members: &[Member], on_goal: Option<&NavField>, grid: &Grid) {
    // The summed squared distance of the members from their slots, and the largest.
    let cost = |slots: &[(u32, u32)]| -> (f32, f32) {
        members
            .iter()
            .filter_map(|m| {
                let s = horde_core::slot_of(slots, m.id)?;
                Some(m.pos.distance_squared(*f.targets.get(s as usize)?))
            })
            .fold((0.0, 0.0), |(sum, most), d| (sum + d, f32::max(most, d)))
    };
    if let Some(field) = on_goal {
        // On its goal point the slots may have been spread to free cells (`spread_slots`),
        // far from the shape's order: the members are matched to them in the order both
        // lie along the way in, the foremost member to the foremost slot.
        // The shape's own order is the other candidate: the better of the two, by the
        // summed squared distance.
        let (shaped, along_way) = (
            assignment(f, members, true),
            by_way(f, members, field, grid),
        );
        let again = if cost(&along_way).0 < cost(&shaped).0 {
            along_way
        } else {
            shaped
        };
        if cost(&again).0 < cost(&f.slots).0 * (1.0 - REASSIGN_GAIN) {
            f.slots = again;
        }
        swap_onto_slots(f, members, 0.0);
        return;
    }
    let again = assignment(f, members, false);
    // A column keeps the order its members walk in, whatever the distances.
    if is_column(f) {
        f.slots = again;
        return;
    }
    let (now, then) = (cost(&f.slots), cost(&again));
    // Nearer on the whole, and no member farther from its slot than the farthest is now
    // (the farthest sets how long the formation waits).
    if then.0 < now.0 * (1.0 - REASSIGN_GAIN) && then.1 <= now.1 {
        f.slots = again;
    }
    // Members lagging enough to slow the formation try pairwise swaps too: a member left
    // behind a rank where the formation turned may stand by another's slot.
    swap_onto_slots(f, members, FULL_PACE_LAG * f.spacing);
}

/// Swaps slots between pairs of members where that brings the pair nearer its slots (their
/// summed squared distances drop): each member, in id order, tries the slot nearest where
/// it stands (within a spacing; a member held on another's slot, its own shut off, is
/// handed the slot it stands on), and a member more than a spacing from its own slot then
/// tries the slots next to its own. Only members at least `from` from their slots look
/// (0: every member). Every swap lowers the sum, so none is undone.
fn swap_onto_slots(f: &mut Formation, members: &[Member], from: f32) {
    use std::collections::HashMap;
    let spacing = f.spacing;
    let key = |p: Vec2| {
        (
            (p.x / spacing).floor() as i64,
            (p.y / spacing).floor() as i64,
        )
    };
    // Where each member stands (by its index into `f.slots`), and which look for a swap.
    let mut at: Vec<Option<Vec2>> = vec![None; f.slots.len()];
    for m in members {
        if let Ok(i) = f.slots.binary_search_by_key(&m.id, |&(u, _)| u) {
            at[i] = Some(m.pos);
        }
    }
    let looking: Vec<usize> = (0..f.slots.len())
        .filter(|&i| {
            let target = f.targets.get(f.slots[i].1 as usize);
            at[i]
                .zip(target)
                .is_some_and(|(p, &t)| p.distance(t) >= from)
        })
        .collect();
    if looking.is_empty() {
        return;
    }
    let mut near: HashMap<(i64, i64), Vec<u32>> = HashMap::new();
    for (i, &t) in f.targets.iter().enumerate() {
        near.entry(key(t)).or_default().push(i as u32);
    }
    // Who holds each slot (an index into `f.slots`).
    let mut holder: Vec<Option<usize>> = vec![None; f.targets.len()];
    for (i, &(_, s)) in f.slots.iter().enumerate() {
        if let Some(h) = holder.get_mut(s as usize) {
            *h = Some(i);
        }
    }
    // The slots within `reach` of `p`, nearest first (ties by slot).
    let slots_near = |p: Vec2, reach: f32| -> Vec<u32> {
        let (kx, ky) = key(p);
        let span = (reach / spacing).ceil() as i64;
        let mut found: Vec<(f32, u32)> = (-span..=span)
            .flat_map(|dy| (-span..=span).map(move |dx| (kx + dx, ky + dy)))
            .filter_map(|k| near.get(&k))
            .flatten()
            .map(|&s| (f.targets[s as usize].distance(p), s))
            .filter(|&(d, _)| d <= reach)
            .collect();
        found.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        found.into_iter().map(|(_, s)| s).collect()
    };
    for i in looking {
        let mine = f.slots[i].1;
        let (Some(pos), Some(&target)) = (at[i], f.targets.get(mine as usize)) else {
            continue;
        };
        // The slot it stands on; failing that, for a member away from its slot, a slot
        // next to its own: its slot moves one place toward it and the place opened moves
        // one toward it too, until it can walk in.
        let mut candidates = slots_near(pos, spacing)
            .into_iter()
            .take(1)
            .collect::<Vec<_>>();
        if pos.distance(target) > spacing {
            candidates.extend(slots_near(target, NEXT_SLOT * spacing));
        }
        for theirs in candidates {
            let Some(j) = holder[theirs as usize].filter(|&j| j != i) else {
                continue;
            };
            let Some(other) = at[j] else { continue };
            let (tm, tt) = (target, f.targets[theirs as usize]);
            let now = pos.distance_squared(tm) + other.distance_squared(tt);
            let then = pos.distance_squared(tt) + other.distance_squared(tm);
            if then < now {
                f.slots[i].1 = theirs;
                f.slots[j].1 = mine;
                holder[theirs as usize] = Some(i);
                holder[mine as usize] = Some(j);
                break;
            }
        }
    }
}

/// See [`swap_onto_slots`]: how far (in spacings) a slot next to a member's own lies.
const NEXT_SLOT: f32 = 1.5;

/// The slots (as laid out now) handed to `members` in the order both lie along `field`'s
/// way: the member nearest the goal along it takes the slot nearest the goal along it, and
/// so on (ties by id and by slot). Members past the number of slots get none.
fn by_way(f: &Formation, members: &[Member], field: &NavField, grid: &Grid) -> Vec<(u32, u32)> {
    let mut units: Vec<(f32, u32)> = (members.iter())
        .map(|m| (m.along.unwrap_or(f32::NEG_INFINITY), m.id))
        .collect();
    units.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut slots: Vec<(f32, u32)> = (f.targets.iter().enumerate())
        .map(|(i, &t)| (along(field, grid, t), i as u32))
        .collect();
    slots.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut out: Vec<(u32, u32)> = units.iter().zip(&slots).map(|(u, s)| (u.1, s.1)).collect();
    out.sort_unstable();
    out
}

/// The point a formation walks to: the centre of the goal cell nearest the middle of the
/// goal's cells (the first such cell in the goal's order on a tie).
#[must_use]
pub(crate) fn destination(goal: &GoalSet, grid: &Grid) -> Vec2 {
    let cells = goal.cells();
    let n = cells.len().max(1) as f32;
    let middle = cells
        .iter()
        .fold(Vec2::ZERO, |a, &c| a + grid.cell_centre(c))
        / n;
    let best = cells
        .iter()
        .copied()
        .min_by(|&a, &b| {
            (grid.cell_centre(a).distance_squared(middle))
                .total_cmp(&grid.cell_centre(b).distance_squared(middle))
        })
        .unwrap_or(Cell::new(0, 0));
    grid.cell_centre(best)
}
