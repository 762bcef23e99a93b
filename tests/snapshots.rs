//! Snapshots and replays: a simulation restored from a snapshot continues with the same state
//! hash, frame by frame, as the run that never stopped, on any thread count; a replay
//! reproduces every frame's hash; damaged, truncated, foreign and wrong-version files are
//! refused with the right error; a unit that turns non-finite is quarantined and the rest
//! goes on.

mod common;

use glam::Vec2;
use horde::{
    Cell, FileError, ForceField, ForceKind, GoalSet, GroupId, Horde, Navigation, Replay, SimConfig,
    SimError, Simulation, Snapshot, Terrain, UnitId, UnitSpec,
    components::{Position, Velocity},
    level::{Level, LevelConfig, generate_level},
    persistence::FileKind,
};

use common::*;

const FRAMES: u64 = 500;
const DT: f32 = 1.0 / 30.0;

/// A generated level of `tiles` x `tiles` tiles of 4x4 cells, every open cell reachable.
fn level(seed: u64, tiles: u32) -> Level {
    let config = LevelConfig::default()
        .with_size(tiles, tiles)
        .with_cells_per_tile(4)
        .with_guarantee_reachable(true);
    generate_level(seed, &config).unwrap()
}

/// A crowd of two groups on a generated level.
fn setup(threads: usize) -> Simulation {
    let level = level(11, 16);
    let goal_a = level
        .tile_cells(level.player_spawn_tiles()[0])
        .next()
        .unwrap();
    let map = level.into_map();
    let goal = area_goal(&map, goal_a, 120);
    let cells = spawn_cells(&map, &goal, 1500, 4);
    let mut sim = crowd(
        map,
        goal,
        &cells,
        SimConfig::default().with_seed(3).with_threads(threads),
    );
    let far = area_goal(&sim.map(), Cell::new(50, 50), 80);
    let second = sim.add_group(far).unwrap();
    let cells = spawn_cells(&sim.map(), &GoalSet::single(Cell::new(2, 2)), 40, 8);
    for (i, &c) in cells.iter().enumerate() {
        let pos = centre(&sim.map(), c);
        let spec = UnitSpec::at(pos)
            .with_group(second)
            .with_radius(0.3 + 0.01 * i as f32)
            .with_mass(0.5 + i as f32 * 0.1);
        if sim.spawn(spec).is_err() {
            // The cell may be taken by the lair's area goal; any open cell will do.
        }
    }
    sim
}

/// The commands given before frame `frame`: forces, goal changes and terrain edits.
fn events(sim: &mut Simulation, frame: u64) {
    match frame {
        10 => {
            sim.add_force(
                ForceField::new(Vec2::new(30.0, 30.0), ForceKind::Explosion, 8.0, 900.0).unwrap(),
            );
            sim.add_force(
                ForceField::new(Vec2::new(40.0, 20.0), ForceKind::Attractor, 10.0, 30.0)
                    .unwrap()
                    .with_duration(6.0)
                    .unwrap(),
            );
        }
        90 => {
            let goal = area_goal(&sim.map(), Cell::new(10, 50), 100);
            sim.set_group_goal(GroupId(0), goal).unwrap();
        }
        120 => {
            // Casualties: every 20th unit dies.
            let before = sim.unit_count();
            for id in (0..before as u32).step_by(20).map(UnitId) {
                let entity = sim.entity_of(id).expect("a live unit");
                assert_eq!(sim.despawn(entity).unwrap(), id);
                assert!(matches!(
                    sim.despawn(entity),
                    Err(SimError::NoSuchUnit(e)) if e == entity
                ));
                assert_eq!(sim.entity_of(id), None);
            }
            assert_eq!(sim.unit_count(), before - before.div_ceil(20));
        }
        150 | 230 => {
            for x in 20..26 {
                let cell = Cell::new(x, 30);
                let t = if frame == 150 {
                    Terrain::BrickWall
                } else {
                    Terrain::Empty
                };
                if sim.map().terrain_at(cell) != Terrain::SteelPlate {
                    sim.set_terrain(cell, t).unwrap();
                }
            }
            sim.add_force(
                ForceField::new(
                    Vec2::new(22.0, 40.0),
                    ForceKind::Vortex { clockwise: true },
                    9.0,
                    40.0,
                )
                .unwrap()
                .with_duration(4.0)
                .unwrap()
                .with_time_decay(0.25)
                .unwrap(),
            );
        }
        _ => {}
    }
}

/// Runs from `sim`'s frame to [`FRAMES`], giving [`events`], and returns each frame's hash.
fn run_to_end(sim: &mut Simulation) -> Vec<u64> {
    let mut hashes = Vec::new();
    while sim.frame() < FRAMES {
        let frame = sim.frame();
        events(sim, frame);
        sim.step(DT).unwrap();
        hashes.push(sim.state_hash());
    }
    hashes
}

#[test]
fn a_restored_snapshot_continues_with_the_same_hashes_on_any_thread_count() {
    let mut sim = setup(2);
    let mut reference = Vec::new();
    let mut saved = None;
    while sim.frame() < FRAMES {
        let frame = sim.frame();
        events(&mut sim, frame);
        if frame == 150 {
            // Taken after this frame's edits and forces, before the frame runs: the field
            // repairs and the pending forces must survive the round trip too.
            saved = Some(sim.snapshot().to_bytes().unwrap());
        }
        sim.step(DT).unwrap();
        reference.push(sim.state_hash());
    }
    let bytes = saved.unwrap();
    let snapshot = Snapshot::from_bytes(&bytes).unwrap();
    assert_eq!(snapshot.frame(), 150);
    for threads in [1, 2, 3] {
        let mut restored = Simulation::from_snapshot(&snapshot, threads).unwrap();
        assert_eq!(restored.frame(), 150);
        // The snapshot is taken mid-frame-150 (events given): run the rest of that frame.
        let mut hashes = Vec::new();
        restored.step(DT).unwrap();
        hashes.push(restored.state_hash());
        hashes.extend(run_to_end(&mut restored));
        let tail = &reference[150..];
        let first_diff = hashes.iter().zip(tail).position(|(a, b)| a != b);
        assert_eq!(
            first_diff, None,
            "{threads} threads: restored run diverges {first_diff:?} frames after the snapshot"
        );
        assert_eq!(hashes.len(), tail.len());
    }
    println!(
        "{} units, snapshot {} bytes, final hash {:016x}",
        snapshot.unit_count(),
        bytes.len(),
        reference.last().unwrap()
    );
}

#[test]
fn snapshot_files_round_trip_and_writes_are_atomic() {
    let scratch = tempfile::Builder::new()
        .prefix("horde-snap-")
        .tempdir()
        .unwrap();
    let dir = scratch.path();
    let path = dir.join("state.hsnap");
    let mut sim = setup(1);
    for frame in 0..20 {
        events(&mut sim, frame);
        sim.step(DT).unwrap();
    }
    sim.save_snapshot(&path).unwrap();
    let first = std::fs::read(&path).unwrap();
    let loaded = Simulation::load_snapshot(&path, 2).unwrap();
    assert_eq!(loaded.state_hash(), sim.state_hash());
    assert_eq!(loaded.unit_count(), sim.unit_count());
    assert_eq!(loaded.snapshot(), sim.snapshot());
    // Overwriting replaces the file whole and leaves no temporary file behind.
    sim.step(DT).unwrap();
    sim.save_snapshot(&path).unwrap();
    assert_ne!(std::fs::read(&path).unwrap(), first);
    let names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("state.hsnap")]);
    // A snapshot that cannot be written (its folder is missing) is an error, not a panic.
    let err = sim
        .save_snapshot(&dir.join("missing/state.hsnap"))
        .unwrap_err();
    assert!(matches!(err, FileError::Io { .. }), "{err}");
}

#[test]
fn a_replay_reproduces_every_frame_on_any_thread_count() {
    let mut sim = setup(2);
    sim.start_recording();
    let mut hashes = Vec::new();
    while sim.frame() < 300 {
        let frame = sim.frame();
        events(&mut sim, frame);
        // Commands the simulation refuses are not recorded.
        assert!(sim.set_terrain(Cell::new(9999, 0), Terrain::Empty).is_err());
        if frame == 60 {
            sim.spawn(UnitSpec::at(Vec2::new(1.5, 1.5))).ok();
        }
        sim.step(DT).unwrap();
        hashes.push(sim.state_hash());
    }
    let replay = sim.finish_recording().unwrap();
    assert_eq!(replay.frames(), 300);
    let bytes = replay.to_bytes().unwrap();
    let replay = Replay::from_bytes(&bytes).unwrap();
    for threads in [1, 3] {
        let mut seen = Vec::new();
        let end = replay.play(threads, |s| seen.push(s.state_hash())).unwrap();
        assert_eq!(seen, hashes, "{threads} threads");
        assert_eq!(end.state_hash(), sim.state_hash());
        assert_eq!(end.frame(), 300);
    }
}

#[test]
fn bad_snapshot_files_give_clear_errors() {
    let mut sim = setup(1);
    sim.step(DT).unwrap();
    let good = sim.snapshot().to_bytes().unwrap();
    let replay = {
        sim.start_recording();
        sim.step(DT).unwrap();
        sim.finish_recording().unwrap().to_bytes().unwrap()
    };

    // Truncated anywhere: header, payload, last byte.
    for cut in [0, 5, 12, 23, 24, good.len() / 2, good.len() - 1] {
        let e = Snapshot::from_bytes(&good[..cut]).unwrap_err();
        assert!(
            matches!(e, FileError::Truncated { .. }),
            "cut at {cut}: {e}"
        );
    }
    // A flipped bit in the payload.
    let mut corrupted = good.clone();
    let at = corrupted.len() * 2 / 3;
    corrupted[at] ^= 0x10;
    let e = Snapshot::from_bytes(&corrupted).unwrap_err();
    assert!(matches!(e, FileError::Corrupted { .. }), "{e}");
    // A version from the future.
    let mut future = good.clone();
    future[8..12].copy_from_slice(&99u32.to_le_bytes());
    let e = Snapshot::from_bytes(&future).unwrap_err();
    assert!(
        matches!(
            e,
            FileError::UnsupportedVersion {
                found: 99,
                supported: horde::persistence::SNAPSHOT_VERSION,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("version 99"), "{e}");
    // Foreign files.
    for foreign in [
        &b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR and more bytes of a picture"[..],
        b"type octile\nheight 4\nwidth 4\nmap\n....\n",
        b"{\"frames\": 3}",
    ] {
        let e = Snapshot::from_bytes(foreign).unwrap_err();
        assert!(matches!(e, FileError::Foreign { .. }), "{e}");
    }
    // A replay where a snapshot is expected, and the other way round.
    let e = Snapshot::from_bytes(&replay).unwrap_err();
    assert!(
        matches!(
            e,
            FileError::WrongKind {
                expected: FileKind::Snapshot,
                found: FileKind::Replay
            }
        ),
        "{e}"
    );
    assert!(matches!(
        Replay::from_bytes(&good),
        Err(FileError::WrongKind { .. })
    ));
    // Errors from files name the file.
    let scratch = tempfile::Builder::new()
        .prefix("horde-badsnap-")
        .tempdir()
        .unwrap();
    let dir = scratch.path();
    let path = dir.join("broken.hsnap");
    std::fs::write(&path, &good[..100]).unwrap();
    let e = Snapshot::load(&path).unwrap_err();
    assert!(e.to_string().contains("broken.hsnap"), "{e}");
    assert!(e.is_bad_input());
    let e = Snapshot::load(&dir.join("absent.hsnap")).unwrap_err();
    assert!(matches!(e, FileError::Io { .. }) && e.is_bad_input(), "{e}");
}

#[test]
fn a_non_finite_unit_is_quarantined_and_the_rest_goes_on() {
    let base = setup(2);
    let snapshot = base.snapshot();
    // Bring your own world: the caller can write anything into its units.
    let mut world = hecs::World::new();
    let mut horde = Horde::from_snapshot(&snapshot, 2, &mut world).unwrap();
    let victims = [UnitId(3), UnitId(700)];
    for (id, p, v) in world.query_mut::<(&UnitId, &mut Position, &mut Velocity)>() {
        if *id == victims[0] {
            p.0 = Vec2::new(f32::NAN, 1.0);
        }
        if *id == victims[1] {
            p.0.x = f32::INFINITY;
        }
        if id.0 == 5 {
            // Velocities are recomputed by steering every frame: this unit heals.
            v.0 = Vec2::new(f32::NAN, 1.0);
        }
    }
    horde.step(&mut world, DT).unwrap();
    assert_eq!(horde.last_quarantined(), &victims);
    for (id, v) in world.query::<(&UnitId, &Velocity)>().iter() {
        if victims.contains(id) {
            assert_eq!(
                v.0,
                Vec2::ZERO,
                "{id:?}: a unit off the map's numbers is not steered"
            );
        }
    }
    for _ in 0..30 {
        horde.step(&mut world, DT).unwrap();
        assert!(horde.last_quarantined().is_empty());
    }
    let units = horde.unit_states(&world);
    assert_eq!(units.len(), snapshot.unit_count() - 2);
    assert!(units.iter().all(|u| u.position.is_finite()
        && u.velocity.is_finite()
        && u.external.is_finite()
        && u.stun.is_finite()));
    // Quarantined units stay in the world and in snapshots.
    let saved = horde.snapshot(&world);
    assert_eq!(saved.unit_count(), snapshot.unit_count());
    let back = Simulation::from_snapshot(
        &Snapshot::from_bytes(&saved.to_bytes().unwrap()).unwrap(),
        1,
    )
    .unwrap();
    assert_eq!(back.quarantined(), vec![(victims[0], 0), (victims[1], 0)]);
    assert_eq!(back.state_hash(), horde.state_hash(&world));
}

#[test]
fn bad_settings_and_numbers_are_refused_with_typed_errors() {
    let map = horde::Map::new(horde::Grid::new(8, 8).unwrap());
    let mut config = SimConfig::default();
    config.steering.separation_range = f32::NAN;
    assert!(matches!(
        Simulation::new(map.clone(), config),
        Err(SimError::Config(_))
    ));
    let mut config = SimConfig::default();
    config.knockback.drag = -1.0;
    assert!(matches!(
        Simulation::new(map.clone(), config),
        Err(SimError::Config(_))
    ));
    assert!(matches!(
        Simulation::new(map.clone(), SimConfig::default().with_threads(0)),
        Err(SimError::Config(_))
    ));
    let config = SimConfig {
        batch_size: 0,
        ..SimConfig::default()
    };
    assert!(Simulation::new(map.clone(), config).is_err());
    let mut sim = Simulation::new(map, SimConfig::default()).unwrap();
    for dt in [f32::NAN, f32::INFINITY, -1.0] {
        assert!(matches!(sim.step(dt), Err(SimError::BadTimeStep(_))));
    }
    assert!(ForceField::new(Vec2::new(f32::NAN, 0.0), ForceKind::Explosion, 1.0, 1.0).is_err());
    assert!(ForceField::new(Vec2::ZERO, ForceKind::Explosion, f32::INFINITY, 1.0).is_err());
    assert!(ForceField::new(Vec2::ZERO, ForceKind::Explosion, 1.0, f32::NAN).is_err());
    let f = ForceField::new(Vec2::ZERO, ForceKind::Explosion, 1.0, 1.0).unwrap();
    assert!(f.with_duration(f32::NAN).is_err());
    assert!(f.with_time_decay(f32::INFINITY).is_err());
    assert!(f.with_elapsed(-1.0).is_err());
    let g = sim.add_group(GoalSet::single(Cell::new(1, 1))).unwrap();
    assert!(sim.spawn(UnitSpec::at(Vec2::new(f32::NAN, 1.0))).is_err());
    assert!(
        sim.spawn(UnitSpec::at(Vec2::splat(1.5)).with_radius(f32::INFINITY))
            .is_err()
    );
    assert!(
        sim.spawn(UnitSpec::at(Vec2::splat(1.5)).with_group(GroupId(9)))
            .is_err()
    );
    assert!(
        sim.set_group_goal(g, GoalSet::single(Cell::new(8, 0)))
            .is_err()
    );
    assert!(sim.add_group(GoalSet::single(Cell::new(0, 99))).is_err());
}

#[test]
fn a_wall_built_on_a_goal_survives_the_round_trip() {
    let mut sim = setup(1);
    let goal = sim.horde().groups().get(0).unwrap().goal.cells()[0];
    sim.step(DT).unwrap();
    // Allowed while running (the goal was valid when it was set) ...
    sim.set_terrain(goal, Terrain::SteelPlate).unwrap();
    sim.step(DT).unwrap();
    // ... so a snapshot of it must restore.
    let snapshot = Snapshot::from_bytes(&sim.snapshot().to_bytes().unwrap()).unwrap();
    let mut restored = Simulation::from_snapshot(&snapshot, 2).unwrap();
    for _ in 0..20 {
        sim.step(DT).unwrap();
        restored.step(DT).unwrap();
        assert_eq!(restored.state_hash(), sim.state_hash());
    }
}

#[test]
fn hierarchical_navigation_resumes_with_its_sector_fields() {
    // 320x320 cells = 100 sectors, more than the 64 sector fields built per frame: a
    // snapshot after the first frame holds a half-built cache, which the restored run must
    // continue from exactly. From frame 25 the goal moves a cell every frame (the request is
    // retargeted, keeping fields); the snapshot at frame 30 is taken between a goal move and
    // the frame that retargets.
    let map = level(13, 80).into_map();
    let goal = area_goal(&map, Cell::new(160, 160), 60);
    let cells = spawn_cells(&map, &goal, 2500, 5);
    let config = SimConfig::default()
        .with_seed(2)
        .with_threads(2)
        .with_navigation(Navigation::Hierarchical);
    let mut sim = crowd(map, goal, &cells, config);
    let mut snapshots = Vec::new();
    let mut reference = Vec::new();
    for frame in 0..40u64 {
        if frame == 20 {
            // Also a snapshot just before the edit: the restored run edits before its first
            // frame, so its restored sector caches are stale at once.
            snapshots.push((frame, sim.snapshot().to_bytes().unwrap(), true));
            sim.set_terrain(Cell::new(150, 150), Terrain::BrickWall)
                .unwrap();
        }
        if frame >= 25 {
            let g = area_goal(&sim.map(), Cell::new(135 + frame as u32, 160), 60);
            sim.set_group_goal(horde::GroupId(0), g).unwrap();
        }
        if frame == 1 || frame == 20 || frame == 21 || frame == 30 {
            snapshots.push((frame, sim.snapshot().to_bytes().unwrap(), false));
        }
        sim.step(DT).unwrap();
        reference.push(sim.state_hash());
    }
    let held = sim.horde().hierarchy().bytes_in_use();
    assert!(held > 0, "the hierarchy built nothing");
    for (frame, bytes, before_edit) in snapshots {
        let snapshot = Snapshot::from_bytes(&bytes).unwrap();
        for threads in [1, 3] {
            let mut restored = Simulation::from_snapshot(&snapshot, threads).unwrap();
            for f in frame..40 {
                if f == 20 && (frame < 20 || before_edit) {
                    restored
                        .set_terrain(Cell::new(150, 150), Terrain::BrickWall)
                        .unwrap();
                }
                if f >= 25 && f > frame {
                    let g = area_goal(&restored.map(), Cell::new(135 + f as u32, 160), 60);
                    restored.set_group_goal(horde::GroupId(0), g).unwrap();
                }
                restored.step(DT).unwrap();
                assert_eq!(
                    restored.state_hash(),
                    reference[f as usize],
                    "restored at {frame} on {threads} threads: differs after frame {f}"
                );
            }
        }
    }
}

#[test]
fn an_army_resumes_with_the_crowd_in_its_costs() {
    // 10,500 units on their way (an army that big gets a crowd field, rebuilt every 15
    // frames: docs/behaviour.md, "Crowds in the costs"). Snapshots between two builds, just
    // before a terrain edit (the restored run's field is stale at once) and after a goal
    // change (the field built for the old goal is not used).
    let map = level(17, 40).into_map();
    let goal = area_goal(&map, Cell::new(80, 80), 40);
    let cells = spawn_cells(&map, &goal, 10_500, 5);
    let config = SimConfig::default().with_seed(4).with_threads(2);
    let mut sim = crowd(map, goal, &cells, config);
    let edit = |sim: &mut Simulation| sim.set_terrain(Cell::new(70, 70), Terrain::BrickWall);
    let regoal = |sim: &mut Simulation| {
        let g = area_goal(&sim.map(), Cell::new(90, 80), 40);
        sim.set_group_goal(GroupId(0), g)
    };
    let mut snapshots = Vec::new();
    let mut reference = Vec::new();
    for frame in 0..70u64 {
        if frame == 20 || frame == 38 || frame == 52 {
            snapshots.push((frame, sim.snapshot().to_bytes().unwrap()));
        }
        if frame == 38 {
            edit(&mut sim).unwrap();
        }
        if frame == 50 {
            regoal(&mut sim).unwrap();
        }
        sim.step(DT).unwrap();
        reference.push(sim.state_hash());
    }
    for (frame, bytes) in snapshots {
        let snapshot = Snapshot::from_bytes(&bytes).unwrap();
        for threads in [1, 3] {
            let mut restored = Simulation::from_snapshot(&snapshot, threads).unwrap();
            for f in frame..70 {
                if f == 38 {
                    edit(&mut restored).unwrap();
                }
                if f == 50 {
                    regoal(&mut restored).unwrap();
                }
                restored.step(DT).unwrap();
                assert_eq!(
                    restored.state_hash(),
                    reference[f as usize],
                    "restored at {frame} on {threads} threads: differs after frame {f}"
                );
            }
        }
    }
}
