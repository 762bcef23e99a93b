//! Scenarios become the plans they describe: the units, groups, settings and events, the
//! example scenarios run, and `scenarios/demo.toml` reproduces the built-in demo.

mod common;

use std::path::Path;

use common::*;
use horde::fields::WALL;
use horde::{Command, SimConfig};
use horde::{GroupId, Terrain};
use horde_scenario::*;

#[test]
fn small_scenario_builds() {
    let plan = parse(SMALL).expect("parses");
    assert_eq!(plan.name, "test");
    assert_eq!(plan.frames, 50);
    assert_eq!(plan.sim.unit_count(), 7);
    assert!((plan.dt - 1.0 / 30.0).abs() < 1e-9);
    let units = plan.sim.units();
    // Group 0 fills its 2x2 area; group 1 its 3 cells.
    let cells: Vec<(u32, u32)> = units
        .iter()
        .map(|u| (u.position.x as u32, u.position.y as u32))
        .collect();
    assert_eq!(
        cells,
        vec![(0, 0), (1, 0), (0, 1), (1, 1), (6, 0), (7, 0), (8, 0)]
    );
}

#[test]
fn the_config_table_sets_the_simulation() {
    let text = SMALL.replace(
        "[map]",
        "[config]\nnavigation = \"hierarchical\"\nsize_classes = 2\n\
         [config.flow]\nline_of_sight_radius = 4\n[config.steering]\njitter = 0.1\nfan_steps = 3\n[config.contacts]\npasses = 2\n\
         [config.knockback]\ndrag = 2.5\n\n[map]",
    );
    let plan = parse(&text).expect("parses");
    let config = plan.sim.horde().config();
    assert_eq!(config.navigation, horde::Navigation::Hierarchical);
    assert_eq!(config.flow.line_of_sight_radius, 4);
    assert_eq!(config.size_classes, 2);
    assert_eq!(config.steering.jitter, 0.1);
    assert_eq!(config.steering.fan_steps, 3);
    assert_eq!(config.contacts.passes, 2);
    assert_eq!(config.knockback.drag, 2.5);
    // Untouched keys keep their defaults.
    let defaults = SimConfig::default();
    assert_eq!(config.steering.probe_length, defaults.steering.probe_length);
    assert_eq!(config.contacts.relaxation, defaults.contacts.relaxation);
}

/// A map with a sealed pocket at its right: units spawned there cannot reach the goal.
const POCKET: &str = r#"
[map]
rows = """
..........
......####
......#..#
......####
"""

[[group]]
count = 30
spawn = { x = 0, y = 0, w = 10, h = 4 }
goal = [[0, 0]]
"#;

#[test]
fn units_that_cannot_reach_their_goal_are_reported_or_refused() {
    let plan = parse(POCKET).expect("parses: reported, not refused");
    let reach = plan.sim.reachability();
    assert_eq!(reach.len(), 1);
    assert_eq!(reach[0].unreachable.len(), 2, "{reach:?}");
    let units = plan.sim.units();
    for id in &reach[0].unreachable {
        let u = units.iter().find(|u| u.id == *id).expect("a unit");
        assert!(
            u.position.x > 7.0 && (2.0..3.0).contains(&u.position.y),
            "{u:?}"
        );
        assert_eq!(u.status, horde::UnitStatus::Unreachable);
    }
    assert_eq!(
        reach[0].reachable + reach[0].unreachable.len(),
        plan.sim.unit_count()
    );
    let text = format!("require_reachable = true\n{POCKET}");
    assert_error(
        &err(&text),
        ScenarioErrorKind::BadValue,
        "group[0]",
        line_of(&text, "[[group]]"),
        "cannot reach the goal",
    );
    // A goal change into the pocket is refused too, naming the change.
    let text = format!(
        "require_reachable = true\n{}\n[[goal_change]]\ngroup = 0\ngoal = [[1, 0]]\n\
         frame = 5\n",
        POCKET
            .replace("w = 10, h = 4", "w = 6, h = 4")
            .replace("count = 30", "count = 20")
    );
    parse(&text).expect("every unit reaches [1, 0]");
    let text = text.replace("goal = [[1, 0]]", "goal = [[7, 2]]");
    assert_error(
        &err(&text),
        ScenarioErrorKind::BadValue,
        "goal_change[0]",
        line_of(&text, "[[goal_change]]"),
        "cannot reach this goal",
    );
}

#[test]
fn guaranteed_levels_spawn_only_where_the_goal_is_reachable() {
    // Seed 424242 puts enemy spawn 0 beside a sealed pocket (issue 25's report).
    let text = "seed = 424242\n[map]\ngenerate = { width = 64, height = 64, \
                guarantee_reachable = true }\n[[group]]\ncount = 2000\n\
                spawn_near = \"enemy_spawn_0\"\ngoal_site = \"lair_approach\"\n";
    let plan = parse(text).expect("parses");
    let reach = plan.sim.reachability();
    assert_eq!(reach[0].unreachable, Vec::new());
    assert_eq!(reach[0].reachable, 2000);
    // Without the guarantee (another level: nothing is carved) the nearest cells include
    // sealed pockets; the units are spawned there and reported.
    let plan = parse(&text.replace("guarantee_reachable = true", "guarantee_reachable = false"))
        .expect("parses");
    let reach = plan.sim.reachability();
    assert!(!reach[0].unreachable.is_empty());
    assert_eq!(reach[0].reachable + reach[0].unreachable.len(), 2000);
}

#[test]
fn guaranteed_levels_put_goal_areas_where_the_armies_go() {
    // Seed 5 (24x24 tiles) walls the map's centre into a pocket of 64 cells: on foot from
    // the centre, a goal area would lie in it and no spawn could reach it. On a level with
    // reachability guaranteed, the area lies in the lair approach's regions instead.
    let text = "seed = 5\n[map]\ngenerate = { seed = 5, width = 24, height = 24, \
                cells_per_tile = 4, guarantee_reachable = true }\n[[group]]\ncount = 500\n\
                spawn_near = \"enemy_spawn_0\"\ngoal_near = \"centre\"\ngoal_cells = 20\n";
    let plan = parse(text).expect("parses");
    let reach = plan.sim.reachability();
    assert_eq!(reach[0].unreachable, Vec::new());
    assert_eq!(reach[0].reachable, 500);
}

#[test]
fn moving_ai_map_relative_to_the_scenario() {
    let scenarios = scenarios_dir();
    let file = "../../shared/data/movingai/16room_000.map";
    if !scenarios.join(file).exists() {
        eprintln!("SKIP: {file} is absent (the Moving AI maps live beside the repository)");
        return;
    }
    let text = format!(
        "[map]\nfile = \"{file}\"\n[[group]]\ncount = 50\nspawn_near = \"centre\"\n\
         goal_near = [10, 10]\ngoal_cells = 4\n"
    );
    let mut plan = parse_scenario(&text, "movingai.toml", &scenarios, &threads(1))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(plan.sim.unit_count(), 50);
    for frame in 0..10 {
        plan.apply_events(frame).expect("events");
        plan.sim.step(plan.dt).expect("step");
    }
}

#[test]
fn the_documented_example_runs() {
    let doc = include_str!("../../docs/scenario.md");
    let example = doc
        .split_once("```toml\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .map(|(example, _)| example)
        .expect("docs/scenario.md has a toml example");
    let mut plan = parse(example).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(plan.name, "crossing");
    assert_eq!(plan.sim.unit_count(), 30);
    let frames: Vec<u32> = plan.events.iter().map(|e| e.frame).collect();
    assert_eq!(frames, vec![60, 100, 100, 200]);
    for frame in 0..30 {
        plan.apply_events(frame).expect("events");
        plan.sim.step(plan.dt).expect("step");
    }
}

#[test]
fn times_become_frames_and_events_are_sorted() {
    let text = format!(
        "{SMALL}
[[force]]
kind = \"push\"
direction = [1.0, 0.0]
x = 5.0
y = 3.0
radius = 3.0
strength = 10.0
at = 1.0

[[terrain_edit]]
rect = {{ x = 2, y = 2, w = 3, h = 2 }}
terrain = \"empty\"
time = 0.5

[[goal_change]]
group = \"second\"
goal = [[3, 2]]
frame = 20
"
    );
    let plan = parse(&text).expect("parses");
    let frames: Vec<u32> = plan.events.iter().map(|e| e.frame).collect();
    assert_eq!(frames, vec![15, 20, 30]);
    assert!(
        matches!(plan.events[0].command, Command::SetTerrain { ref cells, terrain: Terrain::Empty } if cells.len() == 6)
    );
    assert!(matches!(
        plan.events[1].command,
        Command::SetGoal {
            group: GroupId(1),
            ..
        }
    ));
    assert!(matches!(plan.events[2].command, Command::AddForce(_)));
    // The goal on the wall is only valid because the wall is gone by frame 20.
    let early = text.replace("frame = 20", "frame = 10");
    let e = err(&early);
    assert_eq!(e.key.as_deref(), Some("goal_change[0].goal"), "{e}");
}

#[test]
fn overrides_replace_file_values() {
    let plan = parse_scenario(
        SMALL,
        "x.toml",
        Path::new("."),
        &Overrides {
            threads: Some(2),
            seed: Some(9),
            frames: Some(7),
        },
    )
    .expect("parses");
    assert_eq!(plan.frames, 7);
    assert_eq!(plan.sim.horde().config().threads, 2);
    assert_eq!(plan.sim.horde().config().seed, 9);
    let e = parse_scenario(SMALL, "x.toml", Path::new("."), &threads(0))
        .expect_err("zero threads is an error");
    assert_eq!(e.key.as_deref(), Some("threads"), "{e}");
}

#[test]
fn every_example_scenario_runs_30_frames() {
    let mut seen = 0;
    let mut entries: Vec<_> = std::fs::read_dir(scenarios_dir())
        .expect("scenarios/")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    entries.sort();
    for path in entries {
        let mut plan = load_scenario(
            &path,
            &Overrides {
                threads: Some(2),
                ..Overrides::default()
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(plan.sim.unit_count() > 0, "{}", path.display());
        for frame in 0..30 {
            plan.apply_events(frame).expect("events apply");
            plan.sim.step(plan.dt).expect("steps");
        }
        let map = plan.sim.map();
        for u in plan.sim.units() {
            let cell = map.grid().cell_at(u.position);
            assert!(
                cell.is_some_and(|c| map.cost_field(u.layer).get(c) != WALL),
                "{}: a unit ended in a wall",
                path.display()
            );
        }
        seen += 1;
    }
    assert!(seen >= 3, "only {seen} example scenarios");
}

#[test]
fn demo_scenario_reproduces_the_built_in_demo() {
    let text = include_str!("../../scenarios/demo.toml");
    let mut from_file =
        parse_scenario(text, "demo.toml", Path::new("."), &threads(2)).expect("demo.toml");
    let mut built = Demo {
        threads: 2,
        ..Demo::default()
    }
    .plan()
    .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(from_file.name, built.name);
    assert_eq!(from_file.frames, built.frames);
    assert_eq!(from_file.dt.to_bits(), built.dt.to_bits());
    assert_eq!(from_file.sim.unit_count(), built.sim.unit_count());
    // The built-in demo stacks units where the rings of cells around two spawns overlap;
    // a scenario never puts two units on one cell, so those units stand elsewhere.
    let mut taken = std::collections::HashSet::new();
    let mut moved = 0;
    for (a, b) in from_file.sim.units().iter().zip(built.sim.units()) {
        assert!(taken.insert(a.position.to_array().map(f32::to_bits)));
        assert_eq!((a.id, a.group, a.layer), (b.id, b.group, b.layer));
        assert_eq!(a.radius.to_bits(), b.radius.to_bits());
        if a.position != b.position {
            // The first group has no earlier group to make room for.
            assert_ne!(a.group, GroupId(0), "{a:?} vs {b:?}");
            moved += 1;
        }
    }
    let mut seen = std::collections::HashSet::new();
    let stacked = built
        .sim
        .units()
        .iter()
        .filter(|u| !seen.insert(u.position.to_array().map(f32::to_bits)))
        .count();
    eprintln!("{moved} units placed differently; the built-in demo stacks {stacked}");
    assert!(moved == 0 || stacked > 0);
    let frames = |p: &Plan| p.events.iter().map(|e| e.frame).collect::<Vec<_>>();
    assert_eq!(frames(&from_file), frames(&built));
    for (a, b) in from_file.events.iter().zip(&built.events) {
        match (&a.command, &b.command) {
            (Command::AddForce(x), Command::AddForce(y)) => {
                assert_eq!(x.kind(), y.kind());
                assert_eq!(x.radius(), y.radius());
                assert_eq!(x.strength(), y.strength());
                assert_eq!(x.duration(), y.duration());
                assert!(x.position().distance(y.position()) < 1e-3);
            }
            (Command::SetGoal { group: g1, goal: a }, Command::SetGoal { group: g2, goal: b }) => {
                assert_eq!((g1, a), (g2, b));
            }
            (
                Command::SetTerrain {
                    cells: c1,
                    terrain: t1,
                },
                Command::SetTerrain {
                    cells: c2,
                    terrain: t2,
                },
            ) => assert_eq!((c1, t1), (c2, t2)),
            (x, y) => panic!("events differ: {x:?} vs {y:?}"),
        }
    }
    for frame in 0..5 {
        from_file.apply_events(frame).expect("events");
        from_file.sim.step(from_file.dt).expect("step");
        built.apply_events(frame).expect("events");
        built.sim.step(built.dt).expect("step");
    }
}
