//! [`Horde`] runs horde's stages on a `hecs::World` the caller owns (bring your own world);
//! [`Simulation`] is a `Horde` with its own world, for callers that have none.

use std::sync::Arc;
use std::time::{Duration, Instant};

use glam::Vec2;
use hecs::{Entity, World};
use horde_core::{
    Agent, Cell, Clearance, ExternalForce, FieldCache, FieldError, FieldKey, ForceField,
    ForceFieldId, ForceManager, GoalSet, GroupId, Layer, Map, Mass, Position, Quarantined,
    SpatialGrid, SpawnError, Steering, Stun, Terrain, UnitId, UnitSpec, Velocity, WALL,
};
use parking_lot::{Mutex, RwLock, RwLockReadGuard};

use crate::config::SimConfig;
use crate::edit_log::EditLog;
use crate::frame::{
    FrameClock, FrameData, GoalFills, Neighbours, StageError, bucket_side, build_graph,
};
use crate::groups::{Group, Groups};
use crate::hierarchy_nav::HierarchyNav;
use crate::job_graph::{FrameReport, GraphBuildError, JobGraph, JobPanic, PoolError, WorkerPool};
use crate::reach::{GroupReach, GroupStatus};
use crate::snapshot::{CommandRecord, FileError, Replay, ReplayRecord};
use crate::sort_units;

/// What went wrong in a [`Horde`] or [`Simulation`] call.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// A setting is out of range.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// A unit could not be spawned.
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    /// A goal or field problem.
    #[error(transparent)]
    Field(#[from] FieldError),
    /// A goal cell is a wall for ground and hover units alike.
    #[error("goal cell {0} is a wall")]
    GoalInWall(Cell),
    /// A goal set with no cell.
    #[error("a goal needs at least one cell")]
    EmptyGoal,
    /// A cell outside the map.
    #[error("cell {cell} lies outside the {width}x{height} map")]
    CellOutside {
        /// The cell.
        cell: Cell,
        /// Map width.
        width: u32,
        /// Map height.
        height: u32,
    },
    /// The time step is not a finite number >= 0.
    #[error("time step {0} must be finite and >= 0")]
    BadTimeStep(f32),
    /// A stage panicked; the frame was abandoned part-way.
    #[error("frame failed: {0}")]
    Frame(#[from] JobPanic),
    /// The worker pool could not start.
    #[error(transparent)]
    Pool(#[from] PoolError),
    /// The stage graph is inconsistent (a bug in horde).
    #[error(transparent)]
    Graph(#[from] GraphBuildError),
    /// A stage could not do its part of the frame (the frame ran to its end).
    #[error("stage failure: {0}")]
    Stage(#[from] StageError),
    /// A simulation holds at most 65,536 groups.
    #[error("a simulation holds at most {max} groups")]
    TooManyGroups {
        /// The most groups.
        max: usize,
    },
    /// The neighbour buckets cannot cover the map (a map of huge cells, or a unit so large
    /// that its buckets are too few or too many).
    #[error("the map cannot be split into neighbour buckets: {0}")]
    Buckets(horde_core::SpatialGridError),
    /// A snapshot or replay could not be read, written or restored.
    #[error(transparent)]
    Snapshot(#[from] FileError),
    /// The entity is not a unit of the simulation (never spawned, or despawned already).
    #[error("{0:?} is not a unit of this simulation")]
    NoSuchUnit(Entity),
    /// No unit has this id (never spawned, or despawned already).
    #[error("no unit has id {}", .0.0)]
    NoUnitWithId(UnitId),
}

/// Horde's stages, resources and worker pool, running on a world the caller owns.
///
/// The caller's `hecs::World` holds the units (spawned with [`Horde::spawn`], which adds
/// horde's components); the caller may add its own components to them freely.
pub struct Horde {
    pub(crate) data: FrameData,
    graph: JobGraph<FrameData>,
    pool: WorkerPool,
    pub(crate) next_unit: u32,
    last_report: Option<FrameReport>,
    last_quarantined: Vec<UnitId>,
    /// Scratch of the unit check before each frame (a bit per unit id).
    seen_ids: Vec<u64>,
    /// Where it came from (saved in snapshots).
    pub(crate) origin: crate::snapshot::Origin,
    /// The name the storage sort has in frame reports.
    sort_step: Arc<str>,
    /// Each layer's connected regions, for [`Horde::reachability`].
    pub(crate) regions: crate::reach::RegionCache,
}

impl std::fmt::Debug for Horde {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Horde")
            .field("frame", &self.data.clock.frame)
            .field("units", &self.next_unit)
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
        let cell = spatial_cell_size(0.5, &config);
        let grid = SpatialGrid::new(map.grid(), cell).map_err(SimError::Buckets)?;
        let data = FrameData {
            world: World::new(),
            clearance: RwLock::new(clearance),
            fields: RwLock::new(FieldCache::new(config.flow)),
            groups: RwLock::new(Groups::default()),
            forces: RwLock::new(ForceManager::new()),
            neighbours: RwLock::new(Neighbours::new(grid)),
            map: RwLock::new(map),
            config,
            clock: FrameClock::default(),
            edits: RwLock::new(EditLog::default()),
            hierarchy: RwLock::new(HierarchyNav::default()),
            errors: Mutex::new(Vec::new()),
            quarantine: Mutex::new(Vec::new()),
            contacts: RwLock::new(crate::frame::Contacts::default()),
            walled_in: Mutex::new(0),
            goal_fills: RwLock::new(GoalFills::default()),
        };
        Ok(Self {
            data,
            graph: build_graph()?,
            pool: WorkerPool::new(config.threads)?,
            next_unit: 0,
            last_report: None,
            last_quarantined: Vec::new(),
            seen_ids: Vec::new(),
            origin: crate::snapshot::Origin {
                map: map_fingerprint,
                ..Default::default()
            },
            sort_step: Arc::from("sort_units"),
            regions: crate::reach::RegionCache::default(),
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
    pub fn map(&self) -> RwLockReadGuard<'_, Map> {
        self.data.map.read()
    }

    /// The flow fields.
    pub fn fields(&self) -> RwLockReadGuard<'_, FieldCache> {
        self.data.fields.read()
    }

    /// Portal graphs and hierarchical path requests (empty with `Navigation::Flat`).
    pub fn hierarchy(&self) -> RwLockReadGuard<'_, HierarchyNav> {
        self.data.hierarchy.read()
    }

    /// The groups and their goals.
    pub fn groups(&self) -> RwLockReadGuard<'_, Groups> {
        self.data.groups.read()
    }

    /// The active force fields.
    pub fn forces(&self) -> RwLockReadGuard<'_, ForceManager> {
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
            goal_changes: 0,
            goal_frame: self.data.clock.frame,
        });
        groups.refresh_armies();
        Ok(GroupId(id))
    }

    /// Gives group `group` a new goal (takes effect next frame; arrived units set off again).
    /// Returns which of the group's units can reach it (see [`Horde::reachability`]).
    pub fn set_group_goal(
        &mut self,
        world: &mut World,
        group: GroupId,
        goal: GoalSet,
    ) -> Result<GroupReach, SimError> {
        self.check_goal(&goal)?;
        let map = self.data.map.get_mut();
        let fields = self.data.fields.get_mut();
        let groups = self.data.groups.get_mut();
        groups.group_mut(group)?;
        for layer in Layer::ALL {
            let Some(old) = groups.list[usize::from(group.0)].fields[layer as usize] else {
                continue;
            };
            let key = FieldKey {
                goals: goal.clone(),
                layer,
            };
            // A field only this group follows takes the new goal in place, keeping its
            // full-map buffers: a goal that moves every frame allocates nothing.
            let shared = (groups.list.iter().enumerate())
                .any(|(i, g)| i != usize::from(group.0) && g.fields.contains(&Some(old)));
            let id = if shared {
                fields.request(key, map)?
            } else {
                fields.rekey(old, key, map)?
            };
            // A new field for a goal that moved (another group shared the old one) is built
            // only as far as its followers need, as a rekeyed one is.
            fields.mark_moved(id);
            groups.list[usize::from(group.0)].fields[layer as usize] = Some(id);
        }
        groups.list[usize::from(group.0)].goal = goal;
        groups.list[usize::from(group.0)].goal_changes += 1;
        groups.list[usize::from(group.0)].goal_frame = self.data.clock.frame;
        groups.refresh_armies();
        // Fields no group follows any more are dropped: a goal that moves every frame
        // ("chase the player") must not grow the cache without bound.
        let groups = &self.data.groups.get_mut().list;
        fields.retain(|id, _| groups.iter().any(|g| g.fields.contains(&Some(id))));
        for (agent, steering) in world.query_mut::<(&Agent, &mut Steering)>() {
            if agent.group == group {
                steering.arrived = false;
                steering.settled = false;
                steering.arrived_frame = None;
            }
        }
        let mut reach = self.reachability(world);
        Ok(reach.swap_remove(usize::from(group.0)))
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
            if map.cost_field(Layer::Ground).get(cell) == WALL
                && map.cost_field(Layer::Hover).get(cell) == WALL
            {
                return Err(SimError::GoalInWall(cell));
            }
        }
        Ok(())
    }

    /// Spawns a unit into `world` after checking `spec` (see [`UnitSpec::validate`]).
    pub fn spawn(&mut self, world: &mut World, spec: UnitSpec) -> Result<Entity, SimError> {
        spec.validate(self.data.map.get_mut())?;
        // Ids never wrap (a snapshot may carry any counter): the last one stays unused.
        let next =
            (self.next_unit.checked_add(1)).ok_or(SpawnError::IdsExhausted(self.next_unit))?;
        self.ensure_field(spec.group, spec.layer)?;
        let map = self.data.map.get_mut();
        // The first unit sizes the neighbour buckets (at least for radius 0.5): a crowd of
        // one size shares them. A bigger unit spawned later does not widen them (everyone
        // would test dozens of neighbours); it is a large unit, kept apart (`LargeUnits`).
        // If the crowd turns out unlike its first unit, `step` refits them.
        let needed = spatial_cell_size(spec.radius, &self.data.config);
        let neighbours = self.data.neighbours.get_mut();
        if self.next_unit == 0 && needed > neighbours.grid.cell_size() {
            let grid = SpatialGrid::new(map.grid(), needed).map_err(SimError::Buckets)?;
            *neighbours = Neighbours::new(grid);
        }
        let id = UnitId(self.next_unit);
        self.next_unit = next;
        Ok(world.spawn((
            id,
            Position(spec.position),
            Velocity(Vec2::ZERO),
            ExternalForce(Vec2::ZERO),
            Stun(0.0),
            Mass(spec.mass),
            spec.agent(),
            Steering::default(),
        )))
    }

    /// Makes sure units of `group` on `layer` have a field to follow.
    pub(crate) fn ensure_field(&mut self, group: GroupId, layer: Layer) -> Result<(), SimError> {
        let map = self.data.map.get_mut();
        let group = self.data.groups.get_mut().group_mut(group)?;
        let slot = &mut group.fields[layer as usize];
        if slot.is_none() {
            let key = FieldKey {
                goals: group.goal.clone(),
                layer,
            };
            *slot = Some(self.data.fields.get_mut().request(key, map)?);
        }
        Ok(())
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
        map.set_terrain(cell, terrain);
        let log = self.data.edits.get_mut();
        for layer in Layer::ALL {
            let cost = map.cost_field(layer);
            if cost.get(cell) != before[layer as usize] {
                log.record(layer, cost.version(), cell, before[layer as usize]);
            }
        }
        Ok(())
    }

    /// Runs one frame of `dt` seconds on `world`.
    ///
    /// Afterwards, if the frame found the units' storage order scattered (consecutive units
    /// far apart on the map), the units are rewritten in map order so the next frames read
    /// memory in order; their `Entity` handles do not change, and components of the caller's
    /// move with their units (see `ARCHITECTURE.md`, "Keeping units in map order"). The
    /// report lists that step as `sort_units`. It also refits the neighbour buckets when
    /// they do not fit the crowd (more than half the units too big for a bucket, or too
    /// small for one).
    pub fn step(&mut self, world: &mut World, dt: f32) -> Result<&FrameReport, SimError> {
        if !(dt.is_finite() && dt >= 0.0) {
            return Err(SimError::BadTimeStep(dt));
        }
        puffin::profile_function!();
        self.data.clock.dt = dt;
        self.last_quarantined.clear();
        self.check_units(world)?;
        std::mem::swap(&mut self.data.world, world);
        let outcome = self.graph.run(&self.pool, &self.data);
        std::mem::swap(&mut self.data.world, world);
        let mut report = outcome?;
        let found = std::mem::take(self.data.quarantine.get_mut());
        self.quarantine(world, found);
        self.last_quarantined.sort_unstable();
        // Not a stage: it needs the world itself, between frames (see `sort_units`).
        let started = Instant::now();
        let neighbours = self.data.neighbours.get_mut();
        if sort_units::worth_sorting(neighbours) {
            sort_units::sort_units(world, &neighbours.grid);
        }
        // Buckets sized by a first unit unlike the crowd are refitted for the next frame
        // (the snapshot is rebuilt every frame, so nothing else is lost). A side the map
        // cannot be cut into keeps the old buckets: still correct, only slower.
        let separation_range = self.data.config.steering.separation_range;
        if let Some(side) = neighbours.refit_side(separation_range)
            && let Ok(grid) = SpatialGrid::new(self.data.map.get_mut().grid(), side)
        {
            *neighbours = Neighbours::new(grid);
        }
        report.push_step(Arc::clone(&self.sort_step), started.elapsed());
        self.data.clock.frame += 1;
        let errors = std::mem::take(self.data.errors.get_mut());
        if let Some(first) = errors.into_iter().next() {
            return Err(SimError::Stage(first));
        }
        Ok(self.last_report.insert(report))
    }

    /// Before a frame: quarantines every unit that breaks the rules of
    /// [`crate::unit_check`] (a caller wrote an impossible value into it, or gave it an id
    /// another unit has), and gives a group a field on a layer a caller moved its units to.
    fn check_units(&mut self, world: &mut World) -> Result<(), SimError> {
        let found = {
            let map = self.data.map.read();
            let groups = self.data.groups.read();
            let goal_frames: Vec<u64> = groups.list.iter().map(|g| g.goal_frame).collect();
            let rules = crate::unit_check::Rules {
                frame: self.data.clock.frame,
                next_unit: self.next_unit,
                grid: map.grid(),
                goal_frames: &goal_frames,
            };
            crate::unit_check::check_world(
                world,
                &rules,
                |g, l| groups.list[usize::from(g.0)].fields[l as usize].is_some(),
                &mut self.seen_ids,
            )
        };
        for (group, layer) in found.fields {
            self.ensure_field(group, layer)?;
        }
        self.quarantine(world, found.bad);
        Ok(())
    }

    /// Takes the units `found` out of the simulation (found non-finite by a frame, or
    /// breaking the rules before it): their [`Agent`] and [`Steering`] move into a
    /// [`Quarantined`] component, so no stage sees them again.
    fn quarantine(&mut self, world: &mut World, mut found: Vec<Entity>) {
        if found.is_empty() {
            return;
        }
        found.sort_by_key(|&e| world.get::<&UnitId>(e).map_or(u32::MAX, |id| id.0));
        for entity in found {
            let Ok((agent, steering)) = world.remove::<(Agent, Steering)>(entity) else {
                continue;
            };
            let frame = self.data.clock.frame;
            let quarantined = Quarantined {
                frame,
                agent,
                steering,
            };
            if world.insert_one(entity, quarantined).is_ok()
                && let Ok(id) = world.get::<&UnitId>(entity)
            {
                self.last_quarantined.push(*id);
            }
        }
    }

    /// How solid the bodies of `world`'s units are now: overlaps between units and with
    /// walls (see [`crate::BodyStats`]).
    #[must_use]
    pub fn body_stats(&self, world: &World) -> crate::BodyStats {
        crate::BodyStats::measure(world, &self.data.map.read(), |_| {})
    }

    /// How many units the last frame found inside a wall with no open cell within reach of
    /// the wall they stand in (walled in by a terrain edit): they stay where they are, and
    /// are counted here every frame until an edit opens a way (see `horde_core::body`).
    #[must_use]
    pub fn last_walled_in(&self) -> usize {
        *self.data.walled_in.lock()
    }

    /// The frame counter when group `group`'s goal was last set (by `add_group` or
    /// `set_group_goal`); `None` for a group that does not exist. A unit's arrival time is
    /// `(arrived_frame - goal_frame)` frames.
    #[must_use]
    pub fn group_goal_frame(&self, group: GroupId) -> Option<u64> {
        self.data.groups.read().get(group.0).map(|g| g.goal_frame)
    }

    /// The units quarantined by the last frame (in id order): their position, velocity or
    /// stun stopped being finite, so they were taken out (see [`Quarantined`]).
    #[must_use]
    pub fn last_quarantined(&self) -> &[UnitId] {
        &self.last_quarantined
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
        let test = self.regions.reach_test(&map, &groups);
        let mut out: Vec<UnitState> = world
            .query::<(
                Entity,
                &UnitId,
                &Position,
                &Velocity,
                &ExternalForce,
                &Stun,
                &Agent,
                &Steering,
            )>()
            .iter()
            .map(|(entity, id, p, v, e, s, a, st)| UnitState {
                entity,
                id: *id,
                position: p.0,
                velocity: v.0,
                external: e.0,
                stun: s.0,
                group: a.group,
                layer: a.layer,
                radius: a.radius,
                max_speed: a.max_speed,
                arrived: st.arrived,
                settled: st.settled,
                arrived_frame: st.arrived_frame,
                status: crate::reach::status(&test, p.0, a, st),
            })
            .collect();
        out.sort_unstable_by_key(|u| u.id);
        out
    }
}

/// Bucket size that keeps every interaction within the 3x3 buckets around a unit (see
/// [`bucket_side`]).
pub(crate) fn spatial_cell_size(max_radius: f32, config: &SimConfig) -> f32 {
    bucket_side(max_radius, config.steering.separation_range)
}

/// The state hash of [`Horde::state_hash`]: FNV-1a over, in this order,
///
/// 1. every simulated unit's state in [`UnitId`] order (id, position, velocity, external
///    velocity, stun, heading, avoidance side, arrival);
/// 2. every quarantined unit in id order (id, the frame it was quarantined in, position,
///    velocity, external velocity, stun, its parameters), so a world of quarantined units
///    does not hash like an empty one;
/// 3. the terrain ([`Map::terrain_digest`]) and the cost table;
/// 4. every group's goal cells and the frame its goal was set;
/// 5. every force field, pending or live, with its id and every value
///    ([`ForceManager::entries`]), and the next force id.
///
/// So a replay edited to add a terrain edit, a goal change or a force field that moves
/// nobody no longer matches its recorded hashes.
#[must_use]
pub fn state_hash(horde: &Horde, world: &World) -> u64 {
    let mut h = UnitHasher::default();
    units_hash(world, &mut h);
    let map = horde.data.map.read();
    h.word(u64::from(map.width()));
    h.word(u64::from(map.height()));
    h.word(map.terrain_digest());
    for t in horde_core::Terrain::ALL {
        for l in Layer::ALL {
            h.byte(map.cost_table().cost(t, l));
        }
    }
    let groups = horde.data.groups.read();
    h.word(groups.list.len() as u64);
    for g in &groups.list {
        h.word(g.goal_frame);
        h.word(g.goal.cells().len() as u64);
        for c in g.goal.cells() {
            h.u32(c.x);
            h.u32(c.y);
        }
    }
    let forces = horde.data.forces.read();
    h.word(forces.next_id().get());
    for (id, f, live) in forces.entries() {
        h.word(id.get());
        h.byte(u8::from(live));
        let (kind, a, b) = match f.kind() {
            horde_core::ForceKind::Explosion => (0, 0, 0),
            horde_core::ForceKind::Attractor => (1, 0, 0),
            horde_core::ForceKind::Push { direction } => {
                (2, direction.x.to_bits(), direction.y.to_bits())
            }
            horde_core::ForceKind::Vortex { clockwise } => (3, u32::from(clockwise), 0),
        };
        for w in [
            kind,
            a,
            b,
            f.position().x.to_bits(),
            f.position().y.to_bits(),
            f.radius().to_bits(),
            f.strength().to_bits(),
            f.duration().to_bits(),
            f.elapsed().to_bits(),
            f.falloff(),
            f.time_decay().to_bits(),
            u32::from(f.affects_controllable()),
        ] {
            h.u32(w);
        }
    }
    h.0
}

/// FNV-1a, byte by byte.
struct UnitHasher(u64);

impl Default for UnitHasher {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl UnitHasher {
    #[inline]
    fn byte(&mut self, b: u8) {
        self.0 ^= u64::from(b);
        self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
    }

    #[inline]
    fn u32(&mut self, w: u32) {
        for b in w.to_le_bytes() {
            self.byte(b);
        }
    }

    fn word(&mut self, w: u64) {
        for b in w.to_le_bytes() {
            self.byte(b);
        }
    }
}

/// Parts 1 and 2 of [`state_hash`]: the simulated units, then the quarantined ones.
fn units_hash(world: &World, h: &mut UnitHasher) {
    let mut rows: Vec<(u32, [u32; 13])> = world
        .query::<(
            &UnitId,
            &Position,
            &Velocity,
            &ExternalForce,
            &Stun,
            &Steering,
        )>()
        .iter()
        .map(|(id, p, v, e, s, st)| {
            (
                id.0,
                [
                    p.0.x.to_bits(),
                    p.0.y.to_bits(),
                    v.0.x.to_bits(),
                    v.0.y.to_bits(),
                    e.0.x.to_bits(),
                    e.0.y.to_bits(),
                    s.0.to_bits(),
                    st.heading.x.to_bits(),
                    st.heading.y.to_bits(),
                    st.avoid_side as u32,
                    u32::from(st.arrived),
                    u32::from(st.settled),
                    // Frames past u32::MAX wrap: a hash, not a record.
                    st.arrived_frame.map_or(u32::MAX, |f| f as u32),
                ],
            )
        })
        .collect();
    rows.sort_unstable();
    h.word(rows.len() as u64);
    for (id, words) in rows {
        for w in std::iter::once(id).chain(words) {
            h.u32(w);
        }
    }
    let mut quarantined: Vec<(u32, [u32; 15])> = world
        .query::<(
            &UnitId,
            &Position,
            &Velocity,
            &ExternalForce,
            &Stun,
            &Mass,
            &Quarantined,
        )>()
        .iter()
        .map(|(id, p, v, e, s, m, q)| {
            (
                id.0,
                [
                    q.frame as u32,
                    p.0.x.to_bits(),
                    p.0.y.to_bits(),
                    v.0.x.to_bits(),
                    v.0.y.to_bits(),
                    e.0.x.to_bits(),
                    e.0.y.to_bits(),
                    s.0.to_bits(),
                    m.0.to_bits(),
                    q.agent.radius.to_bits(),
                    q.agent.max_speed.to_bits(),
                    q.agent.turn_rate.to_bits(),
                    q.agent.layer as u32,
                    u32::from(q.agent.group.0),
                    u32::from(q.agent.controllable),
                ],
            )
        })
        .collect();
    quarantined.sort_unstable();
    h.word(quarantined.len() as u64);
    for (id, words) in quarantined {
        for w in std::iter::once(id).chain(words) {
            h.u32(w);
        }
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
    /// Where it stands with its goal (moving, arrived, settled, or unable to reach it).
    pub status: crate::UnitStatus,
}

/// A [`Horde`] with its own world: the simplest way to run a crowd.
pub struct Simulation {
    horde: Horde,
    world: World,
    recording: Option<ReplayRecord>,
}

impl std::fmt::Debug for Simulation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulation")
            .field("horde", &self.horde)
            .field("units", &self.world.len())
            .finish()
    }
}

impl Simulation {
    /// A simulation on `map` with `config` and no units.
    pub fn new(map: Map, config: SimConfig) -> Result<Self, SimError> {
        Ok(Self::from_parts(Horde::new(map, config)?, World::new()))
    }

    pub(crate) fn from_parts(horde: Horde, world: World) -> Self {
        Self {
            horde,
            world,
            recording: None,
        }
    }

    /// Starts recording a replay: takes a snapshot now, then appends every command that
    /// succeeds (a recording already under way starts over).
    pub fn start_recording(&mut self) {
        self.recording = Some(Replay::start(&self.snapshot()));
    }

    /// Whether a replay is being recorded.
    #[must_use]
    pub fn is_recording(&self) -> bool {
        self.recording.is_some()
    }

    /// Stops recording and returns the replay, or `None` if none was being recorded.
    pub fn finish_recording(&mut self) -> Option<Replay> {
        self.recording.take().map(Replay::from_record)
    }

    fn record(&mut self, command: impl FnOnce() -> CommandRecord) {
        if let Some(r) = &mut self.recording {
            r.commands.push(command());
        }
    }

    /// The units taken out of the simulation because their state stopped being finite, in
    /// id order, with the frame each was quarantined in.
    #[must_use]
    pub fn quarantined(&self) -> Vec<(UnitId, u64)> {
        let mut out: Vec<(UnitId, u64)> = self
            .world
            .query::<(&UnitId, &Quarantined)>()
            .iter()
            .map(|(id, q)| (*id, q.frame))
            .collect();
        out.sort_unstable();
        out
    }

    /// The stages and resources.
    #[must_use]
    pub fn horde(&self) -> &Horde {
        &self.horde
    }

    /// See [`Horde::set_scenario`].
    pub fn set_scenario(&mut self, name: &str, fingerprint: u64) {
        self.horde.set_scenario(name, fingerprint);
    }

    /// The units' world (read-only: change units through the simulation's methods).
    #[must_use]
    pub fn world(&self) -> &World {
        &self.world
    }

    /// See [`Horde::add_group`].
    pub fn add_group(&mut self, goal: GoalSet) -> Result<GroupId, SimError> {
        let id = self.horde.add_group(goal.clone())?;
        self.record(|| CommandRecord::add_group(&goal));
        Ok(id)
    }

    /// See [`Horde::set_group_goal`].
    pub fn set_group_goal(
        &mut self,
        group: GroupId,
        goal: GoalSet,
    ) -> Result<GroupReach, SimError> {
        let reach = self
            .horde
            .set_group_goal(&mut self.world, group, goal.clone())?;
        self.record(|| CommandRecord::set_goal(group, &goal));
        Ok(reach)
    }

    /// See [`Horde::reachability`].
    #[must_use]
    pub fn reachability(&self) -> Vec<GroupReach> {
        self.horde.reachability(&self.world)
    }

    /// See [`Horde::group_status`].
    #[must_use]
    pub fn group_status(&self) -> Vec<GroupStatus> {
        self.horde.group_status(&self.world)
    }

    /// See [`Horde::spawn`].
    pub fn spawn(&mut self, spec: UnitSpec) -> Result<Entity, SimError> {
        let entity = self.horde.spawn(&mut self.world, spec)?;
        self.record(|| CommandRecord::spawn(&spec));
        Ok(entity)
    }

    /// Removes a unit (a unit that died, say), quarantined or not: it is gone from the
    /// next frame on, and its id is never given again. Returns its id. While recording, the
    /// removal is recorded (by id, so a replay removes the same unit).
    pub fn despawn(&mut self, entity: Entity) -> Result<UnitId, SimError> {
        let id = self
            .world
            .get::<&UnitId>(entity)
            .map(|id| *id)
            .map_err(|_| SimError::NoSuchUnit(entity))?;
        self.world
            .despawn(entity)
            .map_err(|_| SimError::NoSuchUnit(entity))?;
        self.record(|| CommandRecord::Despawn { id: id.0 });
        Ok(id)
    }

    /// The entity of the unit with id `id`, if there is one (a scan over the units).
    #[must_use]
    pub fn entity_of(&self, id: UnitId) -> Option<Entity> {
        self.world
            .query::<(Entity, &UnitId)>()
            .iter()
            .find_map(|(entity, unit)| (*unit == id).then_some(entity))
    }

    /// See [`Horde::add_force`].
    pub fn add_force(&mut self, field: ForceField) -> ForceFieldId {
        let id = self.horde.add_force(field);
        self.record(|| CommandRecord::add_force(&field));
        id
    }

    /// See [`Horde::set_terrain`].
    pub fn set_terrain(&mut self, cell: Cell, terrain: Terrain) -> Result<(), SimError> {
        self.horde.set_terrain(cell, terrain)?;
        self.record(|| CommandRecord::set_terrain(cell, terrain));
        Ok(())
    }

    /// See [`Horde::step`]; returns a copy of the frame's report. While recording, the frame
    /// and its state hash are recorded.
    pub fn step(&mut self, dt: f32) -> Result<FrameReport, SimError> {
        let before = self.horde.frame();
        let outcome = self.horde.step(&mut self.world, dt).cloned();
        // A frame that ran is recorded even if a stage reported a failure afterwards, so the
        // replay keeps in step with the state.
        if self.recording.is_some() && self.horde.frame() != before {
            let hash = state_hash(&self.horde, &self.world);
            self.record(|| CommandRecord::Step { dt, hash });
        }
        outcome
    }

    /// See [`Horde::state_hash`].
    #[must_use]
    pub fn state_hash(&self) -> u64 {
        state_hash(&self.horde, &self.world)
    }

    /// Every unit's state in id order.
    #[must_use]
    pub fn units(&self) -> Vec<UnitState> {
        self.horde.unit_states(&self.world)
    }

    /// How solid the units' bodies are now (see [`crate::BodyStats`]).
    #[must_use]
    pub fn body_stats(&self) -> crate::BodyStats {
        self.horde.body_stats(&self.world)
    }

    /// Number of units.
    #[must_use]
    pub fn unit_count(&self) -> usize {
        self.world.len() as usize
    }

    /// Number of frames run so far.
    #[must_use]
    pub fn frame(&self) -> u64 {
        self.horde.frame()
    }

    /// The map.
    pub fn map(&self) -> RwLockReadGuard<'_, Map> {
        self.horde.map()
    }
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
        horde.next_unit = u32::MAX - 1;
        let spec = UnitSpec::at(glam::Vec2::new(4.5, 4.5)).with_group(group);
        horde.spawn(&mut world, spec).unwrap();
        let refused = horde.spawn(&mut world, spec);
        assert!(
            matches!(refused, Err(SimError::Spawn(SpawnError::IdsExhausted(_)))),
            "{refused:?}"
        );
        assert_eq!(world.len(), 1);
        assert_eq!(horde.next_unit, u32::MAX);
    }
}
