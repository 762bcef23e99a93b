//! The viewer's side panel and keyboard: the numbers (units, groups, arrived, stunned, fps,
//! ms per stage of the last frame) and the controls (tool, group, pause, step, speed,
//! spawn, overlays, profiler).

use std::time::Duration;

use eframe::egui::{self, Color32, Key, RichText};
use horde::GroupId;

use super::input::{Tool, ToolState};
use super::mesh::colour;
use crate::render::unit_colour;

/// Simulation steps per drawn frame the speed control offers.
pub const SPEEDS: [f32; 7] = [0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0];
/// Index of 1 step per frame in [`SPEEDS`].
pub const NORMAL_SPEED: usize = 3;
/// Units a spawn adds unless the user changes it.
pub const DEFAULT_SPAWN: u32 = 1000;
/// Most units one spawn may add.
pub const MAX_SPAWN: u32 = 100_000;

/// What the user has set in the panel or with keys.
#[derive(Clone, Debug)]
pub struct Controls {
    /// The simulation waits (single steps still run).
    pub paused: bool,
    /// Index into [`SPEEDS`].
    pub speed: usize,
    /// Draw the selected group's flow field as arrows.
    pub show_flow: bool,
    /// Draw the selected group's integration field as a heat map.
    pub show_heat: bool,
    /// The size class whose flow and heat map are drawn (key C cycles through the selected
    /// group's classes; see [`Controls::shown_class`]).
    pub class: u8,
    /// Show the puffin profiler window.
    pub show_profiler: bool,
    /// Units a spawn adds.
    pub spawn_count: u32,
    /// The left button's tool and the selected group.
    pub tools: ToolState,
    /// The last thing that happened (or went wrong), shown at the bottom of the panel.
    pub message: String,
}

impl Default for Controls {
    fn default() -> Self {
        Self {
            paused: false,
            speed: NORMAL_SPEED,
            show_flow: false,
            show_heat: false,
            class: 0,
            show_profiler: false,
            spawn_count: DEFAULT_SPAWN,
            tools: ToolState::default(),
            message: String::new(),
        }
    }
}

impl Controls {
    /// Simulation steps per drawn frame.
    #[must_use]
    pub fn steps_per_frame(&self) -> f32 {
        SPEEDS[self.speed.min(SPEEDS.len() - 1)]
    }

    /// The size class drawn for a group whose ground units have `classes` (smallest first):
    /// the chosen one if the group has it, else the group's smallest (0 for none).
    #[must_use]
    pub fn shown_class(&self, classes: &[u8]) -> u8 {
        if classes.contains(&self.class) {
            self.class
        } else {
            classes.first().copied().unwrap_or(0)
        }
    }
}

/// The class after `current` among `classes` (smallest first), wrapping round; 0 for none.
#[must_use]
pub fn next_class(current: u8, classes: &[u8]) -> u8 {
    classes
        .iter()
        .copied()
        .find(|&c| c > current)
        .or_else(|| classes.first().copied())
        .unwrap_or(0)
}

/// Something the panel or a key asks the viewer to do once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request {
    /// Run one simulation step (and pause).
    Step,
    /// Spawn units of the selected group at the mouse (or the middle of the view).
    Spawn,
    /// Fit the whole map into the view.
    FitView,
    /// The selected group's next formation: none, a line of 20, a box, a wedge, none...
    Formation,
}

/// The numbers the panel shows.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Units.
    pub units: usize,
    /// Groups.
    pub groups: usize,
    /// Units that have arrived at their goal.
    pub arrived: usize,
    /// Units stunned now.
    pub stunned: usize,
    /// Frames drawn per second (smoothed).
    pub fps: f32,
    /// Frames simulated so far.
    pub frame: u64,
    /// Wall time of each stage of the last simulated frame.
    pub stages: Vec<(String, Duration)>,
    /// Milliseconds the last drawn frame spent simulating.
    pub step_ms: f32,
    /// Milliseconds the last drawn frame spent reading the units and building what is drawn.
    pub draw_ms: f32,
    /// The cell under the mouse and what it is, if any.
    pub hover: Option<String>,
    /// The size classes of the selected group's ground units, smallest first.
    pub classes: Vec<u8>,
}

/// Applies the viewer's keys (ignored while a text field has the keyboard); returns the
/// one-off requests. `classes`: the size classes of the selected group (key C cycles them).
pub fn keys(
    ctx: &egui::Context,
    controls: &mut Controls,
    groups: usize,
    classes: &[u8],
) -> Vec<Request> {
    let mut out = Vec::new();
    if ctx.wants_keyboard_input() {
        return out;
    }
    ctx.input(|i| {
        if i.key_pressed(Key::Space) {
            controls.paused = !controls.paused;
        }
        if i.key_pressed(Key::N) || i.key_pressed(Key::Period) {
            out.push(Request::Step);
        }
        if i.key_pressed(Key::Plus) || i.key_pressed(Key::Equals) {
            controls.speed = (controls.speed + 1).min(SPEEDS.len() - 1);
        }
        if i.key_pressed(Key::Minus) {
            controls.speed = controls.speed.saturating_sub(1);
        }
        for (k, key) in [
            Key::Num1,
            Key::Num2,
            Key::Num3,
            Key::Num4,
            Key::Num5,
            Key::Num6,
            Key::Num7,
            Key::Num8,
            Key::Num9,
        ]
        .into_iter()
        .enumerate()
        {
            if i.key_pressed(key) && k < groups {
                controls.tools.group = GroupId(k as u16);
            }
        }
        for tool in Tool::ALL {
            let key = Key::from_name(&tool.key().to_string());
            if key.is_some_and(|k| i.key_pressed(k)) {
                controls.tools.tool = tool;
            }
        }
        if i.key_pressed(Key::F) {
            controls.show_flow = !controls.show_flow;
        }
        if i.key_pressed(Key::H) {
            controls.show_heat = !controls.show_heat;
        }
        if i.key_pressed(Key::C) {
            controls.class = next_class(controls.shown_class(classes), classes);
        }
        if i.key_pressed(Key::P) {
            controls.show_profiler = !controls.show_profiler;
        }
        if i.key_pressed(Key::S) {
            out.push(Request::Spawn);
        }
        if i.key_pressed(Key::R) {
            out.push(Request::FitView);
        }
        if i.key_pressed(Key::O) {
            out.push(Request::Formation);
        }
    });
    out
}

/// Draws the side panel; returns the one-off requests of its buttons.
pub fn side_panel(
    ctx: &egui::Context,
    controls: &mut Controls,
    stats: &Stats,
    name: &str,
) -> Vec<Request> {
    egui::SidePanel::left("horde-panel")
        .resizable(false)
        .exact_width(250.0)
        .show(ctx, |ui| {
            egui::ScrollArea::vertical().show(ui, |ui| panel_contents(ui, controls, stats, name))
        })
        .inner
        .inner
}

fn panel_contents(
    ui: &mut egui::Ui,
    controls: &mut Controls,
    stats: &Stats,
    name: &str,
) -> Vec<Request> {
    let mut out = Vec::new();
    ui.heading("horde view");
    ui.label(name);
    ui.separator();
    egui::Grid::new("numbers").num_columns(2).show(ui, |ui| {
        let mut row = |k: &str, v: String| {
            ui.label(k);
            ui.monospace(v);
            ui.end_row();
        };
        row("units", stats.units.to_string());
        row("groups", stats.groups.to_string());
        row("arrived", stats.arrived.to_string());
        row("stunned", stats.stunned.to_string());
        row("fps", format!("{:.0}", stats.fps));
        row("frame", stats.frame.to_string());
        row("sim ms/drawn frame", format!("{:.2}", stats.step_ms));
        row("draw ms", format!("{:.2}", stats.draw_ms));
    });
    ui.separator();
    ui.label(RichText::new("ms per stage (last frame)").strong());
    egui::Grid::new("stages").num_columns(2).show(ui, |ui| {
        for (name, time) in &stats.stages {
            ui.label(name);
            ui.monospace(format!("{:.3}", time.as_secs_f64() * 1e3));
            ui.end_row();
        }
    });
    ui.separator();
    ui.horizontal(|ui| {
        let label = if controls.paused { "run" } else { "pause" };
        if ui.button(label).on_hover_text("Space").clicked() {
            controls.paused = !controls.paused;
        }
        if ui.button("step").on_hover_text("N").clicked() {
            out.push(Request::Step);
        }
        if ui.button("fit view").on_hover_text("R").clicked() {
            out.push(Request::FitView);
        }
    });
    ui.horizontal(|ui| {
        ui.label("speed (- / +)");
        ui.add(egui::Slider::new(&mut controls.speed, 0..=SPEEDS.len() - 1).show_value(false));
        ui.monospace(format!("x{}", controls.steps_per_frame()));
    });
    ui.separator();
    ui.label(RichText::new("left button").strong());
    for tool in Tool::ALL {
        let text = format!("{} ({})", tool.name(), tool.key());
        ui.radio_value(&mut controls.tools.tool, tool, text);
    }
    ui.horizontal(|ui| {
        ui.label("group (1-9)");
        for g in 0..stats.groups.min(9) {
            let id = GroupId(g as u16);
            let text = RichText::new(g.to_string())
                .color(colour(unit_colour(id.0, false)))
                .strong();
            ui.selectable_value(&mut controls.tools.group, id, text);
        }
    });
    ui.horizontal(|ui| {
        if ui
            .button("spawn")
            .on_hover_text("S: at the mouse")
            .clicked()
        {
            out.push(Request::Spawn);
        }
        if ui
            .button("formation")
            .on_hover_text("O: the selected group's next formation (none, line, box, wedge)")
            .clicked()
        {
            out.push(Request::Formation);
        }
        ui.add(
            egui::DragValue::new(&mut controls.spawn_count)
                .range(1..=MAX_SPAWN)
                .speed(10),
        );
        ui.label("units");
    });
    ui.separator();
    ui.checkbox(&mut controls.show_flow, "flow arrows (F)");
    ui.checkbox(&mut controls.show_heat, "integration heat map (H)");
    ui.horizontal(|ui| {
        ui.label("size class (C)");
        for &c in &stats.classes {
            let shown = controls.shown_class(&stats.classes);
            if ui.selectable_label(c == shown, c.to_string()).clicked() {
                controls.class = c;
            }
        }
        if stats.classes.is_empty() {
            ui.small("no ground units");
        }
    });
    ui.checkbox(&mut controls.show_profiler, "profiler (P)");
    ui.separator();
    ui.small("right or middle drag: pan; wheel: zoom");
    if let Some(hover) = &stats.hover {
        ui.small(hover);
    }
    if !controls.message.is_empty() {
        ui.label(RichText::new(&controls.message).color(Color32::LIGHT_YELLOW));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs [`keys`] for one frame in which `pressed` were pressed.
    fn press(controls: &mut Controls, groups: usize, pressed: &[Key]) -> Vec<Request> {
        press_with(controls, groups, &[0], pressed)
    }

    /// [`press`] for a selected group whose units have size classes `classes`.
    fn press_with(
        controls: &mut Controls,
        groups: usize,
        classes: &[u8],
        pressed: &[Key],
    ) -> Vec<Request> {
        let ctx = egui::Context::default();
        let events = pressed
            .iter()
            .map(|&key| egui::Event::Key {
                key,
                physical_key: None,
                pressed: true,
                repeat: false,
                modifiers: egui::Modifiers::NONE,
            })
            .collect();
        let input = egui::RawInput {
            events,
            ..egui::RawInput::default()
        };
        let mut out = Vec::new();
        let _ = ctx.run(input, |ctx| out = keys(ctx, controls, groups, classes));
        out
    }

    #[test]
    fn keys_pick_tools_groups_and_toggles() {
        let mut c = Controls::default();
        assert_eq!(c.tools.tool, Tool::Goal);
        for tool in Tool::ALL {
            let key = Key::from_name(&tool.key().to_string()).expect("a key");
            assert!(press(&mut c, 3, &[key]).is_empty());
            assert_eq!(c.tools.tool, tool, "{key:?}");
        }
        press(&mut c, 3, &[Key::Num3]);
        assert_eq!(c.tools.group, GroupId(2));
        // There is no fourth group: the selection stays.
        press(&mut c, 3, &[Key::Num4]);
        assert_eq!(c.tools.group, GroupId(2));
        press(&mut c, 3, &[Key::Space, Key::F, Key::H, Key::P]);
        assert!(c.paused && c.show_flow && c.show_heat && c.show_profiler);
        press(&mut c, 3, &[Key::Space, Key::F, Key::H, Key::P]);
        assert!(!c.paused && !c.show_flow && !c.show_heat && !c.show_profiler);
    }

    #[test]
    fn key_c_cycles_the_selected_groups_size_classes() {
        let mut c = Controls::default();
        assert_eq!(c.shown_class(&[0, 2]), 0);
        press_with(&mut c, 1, &[0, 2], &[Key::C]);
        assert_eq!(
            c.shown_class(&[0, 2]),
            2,
            "class 1 is skipped: none in the group"
        );
        press_with(&mut c, 1, &[0, 2], &[Key::C]);
        assert_eq!(c.shown_class(&[0, 2]), 0, "wraps round");
        // A group of big units only: its class is shown whatever was chosen before.
        assert_eq!(c.shown_class(&[1]), 1);
        press_with(&mut c, 1, &[1], &[Key::C]);
        assert_eq!(c.class, 1);
        assert_eq!(c.shown_class(&[]), 0, "no ground units: class 0");
        press_with(&mut c, 1, &[], &[Key::C]);
        assert_eq!(c.class, 0);
    }

    #[test]
    fn keys_ask_for_steps_spawns_and_fitting() {
        let mut c = Controls::default();
        assert_eq!(press(&mut c, 1, &[Key::N]), vec![Request::Step]);
        assert_eq!(press(&mut c, 1, &[Key::Period]), vec![Request::Step]);
        assert_eq!(press(&mut c, 1, &[Key::S]), vec![Request::Spawn]);
        assert_eq!(press(&mut c, 1, &[Key::O]), vec![Request::Formation]);
        assert_eq!(press(&mut c, 1, &[Key::R]), vec![Request::FitView]);
        assert!(press(&mut c, 1, &[Key::Q]).is_empty());
    }

    #[test]
    fn speed_keys_move_along_the_speeds_and_stop_at_the_ends() {
        let mut c = Controls::default();
        assert_eq!(c.steps_per_frame(), 1.0);
        press(&mut c, 1, &[Key::Plus]);
        assert_eq!(c.steps_per_frame(), 2.0);
        for _ in 0..10 {
            press(&mut c, 1, &[Key::Equals]);
        }
        assert_eq!(c.steps_per_frame(), SPEEDS[SPEEDS.len() - 1]);
        for _ in 0..20 {
            press(&mut c, 1, &[Key::Minus]);
        }
        assert_eq!(c.steps_per_frame(), SPEEDS[0]);
    }
}
