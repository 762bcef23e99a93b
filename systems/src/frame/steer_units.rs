//! Stage `steer_units` (docs/behaviour.md, "Steering"): every controllable unit picks its velocity
//! from the flow field, the ray-fan wall probe and separation from its neighbours.
//!
//! Units are steered in chunks of [`UNIT_CHUNK`]: first every unit of the chunk fetches what
//! it reads from the big per-cell arrays (flow field, clearance, the neighbour table), then
//! each is steered. In a sparse crowd those reads miss the cache for every unit; issued
//! back to back, the misses overlap instead of each stalling its unit. Every unit's result
//! depends only on the frame-start snapshot and its own components, so the order of work
//! does not change it.

use glam::Vec2;
use horde_core::{
    Agent, Cell, CellMemo, Clearance, Fan, FillWay, GoalFill, Layer, MAX_SIZE_CLASSES, Map,
    NO_DIRECTION, NavField, Position, Steering, Stun, TurnLimit, UnitId, UnitSpec, Velocity,
    avoid_walls, blend_and_turn, escape_from, separation_push, unit_noise, without_part_into,
};

use crate::config::Navigation;
use crate::frame::{
    FrameData, GoalFills, NeighbourInfo, Neighbours, UNIT_CHUNK, for_each_unit_chunk,
};
use crate::hierarchy_nav::HierarchyNav;
use crate::job_graph::StageContext;
use crate::unit::Memo;

/// Steers every unit for this frame.
pub(crate) fn steer_units(data: &FrameData, ctx: &StageContext<'_>) {
    let map = data.map.read();
    let fields = data.fields.read();
    let groups = data.groups.read();
    let fills = data.goal_fills.read();
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
            .map(|g| GoalBox::around(g.goal.cells()))
            .collect(),
        fills: &fills,
        groups: &groups,
        near_goal: sc.arrival_distance.max(sc.slow_distance),
        fan: Fan::new(sc),
        common_rate,
        common_limit: TurnLimit::new(common_rate * dt),
    };

    for_each_unit_chunk::<
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
    >(&data.world, ctx, data.config.batch_size, |chunk| {
        // A stunned unit does not steer; nor does one whose position is not finite or whose
        // stun is NaN (it is quarantined at the end of the frame, and NaN would make its
        // velocity garbage).
        let steers = |stun: &Stun, pos: &Position| stun.0 <= 0.0 && pos.0.is_finite();
        let mut fetched = [Fetched::default(); UNIT_CHUNK];
        for (slot, (_, pos, agent, stun, _, _, memo)) in fetched.iter_mut().zip(chunk.iter_mut()) {
            if steers(stun, pos) {
                *slot = frame.fetch(pos.0, agent, &mut memo.0);
            }
        }
        for (fetched, (id, pos, agent, stun, velocity, steering, _)) in
            fetched.iter().zip(chunk.iter_mut())
        {
            velocity.0 = if steers(stun, pos) {
                frame.steer(id.0, pos.0, agent, steering, fetched)
            } else {
                Vec2::ZERO
            };
        }
    });
}

/// Cells (Chebyshev) from a goal area within which a unit stopped by resting friends slides
/// on toward room at the area's edge instead of settling.
const ROOM_REACH: u32 = 4;

/// How many touching bodies a unit's motion is kept out of (the first ones found).
pub(crate) const BLOCKERS: usize = 4;

/// Bodies closer than this many times the sum of their radii count as touching for
/// [`BLOCKERS`] (exactly touching: any slack held packed crowds back at their goal, 97.9%
/// instead of 98% arriving in `tests/arrival.rs`).
pub(crate) const TOUCHING: f32 = 1.0;

/// Where the resting friends that touch a unit stand, relative to its way.
#[derive(Clone, Copy, Debug, Default)]
struct RestingFriends {
    /// Within 66 degrees of the way (a unit in the notch between two touching friends has
    /// them at 60 degrees).
    ahead: bool,
    /// Within 30 degrees of the way.
    right_ahead: bool,
    /// 30 to 120 degrees to its left (counter-clockwise in world axes) or right.
    left: bool,
    right: bool,
}

impl RestingFriends {
    /// Adds a friend in direction `to` (unit length) from a unit bound along `way`.
    #[inline]
    fn add(&mut self, to: Vec2, way: Vec2) {
        let (along, across) = (to.dot(way), way.perp_dot(to));
        self.ahead |= along > 0.4;
        self.right_ahead |= along > 0.866;
        self.left |= across > 0.5 && along > -0.5;
        self.right |= across < -0.5 && along > -0.5;
    }
}

/// A resting friend closer than this many times the sum of the radii is in touch for
/// settling (contacts leave packed bodies a hair apart).
const SETTLE_TOUCH: f32 = 1.05;

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
    goal_box: Vec<GoalBox>,
    /// Each goal area's fill (`fill_goals`).
    fills: &'a GoalFills,
    /// The groups, for each one's army ([`crate::Groups::army`]).
    groups: &'a crate::Groups,
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
    ) -> Vec2 {
        let config = &self.data.config;
        let sc = &config.steering;
        let cell_size = self.map.grid().cell_size();
        let Fetched {
            cell,
            ideal,
            distance,
            near,
            clearance,
            class,
        } = *fetched;

        // Where the unit is bound: along the field, or inside its goal area to the cells the
        // area fills next. `distance` `None`: farther than `near_goal`, so not in the goal
        // and not slowing down.
        let g = usize::from(agent.group.0);
        let far = self
            .goal_box
            .get(g)
            .is_none_or(|b| b.chebyshev(cell) as f32 > self.near_goal);
        let distance = (!far).then(|| {
            distance.unwrap_or_else(|| {
                self.field(agent, class)
                    .and_then(|f| f.integration().distance(cell))
                    .map_or(f32::INFINITY, |d| d as f32)
            })
        });
        let in_goal = distance.is_some_and(|d| d <= sc.arrival_distance);
        // Inside a goal area of more than one cell the area's fill says where to go
        // (`horde_core::GoalFill`): on to the next free cells to fill, or rest.
        let was_resting = steering.arrived || steering.settled;
        let fill = self
            .fills
            .get(agent.group.0, class)
            .map_or(FillWay::Outside, |f| {
                f.way(self.map.grid(), pos, was_resting)
            });
        let in_area = fill != FillWay::Outside;
        let (way, distance) = match fill {
            FillWay::Toward(point) => ((point - pos).normalize_or_zero(), None),
            FillWay::Rest => (Vec2::ZERO, None),
            FillWay::Outside => (ideal, distance),
        };
        // A goal cell the fill does not cover (a one-cell goal, or a cell only another layer
        // can stand in, such as water for hover units): the unit arrives there.
        let at_goal = fill == FillWay::Rest || (in_goal && !in_area);

        // Step 5: separation, and where resting friends touch us: a loop over contiguous
        // slices with local accumulators, the hottest of the frame. The square root and
        // the division are taken only inside the range: in a packed crowd most candidates
        // are outside it (nine of thirteen in the 1M lattice), and computing them for every
        // candidate, to keep the loop free of branches, cost more than the branch (LLVM
        // turns the select back into one on x86 anyway).
        let army = self.groups.army(agent.group.0);
        let mut separation = Vec2::ZERO;
        let mut rest = RestingFriends::default();
        let mut stacked = false;
        // The directions (from them to us) of the first few bodies we touch: our own motion
        // may not push into them (contacts would only push us back).
        let mut blockers = [Vec2::ZERO; BLOCKERS];
        let mut blocked_by = 0;
        let push_from = |others: &[NeighbourInfo]| {
            for other in others {
                let away = pos - other.pos;
                let d2 = away.length_squared();
                let touch = agent.radius + other.radius;
                let range = touch * sc.separation_range;
                let inside = d2 < range * range && other.id != id;
                if inside {
                    let d = d2.sqrt();
                    if d > 1e-6 {
                        separation += separation_push(away, d, touch, sc);
                        // Resting units of other armies give way (contacts move them):
                        // they do not block. Resting friends do: they are not pushed aside.
                        let gives_way = other.at_rest && other.army != army;
                        if d < touch * TOUCHING && blocked_by < BLOCKERS && !gives_way {
                            blockers[blocked_by] = away / d;
                            blocked_by += 1;
                        }
                        if other.at_rest && other.army == army && d < touch * SETTLE_TOUCH {
                            rest.add(-away / d, way);
                        }
                    } else {
                        stacked = true;
                    }
                }
            }
        };
        self.neighbours
            .for_each_candidate(pos, agent.radius, sc.separation_range, near, push_from);
        if stacked {
            // Someone stands exactly on us: leave along a direction fixed per unit.
            let n = unit_noise(config.seed, id, 0);
            separation += Vec2::new(n, 1.0 - n.abs()).normalize_or(Vec2::X) * sc.separation_range;
        }

        // Rest (docs/behaviour.md, "Bodies and crowds"): at the goal (a one-cell goal, or where its
        // area's fill says), or, outside a goal area, where the way on is closed: a resting friend
        // right ahead, or one within 66 degrees ahead with a side closed by another resting friend
        // or a wall. A unit stopped ahead with both sides open slides along what stops it (to its
        // avoidance side), so a blob grows compact. Resting units stand still; contacts and forces
        // move them, and they rest where they are left (or walk on, once their way opens).
        let grid = self.map.grid();
        let cost = self.map.cost_field(agent.layer);
        let wall = |dir: Vec2| {
            grid.cell_at(pos + dir * (agent.radius + 0.5 * cell_size))
                .is_none_or(|c| cost.get(c) == horde_core::WALL)
        };
        let left = way.perp();
        // Outside a goal area that still has room at its edge, a unit close to the area
        // walks on: the area takes it; stopped by resting friends, it slides along them
        // toward that room (the field leads to the nearest goal cells, which may be the
        // taken ones). Farther out it settles: sliding round a whole blob toward room on
        // the far side would never end.
        let near_area = self
            .goal_box
            .get(g)
            .is_some_and(|b| b.chebyshev(cell) <= ROOM_REACH);
        let room = self
            .fills
            .get(agent.group.0, class)
            .is_some_and(GoalFill::has_room);
        let walks_on = room && near_area;
        let may_settle = !in_area && !walks_on;
        let ahead_closed = rest.ahead && !in_area;
        let resting = at_goal
            || (may_settle
                && (rest.right_ahead
                    || (rest.ahead && (rest.left || rest.right || wall(left) || wall(-left)))));
        steering.arrived = resting && (in_goal || in_area);
        steering.settled = resting && !(in_goal || in_area);
        if steering.arrived && steering.arrived_frame.is_none() {
            steering.arrived_frame = Some(self.data.clock.frame + 1);
        }
        if resting {
            return Vec2::ZERO;
        }
        let way = if ahead_closed {
            left * f32::from(steering.avoid_side)
        } else {
            way
        };

        // Steps 2-4: probe only near walls (the clearance field says how far they are). The
        // probe's farthest point is the end of an edge ray; every point of a wall cell at
        // Chebyshev distance `c` is at least `c - 1` cells away from anywhere in the unit's
        // cell, so clearance `c > reach + 1` means no ray can hit.
        let ahead = agent.radius + sc.probe_length;
        let aside = agent.radius * sc.probe_inflate;
        let reach = (ahead * ahead + aside * aside).sqrt() / cell_size;
        let avoid = if way == Vec2::ZERO || f32::from(clearance) > reach + 1.0 {
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
        let slow = distance.map_or(1.0, |d| (d / sc.slow_distance).clamp(0.25, 1.0));
        let speed = if avoid == Vec2::ZERO && separation == Vec2::ZERO {
            0.0
        } else {
            agent.max_speed * slow
        };
        // Separation also pushes directly (not only by turning the heading): in a jam
        // everyone heads the same way, and the push spreads it. The sum is the unit's own
        // motion, so it never exceeds the top speed (docs/behaviour.md, "Bodies and crowds").
        let own = steering.heading * speed
            + separation.clamp_length_max(2.0) * (agent.max_speed * sc.separation_push);
        let mut own = own.clamp_length_max(agent.max_speed);
        // A body we touch is not walked into: the part of the motion toward it goes.
        for &normal in &blockers[..blocked_by] {
            own = without_part_into(own, normal);
        }
        own
    }
}

/// The bounding box of a goal's cells.
#[derive(Clone, Copy, Debug)]
struct GoalBox {
    min: Cell,
    max: Cell,
}

impl GoalBox {
    fn around(cells: &[Cell]) -> Self {
        let first = cells.first().copied().unwrap_or(Cell::new(0, 0));
        cells.iter().fold(
            Self {
                min: first,
                max: first,
            },
            |b, c| Self {
                min: Cell::new(b.min.x.min(c.x), b.min.y.min(c.y)),
                max: Cell::new(b.max.x.max(c.x), b.max.y.max(c.y)),
            },
        )
    }

    /// Chebyshev distance in cells from `cell` to the box: a lower bound of the path distance
    /// to any goal cell (a step, straight or diagonal, costs at least one cell).
    fn chebyshev(&self, cell: Cell) -> u32 {
        let dx = self
            .min
            .x
            .saturating_sub(cell.x)
            .max(cell.x.saturating_sub(self.max.x));
        let dy = self
            .min
            .y
            .saturating_sub(cell.y)
            .max(cell.y.saturating_sub(self.max.y));
        dx.max(dy)
    }
}
