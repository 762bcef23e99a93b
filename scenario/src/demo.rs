//! [`Demo`]: the built-in demo, the plan `horde run` runs when given no scenario file: a generated level (seeded), thousands of units in three groups starting at the
//! enemy spawns and heading for the lair; an explosion, an attractor and a vortex go off
//! mid-run; one group changes its goal; a brick of the lair's ring is destroyed.

use horde::fields::{Regions, WALL};
use horde::glam::Vec2;
use horde::level::{LevelConfig, generate_level};
use horde::{Cell, ForceField, ForceKind, GoalSet, GroupId, Layer, Terrain, UnitSpec};
use horde::{Command, SimConfig, Simulation};

use crate::plan::{Plan, TimedEvent};

const DT: f32 = 1.0 / 30.0;

/// The built-in demo's settings. `scenarios/demo.toml` describes the same run (with the
/// default settings) as a scenario file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Demo {
    /// Units, spread over three groups (default 6,000).
    pub units: u32,
    /// Seed of the level and of the per-unit randomness (default 1).
    pub seed: u64,
    /// Frames to run (default 4500, 150 seconds at 30 frames a simulated second: long enough
    /// for the armies to reach their goal and come to rest).
    pub frames: u32,
    /// Worker threads, the caller included (default: every core, see
    /// [`default_threads`](crate::default_threads)).
    pub threads: usize,
}

impl Default for Demo {
    fn default() -> Self {
        Self {
            units: 6000,
            seed: 1,
            frames: 4500,
            threads: crate::default_threads(),
        }
    }
}

/// Why the built-in demo could not be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DemoError {
    /// More units than the demo's map holds (each of its three groups takes at most one
    /// unit per open cell).
    #[error(
        "the built-in demo's map holds at most {capacity} units ({open} open cells, one unit \
         of each of its 3 groups a cell); asked for {units}"
    )]
    TooManyUnits {
        /// Units asked for.
        units: u32,
        /// Units the map holds.
        capacity: u64,
        /// Open cells of the map.
        open: u64,
    },
    /// The level, the simulation or an event could not be set up (a thread count out of
    /// range, a worker pool that did not start, ...).
    #[error("the built-in demo could not be set up: {0}")]
    Setup(String),
}

impl DemoError {
    /// Whether the error is the settings' fault (too many units) rather than a failure to
    /// set up the simulation.
    #[must_use]
    pub fn is_bad_input(&self) -> bool {
        match self {
            Self::TooManyUnits { .. } => true,
            Self::Setup(_) => false,
        }
    }
}

impl Demo {
    /// Builds the demo's plan: the simulation with its units spawned, and its events.
    pub fn plan(&self) -> Result<Plan, DemoError> {
        build(self)
    }
}

fn setup(e: impl std::fmt::Display) -> DemoError {
    DemoError::Setup(e.to_string())
}

fn build(args: &Demo) -> Result<Plan, DemoError> {
    let level_config = LevelConfig::default()
        .with_size(32, 32)
        .with_cells_per_tile(4)
        .with_guarantee_reachable(true);
    let level = generate_level(args.seed, &level_config).map_err(setup)?;
    let approach = GoalSet::new(level.lair_approach_cells()).map_err(setup)?;
    let spawns: Vec<Cell> = level.enemy_spawn_tiles().to_vec();
    let map = level.map().clone();
    let config = SimConfig::default()
        .with_seed(args.seed)
        .with_threads(args.threads);
    let mut sim = Simulation::new(map, config).map_err(setup)?;
    for _ in 0..3 {
        sim.add_group(approach.clone()).map_err(setup)?;
    }
    // Spawn units on open cells around each enemy spawn, spiralling outwards. Each of the
    // three groups takes at most one unit per open cell of the map.
    let units = args.units;
    let open = {
        let map = sim.map();
        let cost = map.cost_field(Layer::Ground);
        (0..map.grid().len())
            .filter(|&i| cost.get(map.grid().cell(i)) != WALL)
            .count() as u64
    };
    let capacity = open * 3;
    if u64::from(units) > capacity {
        return Err(DemoError::TooManyUnits {
            units,
            capacity,
            open,
        });
    }
    let per_group = units.div_ceil(3);
    let mut spawned = 0;
    // Only cells from which the lair can be reached (the level guarantees it for the
    // spawns, not for every pocket beside them).
    let regions = Regions::of(sim.map().cost_field(Layer::Ground));
    let goal_regions = regions.regions_of(approach.cells());
    let reaches = |c: Cell| regions.in_any(c, &goal_regions);
    for (g, tile) in spawns.iter().enumerate().take(3) {
        let centre = level.tile_centre(*tile);
        let cells = open_cells_near(&sim, centre, per_group as usize, reaches);
        for (i, c) in cells.into_iter().enumerate() {
            if spawned == units {
                break;
            }
            let pos = sim.map().grid().cell_centre(c);
            let spec = UnitSpec::at(pos)
                .with_radius(0.35 + 0.05 * (i % 3) as f32)
                .with_mass(1.0 + (i % 4) as f32)
                .with_group(GroupId(g as u16))
                .with_controllable(g == 0);
            sim.spawn(spec).map_err(setup)?;
            spawned += 1;
        }
    }
    let events = demo_events(&sim)?;
    Ok(Plan {
        name: "built-in demo".into(),
        sim,
        frames: args.frames,
        dt: DT,
        events,
        // As scenarios/demo.toml names them.
        group_names: ["left", "middle", "right"].map(String::from).to_vec(),
    })
}

/// Up to `n` open ground cells nearest `centre` on foot that `keep` accepts: step by step
/// from the open cell nearest it, over open ground, 8 neighbours without cutting corners,
/// each step's cells row by row (as scenario files' `goal_near` and `spawn_near` choose
/// cells).
pub fn open_cells_near(
    sim: &Simulation,
    centre: Vec2,
    n: usize,
    keep: impl Fn(Cell) -> bool,
) -> Vec<Cell> {
    let map = sim.map();
    let c = map.grid().clamped_cell_at(centre);
    let cost = map.cost_field(Layer::Ground);
    let open = |c: Cell| cost.get(c) != WALL;
    crate::ctx::cells_near(&map, c, n, open, |c| open(c) && keep(c))
}

/// The demo's mid-run events: an explosion, an attractor, a vortex, a goal change and a
/// destroyed brick of the lair's ring.
fn demo_events(sim: &Simulation) -> Result<Vec<TimedEvent>, DemoError> {
    let bad = setup;
    let size = sim.map().grid().world_size();
    let centre = size * 0.5;
    let mut events = Vec::new();
    let blast = ForceField::new(
        centre + Vec2::new(0.0, -size.y * 0.2),
        ForceKind::Explosion,
        14.0,
        2500.0,
    )
    .map_err(bad)?;
    events.push(TimedEvent {
        frame: 60,
        command: Command::AddForce(blast),
    });
    let hole = ForceField::new(centre, ForceKind::Attractor, 18.0, 60.0)
        .and_then(|f| f.with_duration(3.0))
        .map_err(bad)?;
    events.push(TimedEvent {
        frame: 120,
        command: Command::AddForce(hole),
    });
    let vortex = ForceField::new(
        centre + Vec2::new(size.x * 0.2, 0.0),
        ForceKind::Vortex { clockwise: true },
        16.0,
        50.0,
    )
    .and_then(|f| f.with_duration(4.0))
    .map_err(bad)?;
    events.push(TimedEvent {
        frame: 180,
        command: Command::AddForce(vortex),
    });
    // Group 2 is sent to hold the open ground east of the lair instead: an area of 1600
    // cells, room for most of it.
    let east = sim.map().grid().clamped_cell_at(Vec2::new(104.5, 96.5));
    let cells = open_cells_near(sim, sim.map().grid().cell_centre(east), 1600, |_| true);
    let goal = GoalSet::new(cells).map_err(setup)?;
    events.push(TimedEvent {
        frame: 240,
        command: Command::SetGoal {
            group: GroupId(2),
            goal,
        },
    });
    // A brick of the lair's ring is destroyed.
    let map = sim.map();
    if let Some(brick) = (0..map.grid().len())
        .map(|i| map.grid().cell(i))
        .find(|&c| map.terrain_at(c) == Terrain::BrickWall)
    {
        events.push(TimedEvent {
            frame: 300,
            command: Command::SetTerrain {
                cells: vec![brick],
                terrain: Terrain::Empty,
            },
        });
    }
    Ok(events)
}
