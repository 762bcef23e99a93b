//! The viewer without a window: egui runs headless on synthetic input, so the whole path
//! from pointer events to the simulation is exercised.
use super::*;
use crate::view::input::Tool;
use egui::{Event, Modifiers, PointerButton, RawInput, Rect};
use horde::fields::CostTable;
use horde::glam::Vec2;
use horde::{Cell, GoalSet, Grid, GroupId, Map, UnitSpec};
use horde::{SimConfig, Simulation};

const VIEW: Rect = Rect {
    min: egui::Pos2::ZERO,
    max: egui::Pos2 { x: 800.0, y: 600.0 },
};

/// A viewer on a 40x30 open map with one group of 20 units heading for (35, 25).
fn viewer() -> (egui::Context, Viewer) {
    let grid = Grid::new(40, 30).expect("grid");
    let map = Map::from_terrain(grid, vec![Terrain::Empty; grid.len()], CostTable::default())
        .expect("map");
    let mut sim = Simulation::new(map, SimConfig::default().with_threads(1)).expect("sim");
    let group = sim
        .add_group(GoalSet::single(Cell::new(35, 25)))
        .expect("group");
    for i in 0..20 {
        let pos = Vec2::new(2.5 + (i % 5) as f32, 2.5 + (i / 5) as f32);
        sim.spawn(UnitSpec::at(pos).with_group(group))
            .expect("spawn");
    }
    let plan = Plan {
        name: "test".into(),
        sim,
        frames: 100,
        dt: 1.0 / 30.0,
        events: Vec::new(),
        group_names: Vec::new(),
    };
    let ctx = egui::Context::default();
    let finish = Rc::new(RefCell::new(Finish::default()));
    let v = Viewer::new(&ctx, plan, Controls::default(), None, None, finish);
    (ctx, v)
}

/// One frame of the map view (no side panel: the view is the whole 800x600 screen).
fn frame(ctx: &egui::Context, v: &mut Viewer, events: Vec<Event>, requests: &[Request]) {
    let input = RawInput {
        screen_rect: Some(VIEW),
        events,
        ..RawInput::default()
    };
    let _ = ctx.run(input, |ctx| {
        egui::CentralPanel::default()
            .frame(egui::Frame::NONE)
            .show(ctx, |ui| v.map_view(ctx, ui, requests));
    });
}

fn screen_of(v: &Viewer, cell: Cell) -> egui::Pos2 {
    let centre = v.plan.sim.map().grid().cell_centre(cell);
    v.camera.world_to_screen(centre, VIEW)
}

fn button(pos: egui::Pos2, pressed: bool) -> Event {
    Event::PointerButton {
        pos,
        button: PointerButton::Primary,
        pressed,
        modifiers: Modifiers::NONE,
    }
}

/// Press at `a`, move through `path`, release at the last point, one frame each.
fn stroke(ctx: &egui::Context, v: &mut Viewer, a: egui::Pos2, path: &[egui::Pos2]) {
    frame(ctx, v, vec![Event::PointerMoved(a)], &[]);
    frame(ctx, v, vec![button(a, true)], &[]);
    for &p in path {
        frame(ctx, v, vec![Event::PointerMoved(p)], &[]);
    }
    let end = path.last().copied().unwrap_or(a);
    frame(ctx, v, vec![button(end, false)], &[]);
}

#[test]
fn the_first_frame_fits_the_map_and_draws_every_unit() {
    let (ctx, mut v) = viewer();
    frame(&ctx, &mut v, Vec::new(), &[]);
    assert!(v.fitted);
    assert_eq!(v.stats.units, 20);
    assert_eq!(v.dots.len(), 20);
    let a = screen_of(&v, Cell::new(0, 0));
    let b = screen_of(&v, Cell::new(39, 29));
    assert!(VIEW.contains(a) && VIEW.contains(b));
}

#[test]
fn a_click_on_the_map_sets_the_goal_of_the_selected_group() {
    let (ctx, mut v) = viewer();
    frame(&ctx, &mut v, Vec::new(), &[]);
    let p = screen_of(&v, Cell::new(7, 21));
    stroke(&ctx, &mut v, p, &[]);
    let groups = v.plan.sim.horde().groups();
    assert_eq!(groups.get(0).expect("g").goal.cells(), &[Cell::new(7, 21)]);
    assert!(
        v.controls.message.contains("group 0"),
        "{}",
        v.controls.message
    );
}

#[test]
fn dragging_with_the_wall_tool_paints_walls_under_the_mouse() {
    let (ctx, mut v) = viewer();
    frame(&ctx, &mut v, Vec::new(), &[]);
    v.controls.tools.tool = Tool::Wall;
    let path: Vec<_> = (10..=20).map(|x| screen_of(&v, Cell::new(x, 15))).collect();
    stroke(&ctx, &mut v, path[0], &path[1..]);
    let map = v.plan.sim.map();
    for x in 10..=20 {
        assert_eq!(map.terrain_at(Cell::new(x, 15)), Terrain::BrickWall, "{x}");
    }
    assert_eq!(map.terrain_at(Cell::new(9, 15)), Terrain::Empty);
    assert_eq!(map.terrain_at(Cell::new(15, 14)), Terrain::Empty);
    drop(map);
    // The terrain texture follows the edit on the next frame.
    frame(&ctx, &mut v, Vec::new(), &[]);
    let map = v.plan.sim.map();
    assert_eq!(v.terrain_seen.0, map.terrain());
}

#[test]
fn a_click_with_a_force_tool_drops_the_force_there() {
    let (ctx, mut v) = viewer();
    frame(&ctx, &mut v, Vec::new(), &[]);
    v.controls.tools.tool = Tool::Attractor;
    let p = screen_of(&v, Cell::new(30, 4));
    stroke(&ctx, &mut v, p, &[]);
    let forces = v.plan.sim.horde().forces();
    let (_, f) = forces.iter().next().expect("a force");
    let cell = v.plan.sim.map().grid().cell_at(f.position());
    assert_eq!(cell, Some(Cell::new(30, 4)));
}

#[test]
fn pinch_zoom_keeps_the_point_under_the_pointer() {
    let (ctx, mut v) = viewer();
    frame(&ctx, &mut v, Vec::new(), &[]);
    let p = screen_of(&v, Cell::new(33, 6));
    let before = v.camera;
    let under = v.camera.screen_to_world(p, VIEW);
    frame(&ctx, &mut v, vec![Event::PointerMoved(p)], &[]);
    frame(&ctx, &mut v, vec![Event::Zoom(1.5)], &[]);
    assert!((v.camera.zoom - before.zoom * 1.5).abs() < 1e-3);
    assert!((v.camera.screen_to_world(p, VIEW) - under).length() < 1e-3);
    // Fitting brings the whole map back.
    frame(&ctx, &mut v, Vec::new(), &[Request::FitView]);
    assert_eq!(v.camera, before);
}

#[test]
fn speed_pause_and_single_steps() {
    let (ctx, mut v) = viewer();
    frame(&ctx, &mut v, Vec::new(), &[]);
    v.simulate(&[]);
    assert_eq!(v.plan.sim.frame(), 1);
    v.controls.speed = 0; // one step every 8 frames
    for _ in 0..8 {
        v.simulate(&[]);
    }
    assert_eq!(v.plan.sim.frame(), 2);
    v.controls.speed = SPEEDS_FAST;
    v.simulate(&[]);
    assert_eq!(v.plan.sim.frame(), 2 + MAX_STEPS_PER_FRAME as u64);
    v.simulate(&[Request::Step]);
    assert!(v.controls.paused);
    assert_eq!(v.plan.sim.frame(), 3 + MAX_STEPS_PER_FRAME as u64);
    v.simulate(&[]);
    assert_eq!(v.plan.sim.frame(), 3 + MAX_STEPS_PER_FRAME as u64, "paused");
    // A spawn request adds units of the selected group.
    v.controls.spawn_count = 25;
    frame(&ctx, &mut v, Vec::new(), &[Request::Spawn]);
    assert_eq!(v.plan.sim.unit_count(), 45);
    assert!(v.plan.sim.units().iter().all(|u| u.group == GroupId(0)));
    // The formation request gives the selected group its next formation, round to none.
    let shape = |v: &Viewer| {
        (v.plan.sim.horde().formations())
            .get(0)
            .map(|f| f.order.shape.clone())
    };
    for expected in [
        Some(horde::prelude::Shape::Line { width: 20 }),
        Some(horde::prelude::Shape::Box),
        Some(horde::prelude::Shape::Wedge),
        None,
    ] {
        frame(&ctx, &mut v, Vec::new(), &[Request::Formation]);
        assert_eq!(shape(&v), expected, "{}", v.controls.message);
    }
}

/// Index of the fastest speed.
const SPEEDS_FAST: usize = crate::view::panel::SPEEDS.len() - 1;
