//! Sleeping (docs/behaviour.md, "Sleeping"): an army at rest falls asleep and then costs
//! nothing, and whatever reaches a sleeping unit wakes it. A family of generated members
//! (map size, rocks, army size, radius, goal area), not one layout: each spawns its army
//! spread over a goal area that holds it, runs until every unit sleeps, then checks that
//! frames run no stage after the unit check, and that a blast, a terrain edit, a caller
//! moving a unit, a despawn, a unit walking in and a goal change each wake the units they
//! reach and no others. The results are the same on 1, 2 and 3 threads and through a snapshot.
//! A second family sends armies to one cell, which cannot hold them: once all of an army
//! rests, settled round the cell, it sleeps too.

use horde::components::Steering;
use horde::prelude::*;
use horde::{ForceField, ForceKind};
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64;

const DT: f32 = 1.0 / 30.0;

/// A member: its world and simulation with the army spawned, the goal area's corner and
/// side, and the army's radius.
struct Member {
    name: String,
    horde: Horde,
    world: World,
    group: GroupId,
    low: (u32, u32),
    side: u32,
    radius: f32,
}

fn below(rng: &mut Pcg64, n: u32) -> u32 {
    (rng.next_u64() % u64::from(n)) as u32
}

fn member(seed: u64, threads: usize) -> Member {
    let mut rng = Pcg64::seed_from_u64(seed);
    let map_side = 40 + below(&mut rng, 40);
    let radius = [0.3, 0.4, 0.45, 0.5, 0.8][below(&mut rng, 5) as usize];
    let side = 10 + below(&mut rng, 12);
    let low = (
        4 + below(&mut rng, map_side - side - 8),
        4 + below(&mut rng, map_side - side - 8),
    );
    let mut map = Map::new(Grid::new(map_side, map_side).unwrap());
    // Rocks outside the goal area.
    for _ in 0..map_side * 2 {
        let (x, y) = (below(&mut rng, map_side), below(&mut rng, map_side));
        let inside = (low.0..low.0 + side).contains(&x) && (low.1..low.1 + side).contains(&y);
        if !inside {
            map.set_terrain(Cell::new(x, y), Terrain::SteelPlate);
        }
    }
    let mut horde = Horde::new(map, SimConfig::default().with_threads(threads)).unwrap();
    let cells =
        (low.1..low.1 + side).flat_map(|y| (low.0..low.0 + side).map(move |x| Cell::new(x, y)));
    let group = horde.add_group(GoalSet::new(cells).unwrap()).unwrap();
    let mut world = World::new();
    // The army: a lattice with a gap of a tenth of a radius, a random share of its points,
    // a cell in from the area's edge.
    let step = 2.1 * radius;
    let across = ((side - 2) as f32 / step).floor() as u32;
    let keep = 40 + below(&mut rng, 60);
    for j in 0..across {
        for i in 0..across {
            if below(&mut rng, 100) < keep {
                let at = Vec2::new(low.0 as f32 + 1.0, low.1 as f32 + 1.0)
                    + Vec2::new(i as f32 + 0.5, j as f32 + 0.5) * step;
                let spec = UnitSpec::at(at).with_radius(radius).with_group(group);
                horde.spawn(&mut world, spec).unwrap();
            }
        }
    }
    let name = format!(
        "seed {seed}: map {map_side}, radius {radius}, area {side}, {} units",
        world.len()
    );
    Member {
        name,
        horde,
        world,
        group,
        low,
        side,
        radius,
    }
}

fn asleep(world: &World) -> Vec<(UnitId, Vec2, bool)> {
    let mut out: Vec<_> = world
        .query::<(&UnitId, &Position, &Steering)>()
        .iter()
        .map(|(id, p, s)| (*id, p.0, s.asleep.is_some()))
        .collect();
    out.sort_by_key(|u| u.0);
    out
}

/// Steps once; whether the frame ran no stage after `check_units` (which ends a frame in
/// which nothing can change).
fn step(m: &mut Member) -> bool {
    step_world(&mut m.horde, &mut m.world)
}

/// [`step`] for a simulation and world of their own.
fn step_world(horde: &mut Horde, world: &mut World) -> bool {
    let report = horde.step(world, DT).unwrap();
    let stages = report.stages();
    assert_eq!(&*stages[0].name, "check_units");
    stages[1..].iter().all(|s| s.duration.is_zero())
}

/// Runs until every unit sleeps (at most `limit` frames); returns the frames it took, or
/// `None` when some unit never came to rest.
fn until_asleep(m: &mut Member, limit: u32) -> Option<u32> {
    for frame in 0..limit {
        step(m);
        if m.horde.awake_units() == 0 {
            return Some(frame + 1);
        }
    }
    None
}

/// The family's members, each run until its whole army sleeps, on `threads` threads. An
/// army spawned on its goal rests where it stands (docs/behaviour.md, "An army whole on its
/// goal") and falls asleep once still for half a second: every member within 2 s.
fn sleeping_members(threads: usize) -> Vec<Member> {
    (0..SEEDS)
        .map(|seed| {
            let mut m = member(seed, threads);
            let frames = until_asleep(&mut m, 2 * 30);
            assert!(frames.is_some(), "{}: not asleep after 2 s", m.name);
            m
        })
        .collect()
}

const SEEDS: u64 = 16;

#[test]
fn an_army_at_rest_falls_asleep_and_its_frames_run_no_stage() {
    for mut m in sleeping_members(2) {
        let before = m.horde.state_hash(&m.world);
        for _ in 0..30 {
            assert!(
                step(&mut m),
                "{}: a frame with every unit asleep ran stages",
                m.name
            );
        }
        assert_eq!(before, m.horde.state_hash(&m.world), "{}", m.name);
    }
}

#[test]
fn a_blast_wakes_the_units_it_reaches_and_they_sleep_again() {
    for mut m in sleeping_members(2) {
        let units = asleep(&m.world);
        let centre = units[units.len() / 2].1;
        let reach = 3.0;
        let blast = ForceField::new(centre, ForceKind::Explosion, reach, 60.0).unwrap();
        m.horde.add_force(blast);
        step(&mut m);
        // A unit the blast moved is awake: a sleeping unit never moves.
        let mut woken = 0;
        for ((_, before, _), (id, at, sleeps)) in units.iter().zip(asleep(&m.world)) {
            if *before != at {
                assert!(
                    !sleeps,
                    "{}: unit {} moved by the blast still asleep",
                    m.name, id.0
                );
            }
            woken += usize::from(!sleeps);
        }
        assert!(woken > 0, "{}: the blast woke nobody", m.name);
        // Contacts spread the push a little; far beyond it everyone sleeps on.
        for ((_, before, _), (id, at, sleeps)) in units.iter().zip(asleep(&m.world)) {
            if before.distance(centre) > reach + 4.0 * m.radius + 1.0 {
                assert!(sleeps, "{}: unit {} far from the blast woke", m.name, id.0);
                assert_eq!(*before, at, "{}: a sleeping unit moved", m.name);
            }
        }
        for _ in 0..30 * 30 {
            step(&mut m);
        }
        // The army comes to rest again and sleeps (all but a few stirring ones).
        let awake = m.horde.awake_units();
        assert!(
            10 * awake <= m.world.len() as usize,
            "{}: {awake} awake 30 s after a blast",
            m.name
        );
    }
}

#[test]
fn edits_moves_despawns_walkers_and_goal_changes_wake_the_units_they_reach() {
    for mut m in sleeping_members(2) {
        let units = asleep(&m.world);
        let size = 1.0;
        // A terrain edit: units within two cells of it wake, units far away do not.
        let at = units[0].1;
        let cell = Cell::new(at.x as u32, at.y as u32);
        m.horde.set_terrain(cell, Terrain::Forest).unwrap();
        step(&mut m);
        let centre = Vec2::new(cell.x as f32 + 0.5, cell.y as f32 + 0.5);
        for (id, p, sleeps) in asleep(&m.world) {
            let d = p.distance(centre) - m.radius;
            if d < 2.0 * size {
                assert!(!sleeps, "{}: unit {} {d} from an edit asleep", m.name, id.0);
            }
            if d > 2.5 * size + 4.0 * m.radius + 1.0 {
                assert!(sleeps, "{}: unit {} {d} from an edit woke", m.name, id.0);
            }
        }
        if until_asleep(&mut m, 30 * 30).is_none() {
            continue;
        }
        // A caller moving one unit wakes that unit.
        let (entity, id) = m
            .world
            .query::<(Entity, &UnitId)>()
            .iter()
            .map(|(e, id)| (e, *id))
            .last()
            .unwrap();
        m.world.get::<&mut Position>(entity).unwrap().0 += Vec2::new(0.05, 0.0);
        step(&mut m);
        let moved = asleep(&m.world).into_iter().find(|u| u.0 == id).unwrap();
        assert!(!moved.2, "{}: a unit the caller moved still asleep", m.name);
        if until_asleep(&mut m, 30 * 30).is_none() {
            continue;
        }
        // A despawn wakes the units beside the one removed.
        let units = asleep(&m.world);
        let (gone_id, gone_at, _) = units[units.len() / 2];
        let gone = m
            .world
            .query::<(Entity, &UnitId)>()
            .iter()
            .find(|u| *u.1 == gone_id)
            .unwrap()
            .0;
        m.horde.despawn(&mut m.world, gone).unwrap();
        step(&mut m);
        for (id, p, sleeps) in asleep(&m.world) {
            let d = p.distance(gone_at);
            if d < 2.0 * m.radius + 0.5 {
                assert!(
                    !sleeps,
                    "{}: unit {} beside a despawned one asleep",
                    m.name, id.0
                );
            }
        }
        // A goal change wakes the whole group.
        let (low, side) = (m.low, m.side);
        let cells = (low.1..low.1 + side)
            .flat_map(|y| (low.0 + 1..low.0 + side).map(move |x| Cell::new(x, y)));
        let elsewhere = GoalSet::new(cells).unwrap();
        m.horde
            .set_group_goal(&mut m.world, m.group, elsewhere)
            .unwrap();
        assert!(
            asleep(&m.world).iter().all(|u| !u.2),
            "{}: a group sent elsewhere still asleep",
            m.name
        );
        step(&mut m);
        assert!(m.horde.awake_units() > 0, "{}", m.name);
    }
}

#[test]
fn units_walking_through_a_sleeping_army_wake_what_they_touch_and_get_through() {
    let (mut tried, mut through) = (0, 0);
    let members = sleeping_members(2);
    let count = members.len();
    for mut m in members {
        // From open ground left of the goal area to open ground right of it, the area's
        // middle row between: the way runs through the army.
        let row = m.low.1 + m.side / 2;
        let (from, to) = (
            Cell::new(m.low.0 - 2, row),
            Cell::new(m.low.0 + m.side + 1, row),
        );
        let open = |c: Cell| m.horde.map().terrain_at(c) == Terrain::Empty;
        if !(open(from) && open(to)) {
            continue;
        }
        tried += 1;
        let group = m.horde.add_group(GoalSet::single(to)).unwrap();
        let start = Vec2::new(from.x as f32 + 0.5, from.y as f32 + 0.5);
        let walker = UnitSpec::at(start).with_radius(m.radius).with_group(group);
        let walker = m.horde.spawn(&mut m.world, walker).unwrap();
        let mut arrived = false;
        let mut touching_asleep = 0;
        for _ in 0..60 * 30 {
            step(&mut m);
            let states = m.horde.unit_states(&m.world);
            let me = states.iter().find(|u| u.entity == walker).unwrap();
            // A sleeping unit the walker touches wakes by the next frame.
            let touches = (states.iter())
                .any(|u| u.asleep && u.position.distance(me.position) < 2.0 * m.radius * 1.05);
            touching_asleep = if touches { touching_asleep + 1 } else { 0 };
            assert!(
                touching_asleep < 2,
                "{}: a walker touched a sleeping unit that did not wake",
                m.name
            );
            if me.arrived {
                arrived = true;
                break;
            }
        }
        if arrived {
            through += 1;
        } else {
            println!("{}: the unit did not get through in 60 s", m.name);
        }
    }
    assert!(
        2 * tried >= count,
        "only {tried} of {count} members had open ground on both sides"
    );
    // A crowd awake at rest lets about as many through (13 of 15 members measured without
    // sleeping): some ways are too tight for anyone.
    println!("{through} of {tried} walkers got through");
    assert!(
        4 * through >= 3 * tried,
        "{through} of {tried} walkers got through"
    );
}

/// The same story (asleep, a blast, asleep again) on 1, 2 and 3 threads, and through a
/// snapshot taken while the army sleeps: the same hash at the end.
#[test]
fn sleep_is_the_same_on_every_thread_count_and_through_snapshots() {
    for seed in 0..4 {
        let mut hashes = Vec::new();
        for threads in [1, 2, 3] {
            let mut m = member(seed, threads);
            let frames = until_asleep(&mut m, 30 * 30);
            let hash = m.horde.state_hash(&m.world);
            let snapshot = m.horde.snapshot(&m.world);
            let story = |horde: &mut Horde, world: &mut World| {
                let centre = Vec2::new(m.low.0 as f32, m.low.1 as f32) + m.side as f32 * 0.5;
                horde.add_force(ForceField::new(centre, ForceKind::Explosion, 4.0, 80.0).unwrap());
                for _ in 0..120 {
                    horde.step(world, DT).unwrap();
                }
                horde.state_hash(world)
            };
            let straight = story(&mut m.horde, &mut m.world);
            let mut world = World::new();
            let mut restored = Horde::from_snapshot(&snapshot, threads, &mut world).unwrap();
            let through = story(&mut restored, &mut world);
            assert_eq!(
                straight, through,
                "seed {seed}, {threads} threads: through a snapshot"
            );
            hashes.push((frames, hash, straight));
        }
        assert!(
            hashes.windows(2).all(|w| w[0] == w[1]),
            "seed {seed}: {hashes:x?}"
        );
    }
}

/// An army sent to one cell ends settled round it (its goal cannot hold it) and, once every
/// unit of it rests, falls asleep whole: on a family of open and rocky maps, radii and army
/// sizes, every member is asleep within a minute and its frames then run no stage.
#[test]
fn an_army_sent_to_one_cell_sleeps_once_it_all_rests() {
    for seed in 0..6u64 {
        let mut rng = Pcg64::seed_from_u64(100 + seed);
        let side = 48 + below(&mut rng, 24);
        let radius = [0.35, 0.45, 0.6][below(&mut rng, 3) as usize];
        let mut map = Map::new(Grid::new(side, side).unwrap());
        let goal = Cell::new(side / 2 + below(&mut rng, 6), side / 2 - below(&mut rng, 6));
        for _ in 0..side / 2 {
            let c = Cell::new(below(&mut rng, side), below(&mut rng, side));
            if c.x.abs_diff(goal.x) > 3 || c.y.abs_diff(goal.y) > 3 {
                map.set_terrain(c, Terrain::SteelPlate);
            }
        }
        let mut horde = Horde::new(map, SimConfig::default().with_threads(2)).unwrap();
        let group = horde.add_group(GoalSet::new([goal]).unwrap()).unwrap();
        let mut world = World::new();
        let count = 60 + below(&mut rng, 140);
        let mut spawned = 0;
        // Units on the open cells of the map's left columns.
        'spawn: for x in 1..side / 3 {
            for y in 1..side - 1 {
                if spawned == count {
                    break 'spawn;
                }
                let spec = UnitSpec::at(Vec2::new(x as f32 + 0.5, y as f32 + 0.5))
                    .with_radius(radius)
                    .with_group(group);
                if horde.spawn(&mut world, spec).is_ok() {
                    spawned += 1;
                }
            }
        }
        let name = format!("seed {seed}: map {side}, radius {radius}, {spawned} units");
        let mut asleep_at = None;
        for frame in 0..60 * 30 {
            horde.step(&mut world, DT).unwrap();
            if horde.awake_units() == 0 {
                asleep_at = Some(frame);
                break;
            }
        }
        assert!(asleep_at.is_some(), "{name}: not asleep after a minute");
        let states = horde.unit_states(&world);
        assert!(states.iter().all(|u| u.settled || u.arrived), "{name}");
        assert!(
            states.iter().any(|u| u.settled),
            "{name}: the goal held the army"
        );
        let before = horde.state_hash(&world);
        assert!(step_world(&mut horde, &mut world), "{name}");
        assert_eq!(before, horde.state_hash(&world), "{name}");
    }
}

/// An army that marches packed into a goal area that holds it comes wholly to rest and falls
/// asleep: on the marching family (below), every member's army is asleep within three times
/// the crowd families' deadline (twice the walk to the area's far side at top speed, plus a
/// minute), every unit arrived, and its frames then run no stage. Seeds 2 and 3 stayed
/// awake for good before a unit pressing on a hole in the blob too small for a body rested
/// (docs/behaviour.md, "Coming to rest"): one unit pressing kept its whole army awake. In
/// seed 7 four units stayed blocked in an alcove one cell wide before a lane across a
/// unit's way stopped counting as its lane (docs/behaviour.md, "Steering").
#[test]
fn an_army_that_marches_packed_into_a_goal_area_sleeps_once_it_all_rests() {
    let failed: Vec<String> = (0..8)
        .filter_map(|seed| marching_asleep(seed).err())
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// [`an_army_that_marches_packed_into_a_goal_area_sleeps_once_it_all_rests`] on 20 members,
/// printing each (about 30 s in release); `MARCH_SEEDS=7,13` runs those members only.
#[test]
#[ignore]
fn marching_family_long() {
    let seeds: Vec<u64> = std::env::var("MARCH_SEEDS").map_or((0..20).collect(), |v| {
        v.split(',')
            .map(|x| x.trim().parse().expect("MARCH_SEEDS lists seeds: 7,13"))
            .collect()
    });
    let results: Vec<_> = seeds.into_iter().map(marching_asleep).collect();
    for r in &results {
        match r {
            Ok(line) => println!("{line}"),
            Err(line) => println!("FAILS {line}"),
        }
    }
    let passed = results.iter().filter(|r| r.is_ok()).count();
    println!(
        "marching: {passed} of {} members asleep whole",
        results.len()
    );
}

/// Runs marching member `seed` until its army sleeps whole and checks it (see
/// [`an_army_that_marches_packed_into_a_goal_area_sleeps_once_it_all_rests`]): a line on the
/// member, or what it broke.
fn marching_asleep(seed: u64) -> Result<String, String> {
    let (name, mut horde, mut world, deadline) = marching_member(seed);
    let limit = 3 * deadline;
    let asleep_at = (0..limit).find(|_| {
        horde.step(&mut world, DT).unwrap();
        horde.awake_units() == 0
    });
    let states = horde.unit_states(&world);
    let arrived = states.iter().filter(|u| u.arrived).count();
    let Some(frame) = asleep_at else {
        return Err(format!(
            "{name}: {} units awake after {limit} frames, {arrived} of {} arrived",
            horde.awake_units(),
            states.len()
        ));
    };
    if arrived != states.len() {
        return Err(format!(
            "{name}: asleep with {arrived} of {} arrived",
            states.len()
        ));
    }
    let before = horde.state_hash(&world);
    if !step_world(&mut horde, &mut world) || before != horde.state_hash(&world) {
        return Err(format!(
            "{name}: a frame of the army asleep ran its stages or changed its state"
        ));
    }
    Ok(format!(
        "{name}: asleep whole at frame {frame} (deadline {deadline})"
    ))
}

/// A member of the marching family: a block of units packed one per cell in the west of
/// the map (10 to 29 columns of all rows but four at each edge), a wall 2 to 4 cells thick
/// across the middle with gaps 3 to 8 cells wide every 10 to 20 cells, 2x2 rocks between,
/// and a goal area at the east end that holds the army: 1.3 to 2.5 times its cells, less
/// where that would be more than a third of the map. Its name,
/// simulation, world and the crowd families' deadline in frames.
fn marching_member(seed: u64) -> (String, Horde, World, u32) {
    let mut rng = Pcg64::seed_from_u64(300 + seed);
    let height = 40 + below(&mut rng, 40);
    let width = 2 * height;
    let radius = [0.3, 0.4, 0.45][below(&mut rng, 3) as usize];
    let mut map = Map::new(Grid::new(width, height).unwrap());
    let rows = height - 8;
    let cols = 10 + below(&mut rng, 20);
    let units = rows * cols;
    let room = units * (13 + below(&mut rng, 13)) / 10;
    let area_cols = room.div_ceil(height).min(width / 3);
    let area_x = width - area_cols;
    let wall_x = (cols + 4 + area_x) / 2;
    let thick = 2 + below(&mut rng, 3);
    let (gap, every) = (3 + below(&mut rng, 6), 10 + below(&mut rng, 11));
    for y in 0..height {
        if (y + every / 2) % every >= gap {
            for x in wall_x..wall_x + thick {
                map.set_terrain(Cell::new(x, y), Terrain::SteelPlate);
            }
        }
    }
    for _ in 0..width / 2 {
        let (x, y) = (
            cols + 6 + below(&mut rng, area_x - cols - 12),
            below(&mut rng, height - 1),
        );
        for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
            map.set_terrain(Cell::new(x + dx, y + dy), Terrain::SteelPlate);
        }
    }
    let mut horde = Horde::new(map, SimConfig::default().with_threads(2)).unwrap();
    let cells = (0..height).flat_map(|y| (area_x..width).map(move |x| Cell::new(x, y)));
    let group = horde.add_group(GoalSet::new(cells).unwrap()).unwrap();
    let mut world = World::new();
    for y in 4..4 + rows {
        for x in 2..2 + cols {
            let at = Vec2::new(x as f32 + 0.5, y as f32 + 0.5);
            let spec = UnitSpec::at(at).with_radius(radius).with_group(group);
            horde.spawn(&mut world, spec).unwrap();
        }
    }
    // Twice the walk to the far side at top speed (4 cells a second), plus a minute.
    let deadline = ((2.0 * width as f32 / 4.0 + 60.0) / DT) as u32;
    let name = format!(
        "seed {seed}: map {width}x{height}, radius {radius}, {units} units, area {area_cols} columns, gaps {gap} every {every}"
    );
    (name, horde, world, deadline)
}
