//! Armies that come to rest (docs/behaviour.md, "Bodies and crowds"): groups sent to goals smaller
//! than themselves form a blob and stop, goal areas that can hold their group fill, and a crowd
//! squeezing through a gap arrives. After public crowd benchmarks: RVO2's Circle (with goals
//! smaller than each group) and Blocks (each group to one cell).
//!
//! A unit counts as at rest once its displacement per frame has stayed under 5% of its top
//! speed for 2 s. Each scenario checks the share of units at rest (or arrived) by a time
//! after the group's first arrival, the mean overlap of touching pairs, and the same state
//! hash on 1, 2 and 3 threads.

use glam::Vec2;
use horde::{Cell, GoalSet, Grid, GroupId, Layer, Map, SimConfig, Simulation, Terrain, UnitSpec};

const DT: f32 = 1.0 / 30.0;
/// Frames a unit must stay under 5% of its top speed to count as at rest: 2 s.
const HELD: u32 = 60;

/// What a run measured.
#[derive(Debug)]
struct Outcome {
    hash: u64,
    units: usize,
    /// Units at rest (held under 5% of top speed for 2 s) at the end.
    still: usize,
    /// Units flagged arrived, and settled, at the end.
    arrived: usize,
    settled: usize,
    /// Seconds from the first unit's arrival to the end.
    after_first_arrival: f32,
    mean_overlap: f64,
    /// The longest any unit stood still (under 5% of its top speed) without being arrived
    /// or settled while other units still moved: a unit stuck in the flow, seconds.
    longest_stall: f32,
}

/// Runs `sim` for at most `frames` frames: after the first arrival, until every unit has
/// rested for 2 s or `settle_for` seconds have passed.
fn run(sim: &mut Simulation, frames: u32, settle_for: f32) -> Outcome {
    let n = sim.units().len();
    let mut still = vec![0u32; n];
    let (mut stall, mut longest_stall) = (vec![0u32; n], 0u32);
    let (mut first_arrival, mut overlap_sum, mut pairs) = (None::<u32>, 0.0, 0u64);
    let mut frame = 0;
    while frame < frames {
        let before = sim.units();
        sim.step(DT).unwrap();
        let after = sim.units();
        for ((a, b), s) in before.iter().zip(&after).zip(&mut still) {
            let speed = a.position.distance(b.position) / DT;
            *s = if speed < 0.05 * a.max_speed {
                *s + 1
            } else {
                0
            };
        }
        // A stall counts while someone still moves past.
        let anyone_moving = still.contains(&0);
        for ((s, &st), u) in stall.iter_mut().zip(&still).zip(&after) {
            *s = if st > 0 && anyone_moving && !u.arrived && !u.settled {
                *s + 1
            } else {
                0
            };
            longest_stall = longest_stall.max(*s);
        }
        if first_arrival.is_none() && after.iter().any(|u| u.arrived) {
            first_arrival = Some(frame);
        }
        let stats = sim.body_stats();
        overlap_sum += stats.overlap_sum;
        pairs += stats.touching_pairs;
        frame += 1;
        let all_rest = still.iter().all(|&s| s >= HELD);
        if first_arrival.is_some_and(|f| all_rest || (frame - f) as f32 * DT >= settle_for) {
            break;
        }
    }
    let units = sim.units();
    Outcome {
        hash: sim.state_hash(),
        units: n,
        still: still.iter().filter(|&&s| s >= HELD).count(),
        arrived: units.iter().filter(|u| u.arrived).count(),
        settled: units.iter().filter(|u| u.settled).count(),
        after_first_arrival: first_arrival.map_or(0.0, |f| (frame - f) as f32 * DT),
        mean_overlap: if pairs == 0 {
            0.0
        } else {
            overlap_sum / pairs as f64
        },
        longest_stall: longest_stall as f32 * DT,
    }
}

/// Runs `scenario` on 1, 2 and 3 threads: returns the 1-thread outcome, checking the others
/// end on the same state.
fn on_thread_counts(name: &str, scenario: impl Fn(usize) -> Outcome) -> Outcome {
    let first = scenario(1);
    println!("{name}: {first:?}");
    for threads in [2, 3] {
        assert_eq!(
            scenario(threads).hash,
            first.hash,
            "{name}: {threads} threads end on another state"
        );
    }
    first
}

/// The targets for a group larger than its goal: `secs` after the first arrival at most,
/// >= 98% of units at rest and arrived or settled, mean overlap <= 10% of the radius.
fn comes_to_rest_within(out: &Outcome, secs: f32) {
    assert!(out.after_first_arrival <= secs + DT, "{out:?}");
    assert!(share(out.still, out.units) >= 0.98, "{out:?}");
    assert!(
        share(out.arrived + out.settled, out.units) >= 0.98,
        "{out:?}"
    );
    assert!(out.mean_overlap <= 0.10, "{out:?}");
}

fn share(count: usize, of: usize) -> f64 {
    count as f64 / of.max(1) as f64
}

fn spawn_grid(sim: &mut Simulation, group: GroupId, corner: Vec2, columns: u32, count: u32) {
    for i in 0..count {
        let at = corner + Vec2::new((i % columns) as f32, (i / columns) as f32);
        sim.spawn(UnitSpec::at(at).with_radius(0.4).with_group(group))
            .unwrap();
    }
}

/// RVO2's Circle with big units (radius 1.5) in eight groups of 20, each sent to a 3x3-cell
/// goal on the far side: no goal holds its group, so each forms a blob around its goal.
#[test]
fn circle_groups_larger_than_their_goals_come_to_rest() {
    let out = on_thread_counts("circle", |threads| {
        let map = Map::new(Grid::new(200, 200).unwrap());
        let mut sim = Simulation::new(map, SimConfig::default().with_threads(threads)).unwrap();
        for k in 0..8 {
            let angle = k as f32 / 8.0 * std::f32::consts::TAU;
            let centre = Vec2::splat(100.0) + Vec2::from_angle(angle) * 70.0;
            let far = Vec2::splat(200.0) - centre;
            let (gx, gy) = (far.x as u32 - 1, far.y as u32 - 1);
            let goal = GoalSet::new(
                (0..3).flat_map(|dx| (0..3).map(move |dy| Cell::new(gx + dx, gy + dy))),
            )
            .unwrap();
            let group = sim.add_group(goal).unwrap();
            for i in 0..20 {
                let at = centre + Vec2::new((i % 5) as f32 * 3.2 - 6.4, (i / 5) as f32 * 3.2 - 4.8);
                sim.spawn(UnitSpec::at(at).with_radius(1.5).with_group(group))
                    .unwrap();
            }
        }
        run(&mut sim, 9000, 60.0)
    });
    // The last units walk round the blobs of the groups before them to free room, and the
    // crowd crossing the centre holds the last of each group back: 52.7 s after the first
    // arrival here; well within the bound the families use, 2 x (longest path / top
    // speed) + 60 s from the start (130 s; tests/crowd_families.rs).
    comes_to_rest_within(&out, 60.0);
}

/// RVO2's Blocks: four groups of 25 cross between four blocks of walls, each to one cell.
#[test]
fn blocks_groups_sent_to_one_cell_come_to_rest() {
    let out = on_thread_counts("blocks", |threads| {
        let mut map = Map::new(Grid::new(60, 60).unwrap());
        for (bx, by) in [(18, 18), (34, 18), (18, 34), (34, 34)] {
            for x in bx..bx + 8 {
                for y in by..by + 8 {
                    map.set_terrain(Cell::new(x, y), Terrain::SteelPlate);
                }
            }
        }
        let mut sim = Simulation::new(map, SimConfig::default().with_threads(threads)).unwrap();
        let corners = [(3, 3), (56, 3), (3, 56), (56, 56)];
        for (k, &(cx, cy)) in corners.iter().enumerate() {
            let (gx, gy) = corners[3 - k];
            let group = sim.add_group(GoalSet::single(Cell::new(gx, gy))).unwrap();
            let corner = Vec2::new(cx as f32 - 1.5, cy as f32 - 1.5);
            spawn_grid(&mut sim, group, corner, 5, 25);
        }
        run(&mut sim, 9000, 30.0)
    });
    comes_to_rest_within(&out, 30.0);
}

/// 400 units into a 20x30-cell area, which holds them all: it fills, not just its edge.
#[test]
fn a_goal_area_that_holds_its_group_fills() {
    let out = on_thread_counts("area", |threads| {
        let map = Map::new(Grid::new(60, 60).unwrap());
        let mut sim = Simulation::new(map, SimConfig::default().with_threads(threads)).unwrap();
        let goal =
            GoalSet::new((35..55).flat_map(|x| (15..45).map(move |y| Cell::new(x, y)))).unwrap();
        let group = sim.add_group(goal).unwrap();
        spawn_grid(&mut sim, group, Vec2::new(3.5, 10.5), 20, 400);
        run(&mut sim, 9000, 30.0)
    });
    assert!(share(out.arrived, out.units) >= 0.98, "{out:?}");
    assert!(share(out.still, out.units) >= 0.98, "{out:?}");
    assert!(out.mean_overlap <= 0.10, "{out:?}");
}

/// 2000 units through a gap four cells wide into an area that holds them (3120 cells).
#[test]
fn a_crowd_through_a_chokepoint_arrives() {
    let out = on_thread_counts("chokepoint", |threads| {
        let mut map = Map::new(Grid::new(120, 64).unwrap());
        for y in (0..64).filter(|y| !(30..34).contains(y)) {
            map.set_terrain(Cell::new(60, y), Terrain::BrickWall);
        }
        let goal =
            GoalSet::new((66..118).flat_map(|x| (2..62).map(move |y| Cell::new(x, y)))).unwrap();
        let mut sim = Simulation::new(map, SimConfig::default().with_threads(threads)).unwrap();
        let group = sim.add_group(goal).unwrap();
        spawn_grid(&mut sim, group, Vec2::new(8.5, 6.5), 40, 2000);
        run(&mut sim, 9000, 240.0)
    });
    assert!(share(out.arrived, out.units) >= 0.98, "{out:?}");
    assert!(out.mean_overlap <= 0.10, "{out:?}");
    // No unit waits stuck in the crowd for 30 s while others pass.
    assert!(out.longest_stall < 30.0, "{out:?}");
}

/// A goal change sets a resting group moving again, and it comes to rest at the new goal.
#[test]
fn a_goal_change_sets_a_resting_group_moving() {
    let map = Map::new(Grid::new(60, 60).unwrap());
    let mut sim = Simulation::new(map, SimConfig::default()).unwrap();
    let group = sim.add_group(GoalSet::single(Cell::new(10, 10))).unwrap();
    spawn_grid(&mut sim, group, Vec2::new(20.5, 20.5), 10, 100);
    let first = run(&mut sim, 3000, 20.0);
    assert!(
        share(first.arrived + first.settled, first.units) >= 0.98,
        "{first:?}"
    );
    sim.set_group_goal(group, GoalSet::single(Cell::new(50, 50)))
        .unwrap();
    assert!(sim.units().iter().all(|u| !u.arrived && !u.settled));
    let second = run(&mut sim, 3000, 20.0);
    assert!(share(second.still, second.units) >= 0.98, "{second:?}");
    // A compact blob: within 2.5 times the radius of the disc the units would cover packed
    // (hexagonally, 0.907 of the area).
    let radius = (second.units as f32 * 0.4 * 0.4 / 0.907).sqrt() * 2.5;
    let far: Vec<Vec2> = sim
        .units()
        .iter()
        .map(|u| u.position)
        .filter(|p| p.distance(Vec2::splat(50.5)) >= radius)
        .collect();
    assert!(
        share(second.units - far.len(), second.units) >= 0.98,
        "{second:?}: beyond {radius} of the new goal: {far:?}"
    );
}

/// Snapshots taken while an area fills (its fill's last search is part of the state)
/// restore into runs that continue with the same hash on every frame.
#[test]
fn a_filling_area_restores_exactly_from_a_snapshot() {
    let map = Map::new(Grid::new(60, 60).unwrap());
    let mut sim = Simulation::new(map, SimConfig::default()).unwrap();
    let goal = GoalSet::new((35..55).flat_map(|x| (15..45).map(move |y| Cell::new(x, y)))).unwrap();
    let group = sim.add_group(goal).unwrap();
    spawn_grid(&mut sim, group, Vec2::new(3.5, 10.5), 20, 400);
    let at: Vec<u32> = (400..600).step_by(7).collect();
    let mut saved = Vec::new();
    let mut hashes = Vec::new();
    for frame in 0..700 {
        if at.contains(&frame) {
            saved.push((frame, sim.snapshot().to_bytes().unwrap()));
        }
        sim.step(DT).unwrap();
        hashes.push(sim.state_hash());
    }
    let units = sim.units();
    assert!(
        units.iter().filter(|u| u.arrived).count() > 300,
        "the area filled"
    );
    for (frame, bytes) in saved {
        let snapshot = horde::Snapshot::from_bytes(&bytes).unwrap();
        let mut restored = Simulation::from_snapshot(&snapshot, 2).unwrap();
        for (k, &hash) in hashes.iter().enumerate().skip(frame as usize).take(60) {
            restored.step(DT).unwrap();
            assert_eq!(restored.state_hash(), hash, "saved at {frame}, frame {k}");
        }
    }
}

/// Hover units sent to a pond (cells only their layer can stand in) come to rest there.
#[test]
fn hover_units_come_to_rest_in_a_goal_on_water() {
    let out = on_thread_counts("pond", |threads| {
        let mut map = Map::new(Grid::new(40, 30).unwrap());
        for x in 25..29 {
            for y in 12..16 {
                map.set_terrain(Cell::new(x, y), Terrain::Water);
            }
        }
        let mut sim = Simulation::new(map, SimConfig::default().with_threads(threads)).unwrap();
        let goal =
            GoalSet::new((26..28).flat_map(|x| (13..15).map(move |y| Cell::new(x, y)))).unwrap();
        let group = sim.add_group(goal).unwrap();
        for i in 0..12u32 {
            let at = Vec2::new(4.5 + (i % 4) as f32, 10.5 + (i / 4) as f32);
            let spec = UnitSpec::at(at)
                .with_radius(0.3)
                .with_layer(Layer::Hover)
                .with_group(group);
            sim.spawn(spec).unwrap();
        }
        run(&mut sim, 3000, 30.0)
    });
    assert!(share(out.still, out.units) >= 0.98, "{out:?}");
    assert!(
        share(out.arrived + out.settled, out.units) >= 0.98,
        "{out:?}"
    );
}
