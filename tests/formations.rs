//! Formations (docs/behaviour.md, "Formations"), checked on families of generated members
//! (seeds, map sizes, gap places and widths, radii, speeds, shapes), never one layout:
//!
//! - a line of 100 (ranks of 10 to 34, as wide as fits the ground) passes a 4-cell gap in a
//!   wall and re-forms within 10 s of its last unit getting through (every unit within one
//!   spacing of its slot);
//! - a box of 400 arrives with every unit within half a spacing of its slot, at rest,
//!   facing as ordered;
//! - a formation of mixed speeds keeps together: the slowest unit sets the pace, and the
//!   units never spread past 1.5 times the formation's own size;
//! - a box following a moving unit keeps its distance within a cell; a group whose unit
//!   dies or walks out of reach says so and stops;
//! - all of it is the same on 1, 2 and 3 threads and through a snapshot.

mod common;

use horde::formations::Formation;
use horde::prelude::*;
use horde::{TargetLoss, TargetState};
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64;

const DT: f32 = 1.0 / 30.0;

fn below(rng: &mut Pcg64, n: u32) -> u32 {
    (rng.next_u64() % u64::from(n)) as u32
}

fn unit_in(rng: &mut Pcg64) -> f32 {
    (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32
}

/// A member: a map with a wall across it, `gap` cells open in it, an army of `units` in a
/// loose blob west of it, its goal east of it.
struct Member {
    name: String,
    sim: Simulation,
    group: GroupId,
    wall_x: u32,
}

struct Layout {
    units: usize,
    gap: u32,
    radius: f32,
    speeds: (f32, f32),
    order: FormationOrder,
}

fn member(seed: u64, threads: usize, layout: &Layout) -> Member {
    let mut rng = Pcg64::seed_from_u64(seed);
    let height = 50 + below(&mut rng, 30);
    let width = 110 + below(&mut rng, 30);
    let wall_x = 55 + below(&mut rng, 10);
    let gap_y = 10 + below(&mut rng, height - 20 - layout.gap);
    let mut map = Map::new(Grid::new(width, height).unwrap());
    for y in 0..height {
        if !(gap_y..gap_y + layout.gap).contains(&y) {
            map.set_terrain(Cell::new(wall_x, y), Terrain::SteelPlate);
        }
    }
    let goal = Cell::new(width - 20, 10 + below(&mut rng, height - 20));
    let config = SimConfig::default().with_threads(threads);
    let mut sim = Simulation::new(map, config).unwrap();
    let group = sim.add_group(GoalSet::single(goal)).unwrap();
    // A loose blob: a lattice two radii and a half apart, spread round a point.
    let side = (layout.units as f32).sqrt().ceil() as usize;
    let step = 2.5 * layout.radius;
    let centre = Vec2::new(
        10.0 + side as f32 * step * 0.5 + unit_in(&mut rng) * 10.0,
        height as f32 * 0.5,
    );
    for i in 0..layout.units {
        let (row, col) = (i / side, i % side);
        let jitter = Vec2::new(unit_in(&mut rng), unit_in(&mut rng)) * 0.2 * layout.radius;
        let pos = centre
            + Vec2::new(
                (col as f32 - side as f32 * 0.5) * step,
                (row as f32 - side as f32 * 0.5) * step,
            )
            + jitter;
        let speed = layout.speeds.0 + (layout.speeds.1 - layout.speeds.0) * unit_in(&mut rng);
        sim.spawn(UnitSpec {
            radius: layout.radius,
            max_speed: speed,
            group,
            ..UnitSpec::at(pos)
        })
        .unwrap();
    }
    sim.set_formation(group, Some(layout.order.clone()))
        .unwrap();
    Member {
        name: format!("seed {seed}, {} units, gap {}", layout.units, layout.gap),
        sim,
        group,
        wall_x,
    }
}

fn formation(sim: &Simulation, group: GroupId) -> Formation {
    sim.horde().formations().get(group.0).unwrap().clone()
}

/// Each unit's distance from its slot, in spacings (the largest).
fn worst_off_slot(sim: &Simulation, f: &Formation) -> f32 {
    sim.units()
        .iter()
        .filter_map(|u| f.target_of(u.id.0).map(|t| u.position.distance(t)))
        .fold(0.0, f32::max)
        / f.spacing
}

#[test]
fn a_line_of_100_re_forms_within_10_s_of_passing_a_4_cell_gap() {
    let mut worst_reform = 0.0f32;
    for seed in 0..8 {
        let layout = Layout {
            units: 100,
            gap: 4,
            radius: 0.4 + 0.05 * (seed % 3) as f32,
            speeds: (4.0, 4.0),
            order: FormationOrder {
                shape: Shape::Line {
                    width: [25, 34, 10, 20][seed as usize % 4],
                },
                spacing: None,
                facing: None,
            },
        };
        let mut m = member(seed, 2, &layout);
        let mut through_at = None;
        let mut reformed_at = None;
        for frame in 0..(120.0 / DT) as u32 {
            m.sim.step(DT).unwrap();
            let t = frame as f32 * DT;
            let states = m.sim.units();
            let past = states
                .iter()
                .all(|u| u.position.x > m.wall_x as f32 + 1.0 + 0.5);
            if past && through_at.is_none() {
                through_at = Some(t);
            }
            if let Some(at) = through_at {
                let f = formation(&m.sim, m.group);
                if worst_off_slot(&m.sim, &f) <= 1.0 {
                    reformed_at = Some(t - at);
                    break;
                }
            }
        }
        let through = through_at.unwrap_or_else(|| panic!("{}: never got through", m.name));
        let reform = reformed_at
            .unwrap_or_else(|| panic!("{}: through at {through} s, never re-formed", m.name));
        eprintln!(
            "{}: through at {through:.1} s, re-formed {reform:.1} s later",
            m.name
        );
        worst_reform = worst_reform.max(reform);
    }
    assert!(
        worst_reform <= 10.0,
        "re-formed only after {worst_reform} s"
    );
}

/// A box (or wedge) of `units` sent `facing` a given way: runs until every unit rests and
/// returns the member, the formation and the seconds it took.
fn arrive(seed: u64, threads: usize, units: usize, shape: Shape) -> (Member, Formation, f32) {
    let mut rng = Pcg64::seed_from_u64(seed ^ 0xf0);
    let facing = Vec2::new(unit_in(&mut rng) - 0.5, unit_in(&mut rng) - 0.5);
    let layout = Layout {
        units,
        gap: 8,
        radius: 0.35 + 0.05 * (seed % 3) as f32,
        speeds: (3.0, 4.0),
        order: FormationOrder {
            shape,
            spacing: None,
            facing: Some(facing),
        },
    };
    let mut m = member(seed, threads, &layout);
    for frame in 0..(240.0 / DT) as u32 {
        m.sim.step(DT).unwrap();
        let st = m.sim.group_status()[0];
        if st.arrived == units {
            let f = formation(&m.sim, m.group);
            return (m, f, frame as f32 * DT);
        }
    }
    let st = m.sim.group_status()[0];
    panic!("{}: {} of {units} arrived after 240 s", m.name, st.arrived);
}

#[test]
fn a_box_of_400_arrives_in_its_slots_facing_as_ordered() {
    for seed in 0..3 {
        let (m, f, t) = arrive(seed, 2, 400, Shape::Box);
        let worst = worst_off_slot(&m.sim, &f);
        let facing = f.order.facing.unwrap().normalize();
        eprintln!(
            "{}: at rest after {t:.1} s, worst {worst:.2} spacings off its slot",
            m.name
        );
        assert!(
            f.arrived && f.heading == facing,
            "{}: faces {}",
            m.name,
            f.heading
        );
        assert!(
            worst <= 0.5,
            "{}: a unit {worst} spacings off its slot",
            m.name
        );
    }
    // A wedge too.
    let (m, f, _) = arrive(7, 2, 120, Shape::Wedge);
    assert!(worst_off_slot(&m.sim, &f) <= 0.5, "{}", m.name);
}

#[test]
fn a_formation_of_mixed_speeds_keeps_together_at_the_slowest_pace() {
    for seed in 0..4 {
        let layout = Layout {
            units: 150,
            gap: 10,
            radius: 0.4,
            speeds: (2.0, 6.0),
            order: FormationOrder {
                shape: Shape::Line { width: 15 },
                spacing: None,
                facing: None,
            },
        };
        let mut m = member(seed, 2, &layout);
        let slowest = m
            .sim
            .units()
            .iter()
            .map(|u| u.max_speed)
            .fold(f32::INFINITY, f32::min);
        let mut worst_spread = 0.0f32;
        // From the moment it first stands formed, until it arrives.
        let mut formed = false;
        for _ in 0..(200.0 / DT) as u32 {
            m.sim.step(DT).unwrap();
            let f = formation(&m.sim, m.group);
            assert!(
                f.speed <= slowest * 1.001,
                "{}: the anchor walks at {}",
                m.name,
                f.speed
            );
            formed |= worst_off_slot(&m.sim, &f) <= 1.0;
            if f.arrived {
                break;
            }
            if formed && f.width == 0 {
                // The units' spread (largest distance from the anchor) against the
                // formation's own (its farthest slot).
                let own = f.offsets.iter().map(|o| o.length()).fold(0.0, f32::max);
                let spread = m
                    .sim
                    .units()
                    .iter()
                    .map(|u| u.position.distance(f.anchor))
                    .fold(0.0, f32::max);
                worst_spread = worst_spread.max(spread / own);
            }
        }
        let f = formation(&m.sim, m.group);
        assert!(f.arrived, "{}: never arrived", m.name);
        eprintln!(
            "{}: spread at most {worst_spread:.2}x the formation",
            m.name
        );
        assert!(worst_spread <= 1.5, "{}: spread {worst_spread}x", m.name);
    }
}

#[test]
fn formations_run_the_same_on_any_thread_count_and_through_a_snapshot() {
    let layout = Layout {
        units: 120,
        gap: 4,
        radius: 0.45,
        speeds: (3.0, 4.5),
        order: FormationOrder {
            shape: Shape::Line { width: 20 },
            spacing: None,
            facing: Some(Vec2::Y),
        },
    };
    let run = |threads: usize, frames: u32| {
        let mut m = member(11, threads, &layout);
        for _ in 0..frames {
            m.sim.step(DT).unwrap();
        }
        m
    };
    let one = run(1, 900);
    for threads in [2, 3] {
        assert_eq!(
            run(threads, 900).sim.state_hash(),
            one.sim.state_hash(),
            "{threads} threads"
        );
    }
    // Through a snapshot taken mid-way (in a squeeze): the same frames after it.
    let mid = run(2, 400);
    let bytes = mid.sim.snapshot().to_bytes().unwrap();
    let snapshot = Snapshot::from_bytes(&bytes).unwrap();
    let mut resumed = Simulation::from_snapshot(&snapshot, 2).unwrap();
    assert_eq!(
        resumed.horde().formations().get(0),
        mid.sim.horde().formations().get(0)
    );
    for _ in 400..900 {
        resumed.step(DT).unwrap();
    }
    assert_eq!(resumed.state_hash(), one.sim.state_hash());
    // A formation changes the hash: the same army sent as a blob ends elsewhere.
    let mut blob = member(11, 1, &layout);
    blob.sim.set_formation(blob.group, None).unwrap();
    for _ in 0..900 {
        blob.sim.step(DT).unwrap();
    }
    assert_ne!(blob.sim.state_hash(), one.sim.state_hash());
}

#[test]
fn bad_orders_are_refused_by_name() {
    let layout = Layout {
        units: 3,
        gap: 4,
        radius: 0.5,
        speeds: (4.0, 4.0),
        order: FormationOrder {
            shape: Shape::Box,
            spacing: None,
            facing: None,
        },
    };
    let mut m = member(1, 1, &layout);
    let bad = FormationOrder {
        shape: Shape::Line { width: 0 },
        spacing: None,
        facing: None,
    };
    let err = m.sim.set_formation(m.group, Some(bad)).unwrap_err();
    assert!(err.to_string().contains("width"), "{err}");
    let err = m.sim.set_formation(GroupId(9), None).unwrap_err();
    assert!(err.to_string().contains('9'), "{err}");
}

/// An open map with `blocks` blocks (4 to 8 cells a side), a leader (group 0) walking a
/// round of far goals and a follower group (group 1) of `units` just behind it, in a box
/// formation or as a blob, told to follow it at `distance`.
fn chase(
    seed: u64,
    threads: usize,
    units: usize,
    formation: bool,
    distance: f32,
    blocks: u32,
) -> Simulation {
    let mut rng = Pcg64::seed_from_u64(seed ^ 0xc4a5e);
    let (w, h) = (120 + below(&mut rng, 40), 90 + below(&mut rng, 30));
    let mut map = Map::new(Grid::new(w, h).unwrap());
    for _ in 0..blocks {
        let (bw, bh) = (4 + below(&mut rng, 5), 4 + below(&mut rng, 5));
        let (x0, y0) = (50 + below(&mut rng, w - 70), 5 + below(&mut rng, h - 20));
        for y in y0..y0 + bh {
            for x in x0..x0 + bw {
                map.set_terrain(Cell::new(x, y), Terrain::SteelPlate);
            }
        }
    }
    let mut sim = Simulation::new(map, SimConfig::default().with_threads(threads)).unwrap();
    let leader = sim
        .add_group(GoalSet::single(Cell::new(w - 10, 10)))
        .unwrap();
    let followers = sim.add_group(GoalSet::single(Cell::new(20, 50))).unwrap();
    let lead = sim
        .spawn(UnitSpec {
            max_speed: 2.0,
            group: leader,
            ..UnitSpec::at(Vec2::new(35.5, 50.5))
        })
        .unwrap();
    let lead_id = sim.units().iter().find(|u| u.entity == lead).unwrap().id;
    let side = (units as f32).sqrt().ceil() as usize;
    for i in 0..units {
        let pos = Vec2::new(
            35.5 - distance - 2.0 - (i % side) as f32 * 1.2,
            46.0 + (i / side) as f32 * 1.2,
        );
        sim.spawn(UnitSpec {
            radius: 0.4,
            max_speed: 3.0 + unit_in(&mut rng),
            group: followers,
            ..UnitSpec::at(pos)
        })
        .unwrap();
    }
    if formation {
        let order = FormationOrder {
            shape: Shape::Box,
            spacing: None,
            facing: None,
        };
        sim.set_formation(followers, Some(order)).unwrap();
    }
    sim.set_group_target(
        followers,
        Some(UnitTarget {
            unit: lead_id,
            distance,
        }),
    )
    .unwrap();
    sim
}

fn leader_at(sim: &Simulation) -> Vec2 {
    sim.units()
        .iter()
        .find(|u| u.group == GroupId(0))
        .unwrap()
        .position
}

#[test]
fn a_formation_following_a_moving_unit_keeps_its_distance_within_a_cell() {
    for seed in 0..9 {
        let distance = 4.0 + 2.0 * seed as f32;
        let mut sim = chase(seed, 2, 25 + 11 * seed as usize, true, distance, 0);
        let (w, h) = (sim.horde().map().width(), sim.horde().map().height());
        let round = [
            Cell::new(w - 10, 10),
            Cell::new(w - 10, h - 10),
            Cell::new(w / 2, h - 10),
        ];
        let mut worst = 0.0f32;
        let (mut counted, mut within) = (0u32, 0u32);
        let mut closest = f32::INFINITY;
        let mut caught_up = false;
        let mut off_slot = 0.0f32;
        for &goal in &round {
            sim.set_group_goal(GroupId(0), GoalSet::single(goal))
                .unwrap();
            for _ in 0..(40.0 / DT) as u32 {
                sim.step(DT).unwrap();
                let f = formation(&sim, GroupId(1));
                let d = f.anchor.distance(leader_at(&sim));
                closest = closest.min(d);
                // Once it has come up to its distance (it starts farther), the anchor
                // stays within a cell of it, never nearer, and its members within five
                // spacings of their slots (they catch up after the unit turns).
                caught_up |= d - distance <= 1.0;
                if caught_up {
                    off_slot = off_slot.max(worst_off_slot(&sim, &f));
                    worst = worst.max(d - distance);
                    counted += 1;
                    within += u32::from(d - distance <= 1.0);
                }
            }
        }
        let status = sim.group_status()[1];
        eprintln!(
            "seed {seed}: anchor within a cell of {distance} {:.1}% of the time, at most {worst:.2} beyond, closest {closest:.2}, {:?}; members at most {off_slot:.2} spacings off their slots",
            f64::from(within) * 100.0 / f64::from(counted),
            status.target
        );
        assert!(matches!(status.target, TargetState::Following(_)));
        assert!(
            worst <= 1.0,
            "seed {seed}: {worst} cells beyond the distance"
        );
        assert!(
            within == counted,
            "seed {seed}: {within} of {counted} frames within a cell"
        );
        assert!(
            off_slot <= 5.0,
            "seed {seed}: a member {off_slot} spacings off its slot"
        );
        assert!(
            closest >= distance - 1.0,
            "seed {seed}: came within {closest}"
        );
    }
}

#[test]
fn a_group_whose_unit_dies_says_so_and_stops() {
    for (seed, formation) in [(0, true), (1, false), (2, true)] {
        let mut sim = chase(seed, 2, 25, formation, 4.0, 6);
        let (w, _) = (sim.horde().map().width(), 0);
        sim.set_group_goal(GroupId(0), GoalSet::single(Cell::new(w - 10, 50)))
            .unwrap();
        for _ in 0..(8.0 / DT) as u32 {
            sim.step(DT).unwrap();
        }
        let lead = sim
            .units()
            .iter()
            .find(|u| u.group == GroupId(0))
            .unwrap()
            .entity;
        let id = sim.despawn(lead).unwrap();
        sim.step(DT).unwrap();
        let status = sim.group_status()[1];
        assert_eq!(
            status.target,
            TargetState::Lost {
                unit: id,
                why: TargetLoss::Gone
            },
            "seed {seed}"
        );
        // It stops: within 10 s every unit rests, none farther than a few cells from where it
        // stood when the unit died.
        let before: Vec<Vec2> = sim.units().iter().map(|u| u.position).collect();
        for _ in 0..(10.0 / DT) as u32 {
            sim.step(DT).unwrap();
        }
        let status = sim.group_status()[1];
        assert_eq!(status.moving + status.blocked, 0, "seed {seed}: {status:?}");
        let moved = sim
            .units()
            .iter()
            .zip(&before)
            .map(|(u, b)| u.position.distance(*b))
            .fold(0.0, f32::max);
        assert!(
            moved <= 3.0,
            "seed {seed}: a unit walked {moved} after the stop"
        );
    }
}

#[test]
fn a_group_whose_unit_is_out_of_reach_says_so_and_stops() {
    // The leader stands in a walled pocket.
    let mut map = Map::new(Grid::new(60, 40).unwrap());
    for i in 40..=50 {
        for (x, y) in [(i, 10), (i, 20), (40, i - 30), (50, i - 30)] {
            map.set_terrain(Cell::new(x, y), Terrain::SteelPlate);
        }
    }
    let mut sim = Simulation::new(map, SimConfig::default().with_threads(2)).unwrap();
    let leader = sim.add_group(GoalSet::single(Cell::new(45, 15))).unwrap();
    let followers = sim.add_group(GoalSet::single(Cell::new(5, 30))).unwrap();
    let lead = sim
        .spawn(UnitSpec {
            group: leader,
            ..UnitSpec::at(Vec2::new(45.5, 15.5))
        })
        .unwrap();
    let lead_id = sim.units().iter().find(|u| u.entity == lead).unwrap().id;
    for i in 0..9 {
        sim.spawn(UnitSpec {
            group: followers,
            ..UnitSpec::at(Vec2::new(
                5.5 + (i % 3) as f32 * 1.2,
                30.5 + (i / 3) as f32 * 1.2,
            ))
        })
        .unwrap();
    }
    sim.set_group_target(
        followers,
        Some(UnitTarget {
            unit: lead_id,
            distance: 2.0,
        }),
    )
    .unwrap();
    for _ in 0..5 {
        sim.step(DT).unwrap();
    }
    assert_eq!(
        sim.group_status()[1].target,
        TargetState::Lost {
            unit: lead_id,
            why: TargetLoss::Unreachable
        }
    );
    // A group cannot follow its own unit, nor a unit that does not exist.
    let err = sim
        .set_group_target(
            leader,
            Some(UnitTarget {
                unit: lead_id,
                distance: 1.0,
            }),
        )
        .unwrap_err();
    assert!(err.to_string().contains("its own"), "{err}");
    assert!(
        sim.set_group_target(
            followers,
            Some(UnitTarget {
                unit: UnitId(999),
                distance: 1.0
            })
        )
        .is_err()
    );
}

#[test]
fn following_runs_the_same_on_any_thread_count_and_through_a_snapshot() {
    let run = |threads: usize, frames: u32| {
        let mut sim = chase(5, threads, 30, true, 5.0, 6);
        for _ in 0..frames {
            sim.step(DT).unwrap();
        }
        sim
    };
    let one = run(1, 600);
    assert_eq!(run(3, 600).state_hash(), one.state_hash());
    let mid = run(2, 250);
    let snapshot = Snapshot::from_bytes(&mid.snapshot().to_bytes().unwrap()).unwrap();
    let mut resumed = Simulation::from_snapshot(&snapshot, 2).unwrap();
    for _ in 250..600 {
        resumed.step(DT).unwrap();
    }
    assert_eq!(resumed.state_hash(), one.state_hash());
}

/// Where the Moving AI data lies, or `None` (after saying SKIP) when it is absent.
fn moving_ai_dir() -> Option<std::path::PathBuf> {
    let dir = common::movingai_dir();
    if dir.is_none() {
        eprintln!("SKIP: ../shared/data/movingai not found; formations on real maps not run");
    }
    dir
}

/// The `.scen` lines of map `name` the family runs: the one half-way down the file and the
/// last (the longest), named; `None` (after saying SKIP) without the file.
fn routes(dir: &std::path::Path, name: &str) -> Option<[(&'static str, String); 2]> {
    let Ok(scen) = std::fs::read_to_string(dir.join(format!("{name}.map.scen"))) else {
        eprintln!("SKIP: {name}.map.scen is absent");
        return None;
    };
    let lines: Vec<&str> = scen.lines().filter(|l| !l.starts_with("version")).collect();
    Some([
        ("half-way", lines[lines.len() / 2].to_owned()),
        ("longest", lines[lines.len() - 1].to_owned()),
    ])
}

/// Boxes of 100 on the Moving AI maps (ignored: 40 s; skipped without the data): on each
/// map, from the start of its longest `.scen` line and of the line halfway down the file to
/// that line's goal, every unit must be at rest within twice the path over the top speed
/// plus 60 s. Prints each member's figures (`HORDE_MAPS=a,b` runs only maps `a` and `b`;
/// `HORDE_TRACE=1` prints each anchor every 20 s and the units not at rest at the end;
/// `HORDE_BLOB=1` sends the same armies as blobs, to compare: arrived or settled then counts
/// as at rest).
/// `cargo test --release --test formations -- --ignored --nocapture moving_ai`
#[test]
#[ignore]
fn boxes_on_moving_ai_maps_come_to_rest_at_their_goal() {
    let Some(dir) = moving_ai_dir() else { return };
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|f| f.strip_suffix(".map").map(str::to_owned))
        .collect();
    names.sort();
    // `HORDE_MAPS=den520d,brc202d` runs those maps only.
    if let Ok(only) = std::env::var("HORDE_MAPS") {
        names.retain(|n| only.split(',').any(|o| o == n));
    }
    let (mut runs, mut failed) = (0, Vec::new());
    for name in &names {
        for (which, line) in routes(&dir, name).into_iter().flatten() {
            runs += 1;
            let member = format!("{name} ({which} line)");
            if let Err(why) = box_along(&dir, name, &line) {
                eprintln!("{member}: FAILED: {why}");
                failed.push(member);
            }
        }
    }
    eprintln!("{} of {runs} members at rest in time", runs - failed.len());
    assert!(failed.is_empty(), "not all at rest in time on {failed:?}");
}

/// Three members of the family above, run with every test: bent corridors walked as a
/// column (den520d's longest line), a city's streets (Berlin_1_512's longest line) and open
/// ground between cliffs (Aftershock, half-way). Skipped without the data.
#[test]
fn boxes_on_three_moving_ai_routes_come_to_rest_in_time() {
    let Some(dir) = moving_ai_dir() else { return };
    for (name, which) in [
        ("den520d", "longest"),
        ("Berlin_1_512", "longest"),
        ("Aftershock", "half-way"),
    ] {
        let Some(routes) = routes(&dir, name) else {
            continue;
        };
        let line = &routes.iter().find(|r| r.0 == which).unwrap().1;
        box_along(&dir, name, line).unwrap_or_else(|why| panic!("{name} ({which} line): {why}"));
    }
}

/// One member of the family above: a box of 100 along the `.scen` line `line` of map
/// `name`. Prints its figures; an error says how it failed.
fn box_along(dir: &std::path::Path, name: &str, line: &str) -> Result<(), String> {
    let map = horde::formats::load_map(dir.join(format!("{name}.map"))).unwrap();
    let line: Vec<&str> = line.split_whitespace().collect();
    let num = |i: usize| -> f32 { line[i].parse().unwrap() };
    let (start, goal, path) = (Vec2::new(num(4), num(5)), (num(6), num(7)), num(8));
    let cost = map.cost_field(Layer::default()).clone();
    let (w, h) = (map.grid().width(), map.grid().height());
    let mut sim = Simulation::new(map, SimConfig::default().with_threads(2)).unwrap();
    let g = sim
        .add_group(GoalSet::single(Cell::new(goal.0 as u32, goal.1 as u32)))
        .unwrap();
    // 100 units on the open cells nearest the start along the map (breadth first over
    // open cells, as an army gathered there would stand; in a maze the cells nearest in a
    // straight line may be hundreds of cells away along it).
    let first = Cell::new(start.x as u32, start.y as u32);
    let mut seen = std::collections::HashSet::from([first]);
    let mut queue = std::collections::VecDeque::from([first]);
    let mut n = 0;
    while let Some(c) = queue.pop_front() {
        if n >= 100 {
            break;
        }
        let spec = UnitSpec {
            radius: 0.45,
            group: g,
            ..UnitSpec::at(Vec2::new(c.x as f32 + 0.5, c.y as f32 + 0.5))
        };
        n += usize::from(sim.spawn(spec).is_ok());
        for (dx, dy) in [(1i64, 0i64), (-1, 0), (0, 1), (0, -1)] {
            let (x, y) = (i64::from(c.x) + dx, i64::from(c.y) + dy);
            if x < 0 || y < 0 || x >= i64::from(w) || y >= i64::from(h) {
                continue;
            }
            let next = Cell::new(x as u32, y as u32);
            if cost.is_passable(next) && seen.insert(next) {
                queue.push_back(next);
            }
        }
    }
    let order = FormationOrder {
        shape: Shape::Box,
        spacing: None,
        facing: None,
    };
    if std::env::var_os("HORDE_BLOB").is_none() {
        sim.set_formation(g, Some(order)).unwrap();
    }
    let limit = 2.0 * path / 4.0 + 60.0;
    let (mut done, mut formed) = (None, None);
    for frame in 0..(limit / DT) as u32 {
        sim.step(DT).unwrap();
        let st = sim.group_status()[0];
        if formed.is_none() && sim.horde().formations().get(g.0).is_some_and(|f| f.arrived) {
            formed = Some(frame as f32 * DT);
        }
        if st.arrived + st.settled == st.units {
            done = Some(frame as f32 * DT);
            break;
        }
        // `HORDE_TRACE=1` prints the anchor every 20 s.
        if frame % 1200 == 0 && std::env::var_os("HORDE_TRACE").is_some() {
            let f = formation(&sim, g);
            eprintln!(
                "  {:.0} s: anchor {:.1} width {} speed {:.2}, {} arrived",
                frame as f32 * DT,
                f.anchor,
                f.width,
                f.speed,
                st.arrived
            );
        }
    }
    let st = sim.group_status()[0];
    // `HORDE_TRACE=1` prints each unit not at rest at the end, and its slot.
    if let Some(f) =
        (sim.horde().formations().get(g.0)).filter(|_| std::env::var_os("HORDE_TRACE").is_some())
    {
        let units = sim.units();
        for u in units.iter().filter(|u| !u.arrived) {
            let slot = f.target_of(u.id.0).unwrap_or(Vec2::NAN);
            let taken = (units.iter().filter(|o| o.id != u.id))
                .map(|o| o.position.distance(slot))
                .fold(f32::INFINITY, f32::min);
            eprintln!(
                "    not at rest: at {:.1}, slot {slot:.1} ({:.2} spacings off; nearest other unit \
                 {taken:.2} from it), speed {:.2}, {:?}",
                u.position,
                u.position.distance(slot) / f.spacing,
                u.velocity.length(),
                u.status
            );
        }
    }
    let worst = (sim.horde().formations().get(g.0)).map_or(0.0, |f| worst_off_slot(&sim, f));
    eprintln!(
        "{name}: path {path:.0} cells, limit {limit:.0} s: anchor on its goal after {formed:?} \
         s, all at rest after {done:?} s; {} of {} arrived, {} settled; worst {worst:.2} spacings \
         off its slot",
        st.arrived, st.units, st.settled
    );
    match done {
        Some(_) => Ok(()),
        None => Err(format!(
            "{} of {} at rest by {limit:.0} s",
            st.arrived, st.units
        )),
    }
}
