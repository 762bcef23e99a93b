//! `horde run`: the built-in demo scenario, run headless, with a summary of where the
//! frame's time went.
//!
//! The demo: a generated level (seeded), thousands of units in three groups starting at the
//! enemy spawns and heading for the lair; an explosion, an attractor and a vortex go off
//! mid-run; one group changes its goal; a brick of the lair's ring is destroyed.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use glam::Vec2;
use horde_core::{
    Cell, ForceField, ForceKind, GoalSet, GroupId, Layer, LevelConfig, Terrain, UnitSpec, WALL,
    generate_level,
};
use horde_systems::{SimConfig, Simulation};

use crate::AppError;
use crate::plan::{Event, Plan, TimedEvent};

/// Arguments of `horde run`.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Frames to run (at 30 frames per simulated second).
    #[arg(long, default_value_t = 600)]
    pub frames: u32,
    /// Worker threads, the caller included (default: every core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Number of units.
    #[arg(long, default_value_t = 6000)]
    pub units: u32,
    /// Seed of the level and of the per-unit randomness.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Also write the summary as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

impl Default for RunArgs {
    fn default() -> Self {
        Self {
            frames: 600,
            threads: None,
            units: 6000,
            seed: 1,
            json: None,
        }
    }
}

const DT: f32 = 1.0 / 30.0;

/// Builds the demo simulation.
pub fn build(args: &RunArgs, threads: usize) -> Result<Plan, AppError> {
    let level_config = LevelConfig::default()
        .with_size(48, 48)
        .with_cells_per_tile(4)
        .with_guarantee_reachable(true);
    let level =
        generate_level(args.seed, &level_config).map_err(|e| AppError::Failed(e.to_string()))?;
    let approach =
        GoalSet::new(level.lair_approach_cells()).map_err(|e| AppError::Failed(e.to_string()))?;
    let spawns: Vec<Cell> = level.enemy_spawn_tiles().to_vec();
    let map = level.map().clone();
    let config = SimConfig::default()
        .with_seed(args.seed)
        .with_threads(threads);
    let mut sim = Simulation::new(map, config).map_err(|e| AppError::Failed(e.to_string()))?;
    for _ in 0..3 {
        sim.add_group(approach.clone())
            .map_err(|e| AppError::Failed(e.to_string()))?;
    }
    // Spawn units on open cells around each enemy spawn, spiralling outwards.
    let per_group = args.units.div_ceil(3);
    let mut spawned = 0;
    for (g, tile) in spawns.iter().enumerate().take(3) {
        let centre = level.tile_centre(*tile);
        let cells = open_cells_near(&sim, centre, per_group as usize);
        for (i, c) in cells.into_iter().enumerate() {
            if spawned == args.units {
                break;
            }
            let pos = sim.map().grid().cell_centre(c);
            let spec = UnitSpec::at(pos)
                .with_radius(0.35 + 0.05 * (i % 3) as f32)
                .with_mass(1.0 + (i % 4) as f32)
                .with_group(GroupId(g as u16))
                .with_controllable(g == 0);
            sim.spawn(spec)
                .map_err(|e| AppError::Failed(e.to_string()))?;
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
    })
}

/// Up to `n` open ground cells nearest `centre` (ring by ring).
fn open_cells_near(sim: &Simulation, centre: Vec2, n: usize) -> Vec<Cell> {
    let map = sim.map();
    let grid = map.grid();
    let c = grid.clamped_cell_at(centre);
    let cost = map.cost_field(Layer::Ground);
    let mut out = Vec::with_capacity(n);
    let max_r = grid.width().max(grid.height()) as i64;
    for r in 0..max_r {
        for y in -r..=r {
            for x in -r..=r {
                if x.abs().max(y.abs()) != r {
                    continue;
                }
                let (cx, cy) = (i64::from(c.x) + x, i64::from(c.y) + y);
                if grid.contains(cx, cy) && cost.get(Cell::new(cx as u32, cy as u32)) != WALL {
                    out.push(Cell::new(cx as u32, cy as u32));
                    if out.len() == n {
                        return out;
                    }
                }
            }
        }
    }
    out
}

/// The demo's mid-run events: an explosion, an attractor, a vortex, a goal change and a
/// destroyed brick of the lair's ring.
fn demo_events(sim: &Simulation) -> Result<Vec<TimedEvent>, AppError> {
    let bad = |e: horde_core::ForceFieldError| AppError::Failed(e.to_string());
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
        event: Event::Force(blast),
    });
    let hole = ForceField::new(centre, ForceKind::Attractor, 18.0, 60.0)
        .and_then(|f| f.with_duration(3.0))
        .map_err(bad)?;
    events.push(TimedEvent {
        frame: 120,
        event: Event::Force(hole),
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
        event: Event::Force(vortex),
    });
    // Group 2 is sent to the middle of the map instead.
    let map_centre = sim.map().grid().clamped_cell_at(centre);
    let cells = open_cells_near(sim, sim.map().grid().cell_centre(map_centre), 64);
    let goal = GoalSet::new(cells).map_err(|e| AppError::Failed(e.to_string()))?;
    events.push(TimedEvent {
        frame: 240,
        event: Event::Goal {
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
            event: Event::Terrain {
                cells: vec![brick],
                terrain: Terrain::Empty,
            },
        });
    }
    Ok(events)
}

/// Median, 95th percentile and maximum of `samples` in milliseconds.
fn stats(samples: &mut [Duration]) -> (f64, f64, f64) {
    samples.sort_unstable();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let n = samples.len();
    if n == 0 {
        return (0.0, 0.0, 0.0);
    }
    (
        ms(samples[n / 2]),
        ms(samples[(n * 95 / 100).min(n - 1)]),
        ms(samples[n - 1]),
    )
}

/// Runs the demo and prints the summary.
pub fn run(args: &RunArgs) -> Result<(), AppError> {
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if threads == 0 {
        return Err(AppError::BadInput("--threads must be at least 1".into()));
    }
    let started = Instant::now();
    let mut plan = build(args, threads)?;
    let setup = started.elapsed();
    let mut per_stage: Vec<(String, Vec<Duration>)> = Vec::new();
    let mut totals = Vec::with_capacity(args.frames as usize);
    let mut wall_violations = 0usize;
    for frame in 0..plan.frames {
        plan.apply_events(frame)
            .map_err(|e| AppError::Failed(e.to_string()))?;
        let t = Instant::now();
        plan.sim
            .step(plan.dt)
            .map_err(|e| AppError::Failed(e.to_string()))?;
        let sim = &plan.sim;
        totals.push(t.elapsed());
        for (name, time) in sim.horde().stage_times() {
            match per_stage.iter_mut().find(|(n, _)| *n == name) {
                Some((_, v)) => v.push(time),
                None => per_stage.push((name, vec![time])),
            }
        }
        let map = sim.map();
        wall_violations += sim
            .units()
            .iter()
            .filter(|u| {
                map.grid()
                    .cell_at(u.position)
                    .is_none_or(|c| map.cost_field(u.layer).get(c) == WALL)
            })
            .count();
    }
    let sim = &plan.sim;
    let units = sim.units();
    let arrived = units.iter().filter(|u| u.arrived).count();
    let stunned = units.iter().filter(|u| u.stun > 0.0).count();
    let hash = sim.state_hash();

    println!(
        "horde: {}: {} units, {} frames, {} threads, seed {}",
        plan.name,
        units.len(),
        plan.frames,
        threads,
        args.seed
    );
    println!("setup {:.1} ms", setup.as_secs_f64() * 1e3);
    println!(
        "{:<18} {:>10} {:>10} {:>10}",
        "stage", "median ms", "p95 ms", "max ms"
    );
    let mut json_stages = serde_json::Map::new();
    for (name, samples) in per_stage
        .iter_mut()
        .chain(std::iter::once(&mut ("frame".to_string(), totals)))
    {
        let (med, p95, max) = stats(samples);
        println!("{name:<18} {med:>10.3} {p95:>10.3} {max:>10.3}");
        json_stages.insert(
            name.clone(),
            serde_json::json!({ "median_ms": med, "p95_ms": p95, "max_ms": max }),
        );
    }
    println!("arrived {arrived}, stunned {stunned}, wall violations {wall_violations}");
    println!("state_hash {hash:016x}");
    if let Some(path) = &args.json {
        let json = serde_json::json!({
            "frames": plan.frames,
            "units": units.len(),
            "threads": threads,
            "arrived": arrived,
            "stunned": stunned,
            "state_hash": format!("{hash:016x}"),
            "wall_violations": wall_violations,
            "stages": json_stages,
        });
        std::fs::write(path, format!("{json:#}\n"))
            .map_err(|e| AppError::Failed(format!("{}: {e}", path.display())))?;
    }
    if wall_violations > 0 {
        return Err(AppError::Failed(format!(
            "{wall_violations} unit-frames had a centre inside a wall"
        )));
    }
    Ok(())
}
