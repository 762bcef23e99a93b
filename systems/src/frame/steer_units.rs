//! Stage `steer_units` (docs/behaviour.md, "Steering"): every controllable unit picks its velocity
//! from the flow field, the ray-fan wall probe and separation from its neighbours.
//!
//! Each unit's walk of its 3x3 buckets also lists its neighbours for the stages after it
//! (`NeighbourLists`, one part per batch of the query).
//!
//! Units are steered in chunks of [`UNIT_CHUNK`]: first every unit of the chunk fetches what
//! it reads from the big per-cell arrays (flow field, clearance, the neighbour table), then
//! each is steered. In a sparse crowd those reads miss the cache for every unit; issued
//! back to back, the misses overlap instead of each stalling its unit. Every unit's result
//! depends only on the frame-start snapshot and its own components, so the order of work
//! does not change it.

use glam::Vec2;
use horde_core::{
    Agent, BLOCKED_AFTER, Cell, CellMemo, Clearance, Fan, FillWay, GiveWay, GoalFill, LANE_REACH,
    Lane, Layer, MAX_SIZE_CLASSES, Map, NO_DIRECTION, NavField, Position, Steering, Stun,
    TurnLimit, UnitId, UnitSpec, Velocity, avoid_walls, blend_and_turn, cast_ray, clear_of_walls,
    escape_from, lane_near, separation_push, slide_velocity, step_toward, unit_noise,
    without_part_into,
};

use crate::formations::Formation;
use crate::frame::fill_goals::CellBox;
use crate::frame::{
    CrowdFields, FrameData, GoalFills, ListPart, ListWriter, NeighbourInfo, Neighbours, TOUCHING,
    UNIT_CHUNK, map_unit_chunks,
};
use crate::hierarchy_nav::HierarchyNav;
use crate::job_graph::StageContext;
use crate::unit::Memo;
use horde_core::Navigation;

/// Steers every unit for this frame.
pub(crate) fn steer_units(data: &FrameData, ctx: &StageContext<'_>) {
    let map = data.map.read();
    let fields = data.fields.read();
    let groups = data.groups.read();
    let fills = data.goal_fills.read();
    let crowd = data.crowd_fields.read();
    let formations = data.formations.read();
    let hierarchy = data.hierarchy.read();
    let clearance = data.clearance.read();
    let neighbours = data.neighbours.read();
    let sc = &data.config.steering;
    let dt = data.clock.dt;
    // Most units keep the default turn rate: share its sine and cosine.
    let common_rate = UnitSpec::at(Vec2::ZERO).turn_rate;
    let frame = Frame {
        data,
        map: &map,
        clearance: &clearance,
        neighbours: &neighbours,
        hierarchy: (data.config.navigation == Navigation::Hierarchical).then_some(&*hierarchy),
        // Each (group, size class, layer)'s field, looked up once per frame rather than once
        // per unit.
        field_of: (0..groups.len())
            .flat_map(|g| {
                let g = u16::try_from(g).unwrap_or(u16::MAX);
                let groups = &*groups;
                (0..MAX_SIZE_CLASSES).flat_map(move |class| {
                    Layer::ALL.map(|layer| groups.sized_field(g, layer, class))
                })
            })
            .map(|id| id.map(|id| fields.get(id)))
            .collect(),
        goal_box: groups
            .list
            .iter()
            .map(|g| CellBox::of(g.goal.cells().iter().copied()))
            .collect(),
        fills: &fills,
        crowd: &crowd,
        groups: &groups,
        formation_of: (0..groups.len())
            .map(|g| formations.get(g as u16).filter(|f| !f.targets.is_empty()))
            .collect(),
        near_goal: sc.arrival_distance.max(sc.slow_distance),
        fan: Fan::new(sc),
        common_rate,
        common_limit: TurnLimit::new(common_rate * dt),
    };

    // Steering walks every unit's buckets: the walk lists its neighbours for the stages
    // after it (`NeighbourLists`), two units closing on each other by twice the fastest
    // one's frame of travel included.
    let mut lists = data.lists.write();
    let recycled: Vec<parking_lot::Mutex<ListPart>> = lists
        .take_parts()
        .into_iter()
        .map(parking_lot::Mutex::new)
        .collect();
    let slack = 2.0 * neighbours.fastest * dt;
    let writer = |i: usize| {
        let part = recycled.get(i).map(|p| std::mem::take(&mut *p.lock()));
        ListWriter::new(part.unwrap_or_default(), sc.separation_range, slack)
    };
    let parts = map_unit_chunks::<
        (
            &UnitId,
            &Position,
            &Agent,
            &Stun,
            &mut Velocity,
            &mut Steering,
            &mut Memo,
        ),
        _,
        _,
        _,
    >(
        &data.world,
        ctx,
        data.config.batch_size,
        writer,
        |writer, chunk| {
            // A stunned unit does not steer; nor does one whose position is not finite or whose
            // stun is NaN (it is quarantined at the end of the frame, and NaN would make its
            // velocity garbage).
            let steers = |stun: &Stun, pos: &Position| stun.0 <= 0.0 && pos.0.is_finite();
            let mut fetched = [Fetched::default(); UNIT_CHUNK];
            for (slot, (_, pos, agent, stun, _, steering, memo)) in
                fetched.iter_mut().zip(chunk.iter_mut())
            {
                if steering.asleep.is_none() && steers(stun, pos) {
                    *slot = frame.fetch(pos.0, agent, &mut memo.0);
                }
            }
            for (fetched, (id, pos, agent, stun, velocity, steering, _)) in
                fetched.iter().zip(chunk.iter_mut())
            {
                // A unit asleep costs nothing: it keeps its (zero) velocity and its state.
                if steering.asleep.is_some() {
                    writer.skip(id.0);
                    continue;
                }
                velocity.0 = if steers(stun, pos) {
                    frame.steer(id.0, pos.0, agent, steering, fetched, writer)
                } else {
                    writer.skip(id.0);
                    // A stunned unit is not held, and gives way to nobody: its stall starts again
                    // when it steers.
                    steering.count_stall(pos.0, agent.radius, frame.data.clock.dt, true);
                    steering.yielding = GiveWay::No;
                    steering.detour = false;
                    Vec2::ZERO
                };
            }
        },
    );
    let parts = parts.into_iter().map(ListWriter::finish).collect();
    lists.set(parts, sc.separation_range, slack, neighbours.radii);
}

/// How many touching bodies a unit's motion is kept out of (the first ones found).
pub(crate) const BLOCKERS: usize = 4;

/// A resting friend closer than this many times the sum of the radii is in touch for
/// settling (contacts leave packed bodies a hair apart).
const SETTLE_TOUCH: f32 = 1.05;

/// Seconds a unit held against its resting army, a step or two from free room, waits before
/// it rests where it stands: bodies leave it no room there (docs/behaviour.md, "Coming to
/// rest"). A crowd pressed on the blob's front rests one layer of units per wait, so this
/// sets how fast big armies come to rest. Measured when it was set: with 1 s, 62% of the
/// demo's 6000 units were at rest at its end and 28 of the 38 members of `families_sample`
/// passed; with 0.4 s, 77% and 29; with 0.2 s, 82% and 28 (units rest on a front that has
/// just stalled).
const HELD_REST: f32 = 0.4;

/// Seconds a unit in its goal presses toward the free target beside it before it rests
/// where it stands ([`HELD_REST`]): a hole the resting units round it lean into is too
/// small for a body, and pressing on it for ever keeps the army awake.
const HOLE_PATIENCE: f32 = 10.0;

/// A unit in formation walks no faster than its slot moves plus this many times its
/// distance from the slot (per second): it closes on the slot and slows as it gets there.
const SLOT_GAIN: f32 = 2.0;

/// A unit in an arrived formation comes to rest within this many spacings of its slot...
const REST_IN_SLOT: f32 = 0.15;

/// ...and, at rest, stays at rest within this many (a push from a neighbour does not set
/// it walking back at once). Where the shape does not fit its goal, slots spread a cell
/// apart leave neighbours pressing one another about half a spacing off their slots: with
/// half a spacing here such members got up, were blocked and rested again for ever, and
/// the Moving AI family (docs/behaviour.md, "Formations") passed 19 of 24 against 21.
const STAY_IN_SLOT: f32 = 1.0;

/// A unit of an arrived formation blocked within this many spacings of its slot rests
/// where it stands.
const HELD_SLOT: f32 = 3.0;

/// A unit in formation whose straight line to its slot on the goal point crosses a wall
/// looks this many cells round the slot for a walk to it.
const SLOT_WALK: u32 = 8;

/// Before a one-cell lane, a unit gives way to a neighbour nearer the lane closer than this
/// many times the sum of their radii.
const LANE_YIELD: f32 = 1.1;

/// A unit gives way to a unit of a lower army (and to a friend giving way) within this many
/// times the sum of their radii, and within 60 degrees of its way ([`ONCOMING_COS`]).
const YIELD_TOUCH: f32 = 1.15;

/// A unit makes way for a lower army's stream coming at it whose units are within its
/// diameter plus this many cells of it.
const MAKE_WAY_REACH: f32 = 1.5;

/// A unit closer than this many cells to the middle of a stream coming at it stands on its
/// line (and steps to the right of its way).
const ON_THE_LINE: f32 = 0.25;

/// Clearance (cells to the nearest wall, past the unit's size class) up to which a unit
/// gives way to the right of way.
const NARROW_CLEARANCE: u32 = 4;

/// How far back (against its way, as a share of the step aside) a unit giving way moves.
const ASIDE_BACK: f32 = 0.5;

/// Seconds a unit must be held ([`Steering::stall`]) before it gives way to a unit of a lower
/// army.
const YIELD_AFTER: f32 = 0.5;

/// Seconds a unit held in place goes on giving way at once, anywhere, to units of lower
/// armies coming at it; past them it gives way to them only as in narrow ground, once held.
const GIVE_WAY_FOR: f32 = 2.0;

/// Within an army, of two units meeting head-on the one bound more along this direction has
/// the right of way (any fixed direction not along a grid axis would do).
const PRIORITY_WAY: Vec2 = Vec2::new(0.8, 0.6);

/// The cosine of the angle from its way within which a unit gives way to another (or to a
/// stream, `streams.rs`): 60 degrees.
pub(super) const ONCOMING_COS: f32 = 0.5;

/// The share of its top speed a unit backs away from a lane with ([`LANE_YIELD`]).
const LANE_BACK_OFF: f32 = 0.5;

/// Rings past the ring the blob fills now (plus the unit's diameter in cells) within which a
/// held unit may rest ([`HELD_REST`]).
const HELD_STEPS: u32 = 2;

/// A unit that reached free room walks on to touch the resting friend nearest it when that
/// friend is closer than this many times the sum of their radii (then rests): the blob
/// packs instead of resting a cell apart.
const APPROACH: f32 = 2.5;

/// A unit settled outside its goal stays at rest only while a resting friend's disc is
/// within this many times the smaller radius of its own (else it walks up to the nearest
/// one): the settled blob stays one body, joined to the goal through resting units.
const JOIN: f32 = 0.9;

/// What the stage reads that is the same for every unit of the frame.
struct Frame<'a> {
    data: &'a FrameData,
    map: &'a Map,
    clearance: &'a [Clearance],
    neighbours: &'a Neighbours,
    /// The hierarchy, with [`Navigation::Hierarchical`] only (flat navigation asks nothing
    /// of it per unit).
    hierarchy: Option<&'a HierarchyNav>,
    /// The field of (group, size class, layer) at
    /// `(group * MAX_SIZE_CLASSES + class) * Layer::COUNT + layer`.
    field_of: Vec<Option<&'a NavField>>,
    /// Each group's goal box: path distances are at least the Chebyshev distance in cells to
    /// it (every step costs at least one cell), so units farther than `near_goal` cells need
    /// no integration value (saving a cache miss per unit): they neither arrive nor slow down.
    goal_box: Vec<Option<CellBox>>,
    /// Each goal area's fill (`fill_goals`).
    fills: &'a GoalFills,
    /// Each army's way with the crowd in the costs (`crowd_fields`).
    crowd: &'a CrowdFields,
    /// The groups, for each one's army ([`crate::Groups::army`]).
    groups: &'a crate::Groups,
    /// Each group's formation, once its slots are laid out.
    formation_of: Vec<Option<&'a Formation>>,
    near_goal: f32,
    fan: Fan,
    common_rate: f32,
    common_limit: TurnLimit,
}

/// What one unit reads from the big arrays, fetched before the unit is steered (kept small:
/// a chunk's worth is written and read back).
#[derive(Clone, Copy, Debug)]
struct Fetched {
    /// The unit's cell (clamped to the map).
    cell: Cell,
    /// Step 1: the direction the field gives (zero at the goal or without a field).
    ideal: Vec2,
    /// The path distance, when the hierarchy gave it with the direction (else the flat
    /// field's is read only if needed).
    distance: Option<f32>,
    /// The units in the 3x3 buckets around it ([`Neighbours::near_spans`]).
    near: [(u32, u32); 3],
    /// The clearance of its cell on its layer.
    clearance: u8,
    /// Its size class (from its radius; docs/behaviour.md, "Unit sizes").
    class: u8,
}

impl Default for Fetched {
    fn default() -> Self {
        Self {
            cell: Cell::new(0, 0),
            ideal: Vec2::ZERO,
            distance: None,
            near: [(0, 0); 3],
            clearance: 0,
            class: 0,
        }
    }
}

impl<'a> Frame<'a> {
    /// The flat field a unit of `agent`'s group and layer and of size class `class` follows,
    /// if it has one and it is built (with hierarchical navigation flat fields are not
    /// built).
    fn field(&self, agent: &Agent, class: u8) -> Option<&'a NavField> {
        let slot = usize::from(agent.group.0) * usize::from(MAX_SIZE_CLASSES) + usize::from(class);
        self.field_of
            .get(slot * Layer::COUNT + agent.layer as usize)
            .copied()
            .flatten()
            .filter(|f| f.built_from().is_some())
    }

    /// Reads what steering a unit at `pos` needs from the per-cell arrays; its flat field's
    /// byte and its clearance only when its cell memo does not hold them.
    fn fetch(&self, pos: Vec2, agent: &Agent, memo: &mut CellMemo) -> Fetched {
        let grid = self.map.grid();
        let in_grid = grid.cell_at(pos);
        let cell = in_grid.unwrap_or_else(|| grid.clamped_cell_at(pos));
        let index = grid.index(cell) as u32;
        // With hierarchical navigation the direction and distance come from the sector
        // fields (or the coarse route's waypoint); else from the flat field, whose distance
        // is read later and only near the goal.
        let class = (self.data.config).size_class(agent.radius, grid.cell_size());
        let guided =
            (self.hierarchy).and_then(|h| h.guide_sectors(self.map, agent, class, pos, memo));
        let (ideal, distance) = match guided {
            Some((ideal, distance)) => (ideal, Some(distance)),
            None => (
                match (self.field(agent, class), in_grid) {
                    (Some(field), Some(c)) => {
                        let byte = memo.flow(index, field.stamp(), || field.flow().byte_at(c));
                        let ideal = field.flow().sample_byte(grid, byte, pos);
                        if byte == NO_DIRECTION && class > 0 {
                            // Too close to a wall for the class: back to where it fits.
                            let layer = self.map.cost_field(agent.layer);
                            escape_from(layer, field.key().cost(self.map), c, class)
                                .map_or(ideal, |out| out.first.unit_vector())
                        } else {
                            ideal
                        }
                    }
                    _ => Vec2::ZERO,
                },
                None,
            ),
        };
        let clearance = &self.clearance[agent.layer as usize];
        Fetched {
            cell,
            ideal,
            distance,
            near: self.neighbours.near_spans(pos),
            clearance: memo.clearance(index, clearance.stamp(), || clearance.get(cell.x, cell.y)),
            class,
        }
    }

    /// Steps 2-7 for one unit that is not stunned: its new velocity.
    fn steer(
        &self,
        id: u32,
        pos: Vec2,
        agent: &Agent,
        steering: &mut Steering,
        fetched: &Fetched,
        lists: &mut ListWriter,
    ) -> Vec2 {
        let me = Me {
            id,
            pos,
            agent,
            fetched: *fetched,
        };
        let slot = self.slot_of(agent, id);
        let bound = match &slot {
            Some(slot) => self.bound_to_slot(&me, steering, slot),
            None => self.bound_for(&me, steering),
        };
        let lane = self.lane_ahead(&me, bound.way);
        let mut met = self.meet(&me, &bound, lane, steering, lists);
        if slot.is_none() && bound.fill_way == FillWay::Outside && !bound.was_resting {
            met.make_way = self.make_way(&me, &bound);
        }
        let sc = &self.data.config.steering;
        if met.stacked {
            // Someone stands exactly on us: leave along a direction fixed per unit.
            let n = unit_noise(self.data.config.seed, id, 0);
            met.separation +=
                Vec2::new(n, 1.0 - n.abs()).normalize_or(Vec2::X) * sc.separation_range;
        }
        let rest = match &slot {
            Some(slot) => self.rest_in_slot(&me, steering, bound, slot),
            None => self.come_to_rest(&me, steering, bound, &met),
        };
        match rest {
            Some(bound) => self.move_on(&me, steering, lane, &bound, &met),
            None => {
                steering.yielding = GiveWay::No;
                Vec2::ZERO
            }
        }
    }

    /// Where a unit not at rest steps to make way for the stream of a lower army coming at
    /// it (docs/behaviour.md, "Jams dissolve"): across, away from the stream's middle, and
    /// back with it a little; to the right of its way when it stands on the stream's line.
    #[inline(always)]
    fn make_way(&self, me: &Me<'_>, bound: &Bound<'_>) -> Option<Vec2> {
        let grid = self.map.grid();
        let reach = 2.0 * me.agent.radius / grid.cell_size() + MAKE_WAY_REACH;
        let seen =
            (self.neighbours.streams).oncoming(grid, me.pos, bound.army, bound.way, reach)?;
        let away = if seen.across.length_squared() > ON_THE_LINE * ON_THE_LINE {
            -seen.across.normalize()
        } else {
            bound.way.perp()
        };
        Some((away + seen.along * ASIDE_BACK).normalize_or_zero())
    }

    /// The slot of a unit whose group moves in formation, if it holds one.
    #[inline(always)]
    fn slot_of(&self, agent: &Agent, id: u32) -> Option<SlotTarget> {
        let f = self
            .formation_of
            .get(usize::from(agent.group.0))
            .copied()
            .flatten()?;
        Some(SlotTarget {
            point: f.target_of(id)?,
            arrived: f.arrived,
            on_goal: f.on_goal_point(),
            speed: f.speed,
            spacing: f.spacing,
        })
    }

    /// Where a unit in formation is bound (docs/behaviour.md, "Formations"): straight to its
    /// slot when the way there is open to its body, else along its group's field (or, when
    /// the slot is behind it on that way, nowhere: it waits for the slot); no faster
    /// than the anchor moves plus [`SLOT_GAIN`] times how far it is from its slot, so that it
    /// keeps pace with the slot and closes on it without overshooting.
    #[inline(always)]
    fn bound_to_slot(&self, me: &Me<'_>, steering: &Steering, slot: &SlotTarget) -> Bound<'a> {
        let (pos, agent) = (me.pos, me.agent);
        let grid = self.map.grid();
        let to = slot.point - pos;
        let d = to.length();
        let cost = (self.map)
            .prepared_class_cost_field(agent.layer, me.fetched.class)
            .unwrap_or_else(|| self.map.cost_field(agent.layer));
        // No ray where the unit's clearance shows the way open (its class's cost field
        // blocks cells within its class of a wall).
        let open = f32::from(me.fetched.clearance) - f32::from(me.fetched.class) - 2.0;
        let way = if d <= 1e-4 {
            Vec2::ZERO
        } else if d < open * grid.cell_size() || cast_ray(cost, grid, pos, to / d, d).is_none() {
            to / d
        } else if slot.on_goal {
            // On the goal point the field's distances run out from the goal in every
            // direction and say nothing of the way to a slot: a short walk over open cells
            // does.
            step_toward(cost, grid, pos, slot.point, SLOT_WALK).unwrap_or(me.fetched.ideal)
        } else if self.ahead_of(me, slot.point) {
            // Its slot is behind it on the way (the formation walks a bent corridor as a
            // column): it waits for the slot to come up rather than walk on to the goal.
            Vec2::ZERO
        } else {
            me.fetched.ideal
        };
        Bound {
            army: self.groups.army(agent.group.0),
            was_resting: steering.arrived || steering.settled,
            fill: None,
            fill_way: FillWay::Outside,
            way,
            distance: None,
            in_goal: false,
            cap: slot.speed + SLOT_GAIN * d,
        }
    }

    /// Whether the unit is nearer its goal along its field than `point` is (both cells'
    /// path distances; `false` where the field gives none, as with hierarchical navigation).
    #[inline(always)]
    fn ahead_of(&self, me: &Me<'_>, point: Vec2) -> bool {
        let Some(field) = self.field(me.agent, me.fetched.class) else {
            return false;
        };
        let at = |cell: Option<Cell>| cell.and_then(|c| field.integration().distance(c));
        let grid = self.map.grid();
        match (at(Some(me.fetched.cell)), at(grid.cell_at(point))) {
            (Some(mine), Some(its)) => mine < its,
            _ => false,
        }
    }

    /// Whether a unit in formation rests this frame: once its formation has arrived, at its
    /// slot (within [`REST_IN_SLOT`] spacings to come to rest, [`STAY_IN_SLOT`] to stay).
    #[inline(always)]
    fn rest_in_slot(
        &self,
        me: &Me<'_>,
        steering: &mut Steering,
        bound: Bound<'a>,
        slot: &SlotTarget,
    ) -> Option<Bound<'a>> {
        let d = me.pos.distance(slot.point);
        let near = if bound.was_resting {
            STAY_IN_SLOT
        } else {
            REST_IN_SLOT
        };
        // Held where its slot is taken or walled off (bodies or walls leave it no way in):
        // blocked that near its slot, it rests where it stands, as the rest of its
        // formation does.
        let held = steering.is_blocked() && d <= HELD_SLOT * slot.spacing;
        let resting = slot.arrived && (d <= near * slot.spacing || held);
        steering.detour = false;
        self.note_rest(me, steering, resting, true);
        (!resting).then_some(bound)
    }

    /// Records whether the unit rests this frame, arrived (`on_goal`) or settled, counts
    /// its stall, and the frame it first arrived.
    #[inline(always)]
    fn note_rest(&self, me: &Me<'_>, steering: &mut Steering, resting: bool, on_goal: bool) {
        steering.arrived = resting && on_goal;
        steering.settled = resting && !on_goal;
        steering.count_stall(me.pos, me.agent.radius, self.data.clock.dt, resting);
        if steering.arrived && steering.arrived_frame.is_none() {
            steering.arrived_frame = Some(self.data.clock.frame + 1);
        }
    }

    /// Where the unit is bound: its field's way, or (in its army's rest area) the fill's
    /// way to the free cells to fill next, or the way round a jam.
    #[inline(always)]
    fn bound_for(&self, me: &Me<'_>, steering: &mut Steering) -> Bound<'a> {
        let (pos, agent) = (me.pos, me.agent);
        let sc = &self.data.config.steering;
        let Fetched {
            cell,
            ideal,
            distance,
            class,
            ..
        } = me.fetched;
        // Where the unit is bound: along the field, or in its army's rest area to the free
        // cells to fill next (`horde_core::GoalFill`). `distance` `None`: farther than
        // `near_goal`, so not in the goal and not slowing down.
        let g = usize::from(agent.group.0);
        let far = self
            .goal_box
            .get(g)
            .copied()
            .flatten()
            .is_none_or(|b| b.chebyshev(cell) as f32 > self.near_goal);
        let distance = (!far).then(|| {
            distance.unwrap_or_else(|| {
                self.field(agent, class)
                    .and_then(|f| f.integration().distance(cell))
                    .map_or(f32::INFINITY, |d| d as f32)
            })
        });
        let in_goal = distance.is_some_and(|d| d <= sc.arrival_distance);
        let army = self.groups.army(agent.group.0);
        let was_resting = steering.arrived || steering.settled;
        let grid = self.map.grid();
        let fill = self.fills.get(army, agent.layer, class);
        let fill_way = fill.map_or(FillWay::Outside, |f| f.way(grid, pos, was_resting));
        // Blocked on its field's way, outside the rest area: the way round to free room, if
        // the fill sees one (and on it until it reaches the rest area).
        let round = (fill_way == FillWay::Outside && (steering.detour || steering.is_blocked()))
            .then(|| fill.and_then(|f| f.way_round(grid, pos)))
            .flatten();
        steering.detour = round.is_some();
        let fill_way = round.map_or(fill_way, FillWay::Toward);
        let (way, distance) = match fill_way {
            FillWay::Toward(point) => ((point - pos).normalize_or_zero(), None),
            FillWay::Rest { .. } => (Vec2::ZERO, None),
            // Near the goal (in its fill's box) the field's own way: the blob grows from
            // where the army comes in, not from every side a crowd field spreads it to.
            // (Only for units held up a quarter second, with fields from 2,000 units on,
            // the 40 groups of 500 on `Cauldron.map` to 30,000 cells arrived 83.9% and
            // 57.1% on seeds 11 and 12, against 86.6% and 98.5%: the streams widen only if
            // units walking take it.)
            FillWay::Outside if fill.is_none_or(|f| !f.in_box(grid, pos)) => {
                (self.crowd_way(me, army, ideal), distance)
            }
            FillWay::Outside => (ideal, distance),
        };
        Bound {
            army,
            was_resting,
            fill,
            fill_way,
            way,
            distance,
            in_goal,
            cap: f32::INFINITY,
        }
    }

    /// The way a unit following its field takes with the crowd in the costs: its army's
    /// crowd field's, where that turns more than 45 degrees off the field's way (round dense
    /// ground); else the field's own.
    #[inline(always)]
    fn crowd_way(&self, me: &Me<'_>, army: u16, ideal: Vec2) -> Vec2 {
        let agent = me.agent;
        let changes = self.groups.get(army).map_or(u64::MAX, |g| g.goal_changes);
        match (self.crowd)
            .get(army, agent.layer, me.fetched.class, changes)
            .and_then(|f| f.way(me.fetched.cell))
        {
            Some(way)
                if ideal == Vec2::ZERO || way.dot(ideal) < std::f32::consts::FRAC_1_SQRT_2 =>
            {
                way
            }
            _ => ideal,
        }
    }

    /// A one-cell lane near the unit on its way, if any.
    #[inline(always)]
    fn lane_ahead(&self, me: &Me<'_>, way: Vec2) -> Option<Lane> {
        let (pos, agent) = (me.pos, me.agent);
        let Fetched {
            clearance, class, ..
        } = me.fetched;
        let grid = self.map.grid();
        // A one-cell lane ahead (a door, a corridor just wide enough for the body's class):
        // aim along its centre line, without the fan (its side rays would touch the lane's
        // walls), and let separation push only along the way: a push across would take the
        // body off the only line it fits on. Before the lane, a unit touching one nearer the
        // lane's aim backs away from the lane: pressed from all sides, the crowd at a door
        // holds every body off the centre line, and none passes; the one nearest the lane
        // never yields, so one always goes.
        let lane_reach = u32::from(class) + LANE_REACH as u32 + 1;
        (way != Vec2::ZERO && u32::from(clearance) <= lane_reach)
            .then(|| self.map.prepared_class_cost_field(agent.layer, class))
            .flatten()
            .and_then(|cost| lane_near(cost, grid, pos, way))
    }

    /// Step 5: separation from the neighbours, and what the unit meets among them (see
    /// [`Meeting`]).
    #[inline(always)]
    fn meet(
        &self,
        me: &Me<'_>,
        bound: &Bound<'_>,
        lane: Option<Lane>,
        steering: &Steering,
        lists: &mut ListWriter,
    ) -> Meeting {
        let (id, pos, agent) = (me.id, me.pos, me.agent);
        let Fetched {
            near,
            clearance,
            class,
            ..
        } = me.fetched;
        let sc = &self.data.config.steering;
        let Bound {
            army,
            was_resting,
            fill,
            fill_way,
            way,
            ..
        } = *bound;
        let queue_for = lane
            .filter(|l| !l.inside)
            .map(|l| (l.aim, pos.distance_squared(l.aim)));
        let mut give_way_to: Option<(f32, Vec2)> = None;
        // Right of way (docs/behaviour.md, "Jams"): a unit of a lower army right ahead of
        // us (hops 0), or a friend right ahead giving way to one (one hop more than it).
        let mut head_on: Option<u8> = None;

        // Step 5: separation, and whether a resting friend touches us: a loop over contiguous
        // slices with local accumulators, the hottest of the frame. The square root and
        // the division are taken only inside the range: in a packed crowd most candidates
        // are outside it (nine of thirteen in the 1M lattice), and computing them for every
        // candidate, to keep the loop free of branches, cost more than the branch (LLVM
        // turns the select back into one on x86 anyway).
        let i_yield = steering.yielding != GiveWay::No;
        // A unit meets the right of way only once it is held (or was giving way already):
        // flows that cross freely do not stop for each other.
        // Only in narrow ground (walls within a few cells, for its size): in the open, flows
        // that meet slide past each other, and making them wait only slows them. (A unit
        // of a lower army coming at it is given way everywhere and at once: see below.)
        let narrow = u32::from(clearance) <= u32::from(class) + NARROW_CLEARANCE;
        let held_up = narrow
            && (steering.stall >= YIELD_AFTER
                || matches!(steering.yielding, GiveWay::RightOfWay(_)));
        // Blocked at a mouth too wide for a lane (a gap a few bodies across): a crowd of big
        // bodies pressed into it from behind arches over the opening and holds it shut. A
        // blocked unit of a size class above the smallest, following its field, that
        // touches a friend nearer the goal on its field backs off from it; the ones nearest
        // the goal never do, so the arch's front gets room. (For the smallest class too, a
        // dense army's tail squeezing through gaps that flow backed off, and ended 211
        // units still walking where 7 did.)
        let grid = self.map.grid();
        let mouth = (lane.is_none()
            && narrow
            && class > 0
            && steering.stall >= BLOCKED_AFTER
            && fill_way == FillWay::Outside)
            .then(|| self.field(agent, class))
            .flatten()
            .and_then(|f| {
                let at = |p: Vec2| grid.cell_at(p).and_then(|c| f.integration().distance(c));
                at(pos).map(|mine| (at, mine))
            });
        let mut separation = Vec2::ZERO;
        let mut touches_rest = false;
        // On reaching free room (a unit not yet at rest): the nearest resting friend, to walk
        // up to it before resting. A unit settled outside the goal looks too: it stays only
        // while a resting friend is within reach of joining it (`JOIN`). A unit at rest in
        // its goal does not look.
        let settled_here = fill_way == FillWay::Rest { in_goal: false };
        let looks = matches!(fill_way, FillWay::Rest { .. }) && (!was_resting || settled_here);
        // Outside the goal, only friends nearer it (of a lower rank in the rest order) count:
        // a settled unit is joined only by such a friend, so that, followed friend by friend,
        // the chain ends in the goal (a knot of settled units that lost touch with the blob
        // does not hold itself up), and a unit reaching free room walks up to such a friend.
        // (Only for settled units, 33 of the 38 sample members passed, against 34.)
        let my_rank = match fill {
            Some(f) if settled_here => f.rank_at(grid, pos),
            _ => None,
        };
        let nearer = |other: Vec2| match (my_rank, fill) {
            (Some(mine), Some(f)) => f.rank_at(grid, other).is_some_and(|r| r < mine),
            _ => true,
        };
        let mut nearest_friend: Option<(f32, Vec2)> = None;
        let mut joined = false;
        let mut stacked = false;
        // The directions (from them to us) of the first few bodies we touch: our own motion
        // may not push into them (contacts would only push us back).
        let mut blockers = [Vec2::ZERO; BLOCKERS];
        let mut blocked_by = 0;
        lists.begin(id);
        let push_from = |(first, end): (u32, u32)| {
            let others: &[NeighbourInfo] = self.neighbours.run((first, end));
            for (slot, other) in (first..).zip(others) {
                let away = pos - other.pos;
                let d2 = away.length_squared();
                let touch = agent.radius + other.radius;
                lists.see(slot, d2, touch, other.id != id);
                let range = touch * sc.separation_range;
                let inside = d2 < range * range && other.id != id;
                if looks
                    && other.at_rest
                    && other.army == army
                    && other.id != id
                    && nearer(other.pos)
                {
                    let reach = touch * APPROACH;
                    if d2 < reach * reach && nearest_friend.is_none_or(|(n, _)| d2 < n) {
                        nearest_friend = Some((d2, -away));
                    }
                    let join = touch + JOIN * agent.radius.min(other.radius);
                    joined |= d2 <= join * join;
                }
                if inside {
                    if let Some((at, mine)) = &mouth {
                        let near = touch * LANE_YIELD;
                        if d2 < near * near
                            && !other.at_rest
                            && other.army == army
                            && at(other.pos).is_some_and(|theirs| {
                                theirs < *mine || (theirs == *mine && other.id < id)
                            })
                            && give_way_to.is_none_or(|(n, _)| d2 < n)
                        {
                            give_way_to = Some((d2, away));
                        }
                    }
                    if let Some((aim, mine)) = queue_for {
                        let near = touch * LANE_YIELD;
                        if d2 < near * near
                            && !other.at_rest
                            && other.pos.distance_squared(aim) < mine
                            && give_way_to.is_none_or(|(n, _)| d2 < n)
                        {
                            give_way_to = Some((d2, away));
                        }
                    }
                    let d = d2.sqrt();
                    // A unit that gave way in a jam neither holds nor pushes one that did
                    // not: contacts move it aside.
                    let yields_to_us = other.yields != GiveWay::No && !i_yield;
                    if d > 1e-6 {
                        if !(yields_to_us && matches!(other.yields, GiveWay::RightOfWay(_))) {
                            separation += separation_push(away, d, touch, sc);
                        }
                        // Resting units of other armies give way (contacts move them):
                        // they do not block. Resting friends do: they are not pushed aside.
                        let gives_way = (other.at_rest && other.army != army)
                            || (yields_to_us && other.yields == GiveWay::AtLane);
                        if d < touch * TOUCHING && blocked_by < BLOCKERS && !gives_way {
                            blockers[blocked_by] = away / d;
                            blocked_by += 1;
                        }
                        touches_rest |=
                            other.at_rest && other.army == army && d < touch * SETTLE_TOUCH;
                        let ahead = -away.dot(way) > ONCOMING_COS * d;
                        if ahead && !other.at_rest && d < touch * YIELD_TOUCH {
                            // Right of way: to a lower army, and within an army (one part
                            // walking round to room as another comes in) to the one bound
                            // more along `PRIORITY_WAY`: the same side passes first at
                            // every door, whoever meets whom.
                            let oncoming = other.heading().dot(away) > ONCOMING_COS * d;
                            // Within an army, bodies of a class above the smallest only
                            // where this unit walks round to room (in its rest area or on a
                            // detour): two such friends following their field into one
                            // mouth from two sides are not passing each other, and the one
                            // giving way left the other facing the same crowd.
                            let before = other.army < army
                                || (other.army == army
                                    && (class == 0 || fill_way != FillWay::Outside)
                                    && other.heading().dot(PRIORITY_WAY) > way.dot(PRIORITY_WAY));
                            // A unit of a lower army coming at us is given way at once,
                            // in the open too: a crowd waiting before a gap that stood its
                            // ground would be a wall the other army cannot pass. Not by a
                            // unit held that long already (`GIVE_WAY_FOR`): one wedged
                            // among the other army's units pushes its way out.
                            let lower = other.army < army && steering.stall < GIVE_WAY_FOR;
                            let hops = if oncoming && (lower || (before && held_up)) {
                                Some(0)
                            } else if let (true, GiveWay::RightOfWay(h)) =
                                (other.army == army, other.yields)
                            {
                                (h < GiveWay::MAX_HOPS).then_some(h + 1)
                            } else {
                                None
                            };
                            if let Some(h) = hops {
                                head_on = Some(head_on.map_or(h, |o| o.min(h)));
                            }
                        }
                    } else {
                        stacked = true;
                    }
                }
            }
        };
        (self.neighbours).for_each_candidate_slots(
            pos,
            agent.radius,
            sc.separation_range,
            near,
            push_from,
        );
        lists.end();
        let approach = looks && (!was_resting || !joined);
        Meeting {
            separation,
            touches_rest,
            nearest_friend,
            approach,
            stacked,
            blockers,
            blocked_by,
            give_way_to,
            head_on,
            make_way: None,
        }
    }

    /// Whether the unit rests this frame (updating its rest state): `None` when it does,
    /// else where it is bound on (walking up to its resting friends first, if it closes
    /// on them).
    #[inline(always)]
    fn come_to_rest(
        &self,
        me: &Me<'_>,
        steering: &mut Steering,
        bound: Bound<'a>,
        met: &Meeting,
    ) -> Option<Bound<'a>> {
        let (pos, agent) = (me.pos, me.agent);
        let cell_size = self.map.grid().cell_size();
        let grid = self.map.grid();
        let Bound {
            fill,
            fill_way,
            way,
            in_goal,
            ..
        } = bound;
        let Meeting {
            touches_rest,
            nearest_friend,
            approach,
            ..
        } = *met;
        // Rest (docs/behaviour.md, "Coming to rest"): where the army's fill says (a target,
        // or a supported cell for a unit already at rest), or, held against the resting
        // army a step or two from a target for `HELD_REST`, where it stands. Without a fill
        // (no goal cell is open to the unit's class), in a goal cell. Resting units stand
        // still; contacts and forces move them, and they rest where they are left while
        // their cell is supported.
        // Held: its cell comes at most a few rings (and its own diameter) after the ring the
        // blob fills now, or no free cell nearer the goal is within its reach (it presses on
        // the blob where the way round is closed), so resting there keeps the blob compact.
        // Or, in its goal, it has pressed toward the free target beside it for
        // `HOLE_PATIENCE`: the hole is too small for its body (the resting units round it
        // lean into it).
        let held_rings = HELD_STEPS + (2.0 * agent.radius / cell_size).ceil() as u32;
        let toward = match fill_way {
            FillWay::Toward(point) => Some(point),
            _ => None,
        };
        let held = toward.is_some()
            && steering.stall >= HELD_REST
            && touches_rest
            && fill.is_some_and(|f| {
                f.near_frontier(grid, pos, held_rings)
                    || f.nothing_nearer(grid, pos, (agent.radius / cell_size).ceil() as u32 + 1)
                    || (steering.stall >= HOLE_PATIENCE
                        && f.in_goal(grid, pos)
                        && toward.and_then(|p| f.to_target(grid, p)) == Some(0))
            });
        // A unit that reached free room but does not touch the resting blob yet walks up to
        // it first (unless held there).
        let closing = (approach && !touches_rest && steering.stall < HELD_REST)
            .then(|| {
                nearest_friend
                    .map(|(_, to)| to.normalize_or_zero())
                    .or_else(|| {
                        fill.and_then(|f| f.toward_support(grid, pos))
                            .map(|c| (c - pos).normalize_or_zero())
                    })
            })
            .flatten();
        let (way, fill_way) = match closing {
            Some(to) => (to, FillWay::Toward(pos + to)),
            None => (way, fill_way),
        };
        let resting = match fill_way {
            FillWay::Rest { .. } => true,
            _ => held || (fill.is_none() && in_goal),
        };
        // On the goal: its cell is a goal cell, or a big body covers one.
        let arrived = resting
            && match (fill_way, fill) {
                (FillWay::Rest { in_goal: true }, _) => true,
                (_, Some(f)) => f.covers_goal(grid, pos, agent.radius),
                (_, None) => in_goal,
            };
        self.note_rest(me, steering, resting, arrived);
        (!resting).then_some(Bound {
            way,
            fill_way,
            ..bound
        })
    }

    /// Steps 2-4 and 6-7 for a unit on its way: backing off, the lane, walls, the probe
    /// and fan, the blend, the turn and the speed; its own velocity.
    #[inline(always)]
    fn move_on(
        &self,
        me: &Me<'_>,
        steering: &mut Steering,
        lane: Option<Lane>,
        bound: &Bound<'_>,
        met: &Meeting,
    ) -> Vec2 {
        let (id, pos, agent) = (me.id, me.pos, me.agent);
        let clearance = me.fetched.clearance;
        let config = &self.data.config;
        let sc = &config.steering;
        let cell_size = self.map.grid().cell_size();
        let grid = self.map.grid();
        let Bound {
            fill_way,
            way,
            distance,
            cap,
            ..
        } = *bound;
        let Meeting {
            separation,
            give_way_to,
            head_on,
            blockers,
            blocked_by,
            make_way,
            ..
        } = *met;
        // Backing away from a lane, or from a unit with the right of way (back and to the
        // side, so that two flows pass each other on the same hand): at once, not at the
        // turn rate.
        // A step along `dir` as walls let it; with `free_or`, along `then` where they leave
        // the first less than half its length.
        let free = |dir: Vec2| {
            slide_velocity(
                self.map.cost_field(agent.layer),
                grid,
                pos,
                agent.radius,
                dir,
            )
        };
        let free_or = |first: Vec2, then: Vec2| {
            let step = free(first);
            if step.length_squared() >= 0.25 {
                step
            } else {
                free(then)
            }
        };
        let back_off = match (lane, give_way_to) {
            (Some(lane), Some(_)) => Some((pos - lane.aim).normalize_or_zero()),
            // Blocked at a mouth, behind a friend nearer the goal: straight back from it.
            (None, Some((_, away))) => Some(away.normalize_or_zero()),
            // Making way for a lower army's stream: aside, or straight back where walls
            // leave no aside.
            _ if make_way.is_some() => make_way.map(|dir| free_or(dir, -way)),
            // Meeting the right of way: aside (the same hand for everyone, so that two flows
            // pass on the same side) and back a little; to the other hand where a wall
            // stands there. Behind a friend giving way: straight back (in a corridor one
            // body wide there is no aside: the whole file backs out).
            _ => head_on.map(|hops| {
                if hops > 0 {
                    free(-way)
                } else {
                    free_or(
                        (way.perp() - way * ASIDE_BACK).normalize_or_zero(),
                        (-way.perp() - way * ASIDE_BACK).normalize_or_zero(),
                    )
                }
            }),
        };
        let (way, separation) = match (lane, give_way_to) {
            (Some(lane), None) => {
                let along = (lane.aim - pos).normalize_or(way);
                (along, along * separation.dot(along))
            }
            _ => (way, separation),
        };
        // Against a wall, the crowd's push does not drive a body into it: that would only
        // turn its heading away from its way and pin it there.
        let near_wall = !clear_of_walls(grid, clearance, agent.radius * 1.05, 0.0);
        let separation = if near_wall && separation != Vec2::ZERO {
            slide_velocity(
                self.map.cost_field(agent.layer),
                grid,
                pos,
                agent.radius,
                separation,
            )
        } else {
            separation
        };

        // Steps 2-4: probe only near walls (the clearance field says how far they are). The
        // probe's farthest point is the end of an edge ray; every point of a wall cell at
        // Chebyshev distance `c` is at least `c - 1` cells away from anywhere in the unit's
        // cell, so clearance `c > reach + 1` means no ray can hit.
        let ahead = agent.radius + sc.probe_length;
        let aside = agent.radius * sc.probe_inflate;
        let reach = (ahead * ahead + aside * aside).sqrt() / cell_size;
        let avoid = if way == Vec2::ZERO || lane.is_some() || f32::from(clearance) > reach + 1.0 {
            way
        } else {
            let (dir, side) = avoid_walls(
                self.map.cost_field(agent.layer),
                self.map.grid(),
                pos,
                way,
                agent.radius,
                steering.avoid_side,
                &self.fan,
            );
            steering.avoid_side = side;
            dir
        };

        // Steps 6-7: blend, bounded turn, jitter, speed.
        let jitter = unit_noise(config.seed, id, self.data.clock.frame) * sc.jitter;
        let own_limit;
        let limit = if agent.turn_rate == self.common_rate {
            &self.common_limit
        } else {
            own_limit = TurnLimit::new(agent.turn_rate * self.data.clock.dt);
            &own_limit
        };
        steering.heading = blend_and_turn(steering.heading, avoid, separation, limit, jitter, sc);
        // `slow_distance` 0 turns slowing off (and `0 / 0` would be NaN at the goal).
        let slow = distance
            .filter(|_| sc.slow_distance > 0.0)
            .map_or(1.0, |d| (d / sc.slow_distance).clamp(0.25, 1.0));
        let speed = if avoid == Vec2::ZERO && separation == Vec2::ZERO {
            0.0
        } else {
            agent.max_speed * slow
        };
        // Bound for a point near it (the next free cell of the fill): no faster than its turn
        // rate lets it reach the point from its heading, or it circles the point for ever (on a
        // circle of radius speed / turn rate, 0.64 cells at the defaults, passes a point
        // `d` away at an angle `a` off the heading once the radius exceeds d / (2 sin a)).
        let speed = match fill_way {
            FillWay::Toward(point) => {
                let d = pos.distance(point);
                let to = (point - pos) / d.max(1e-6);
                // Facing away, it must turn through the side first.
                let sin = if steering.heading.dot(to) < 0.0 {
                    1.0
                } else {
                    steering.heading.perp_dot(to).abs()
                };
                speed.min(agent.turn_rate * d / (2.0 * sin).max(1e-3))
            }
            _ => speed,
        }
        .min(cap);
        // Separation also pushes directly (not only by turning the heading): in a jam
        // everyone heads the same way, and the push spreads it. The sum is the unit's own
        // motion, so it never exceeds the top speed (docs/behaviour.md, "Bodies and crowds").
        let own = steering.heading * speed
            + separation.clamp_length_max(2.0) * (agent.max_speed * sc.separation_push);
        steering.yielding = match (back_off, head_on) {
            (None, _) => GiveWay::No,
            (Some(_), _) if make_way.is_some() && give_way_to.is_none() => GiveWay::RightOfWay(0),
            (Some(_), Some(hops)) if give_way_to.is_none() || lane.is_none() => {
                GiveWay::RightOfWay(hops)
            }
            (Some(_), _) => GiveWay::AtLane,
        };
        let mut own = match back_off {
            Some(back) => back * (agent.max_speed * LANE_BACK_OFF),
            None => own.clamp_length_max(agent.max_speed),
        };
        // A body we touch is not walked into: the part of the motion toward it goes.
        for &normal in &blockers[..blocked_by] {
            own = without_part_into(own, normal);
        }
        own
    }
}

/// The unit [`Frame::steer`] steers.
#[derive(Clone, Copy)]
struct Me<'u> {
    id: u32,
    pos: Vec2,
    agent: &'u Agent,
    fetched: Fetched,
}

/// Where a unit is bound this frame ([`Frame::bound_for`]).
#[derive(Clone, Copy)]
struct Bound<'f> {
    army: u16,
    /// Arrived or settled as the frame began.
    was_resting: bool,
    /// Its army's fill of the goal area, for its layer and class.
    fill: Option<&'f GoalFill>,
    fill_way: FillWay,
    /// The direction it walks.
    way: Vec2,
    /// Its path distance to the goal while it follows its field near the goal.
    distance: Option<f32>,
    in_goal: bool,
    /// The most speed it walks at (a unit in formation keeps pace with its slot).
    cap: f32,
}

/// A unit's slot in its group's formation this frame.
#[derive(Clone, Copy)]
struct SlotTarget {
    /// Where the slot lies.
    point: Vec2,
    /// The formation has arrived: units at their slots rest.
    arrived: bool,
    /// Its anchor stands on its goal point.
    on_goal: bool,
    /// How fast the formation's anchor moved in the last frame.
    speed: f32,
    /// The formation's spacing.
    spacing: f32,
}

/// What a unit meets among its neighbours this frame ([`Frame::meet`]).
#[derive(Clone, Copy)]
struct Meeting {
    separation: Vec2,
    /// A resting unit of its army touches it.
    touches_rest: bool,
    /// On reaching free room: the nearest resting friend (squared distance, direction).
    nearest_friend: Option<(f32, Vec2)>,
    /// It reached free room and is not at rest yet: it walks up to its resting friends.
    approach: bool,
    /// Someone stands exactly on it.
    stacked: bool,
    /// The directions (from them to it) of the first bodies it touches.
    blockers: [Vec2; BLOCKERS],
    blocked_by: usize,
    /// Queueing for a lane: the nearest unit nearer the lane's aim (squared distance, away).
    give_way_to: Option<(f32, Vec2)>,
    /// Meeting the right of way: hops from the unit that has it.
    head_on: Option<u8>,
    /// Making way for a lower army's stream coming at it: the way it steps (aside, and back
    /// with the stream).
    make_way: Option<Vec2>,
}
