//! Where each unit stands with its goal: moving, arrived, settled, or unable to reach it at
//! all; per group, the counts and the arrival times.
//!
//! Reachability is read from the connected [`Regions`] of each layer's open cells (built once
//! per terrain version, on the first question after an edit): a unit can reach its group's
//! goal when its cell's region holds a goal cell. Units never cross walls, so the answer
//! changes only when the goal or the terrain does. Nothing here runs inside the frame.

use hecs::World;
use horde_core::{
    Agent, Cell, GroupId, Layer, MAX_SIZE_CLASSES, Map, Position, Regions, Steering, UnitId,
};
use parking_lot::{Mutex, MutexGuard};

use crate::Horde;
use crate::groups::Groups;
use horde_core::SimConfig;

/// One unit's standing with its group's goal (see `docs/run-output.md` for how `horde run`
/// counts them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnitStatus {
    /// On its way (or pushed off its rest and on its way back).
    Moving,
    /// Not at rest and held in place: it has stayed within a body radius of one spot for
    /// [`horde_core::BLOCKED_AFTER`] seconds (behind a jam, pressed in a corridor). It keeps
    /// trying, and is `Moving` again once it gets on.
    Blocked,
    /// At rest on a cell of its goal.
    Arrived,
    /// At rest outside its goal, in its army's resting blob: joined to the goal through
    /// resting units of its army, where no free room nearer the goal was within its reach
    /// (docs/behaviour.md, "Coming to rest").
    Settled,
    /// No walk leads from where it stands to any goal cell on its layer, or none where its
    /// body fits (its size class's cost field, docs/behaviour.md, "Unit sizes": a goal
    /// cell too close to walls for a big unit is unreachable for it).
    Unreachable,
}

/// Which of a group's units can reach its goal ([`Horde::reachability`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupReach {
    /// The group.
    pub group: GroupId,
    /// How many of its units can reach the goal.
    pub reachable: usize,
    /// The units that cannot, in id order.
    pub unreachable: Vec<UnitId>,
}

/// A group's counts and arrival times ([`Horde::group_status`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GroupStatus {
    /// The group.
    pub group: GroupId,
    /// Its units.
    pub units: usize,
    /// Units by [`UnitStatus`]; the five add up to `units`.
    pub moving: usize,
    /// See [`UnitStatus::Blocked`].
    pub blocked: usize,
    /// See [`UnitStatus::Arrived`].
    pub arrived: usize,
    /// See [`UnitStatus::Settled`].
    pub settled: usize,
    /// See [`UnitStatus::Unreachable`].
    pub unreachable: usize,
    /// The frame counter when the group's goal was last set: arrival times count from here.
    pub goal_frame: u64,
    /// Frames from `goal_frame` to the first and the last arrival of a unit arrived now
    /// (`None` while none is).
    pub first_arrival: Option<u64>,
    /// See `first_arrival`.
    pub last_arrival: Option<u64>,
    /// The unit it follows, or the one it lost and why (docs/behaviour.md, "Unit targets").
    pub target: crate::TargetState,
}

/// The regions of each layer and prepared size class, rebuilt when that cost field has
/// changed, and the regions of each group's goal, found again when its goal or the regions
/// change.
#[derive(Debug, Default)]
pub(crate) struct RegionCache {
    state: Mutex<CacheState>,
}

/// Slots per (class, layer): `class * Layer::COUNT + layer`.
const SLOTS: usize = MAX_SIZE_CLASSES as usize * Layer::COUNT;

fn slot(layer: Layer, class: u8) -> usize {
    usize::from(class) * Layer::COUNT + layer as usize
}

#[derive(Debug, Default)]
struct CacheState {
    /// The regions of each (class, layer) cost field the map has ([`slot`]).
    regions: Vec<Option<Regions>>,
    /// Per group: what its goal regions were found for (its goal changes and every slot's
    /// cost version), and per slot the sorted regions of its goal cells.
    goals: Vec<(GoalKey, Vec<Vec<u32>>)>,
}

type GoalKey = (u64, [Option<u64>; SLOTS]);

impl RegionCache {
    /// The regions, and each group's goal regions per layer and class, brought up to date.
    pub(crate) fn reach_test<'a>(
        &'a self,
        map: &'a Map,
        groups: &Groups,
        config: &'a SimConfig,
    ) -> ReachTest<'a> {
        let mut state = self.state.lock();
        let CacheState { regions, goals } = &mut *state;
        regions.resize_with(SLOTS, || None);
        // Only the slots some group's units path in (and their layer's class 0, which every
        // question reads first): regions are 4 bytes a cell, and a map prepares cost fields
        // for layers and classes no unit uses (on a 4096x4096 map each unneeded slot held
        // 67 MB).
        let mut needed = [false; SLOTS];
        for g in 0..groups.len() {
            let group = groups.get(g as u16).expect("in range");
            for class in 0..MAX_SIZE_CLASSES {
                for layer in Layer::ALL {
                    if group.field(layer, class).is_some() {
                        needed[slot(layer, class)] = true;
                        needed[slot(layer, 0)] = true;
                    }
                }
            }
        }
        let mut versions = [None; SLOTS];
        for class in 0..MAX_SIZE_CLASSES {
            for layer in Layer::ALL {
                let s = slot(layer, class);
                let cost = map.prepared_class_cost_field(layer, class);
                let Some(cost) = cost.filter(|_| needed[s]) else {
                    regions[s] = None;
                    continue;
                };
                versions[s] = Some(cost.version());
                if regions[s].as_ref().is_none_or(|r| !r.is_current(cost)) {
                    regions[s] = Some(Regions::of(cost));
                }
            }
        }
        goals.truncate(groups.len());
        for g in 0..groups.len() {
            let group = groups.get(g as u16).expect("in range");
            let key = (group.goal_changes, versions);
            if goals.get(g).is_some_and(|(k, _)| *k == key) {
                continue;
            }
            let found = regions
                .iter()
                .map(|r| {
                    r.as_ref()
                        .map(|r| r.regions_of(group.goal.cells()))
                        .unwrap_or_default()
                })
                .collect();
            if g < goals.len() {
                goals[g] = (key, found);
            } else {
                goals.push((key, found));
            }
        }
        ReachTest { map, config, state }
    }
}

/// The regions and goal regions one question reads.
pub(crate) struct ReachTest<'a> {
    map: &'a Map,
    config: &'a SimConfig,
    /// Every slot's regions and every group's goal regions up to date.
    state: MutexGuard<'a, CacheState>,
}

impl ReachTest<'_> {
    /// Whether a unit of `agent` at `pos` can reach its group's goal (docs/behaviour.md,
    /// "Unit sizes"): on its layer's regions; and for a size class above 0 also on its
    /// class's, where it counts from the cells within `class` cells of it where its body
    /// fits (a body pressed against a wall stands where it does not).
    fn reaches(&self, agent: &Agent, pos: glam::Vec2) -> bool {
        let cell: Cell = self.map.grid().clamped_cell_at(pos);
        if !self.reaches_in(agent, cell, 0) {
            return false;
        }
        let class = self
            .config
            .size_class(agent.radius, self.map.grid().cell_size());
        class == 0 || self.reaches_in(agent, cell, class)
    }

    fn reaches_in(&self, agent: &Agent, cell: Cell, class: u8) -> bool {
        let Some((_, goals)) = self.state.goals.get(usize::from(agent.group.0)) else {
            return false;
        };
        let s = slot(agent.layer, class);
        let Some(regions) = &self.state.regions[s] else {
            // The class has no cost field yet (no unit of it was given a field): the
            // layer's answer stands.
            return class != 0;
        };
        let goals = &goals[s];
        if regions.in_any(cell, goals) {
            return true;
        }
        if regions.region(cell).is_some() {
            return false;
        }
        if class == 0 {
            return (regions.regions_around(cell).iter()).any(|r| goals.binary_search(r).is_ok());
        }
        let r = i64::from(class);
        let (x, y) = (i64::from(cell.x), i64::from(cell.y));
        ((y - r)..=(y + r)).any(|ny| {
            ((x - r)..=(x + r)).any(|nx| {
                let (Ok(nx), Ok(ny)) = (u32::try_from(nx), u32::try_from(ny)) else {
                    return false;
                };
                regions.in_any(Cell::new(nx, ny), goals)
            })
        })
    }
}

impl Horde {
    /// Per group, which of `world`'s units can reach the group's goal: a unit cannot when no
    /// walk from its cell leads to a goal cell on its layer (it stands in a sealed pocket, or
    /// the goal does). Costs one flood fill of the map per layer after a terrain edit, then
    /// a lookup per unit.
    #[must_use]
    pub fn reachability(&self, world: &World) -> Vec<GroupReach> {
        let map = self.data.map.read();
        let groups = self.data.groups.read();
        let test = self.regions.reach_test(&map, &groups, &self.data.config);
        let mut out: Vec<GroupReach> = (0..groups.len())
            .map(|g| GroupReach {
                group: GroupId(g as u16),
                ..GroupReach::default()
            })
            .collect();
        for (id, pos, agent) in world.query::<(&UnitId, &Position, &Agent)>().iter() {
            let Some(reach) = out.get_mut(usize::from(agent.group.0)) else {
                continue;
            };
            if test.reaches(agent, pos.0) {
                reach.reachable += 1;
            } else {
                reach.unreachable.push(*id);
            }
        }
        for reach in &mut out {
            reach.unreachable.sort_unstable();
        }
        out
    }

    /// Calls `f` with a function that tells a unit's [`UnitStatus`] from its components, for
    /// a caller that reads statuses in its own query over the world (the C ABI's unit reads
    /// do). The reach test behind it (the map's regions and the goals') is brought up to date
    /// once, for the call.
    pub fn with_unit_status<R>(
        &self,
        f: impl FnOnce(&dyn Fn(&Position, &Agent, &Steering) -> UnitStatus) -> R,
    ) -> R {
        let map = self.data.map.read();
        let groups = self.data.groups.read();
        let test = self.regions.reach_test(&map, &groups, &self.data.config);
        f(&|pos, agent, steering| status(&test, pos.0, agent, steering))
    }

    /// Per group: its units by [`UnitStatus`], and the arrival times of those arrived now,
    /// counted from the group's latest goal change. Saved state, so a run resumed from a
    /// snapshot reports what the uninterrupted run does.
    #[must_use]
    pub fn group_status(&self, world: &World) -> Vec<GroupStatus> {
        let map = self.data.map.read();
        let groups = self.data.groups.read();
        let test = self.regions.reach_test(&map, &groups, &self.data.config);
        let mut out: Vec<GroupStatus> = (0..groups.len())
            .map(|g| GroupStatus {
                group: GroupId(g as u16),
                goal_frame: groups.get(g as u16).map_or(0, |g| g.goal_frame),
                target: groups
                    .get(g as u16)
                    .map_or_else(Default::default, |g| g.target_state),
                ..GroupStatus::default()
            })
            .collect();
        for (pos, agent, steering) in world.query::<(&Position, &Agent, &Steering)>().iter() {
            let Some(s) = out.get_mut(usize::from(agent.group.0)) else {
                continue;
            };
            s.units += 1;
            match status(&test, pos.0, agent, steering) {
                UnitStatus::Moving => s.moving += 1,
                UnitStatus::Blocked => s.blocked += 1,
                UnitStatus::Arrived => {
                    s.arrived += 1;
                    if let Some(f) = steering.arrived_frame {
                        let t = f.saturating_sub(s.goal_frame);
                        s.first_arrival = Some(s.first_arrival.map_or(t, |a| a.min(t)));
                        s.last_arrival = Some(s.last_arrival.map_or(t, |a| a.max(t)));
                    }
                }
                UnitStatus::Settled => s.settled += 1,
                UnitStatus::Unreachable => s.unreachable += 1,
            }
        }
        out
    }
}

/// A unit's status: arrived and settled as its steering says, unreachable before settled (a
/// unit resting against friends in a sealed pocket is still cut off), then blocked or
/// moving.
pub(crate) fn status(
    test: &ReachTest<'_>,
    pos: glam::Vec2,
    agent: &Agent,
    steering: &Steering,
) -> UnitStatus {
    if steering.arrived {
        UnitStatus::Arrived
    } else if !test.reaches(agent, pos) {
        UnitStatus::Unreachable
    } else if steering.settled {
        UnitStatus::Settled
    } else if steering.is_blocked() {
        UnitStatus::Blocked
    } else {
        UnitStatus::Moving
    }
}
