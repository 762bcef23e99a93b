//! [`Horde`]: horde's stages, resources and worker pool, running on a `hecs::World` the
//! caller owns (bring your own world). Its snapshots are in `persist.rs`, its state hash in
//! `state_hash.rs`, what it reports about reaching goals in `reach.rs`.

mod persist;
mod reach;
mod state_hash;

pub use reach::{GroupReach, GroupStatus, UnitStatus};
pub use state_hash::state_hash;

use std::ops::Deref;
use std::time::Duration;

use glam::Vec2;
use hecs::{Entity, World};
use horde_core::{
    Agent, Cell, Clearance, FieldCache, ForceField, ForceFieldId, ForceManager, FormationOrder,
    GoalSet, GroupId, Layer, Map, SpatialGrid, SpawnError, Steering, Terrain, UnitId, UnitSpec,
    UnitTarget,
};

use crate::SimError;
use crate::formations::Formations;
use crate::frame::{
    FrameClock, FrameData, Housekeeping, Neighbours, Shared, StageErrors, bucket_side, build_graph,
};
use crate::groups::{Group, Groups};
use crate::hierarchy_nav::HierarchyNav;
use crate::job_graph::{FrameReport, JobGraph, WorkerPool};
use crate::unit::{Unit, UnitComponents, UnitRef};
use horde_core::SimConfig;

/// Horde's stages, resources and worker pool, running on a world the caller owns.
///
/// The caller's `hecs::World` holds the units, spawned with [`Horde::spawn`] (horde's
/// components) or [`Horde::spawn_with`] (horde's and the caller's, in one archetype), and
/// any other entities of the caller's, which horde never touches. Each [`Horde::step`] runs
/// one frame on the world's units. The caller may add its own components to units freely;
/// it must not remove horde's (a unit missing one is no longer seen by the stages).
///
/// Remove a unit with [`Horde::despawn`], which wakes the sleeping units beside it.
/// `world.despawn` is allowed too (the unit is gone from the next frame on) but wakes
/// nobody: units asleep around the hole stay put until something else wakes them.
///
/// [`Horde::snapshot`] saves horde's state and its components of every unit; the caller
/// saves its own components keyed by [`UnitId`], and [`Horde::from_snapshot_with`] puts them
/// back as it respawns the units, returning each unit's new entity. The README's "Bring your
/// own world" is a whole game loop, compiled and run as a test.
pub struct Horde {
    pub(crate) data: FrameData,
    graph: JobGraph<FrameData>,
    pool: WorkerPool,
    last_report: Option<FrameReport>,
    /// Where it came from (saved in snapshots).
    pub(crate) origin: crate::snapshot::Origin,
    /// Each layer's connected regions, for [`Horde::reachability`].
    pub(crate) regions: reach::RegionCache,
}

/// How far from an edited cell (in cells, beyond the unit's radius) sleeping units wake.
const EDIT_WAKE_CELLS: f32 = 2.0;

/// How far beyond the disc of a unit that left the world (in cells) sleeping units wake:
/// the ones that may move into the room it left.
const VANISHED_WAKE_CELLS: f32 = 1.0;

impl std::fmt::Debug for Horde {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Horde")
            .field("frame", &self.data.clock.frame)
            .field("units", &self.data.housekeeping.next_unit)
            .finish_non_exhaustive()
    }
}

impl Horde {
    /// Horde on `map` with `config` (starts `config.threads` threads, the caller included).
    pub fn new(map: Map, config: SimConfig) -> Result<Self, SimError> {
        config.validate()?;
        let map_fingerprint = map.fingerprint();
        let clearance = Layer::ALL
            .iter()
            .map(|&l| Clearance::build(map.cost_field(l)))
            .collect();
        let cell = bucket_side(0.5, config.steering.separation_range);
        let grid = SpatialGrid::new(map.grid(), cell).map_err(SimError::Buckets)?;
        let data = FrameData {
            world: World::new(),
            clearance: Shared::new(clearance),
            fields: Shared::new(FieldCache::new(config.flow)),
            groups: Shared::default(),
            forces: Shared::new(ForceManager::new()),
            neighbours: Shared::new(Neighbours::new(grid)),
            map: Shared::new(map),
            config,
            clock: FrameClock::default(),
            edits: Shared::default(),
            hierarchy: Shared::default(),
            errors: StageErrors::default(),
            quarantine: Shared::default(),
            contacts: Shared::default(),
            lists: Shared::default(),
            walled_in: Shared::default(),
            goal_fills: Shared::default(),
            crowd_fields: Shared::default(),
            formations: Shared::default(),
            sleep: Shared::default(),
            housekeeping: Housekeeping::default(),
        };
        Ok(Self {
            data,
            graph: build_graph()?,
            pool: WorkerPool::new(config.threads)?,
            last_report: None,
            origin: crate::snapshot::Origin {
                map: map_fingerprint,
                ..Default::default()
            },
            regions: reach::RegionCache::default(),
        })
    }

    /// The settings.
    #[must_use]
    pub fn config(&self) -> &SimConfig {
        &self.data.config
    }

    /// Where this simulation came from (saved in its snapshots; see
    /// [`Origin`](crate::Origin)).
    #[must_use]
    pub fn origin(&self) -> &crate::snapshot::Origin {
        &self.origin
    }

    /// Names the scenario this simulation runs and gives its fingerprint (any hash of what
    /// defines the scenario, 0 for none), saved in snapshots so that
    /// [`Snapshot::differences`](crate::Snapshot::differences) detects a snapshot of
    /// another scenario. The name is cut to
    /// [`MAX_ORIGIN_NAME_BYTES`](crate::MAX_ORIGIN_NAME_BYTES).
    pub fn set_scenario(&mut self, name: &str, fingerprint: u64) {
        self.origin.name = crate::snapshot::origin_name(name);
        self.origin.scenario = fingerprint;
    }

    /// The map (terrain and costs).
    pub fn map(&self) -> impl Deref<Target = Map> + '_ {
        self.data.map.read()
    }

    /// The flow fields.
    pub fn fields(&self) -> impl Deref<Target = FieldCache> + '_ {
        self.data.fields.read()
    }

    /// Portal graphs and hierarchical path requests (empty with `Navigation::Flat`).
    pub fn hierarchy(&self) -> impl Deref<Target = HierarchyNav> + '_ {
        self.data.hierarchy.read()
    }

    /// The groups and their goals.
    pub fn groups(&self) -> impl Deref<Target = Groups> + '_ {
        self.data.groups.read()
    }

    /// The active force fields.
    pub fn forces(&self) -> impl Deref<Target = ForceManager> + '_ {
        self.data.forces.read()
    }

    /// Number of frames run so far.
    #[must_use]
    pub fn frame(&self) -> u64 {
        self.data.clock.frame
    }

    /// Per-stage wall times of the last frame.
    #[must_use]
    pub fn last_report(&self) -> Option<&FrameReport> {
        self.last_report.as_ref()
    }

    /// Per-stage wall times of the last frame, as `(stage, time)` in declaration order.
    #[must_use]
    pub fn stage_times(&self) -> Vec<(String, Duration)> {
        self.last_report
            .iter()
            .flat_map(|r| r.stages().iter().map(|s| (s.name.to_string(), s.duration)))
            .collect()
    }

    /// Adds a group heading for `goal`; returns its id.
    pub fn add_group(&mut self, goal: GoalSet) -> Result<GroupId, SimError> {
        self.check_goal(&goal)?;
        self.push_group(goal)
    }

    /// Adds a group without checking its goal (the caller has).
    pub(crate) fn push_group(&mut self, goal: GoalSet) -> Result<GroupId, SimError> {
        let groups = self.data.groups.get_mut();
        let id = u16::try_from(groups.list.len()).map_err(|_| SimError::TooManyGroups {
            max: usize::from(u16::MAX) + 1,
        })?;
        groups.list.push(Group {
            goal,
            fields: [None; Layer::COUNT],
            sized: Default::default(),
            goal_changes: 0,
            goal_frame: self.data.clock.frame,
            target: None,
            target_state: crate::TargetState::None,
            target_seen: None,
        });
        groups.refresh_armies();
        Ok(GroupId(id))
    }

    /// Gives group `group` a new goal (takes effect next frame; arrived units set off again);
    /// a group that followed a unit stops following it.
    /// Returns which of the group's units can reach it (see [`Horde::reachability`]).
    pub fn set_group_goal(
        &mut self,
        world: &mut World,
        group: GroupId,
        goal: GoalSet,
    ) -> Result<GroupReach, SimError> {
        self.check_goal(&goal)?;
        self.data.set_goal(world, group, goal)?;
        // A goal given by the caller ends following a unit.
        (self.data.groups.get_mut().group_mut(group)?).end_following(crate::TargetState::None);
        let mut reach = self.reachability(world);
        Ok(reach.swap_remove(usize::from(group.0)))
    }

    /// Gives group `group` a formation (docs/behaviour.md, "Formations"), or with `None`
    /// takes it away (the group moves as a blob again). The next frame hands the slots out
    /// to the group's units where they stand; its units at rest set off again.
    pub fn set_formation(
        &mut self,
        world: &mut World,
        group: GroupId,
        order: Option<FormationOrder>,
    ) -> Result<(), SimError> {
        if let Some(order) = &order {
            order.validate()?;
        }
        self.data.groups.get_mut().group_mut(group)?;
        self.data.formations.get_mut().set(group.0, order);
        for (agent, steering) in world.query_mut::<(&Agent, &mut Steering)>() {
            if agent.group == group {
                steering.set_off();
                steering.wake();
            }
        }
        Ok(())
    }

    /// Has group `group` follow unit `target.unit` (docs/behaviour.md, "Unit targets"): its
    /// goal moves with the unit from now on (at once, and every frame the unit is in another
    /// cell), a formation's anchor stops `target.distance` from it facing it, a blob gathers
    /// within that distance of it. With `None` the group stops following and keeps its
    /// present goal. The unit must exist and belong to another group.
    pub fn set_group_target(
        &mut self,
        world: &mut World,
        group: GroupId,
        target: Option<UnitTarget>,
    ) -> Result<(), SimError> {
        self.data.groups.get_mut().group_mut(group)?;
        let Some(target) = target else {
            (self.data.groups.get_mut().group_mut(group)?).end_following(crate::TargetState::None);
            return Ok(());
        };
        target.validate()?;
        let theirs = world
            .query::<(&UnitId, &Agent)>()
            .iter()
            .find_map(|(id, agent)| (*id == target.unit).then_some(agent.group))
            .ok_or(SimError::NoUnitWithId(target.unit))?;
        if theirs == group {
            return Err(SimError::TargetInGroup {
                unit: target.unit,
                group,
            });
        }
        let g = self.data.groups.get_mut().group_mut(group)?;
        g.target = Some(target);
        g.target_seen = None;
        g.target_state = crate::TargetState::Following(target.unit);
        Ok(())
    }

    /// Each group's formation.
    pub fn formations(&self) -> impl Deref<Target = Formations> + '_ {
        self.data.formations.read()
    }

    fn check_goal(&self, goal: &GoalSet) -> Result<(), SimError> {
        let map = self.data.map.read();
        for &cell in goal.cells() {
            if cell.x >= map.width() || cell.y >= map.height() {
                return Err(SimError::CellOutside {
                    cell,
                    width: map.width(),
                    height: map.height(),
                });
            }
            if !map.is_open_underfoot(cell) {
                return Err(SimError::GoalInWall(cell));
            }
        }
        Ok(())
    }

    /// Spawns a unit into `world` after checking `spec` (see [`UnitSpec::validate`]).
    pub fn spawn(&mut self, world: &mut World, spec: UnitSpec) -> Result<Entity, SimError> {
        let unit = self.new_unit(spec)?;
        Ok(world.spawn(unit.bundle()))
    }

    /// Spawns a unit into `world` with the caller's own components beside horde's, in one
    /// archetype (adding them after [`Horde::spawn`] would move the unit to a second one).
    /// `spec` is checked as by [`Horde::spawn`]; nothing is spawned when it is refused.
    /// Any of horde's own components in `components` (the ones [`Horde::spawn`] adds) are
    /// replaced by the unit's. The README's "Bring your own world" shows it in a game loop.
    pub fn spawn_with(
        &mut self,
        world: &mut World,
        spec: UnitSpec,
        components: impl hecs::DynamicBundle,
    ) -> Result<Entity, SimError> {
        let unit = self.new_unit(spec)?;
        let mut builder = hecs::EntityBuilder::new();
        builder.add_bundle(components).add_bundle(unit.bundle());
        Ok(world.spawn(builder.build()))
    }

    /// The entity of the unit with id `id` in `world`, if there is one: a scan over the
    /// units, for a lookup now and then (keep your own map for lookups every frame; the
    /// restore of a snapshot gives one back, see [`Horde::from_snapshot_with`]).
    #[must_use]
    pub fn entity_of(world: &World, id: UnitId) -> Option<Entity> {
        world
            .query::<(Entity, &UnitId)>()
            .iter()
            .find_map(|(entity, unit)| (*unit == id).then_some(entity))
    }

    /// The unit `spec` describes, checked, with the next id (taken only on success), its
    /// group's field for its layer and size ready, and the neighbour buckets sized by the
    /// first unit.
    fn new_unit(&mut self, spec: UnitSpec) -> Result<Unit, SimError> {
        spec.validate(self.data.map.get_mut())?;
        // Ids never wrap (a snapshot may carry any counter): the last one stays unused.
        let next = (self.data.housekeeping.next_unit.checked_add(1))
            .ok_or(SpawnError::IdsExhausted(self.data.housekeeping.next_unit))?;
        let class =
            (self.data.config).size_class(spec.radius, self.data.map.get_mut().grid().cell_size());
        self.data.ensure_field(spec.group, spec.layer, class)?;
        let map = self.data.map.get_mut();
        // The first unit sizes the neighbour buckets (at least for radius 0.5): a crowd of
        // one size shares them. A bigger unit spawned later does not widen them (everyone
        // would test dozens of neighbours); it is a large unit, kept apart (`LargeUnits`).
        // If the crowd turns out unlike its first unit, `step` refits them.
        let needed = bucket_side(spec.radius, self.data.config.steering.separation_range);
        let neighbours = self.data.neighbours.get_mut();
        if self.data.housekeeping.next_unit == 0 && needed > neighbours.grid.cell_size() {
            let grid = SpatialGrid::new(map.grid(), needed).map_err(SimError::Buckets)?;
            *neighbours = Neighbours::new(grid);
        }
        let id = UnitId(self.data.housekeeping.next_unit);
        self.data.housekeeping.next_unit = next;
        Ok(Unit::at_rest(id, spec.position, spec.mass, spec.agent()))
    }

    /// Removes a unit from `world` (a unit that died, say), quarantined or not, and wakes the
    /// sleeping units beside it, which may move into the room it leaves (docs/behaviour.md,
    /// "Sleeping"). Returns its id. `world.despawn` removes a unit as well, but wakes nobody.
    pub fn despawn(&mut self, world: &mut World, entity: Entity) -> Result<UnitId, SimError> {
        let id = (world.get::<&UnitId>(entity).map(|id| *id))
            .map_err(|_| SimError::NoSuchUnit(entity))?;
        let disc = world
            .query_one_mut::<(&horde_core::Position, &Agent)>(entity)
            .ok()
            .map(|(pos, agent)| (pos.0, agent.radius));
        world
            .despawn(entity)
            .map_err(|_| SimError::NoSuchUnit(entity))?;
        if let Some((pos, radius)) = disc {
            let size = self.data.map.get_mut().grid().cell_size();
            self.data
                .housekeeping
                .wake
                .discs
                .push(pos, radius + size * VANISHED_WAKE_CELLS);
        }
        Ok(id)
    }

    /// Adds a force field (it acts from the next frame on).
    pub fn add_force(&mut self, field: ForceField) -> ForceFieldId {
        self.data.forces.get_mut().add(field)
    }

    /// Changes the terrain of `cell` (placing or destroying a wall): the fields that depend
    /// on the changed costs are repaired next frame (only what the edit can change).
    pub fn set_terrain(&mut self, cell: Cell, terrain: Terrain) -> Result<(), SimError> {
        let map = self.data.map.get_mut();
        if cell.x >= map.width() || cell.y >= map.height() {
            return Err(SimError::CellOutside {
                cell,
                width: map.width(),
                height: map.height(),
            });
        }
        let before = Layer::ALL.map(|layer| map.cost_field(layer).get(cell));
        let log = self.data.edits.get_mut();
        // Size classes' cost fields change around the cell (their clearance did): their
        // fields are repaired from these edits (docs/behaviour.md, "Unit sizes").
        map.set_terrain_with(cell, terrain, |c| {
            log.record_class(c.layer, c.class, c.version, c.cell, c.before);
        });
        for layer in Layer::ALL {
            let cost = map.cost_field(layer);
            if cost.get(cell) != before[layer as usize] {
                log.record(layer, cost.version(), cell, before[layer as usize]);
            }
        }
        let size = map.grid().cell_size();
        let centre = map.grid().cell_centre(cell);
        self.data
            .housekeeping
            .wake
            .discs
            .push(centre, size * (EDIT_WAKE_CELLS + 0.5));
        self.data.housekeeping.wake.edited = true;
        Ok(())
    }

    /// Runs one frame of `dt` seconds on `world`: the stage graph, once (its table is in
    /// ARCHITECTURE.md, "The frame").
    ///
    /// The graph starts with the exclusive stage `check_units` (units a caller broke are
    /// quarantined, the ones it reached wake) and ends with `quarantine_units` and
    /// `sort_units`: if the frame found the units' storage order scattered (consecutive units
    /// far apart on the map), the units are rewritten in map order so the next frames read
    /// memory in order; their `Entity` handles do not change, and components of the caller's
    /// move with their units (see `docs/design.md`, "Keeping units in map order"). It also
    /// refits the neighbour buckets when they do not fit the crowd (more than half the units
    /// too big for a bucket, or too small for one).
    pub fn step(&mut self, world: &mut World, dt: f32) -> Result<&FrameReport, SimError> {
        if !(dt.is_finite() && dt >= 0.0) {
            return Err(SimError::BadTimeStep(dt));
        }
        puffin::profile_function!();
        self.data.clock.dt = dt;
        std::mem::swap(&mut self.data.world, world);
        let outcome = self.graph.run(&self.pool, &mut self.data);
        std::mem::swap(&mut self.data.world, world);
        let report = outcome?;
        if let Some(failure) = self.data.housekeeping.failure.take() {
            return Err(failure);
        }
        self.data.clock.frame += 1;
        let errors = self.data.errors.take();
        if let Some(first) = errors.into_iter().next() {
            return Err(SimError::Stage(first));
        }
        Ok(self.last_report.insert(report))
    }

    /// How solid the bodies of `world`'s units are now: overlaps between units and with
    /// walls (see [`crate::BodyStats`]).
    #[must_use]
    pub fn body_stats(&self, world: &World) -> crate::BodyStats {
        crate::BodyStats::measure(world, &self.data.map.read(), |_| {})
    }

    /// How many units were awake after the last frame: not asleep (docs/behaviour.md,
    /// "Sleeping"). A frame in which none is awake and nothing reaches them runs no stage.
    #[must_use]
    pub fn awake_units(&self) -> usize {
        self.data.sleep.read().awake
    }

    /// How many units the last frame found inside a wall with no open cell within reach of
    /// the wall they stand in (walled in by a terrain edit): they stay where they are, and
    /// are counted here every frame until an edit opens a way (see `horde_core::body`).
    #[must_use]
    pub fn last_walled_in(&self) -> usize {
        self.data.walled_in.read().0
    }

    /// The frame counter when group `group`'s goal was last set (by `add_group` or
    /// `set_group_goal`); `None` for a group that does not exist. A unit's arrival time is
    /// `(arrived_frame - goal_frame)` frames.
    #[must_use]
    pub fn group_goal_frame(&self, group: GroupId) -> Option<u64> {
        self.data.groups.read().get(group.0).map(|g| g.goal_frame)
    }

    /// The units quarantined by the last frame (in id order): their position, velocity or
    /// stun stopped being finite, so they were taken out (see [`Quarantined`](horde_core::Quarantined)).
    #[must_use]
    pub fn last_quarantined(&self) -> &[UnitId] {
        &self.data.housekeeping.quarantined
    }

    /// A hash of the whole state: every unit's state (ids, positions, velocities, external
    /// velocities, stun, heading, avoidance side, arrival) in [`UnitId`] order, the
    /// quarantined units, the terrain, the groups' goals and the force fields (see
    /// [`state_hash`]). Equal on every machine and thread count for the same inputs, so
    /// lockstep peers can compare it to detect desyncs.
    #[must_use]
    pub fn state_hash(&self, world: &World) -> u64 {
        state_hash(self, world)
    }

    /// Every unit of `world` with its state, in [`UnitId`] order.
    #[must_use]
    pub fn unit_states(&self, world: &World) -> Vec<UnitState> {
        let map = self.data.map.read();
        let groups = self.data.groups.read();
        let test = self.regions.reach_test(&map, &groups, &self.data.config);
        let mut out: Vec<UnitState> = world
            .query::<(Entity, UnitComponents<'_>)>()
            .iter()
            .map(|(entity, parts)| {
                let u = UnitRef::of(parts);
                UnitState {
                    entity,
                    id: *u.id,
                    position: u.position.0,
                    velocity: u.velocity.0,
                    external: u.external.0,
                    stun: u.stun.0,
                    group: u.agent.group,
                    layer: u.agent.layer,
                    radius: u.agent.radius,
                    max_speed: u.agent.max_speed,
                    arrived: u.steering.arrived,
                    settled: u.steering.settled,
                    arrived_frame: u.steering.arrived_frame,
                    asleep: u.steering.asleep.is_some(),
                    status: reach::status(&test, u.position.0, u.agent, u.steering),
                }
            })
            .collect();
        out.sort_unstable_by_key(|u| u.id);
        out
    }
}

/// A snapshot of one unit's state, for callers reading results.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UnitState {
    /// The unit's entity.
    pub entity: Entity,
    /// Stable id.
    pub id: UnitId,
    /// Centre.
    pub position: Vec2,
    /// Self-propelled velocity.
    pub velocity: Vec2,
    /// Velocity from force fields.
    pub external: Vec2,
    /// Seconds of stun left.
    pub stun: f32,
    /// Group.
    pub group: GroupId,
    /// Layer.
    pub layer: Layer,
    /// Radius.
    pub radius: f32,
    /// Top self-propelled speed.
    pub max_speed: f32,
    /// Arrived: at rest in its goal area.
    pub arrived: bool,
    /// Settled: at rest outside its goal area, behind resting units of its group.
    pub settled: bool,
    /// The frame in which it first arrived since its group's goal was last set
    /// ([`Steering::arrived_frame`](horde_core::Steering)); with
    /// [`Horde::group_goal_frame`], its arrival time.
    pub arrived_frame: Option<u64>,
    /// Asleep: at rest among still neighbours, not simulated until something reaches it
    /// (docs/behaviour.md, "Sleeping"; [`Steering::asleep`]).
    pub asleep: bool,
    /// Where it stands with its goal (moving, arrived, settled, or unable to reach it).
    pub status: crate::UnitStatus,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Unit ids never wrap: once the counter (which a snapshot may carry at any value) has
    /// no id left, spawning is refused and nothing changes.
    #[test]
    fn spawning_past_the_last_unit_id_is_refused() {
        let map = Map::new(horde_core::Grid::new(8, 8).unwrap());
        let mut horde = Horde::new(map, SimConfig::default()).unwrap();
        let mut world = World::new();
        let group = horde.add_group(GoalSet::single(Cell::new(1, 1))).unwrap();
        horde.data.housekeeping.next_unit = u32::MAX - 1;
        let spec = UnitSpec::at(glam::Vec2::new(4.5, 4.5)).with_group(group);
        horde.spawn(&mut world, spec).unwrap();
        let refused = horde.spawn(&mut world, spec);
        assert!(
            matches!(refused, Err(SimError::Spawn(SpawnError::IdsExhausted(_)))),
            "{refused:?}"
        );
        assert_eq!(world.len(), 1);
        assert_eq!(horde.data.housekeeping.next_unit, u32::MAX);
    }
}
