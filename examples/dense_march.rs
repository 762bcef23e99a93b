//! The whole life of the dense army an RTS lives in, each phase measured on its own: 100k
//! units of radius 0.45 spawned packed, one per cell, in a 320x320 block of a 1024x1024
//! map, marching through a band of rocks, squeezing through the 8-cell gaps of a wall, and
//! filling a goal area that holds them all, where they come to rest.
//!
//! Phases, from the crowd's state after each frame:
//! - `packed`: the first 60 frames (the block starts to move);
//! - `march`: until the front reaches the wall;
//! - `squeeze`: while more than 2% of the units are still before the wall;
//! - `fill`: until 98% of the units are at rest (arrived or settled);
//! - `settled`: the 300 frames after that.
//!
//! Prints per phase the frames it spanned, the frame's median and p95, and each stage's
//! median in ns per unit; then the state hash (the same on any thread count).
//!
//! Run: `cargo run --release --example dense_march -- [MAX_FRAMES] [THREADS]` (default
//! 9000, 2). With fewer frames the run stops early and the phases it did not reach are left
//! out.

use std::time::{Duration, Instant};

use glam::Vec2;
use horde::{Cell, GoalSet, Grid, Map, Position, SimConfig, Simulation, Terrain, UnitSpec};

const UNITS: u32 = 100_000;
/// The wall's west face; its gaps are 8 cells wide, every 24 cells.
const WALL_X: u32 = 600;
const PHASES: [&str; 5] = ["packed", "march", "squeeze", "fill", "settled"];

fn main() {
    let mut args = std::env::args().skip(1);
    let max_frames: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(9000);
    let threads: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(2);
    let mut sim = build(threads);

    println!("dense_march: {UNITS} units, {threads} threads");
    println!(
        "{:<8} {:>11} {:>9} {:>9}   stages: median ns per unit",
        "phase", "frames", "median ms", "p95 ms"
    );
    // This phase's frame times and each stage's; printed as soon as the phase ends.
    let mut phase = Phase::new(0, 0);
    let mut settled_frames = 0;
    for frame in 0..max_frames {
        let t = Instant::now();
        sim.step(1.0 / 30.0).expect("the frame runs");
        phase.add(t.elapsed(), sim.horde().stage_times());
        let next = next_phase(&sim, phase.index, frame);
        if next != phase.index {
            phase.print(frame + 1);
            phase = Phase::new(next, frame + 1);
        }
        if next == 4 {
            settled_frames += 1;
            if settled_frames >= 300 {
                break;
            }
        }
    }
    if !phase.totals.is_empty() {
        phase.print(phase.start + phase.totals.len());
    }
    let status = sim.group_status();
    println!(
        "at the end: arrived {}, settled {}, moving {}",
        status[0].arrived, status[0].settled, status[0].moving
    );
    println!("state_hash {:016x}", sim.state_hash());
}

/// One phase's measurements.
struct Phase {
    index: usize,
    start: usize,
    totals: Vec<Duration>,
    stages: Vec<(String, Vec<Duration>)>,
}

impl Phase {
    fn new(index: usize, start: usize) -> Self {
        Self {
            index,
            start,
            totals: Vec::new(),
            stages: Vec::new(),
        }
    }

    fn add(&mut self, total: Duration, stages: Vec<(String, Duration)>) {
        self.totals.push(total);
        for (name, time) in stages {
            match self.stages.iter_mut().find(|(n, _)| *n == name) {
                Some((_, v)) => v.push(time),
                None => self.stages.push((name, vec![time])),
            }
        }
    }

    fn print(&mut self, end: usize) {
        let stat = |v: &mut Vec<Duration>| {
            v.sort_unstable();
            (v[v.len() / 2], v[(v.len() * 95 / 100).min(v.len() - 1)])
        };
        let (median, p95) = stat(&mut self.totals);
        let span = format!("{}-{end}", self.start);
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        print!(
            "{:<8} {span:>11} {:>9.2} {:>9.2}  ",
            PHASES[self.index],
            ms(median),
            ms(p95)
        );
        for (name, v) in &mut self.stages {
            let (m, _) = stat(v);
            print!(" {name} {:.0}", m.as_secs_f64() * 1e9 / f64::from(UNITS));
        }
        println!();
    }
}

/// The map, the goal and the packed block of units.
fn build(threads: usize) -> Simulation {
    let mut map = Map::new(Grid::new(1024, 1024).expect("a valid grid"));
    // A band of 3x3 rocks, 8 cells apart, across the way (x 400..560).
    for x in (400..560).step_by(8) {
        for y in (40..1000).step_by(8) {
            let shift = if (x / 8) % 2 == 0 { 0 } else { 4 };
            for (dx, dy) in (0..3).flat_map(|dx| (0..3).map(move |dy| (dx, dy))) {
                map.set_terrain(Cell::new(x + dx, y + shift + dy), Terrain::SteelPlate);
            }
        }
    }
    // A wall 4 cells thick with 8-cell gaps every 24 cells.
    for y in (0..1024).filter(|y| y % 24 >= 8) {
        for x in WALL_X..WALL_X + 4 {
            map.set_terrain(Cell::new(x, y), Terrain::SteelPlate);
        }
    }
    let config = SimConfig::default().with_threads(threads);
    let mut sim = Simulation::new(map, config).expect("a valid config");
    let goal = GoalSet::new((700..1000).flat_map(|x| (200..800).map(move |y| Cell::new(x, y))))
        .expect("a goal");
    let group = sim.add_group(goal).expect("an open goal");
    for i in 0..UNITS {
        let at = Vec2::new(40.5 + (i % 320) as f32, 352.5 + (i / 320) as f32);
        sim.spawn(UnitSpec::at(at).with_radius(0.45).with_group(group))
            .expect("an open cell");
    }
    sim
}

/// The phase after frame `frame` (see the module docs), from `phase`.
fn next_phase(sim: &Simulation, phase: usize, frame: usize) -> usize {
    let xs = || {
        sim.world()
            .query::<&Position>()
            .iter()
            .map(|p| p.0.x)
            .collect::<Vec<f32>>()
    };
    match phase {
        0 if frame + 1 >= 60 => 1,
        1 if xs().iter().any(|&x| x >= WALL_X as f32 - 1.0) => 2,
        2 if xs().iter().filter(|&&x| x < (WALL_X + 4) as f32).count() <= UNITS as usize / 50 => 3,
        3 if frame % 30 == 0 => {
            let s = &sim.group_status()[0];
            if (s.arrived + s.settled) * 100 >= s.units * 98 {
                4
            } else {
                3
            }
        }
        p => p,
    }
}
