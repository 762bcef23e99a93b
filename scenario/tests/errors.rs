//! Every problem in a scenario file is an error naming the file, the line and the key;
//! nothing panics, whatever the input.

mod common;

use std::path::Path;

use common::*;
use horde_scenario::*;

#[test]
fn config_values_out_of_range_name_key_and_line() {
    let with = |table: &str, line: &str| {
        SMALL.replace("[map]", &format!("[config{table}]\n{line}\n\n[map]"))
    };
    let text = with(".steering", "separation_weight = 3e38");
    assert_error(
        &err(&text),
        ScenarioErrorKind::BadValue,
        "config.steering.separation_weight",
        line_of(&text, "separation_weight"),
        "finite, in 0..=1000",
    );
    let text = with(".steering", "probe_length = 3e38");
    assert_error(
        &err(&text),
        ScenarioErrorKind::BadValue,
        "config.steering.probe_length",
        line_of(&text, "probe_length"),
        "finite, in 0..=100, found 3e38",
    );
    let text = with(".knockback", "max_external_speed = 1e30");
    assert_error(
        &err(&text),
        ScenarioErrorKind::BadValue,
        "config.knockback.max_external_speed",
        line_of(&text, "max_external_speed"),
        "finite, in 0..=10000",
    );
    let text = with(".steering", "fan_steps = 500");
    assert_error(
        &err(&text),
        ScenarioErrorKind::BadValue,
        "config.steering.fan_steps",
        line_of(&text, "fan_steps"),
        "an integer in 0..=180, found 500",
    );
    for bad in ["size_classes = 0", "size_classes = 5"] {
        let text = with("", bad);
        assert_error(
            &err(&text),
            ScenarioErrorKind::BadValue,
            "config.size_classes",
            line_of(&text, "size_classes"),
            "an integer in 1..=4",
        );
    }
    let text = with("", "navigation = \"astar\"");
    assert_error(
        &err(&text),
        ScenarioErrorKind::BadValue,
        "config.navigation",
        line_of(&text, "astar"),
        "\"flat\" or \"hierarchical\"",
    );
    let text = with(".contacts", "relaxation = 7");
    assert_error(
        &err(&text),
        ScenarioErrorKind::BadValue,
        "config.contacts.relaxation",
        line_of(&text, "relaxation"),
        "0.5..=2",
    );
    let text = with(".steering", "jiter = 0.1");
    let e = err(&text);
    assert_eq!(e.kind, ScenarioErrorKind::UnknownKey, "{e}");
    assert_eq!(e.line, Some(line_of(&text, "jiter")), "{e}");
    assert!(e.to_string().contains("jiter"), "{e}");
}

#[test]
fn unknown_key_names_key_and_line() {
    let text = SMALL.replace("name = \"second\"", "name = \"second\"\ncuont = 3");
    let e = err(&text);
    assert_error(
        &e,
        ScenarioErrorKind::UnknownKey,
        "group[1].cuont",
        line_of(&text, "cuont"),
        "cuont",
    );
    let text = SMALL.replace("seed = 3", "seed = 3\nspeeed = 2");
    let e = err(&text);
    assert_error(
        &e,
        ScenarioErrorKind::UnknownKey,
        "speeed",
        line_of(&text, "speeed"),
        "unknown field",
    );
    let text = SMALL.replace(
        "{ x = 6, y = 0, w = 3, h = 1 }",
        "{ x = 6, y = 0, w = 3, h = 1, z = 0 }",
    );
    let e = err(&text);
    assert_error(
        &e,
        ScenarioErrorKind::UnknownKey,
        "group[1].spawn.z",
        line_of(&text, "z = 0"),
        "unknown field `z`",
    );
}

#[test]
fn wrong_type_names_key_and_line() {
    let text = SMALL.replace("count = 3", "count = \"three\"");
    let e = err(&text);
    assert_error(
        &e,
        ScenarioErrorKind::WrongType,
        "group[1].count",
        line_of(&text, "\"three\""),
        "invalid type",
    );
    let text = SMALL.replace("goal = [[9, 5]]", "goal = [[9, \"5\"]]");
    let e = err(&text);
    assert_eq!(e.kind, ScenarioErrorKind::WrongType, "{e}");
    assert_eq!(e.line, Some(line_of(&text, "goal = [[9")), "{e}");
    assert!(e.to_string().contains("group[0].goal"), "{e}");
}

#[test]
fn negative_count_names_key_and_line() {
    let text = SMALL.replace("count = 3", "count = -3");
    let e = err(&text);
    assert_error(
        &e,
        ScenarioErrorKind::BadValue,
        "group[1].count",
        line_of(&text, "count = -3"),
        "expected a count >= 1, found -3",
    );
}

#[test]
fn nan_names_key_and_line() {
    let text = SMALL.replace("frames = 50", "frames = 50\ndt = nan");
    let e = err(&text);
    assert_error(
        &e,
        ScenarioErrorKind::BadValue,
        "dt",
        line_of(&text, "dt = nan"),
        "NaN",
    );
    let text = format!(
        "{SMALL}\n[[force]]\nkind = \"explosion\"\nx = 1.0\ny = nan\nradius = 2.0\nstrength = 1.0\n"
    );
    let e = err(&text);
    assert_error(
        &e,
        ScenarioErrorKind::BadValue,
        "force[0].y",
        line_of(&text, "y = nan"),
        "NaN",
    );
    let text = SMALL.replace("count = 4", "count = 4\nradius = [0.4, nan]");
    let e = err(&text);
    assert_error(
        &e,
        ScenarioErrorKind::BadValue,
        "group[0].radius",
        line_of(&text, "radius = [0.4"),
        "NaN",
    );
}

#[test]
fn spawn_outside_map_names_key_and_line() {
    let text = SMALL.replace(
        "{ x = 6, y = 0, w = 3, h = 1 }",
        "{ x = 8, y = 0, w = 3, h = 1 }",
    );
    let e = err(&text);
    assert_error(
        &e,
        ScenarioErrorKind::BadValue,
        "group[1].spawn",
        line_of(&text, "x = 8"),
        "does not fit the 10x6 map",
    );
    let text = SMALL.replace(
        "{ x = 6, y = 0, w = 3, h = 1 }",
        "{ x = -1, y = 0, w = 3, h = 1 }",
    );
    let e = err(&text);
    assert_eq!(e.key.as_deref(), Some("group[1].spawn"), "{e}");
}

#[test]
fn goal_in_wall_names_key_and_line() {
    let text = SMALL.replace("goal = [[9, 5]]", "goal = [[9, 5], [3, 2]]");
    let e = err(&text);
    assert_error(
        &e,
        ScenarioErrorKind::BadValue,
        "group[0].goal",
        line_of(&text, "[3, 2]"),
        "goal cell [3, 2] is inside a wall (brick_wall)",
    );
    // An air group may have a goal on a wall only if ground or hover units could reach it.
    let text = SMALL.replace("goal = [[9, 5]]", "goal = [[3, 2]]\nlayer = \"air\"");
    let e = err(&text);
    assert_eq!(e.key.as_deref(), Some("group[0].goal"), "{e}");
    // Outside the map.
    let text = SMALL.replace("goal = [[9, 5]]", "goal = [[10, 5]]");
    let e = err(&text);
    assert!(e.to_string().contains("outside the 10x6 map"), "{e}");
}

#[test]
fn missing_map_file_names_key_and_line() {
    let text = SMALL.replace(
        "rows = \"\"\"",
        "file = \"no/such/file.map\"\nrows = \"\"\"",
    );
    let e = err(&text);
    assert_eq!(e.kind, ScenarioErrorKind::MissingKey, "{e}");
    assert_eq!(e.key.as_deref(), Some("map"), "{e}");
    let text = "[map]\nfile = \"no/such/file.map\"\n[[group]]\ncount = 1\nspawn = { x = 0, y = 0, w = 1, h = 1 }\ngoal = [[0, 0]]\n";
    let e = err(text);
    assert_error(
        &e,
        ScenarioErrorKind::Map,
        "map.file",
        2,
        "no/such/file.map",
    );
    let e = match load_scenario(Path::new("no/such/scenario.toml"), &Overrides::default()) {
        Ok(_) => panic!("loaded a missing file"),
        Err(e) => e,
    };
    assert_eq!(e.kind, ScenarioErrorKind::Read, "{e}");
    assert!(e.to_string().starts_with("no/such/scenario.toml: "), "{e}");
}

#[test]
fn bad_map_rows_name_the_file_line() {
    let text = SMALL.replace("..###.....\n..###.....", "..###.....\n..###....");
    let e = err(&text);
    assert_error(
        &e,
        ScenarioErrorKind::Map,
        "map.rows",
        text.lines()
            .position(|l| l == "..###....")
            .map_or(0, |i| i + 1),
        "expected 10 characters",
    );
}

#[test]
fn too_many_units_for_the_spawn_area() {
    let text = SMALL.replace("count = 4", "count = 5");
    let e = err(&text);
    assert_error(
        &e,
        ScenarioErrorKind::BadValue,
        "group[0].spawn",
        line_of(&text, "spawn = { x = 0"),
        "fewer than count = 5",
    );
    // Walls do not count as open cells.
    let text = SMALL.replace(
        "{ x = 6, y = 0, w = 3, h = 1 }",
        "{ x = 2, y = 2, w = 3, h = 2 }",
    );
    let e = err(&text);
    assert!(e.to_string().contains("has 0 free open cells"), "{e}");
}

#[test]
fn syntax_error_has_a_line() {
    let text = SMALL.replace("count = 3", "count = = 3");
    let e = err(&text);
    assert_eq!(e.kind, ScenarioErrorKind::Syntax, "{e}");
    assert_eq!(e.line, Some(line_of(&text, "count = = 3")), "{e}");
}

#[test]
fn missing_and_conflicting_keys() {
    let text = SMALL.replace("count = 3\n", "");
    let e = err(&text);
    assert_eq!(e.kind, ScenarioErrorKind::MissingKey, "{e}");
    assert_eq!(e.key.as_deref(), Some("group[1].count"), "{e}");
    let text = SMALL.replace(
        "goal = [[9, 5]]",
        "goal = [[9, 5]]\ngoal_area = { x = 0, y = 0, w = 1, h = 1 }",
    );
    let e = err(&text);
    assert_eq!(e.key.as_deref(), Some("group[0]"), "{e}");
    assert_eq!(e.line, Some(line_of(&text, "[[group]]")), "{e}");
    let e = err("seed = 1\n");
    assert_eq!(e.kind, ScenarioErrorKind::MissingKey, "{e}");
    assert!(e.to_string().contains("map"), "{e}");
}

#[test]
fn bad_names_are_reported() {
    let text = SMALL.replace("count = 4", "count = 4\nlayer = \"underground\"");
    let e = err(&text);
    assert_error(
        &e,
        ScenarioErrorKind::BadValue,
        "group[0].layer",
        line_of(&text, "underground"),
        "\"ground\", \"hover\" or \"air\"",
    );
    let text = format!("{SMALL}\n[[terrain_edit]]\ncells = [[0, 0]]\nterrain = \"lava\"\n");
    let e = err(&text);
    assert_error(
        &e,
        ScenarioErrorKind::BadValue,
        "terrain_edit[0].terrain",
        line_of(&text, "lava"),
        "brick_wall",
    );
    let text = format!("{SMALL}\n[[goal_change]]\ngroup = \"third\"\ngoal = [[0, 0]]\n");
    let e = err(&text);
    assert_error(
        &e,
        ScenarioErrorKind::BadValue,
        "goal_change[0].group",
        line_of(&text, "\"third\""),
        "no such group",
    );
    let text = format!(
        "{SMALL}\n[[force]]\nkind = \"tornado\"\nx = 1.0\ny = 1.0\nradius = 2.0\nstrength = 1.0\n"
    );
    let e = err(&text);
    assert_eq!(e.key.as_deref(), Some("force[0].kind"), "{e}");
}

#[test]
fn truncated_and_mangled_files_never_panic() {
    let text =
        std::fs::read_to_string(scenarios_dir().join("corridor.toml")).expect("corridor.toml");
    let mut cut = 0;
    for (i, _) in text.char_indices().step_by(7) {
        let _ = parse(&text[..i]);
        cut += 1;
    }
    assert!(cut > 50);
    for (from, to) in [
        ("= ", "= -"),
        ("0", "nan"),
        ("1", "-1"),
        ("\"", "'"),
        ("[", "{"),
        ("4", "99999999999"),
        ("0.", "1e40 + 0."),
    ] {
        let _ = parse(&text.replacen(from, to, 3));
        let _ = parse(&text.replace(from, to));
    }
}

#[test]
fn bad_formations_name_key_and_line() {
    let with = |line: &str| SMALL.replace("goal = [[9, 5]]", &format!("goal = [[9, 5]]\n{line}"));
    for (line, needle) in [
        (r#"formation = { shape = "circle" }"#, "shape \"circle\""),
        (r#"formation = { shape = "line" }"#, "needs a width"),
        (r#"formation = { shape = "line", width = 0 }"#, "width 0"),
        (
            r#"formation = { shape = "box", width = 3 }"#,
            "neither width nor slots",
        ),
        (r#"formation = { shape = "custom" }"#, "needs slots"),
        (
            r#"formation = { shape = "box", spacing = -1.0 }"#,
            "spacing",
        ),
        (
            r#"formation = { shape = "box", facing = [0.0, 0.0] }"#,
            "facing",
        ),
    ] {
        let text = with(line);
        assert_error(
            &err(&text),
            ScenarioErrorKind::BadValue,
            "group[0].formation",
            line_of(&text, "formation"),
            needle,
        );
    }
    // A good one is an order at frame 0.
    let plan = parse(&with(
        r#"formation = { shape = "line", width = 2, facing = [1.0, 0.0] }"#,
    ))
    .expect("the formation is valid");
    assert!(plan.events.iter().any(|e| e.frame == 0
        && matches!(
            e.command,
            horde::Command::SetFormation { order: Some(_), .. }
        )));
}

#[test]
fn bad_follows_name_key_and_line() {
    let with = |line: &str| SMALL.replace("goal = [[9, 5]]", &format!("goal = [[9, 5]]\n{line}"));
    for (line, needle) in [
        (
            r#"follow = { group = "nobody", distance = 2.0 }"#,
            "no such group",
        ),
        (r#"follow = { group = 0, distance = 2.0 }"#, "its own units"),
        (
            r#"follow = { group = "second", unit = 3, distance = 2.0 }"#,
            "has 3 units",
        ),
        (r#"follow = { group = 1, distance = -2.0 }"#, "distance"),
    ] {
        let text = with(line);
        assert_error(
            &err(&text),
            ScenarioErrorKind::BadValue,
            "group[0].follow",
            line_of(&text, "follow"),
            needle,
        );
    }
    // A good one follows the unit with that place in the spawn order (group 0 has 4 units,
    // so the second group's unit 2 has id 6).
    let plan = parse(&with(
        r#"follow = { group = "second", unit = 2, distance = 3.0 }"#,
    ))
    .expect("the follow is valid");
    assert!(plan.events.iter().any(|e| e.frame == 0
        && matches!(
            e.command,
            horde::Command::SetTarget {
                target: Some(horde::UnitTarget {
                    unit: horde::UnitId(6),
                    ..
                }),
                ..
            }
        )));
}
