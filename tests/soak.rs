//! The soak test: a crowded scenario run for 100,000+ frames with random goal changes,
//! forces, terrain edits and snapshot round trips, checking on every frame that every value
//! is finite, no centre lies in a cell its unit cannot enter, the unit count is conserved and
//! nothing is quarantined; and that memory does not grow.
//!
//! Ignored by default (it takes about a minute); `.ci/run` runs it:
//! `HORDE_SOAK_FRAMES=100000 cargo test --test soak -- --ignored --nocapture`.
//! Figures go into docs/RELIABILITY.md.

mod common;

use std::time::Instant;

use glam::Vec2;
use horde::{
    Cell, ForceField, ForceKind, GoalSet, GroupId, Layer, SimConfig, Simulation, Snapshot, Terrain,
    UnitSpec,
    fields::WALL,
    level::{LevelConfig, generate_level},
};
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64;

const DT: f32 = 1.0 / 30.0;
const GROUPS: u16 = 3;

/// Resident memory of this process in bytes (Linux), if it can be read.
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

struct Rng(Pcg64);

impl Rng {
    fn below(&mut self, n: u32) -> u32 {
        (self.0.next_u64() % u64::from(n.max(1))) as u32
    }
    fn unit(&mut self) -> f32 {
        (self.0.next_u32() >> 8) as f32 / (1u32 << 24) as f32
    }
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }
}

#[derive(Debug, Default)]
struct Tally {
    goal_changes: u64,
    forces: u64,
    terrain_edits: u64,
    refused: u64,
    snapshots: u64,
}

/// An open cell (for ground and hover units alike) picked at random.
fn open_cell(sim: &Simulation, rng: &mut Rng) -> Cell {
    let map = sim.map();
    loop {
        let c = Cell::new(rng.below(map.width()), rng.below(map.height()));
        if map.cost_field(Layer::Ground).get(c) != WALL {
            return c;
        }
    }
}

fn random_force(sim: &Simulation, rng: &mut Rng) -> ForceField {
    let (w, h) = (sim.map().width() as f32, sim.map().height() as f32);
    let kind = match rng.below(4) {
        0 => ForceKind::Explosion,
        1 => ForceKind::Attractor,
        2 => ForceKind::Push {
            direction: Vec2::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)) + Vec2::X * 0.01,
        },
        _ => ForceKind::Vortex {
            clockwise: rng.below(2) == 0,
        },
    };
    let position = Vec2::new(rng.range(0.0, w), rng.range(0.0, h));
    ForceField::new(position, kind, rng.range(1.0, 14.0), rng.range(0.0, 2500.0))
        .and_then(|f| f.with_duration(rng.range(0.0, 5.0)))
        .and_then(|f| f.with_time_decay(rng.range(0.0, 0.5)))
        .map(|f| {
            f.with_falloff(rng.below(4))
                .with_affects_controllable(rng.below(3) != 0)
        })
        .expect("the soak's forces are valid")
}

#[test]
#[ignore = "soak test: run with --ignored (HORDE_SOAK_FRAMES sets the length)"]
fn soak() {
    let frames: u64 = std::env::var("HORDE_SOAK_FRAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let level = generate_level(
        21,
        &LevelConfig::default()
            .with_size(16, 16)
            .with_cells_per_tile(4)
            .with_guarantee_reachable(true),
    )
    .unwrap();
    let map = level.into_map();
    let mut rng = Rng(Pcg64::seed_from_u64(99));
    let mut sim = Simulation::new(map, SimConfig::default().with_seed(4).with_threads(2)).unwrap();
    for _ in 0..GROUPS {
        let goal = GoalSet::single(open_cell(&sim, &mut rng));
        sim.add_group(goal).unwrap();
    }
    let mut spawned = 0usize;
    while spawned < 1200 {
        let c = open_cell(&sim, &mut rng);
        let pos = sim.map().grid().cell_centre(c);
        let i = spawned as u32;
        let spec = UnitSpec::at(pos + Vec2::new(rng.range(-0.3, 0.3), rng.range(-0.3, 0.3)))
            .with_radius(0.3 + 0.05 * (i % 4) as f32)
            .with_mass(0.5 + (i % 5) as f32)
            .with_group(GroupId((i % u32::from(GROUPS)) as u16))
            .with_layer(if i % 7 == 0 {
                Layer::Hover
            } else {
                Layer::Ground
            })
            .with_controllable(i % 2 == 0);
        sim.spawn(spec).unwrap();
        spawned += 1;
    }

    let started = Instant::now();
    let mut tally = Tally::default();
    let mut memory_after_warmup = None;
    let mut peak_fields = 0;
    for frame in 0..frames {
        // Commands.
        if rng.below(60) == 0 {
            let group = GroupId(rng.below(u32::from(GROUPS)) as u16);
            let goal = if rng.below(2) == 0 {
                GoalSet::single(open_cell(&sim, &mut rng))
            } else {
                GoalSet::new((0..1 + rng.below(12)).map(|_| open_cell(&sim, &mut rng))).unwrap()
            };
            sim.set_group_goal(group, goal).unwrap();
            tally.goal_changes += 1;
        }
        if rng.below(45) == 0 {
            let force = random_force(&sim, &mut rng);
            sim.add_force(force);
            tally.forces += 1;
        }
        if rng.below(40) == 0 {
            let (w, h) = (sim.map().width(), sim.map().height());
            let c = Cell::new(1 + rng.below(w - 2), 1 + rng.below(h - 2));
            let t = [
                Terrain::BrickWall,
                Terrain::Empty,
                Terrain::Empty,
                Terrain::Water,
                Terrain::Forest,
                Terrain::Snow,
            ][rng.below(6) as usize];
            sim.set_terrain(c, t).unwrap();
            tally.terrain_edits += 1;
        }
        if rng.below(500) == 0 {
            // Bad commands are refused and change nothing.
            let hash = sim.state_hash();
            assert!(sim.set_terrain(Cell::new(9999, 0), Terrain::Empty).is_err());
            assert!(sim.step(f32::NAN).is_err());
            assert!(
                sim.spawn(UnitSpec::at(Vec2::new(f32::INFINITY, 0.0)))
                    .is_err()
            );
            assert_eq!(sim.state_hash(), hash);
            tally.refused += 3;
        }
        if frame % 5000 == 4999 {
            // Save, load on another thread count, and go on with the loaded copy.
            let bytes = sim.snapshot().to_bytes().unwrap();
            let threads = 1 + (frame / 5000 % 3) as usize;
            let restored =
                Simulation::from_snapshot(&Snapshot::from_bytes(&bytes).unwrap(), threads).unwrap();
            assert_eq!(restored.state_hash(), sim.state_hash());
            sim = restored;
            tally.snapshots += 1;
        }

        sim.step(DT)
            .unwrap_or_else(|e| panic!("frame {frame}: {e}"));

        // Invariants.
        let units = sim.units();
        assert_eq!(
            units.len(),
            spawned,
            "frame {frame}: unit count not conserved"
        );
        assert!(
            sim.quarantined().is_empty(),
            "frame {frame}: quarantined {:?}",
            sim.quarantined()
        );
        let map = sim.map();
        let mut in_walls = 0;
        for u in &units {
            assert!(
                u.position.is_finite()
                    && u.velocity.is_finite()
                    && u.external.is_finite()
                    && u.stun.is_finite()
                    && u.stun >= 0.0,
                "frame {frame}: unit {:?} is not finite: {u:?}",
                u.id
            );
            let cell = map.grid().cell_at(u.position);
            assert!(cell.is_some(), "frame {frame}: unit {:?} off the map", u.id);
            in_walls += usize::from(cell.is_some_and(|c| map.cost_field(u.layer).get(c) == WALL));
        }
        // A unit stands in a wall only when an edit put it there and no cell with room is in
        // reach to step out to: it is reported, and tries again every frame.
        assert!(
            in_walls <= sim.horde().last_walled_in(),
            "frame {frame}: {in_walls} units stand in walls, {} reported walled in",
            sim.horde().last_walled_in()
        );
        drop(map);
        let fields = sim.horde().fields().len();
        peak_fields = peak_fields.max(fields);
        assert!(
            fields <= usize::from(GROUPS) * Layer::COUNT,
            "frame {frame}: {fields} fields held for {GROUPS} groups"
        );
        if frame == frames.min(10_000) - 1 {
            memory_after_warmup = resident_bytes();
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let memory_end = resident_bytes();
    println!(
        "soak: {frames} frames of {spawned} units in {seconds:.1} s ({:.3} ms/frame)",
        seconds * 1e3 / frames as f64
    );
    println!(
        "soak: commands applied: {} goal changes, {} force fields, {} terrain edits, {} snapshot round trips; {} bad commands refused",
        tally.goal_changes, tally.forces, tally.terrain_edits, tally.snapshots, tally.refused
    );
    println!("soak: violations found: 0 (every frame checked); peak fields held {peak_fields}");
    if let (Some(warm), Some(end)) = (memory_after_warmup, memory_end) {
        println!(
            "soak: resident memory {:.1} MiB after warm-up, {:.1} MiB at the end",
            warm as f64 / 1048576.0,
            end as f64 / 1048576.0
        );
        assert!(
            end <= warm + 32 * 1024 * 1024,
            "memory grew from {warm} to {end} bytes"
        );
    }
}
