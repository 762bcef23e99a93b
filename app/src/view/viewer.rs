//! The eframe app of `horde view`: steps the plan, draws it, turns the mouse and keys into
//! actions on the simulation, and (with `--frames`/`--screenshot`) runs a fixed number of
//! frames, saves the window as a PNG and closes.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;

use eframe::egui::{
    self, Color32, Mesh, Rect, Sense, Shape, Stroke, TextureHandle, TextureOptions, pos2,
};
use horde::components::{Agent, Position, Steering, Stun};
use horde::fields::FieldId;
use horde::glam::Vec2;
use horde::{Layer, Terrain};
use image::{ImageFormat, RgbImage};

use super::ViewArgs;
use super::camera::Camera;
use super::input::{Action, apply};
use super::mesh::{
    UnitDot, colour, disc_image, flow_arrows, heat_image, segments_mesh, terrain_image,
    texel_stride, unit_mesh,
};
use super::panel::{Controls, Request, Stats, keys, side_panel};
use crate::AppError;
use crate::load::{check_threads, load_plan};
use crate::render::{force_colour, group_classes, unit_colour};
use horde_scenario::Overrides;
use horde_scenario::Plan;

/// Frames `--screenshot` waits for when `--frames` is not given.
const DEFAULT_SCREENSHOT_FRAMES: u32 = 120;
/// Frames to wait for a requested screenshot before giving up.
const SCREENSHOT_WAIT: u32 = 120;
/// Arrow spacing of the flow overlay, in points.
const ARROW_SPACING: f32 = 22.0;
/// Colour of flow arrows.
const ARROW_COLOUR: Color32 = Color32::from_rgb(30, 25, 20);
/// Most simulation steps one drawn frame runs (keeps the window responsive at high speed).
const MAX_STEPS_PER_FRAME: u32 = 8;

/// How the window's run ended, read after eframe returns.
#[derive(Debug, Default)]
struct Finish {
    error: Option<AppError>,
    screenshot_saved: bool,
}

/// Runs `horde view` (see the module docs of `view`).
pub fn run(args: &ViewArgs) -> Result<(), AppError> {
    check_threads(args.threads)?;
    if args.frames == Some(0) {
        return Err(AppError::BadInput("--frames must be at least 1".into()));
    }
    if let Some(path) = &args.screenshot {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !ext.eq_ignore_ascii_case("png") {
            return Err(AppError::BadInput(format!(
                "{}: the screenshot must end in .png",
                path.display()
            )));
        }
        crate::guard::check_output("--screenshot", path)?;
    }
    let overrides = Overrides {
        threads: args.threads,
        seed: args.seed,
        frames: None,
    };
    let plan = load_plan(args.scenario.as_deref(), &overrides, args.units)?;
    let exit_after = match (&args.screenshot, args.frames) {
        (_, Some(n)) => Some(n),
        (Some(_), None) => Some(DEFAULT_SCREENSHOT_FRAMES),
        (None, None) => None,
    };
    let finish = Rc::new(RefCell::new(Finish::default()));
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title(format!(
                "horde view: {}",
                crate::guard::printable(&plan.name)
            ))
            .with_inner_size([args.size.width as f32, args.size.height as f32]),
        ..Default::default()
    };
    let shared = Rc::clone(&finish);
    let screenshot = args.screenshot.clone();
    let controls = Controls {
        show_flow: args.flow,
        show_heat: args.heat,
        show_profiler: args.profiler,
        ..Controls::default()
    };
    eframe::run_native(
        "horde view",
        options,
        Box::new(move |cc| {
            Ok(Box::new(Viewer::new(
                &cc.egui_ctx,
                plan,
                controls,
                exit_after,
                screenshot,
                shared,
            )))
        }),
    )
    .map_err(|e| {
        AppError::Failed(format!(
            "cannot open the viewer window: {e} (the viewer needs an X server: set DISPLAY; \
             Wayland desktops provide one through XWayland)"
        ))
    })?;
    let mut finish = finish.borrow_mut();
    if let Some(err) = finish.error.take() {
        return Err(err);
    }
    if let Some(path) = &args.screenshot
        && !finish.screenshot_saved
    {
        return Err(AppError::Failed(format!(
            "the window closed before the screenshot {} was saved",
            path.display()
        )));
    }
    Ok(())
}

/// Saves a screenshot (RGBA, premultiplied but opaque for a window) as an RGB PNG.
fn save_screenshot(image: &egui::ColorImage, path: &Path) -> Result<(), AppError> {
    let [w, h] = image.size;
    let (Ok(w32), Ok(h32)) = (u32::try_from(w), u32::try_from(h)) else {
        return Err(AppError::Failed(format!("screenshot of {w}x{h} pixels")));
    };
    let rgb = RgbImage::from_fn(w32, h32, |x, y| {
        let [r, g, b, _] = image.pixels[y as usize * w + x as usize].to_array();
        image::Rgb([r, g, b])
    });
    rgb.save_with_format(path, ImageFormat::Png)
        .map_err(|e| AppError::Failed(format!("{}: {e}", path.display())))
}

/// Which field the heat-map texture shows, to rebuild it only when that changes.
type HeatKey = (u16, FieldId, Option<u64>);

struct Viewer {
    plan: Plan,
    camera: Camera,
    fitted: bool,
    controls: Controls,
    stats: Stats,
    disc: TextureHandle,
    terrain: TextureHandle,
    terrain_seen: (Vec<Terrain>, u64),
    /// Cells per texel side of the terrain and heat textures (see `texel_stride`).
    stride: u32,
    heat: Option<(HeatKey, TextureHandle)>,
    dots: Vec<UnitDot>,
    step_debt: f32,
    /// The frame whose timed events were applied last.
    events_done: Option<u32>,
    drawn: u32,
    exit_after: Option<u32>,
    screenshot: Option<PathBuf>,
    screenshot_asked: Option<u32>,
    closing: bool,
    finish: Rc<RefCell<Finish>>,
    last_frame: Instant,
}

impl Viewer {
    fn new(
        ctx: &egui::Context,
        plan: Plan,
        controls: Controls,
        exit_after: Option<u32>,
        screenshot: Option<PathBuf>,
        finish: Rc<RefCell<Finish>>,
    ) -> Self {
        puffin::set_scopes_on(true);
        let max_side = ctx.input(|i| i.max_texture_side);
        let stride = {
            let map = plan.sim.map();
            texel_stride(map.width(), map.height(), max_side)
        };
        let (terrain, terrain_seen) = {
            let map = plan.sim.map();
            let image = terrain_image(&map, stride);
            let tex = ctx.load_texture("terrain", image, TextureOptions::NEAREST);
            let seen = (
                map.terrain().to_vec(),
                map.cost_field(Layer::Ground).version(),
            );
            (tex, seen)
        };
        let disc = ctx.load_texture("unit-disc", disc_image(), TextureOptions::LINEAR);
        Self {
            plan,
            camera: Camera::default(),
            fitted: false,
            controls,
            stats: Stats::default(),
            disc,
            terrain,
            terrain_seen,
            stride,
            heat: None,
            dots: Vec::new(),
            step_debt: 0.0,
            events_done: None,
            drawn: 0,
            exit_after,
            screenshot,
            screenshot_asked: None,
            closing: false,
            finish,
            last_frame: Instant::now(),
        }
    }

    /// One simulation step (with the plan's timed events), reporting failures in the panel.
    fn step(&mut self) {
        puffin::profile_function!();
        let frame = u32::try_from(self.plan.sim.frame()).unwrap_or(u32::MAX);
        // A frame whose step failed keeps its number: its events must not happen twice.
        let events = if self.events_done == Some(frame) {
            Ok(())
        } else {
            self.events_done = Some(frame);
            self.plan.apply_events(frame).map(|reaches| {
                // A goal change that cuts units off says so in the panel.
                if let Some(r) = reaches.iter().find(|r| !r.unreachable.is_empty()) {
                    self.controls.message = format!(
                        "{} units of {} cannot reach the new goal",
                        r.unreachable.len(),
                        self.plan.group_name(r.group)
                    );
                }
            })
        };
        let outcome = events.and_then(|()| self.plan.sim.step(self.plan.dt).map(|_| ()));
        if let Err(e) = outcome {
            self.controls.message = format!("step failed: {e} (paused)");
            self.controls.paused = true;
        }
    }

    fn simulate(&mut self, requests: &[Request]) {
        let started = Instant::now();
        if requests.contains(&Request::Step) {
            self.controls.paused = true;
            self.step();
        }
        if !self.controls.paused {
            // In a fixed run every drawn frame is exactly one step.
            let speed = if self.exit_after.is_some() {
                1.0
            } else {
                self.controls.steps_per_frame()
            };
            self.step_debt += speed;
            let mut steps = 0;
            while self.step_debt >= 1.0 && steps < MAX_STEPS_PER_FRAME && !self.controls.paused {
                self.step();
                self.step_debt -= 1.0;
                steps += 1;
            }
            self.step_debt = self.step_debt.min(1.0);
        }
        self.stats.step_ms = started.elapsed().as_secs_f32() * 1e3;
    }

    /// Carries out `actions`, the last outcome going to the panel's message line.
    fn act(&mut self, actions: Vec<Action>) {
        for action in actions {
            self.controls.message = match apply(&mut self.plan.sim, &action) {
                Ok(msg) => msg,
                Err(msg) => format!("refused: {msg}"),
            };
        }
    }

    /// Reads the units into `dots` and the counts into `stats` in one pass.
    fn gather(&mut self) {
        puffin::profile_function!();
        let sim = &self.plan.sim;
        self.dots.clear();
        let (mut arrived, mut stunned) = (0, 0);
        let mut query = sim.world().query::<(&Position, &Agent, &Stun, &Steering)>();
        for (p, a, s, st) in query.iter() {
            let is_stunned = s.0 > 0.0;
            arrived += usize::from(st.arrived);
            stunned += usize::from(is_stunned);
            self.dots.push(UnitDot {
                position: p.0,
                radius: a.radius,
                group: a.group.0,
                stunned: is_stunned,
                arrived: st.arrived,
            });
        }
        self.stats.units = self.dots.len();
        self.stats.arrived = arrived;
        self.stats.stunned = stunned;
        self.stats.groups = sim.horde().groups().len();
        self.stats.classes = group_classes(sim, self.controls.tools.group.0);
        self.stats.frame = sim.frame();
        self.stats.stages = sim.horde().stage_times();
    }

    /// Re-uploads the terrain texture when the map changed (walls painted or destroyed).
    fn refresh_terrain(&mut self) {
        let map = self.plan.sim.map();
        let version = map.cost_field(Layer::Ground).version();
        if self.terrain_seen.1 != version || self.terrain_seen.0 != map.terrain() {
            self.terrain
                .set(terrain_image(&map, self.stride), TextureOptions::NEAREST);
            self.terrain_seen = (map.terrain().to_vec(), version);
        }
    }

    /// The heat-map texture of the selected group's ground field, rebuilt when it changed.
    fn heat_texture(&mut self, ctx: &egui::Context) -> Option<egui::TextureId> {
        let group = self.controls.tools.group.0;
        let class = self.controls.shown_class(&self.stats.classes);
        let horde = self.plan.sim.horde();
        let id = horde.groups().sized_field(group, Layer::Ground, class)?;
        let fields = horde.fields();
        let nav = fields.get(id);
        let key = (group, id, nav.built_from());
        match &mut self.heat {
            Some((k, tex)) if *k == key => Some(tex.id()),
            Some((k, tex)) => {
                tex.set(
                    heat_image(nav.integration(), self.stride),
                    TextureOptions::NEAREST,
                );
                *k = key;
                Some(tex.id())
            }
            None => {
                let tex = ctx.load_texture(
                    "heat",
                    heat_image(nav.integration(), self.stride),
                    TextureOptions::NEAREST,
                );
                let id = tex.id();
                self.heat = Some((key, tex));
                Some(id)
            }
        }
    }

    /// The map view: mouse handling, then drawing.
    fn map_view(&mut self, ctx: &egui::Context, ui: &mut egui::Ui, requests: &[Request]) {
        let (view, response) = ui.allocate_exact_size(ui.available_size(), Sense::click_and_drag());
        let (origin, size) = {
            let map = self.plan.sim.map();
            (map.grid().origin(), map.grid().world_size())
        };
        if !self.fitted || requests.contains(&Request::FitView) {
            self.camera = Camera::fit(origin, origin + size, view);
            self.fitted = true;
        }
        // The last known position: a drag released outside the window still ends there.
        let pointer = ctx.input(|i| i.pointer.latest_pos());
        let over_map = response.hovered();
        // Zoom about the cursor, pan with the right or middle button.
        if over_map && let Some(p) = pointer {
            let (scroll, pinch) = ctx.input(|i| (i.smooth_scroll_delta.y, i.zoom_delta()));
            let factor = pinch * (scroll * 0.0015).exp();
            if factor != 1.0 {
                self.camera.zoom_about(p, factor, view);
            }
        }
        if response.dragged_by(egui::PointerButton::Secondary)
            || response.dragged_by(egui::PointerButton::Middle)
        {
            let d = response.drag_delta();
            self.camera.pan(d.x, d.y);
        }
        // The left button's tool.
        let (pressed, down, released) = ctx.input(|i| {
            (
                i.pointer.primary_pressed(),
                i.pointer.primary_down(),
                i.pointer.primary_released(),
            )
        });
        let world = pointer.map(|p| self.camera.screen_to_world(p, view));
        let mut actions = Vec::new();
        {
            // The map is only read here; the actions change it afterwards.
            let map = self.plan.sim.map();
            let tools = &mut self.controls.tools;
            if let Some(w) = world {
                if pressed && over_map {
                    actions.extend(tools.press(&map, w));
                } else if down && tools.is_pressed() {
                    actions.extend(tools.drag(&map, w));
                }
                if released && tools.is_pressed() {
                    match tools.release(&map, w) {
                        Ok(a) => actions.extend(a),
                        Err(msg) => self.controls.message = format!("refused: {msg}"),
                    }
                }
            }
            self.stats.hover = world.filter(|_| over_map).and_then(|w| {
                let cell = map.grid().cell_at(w)?;
                Some(format!(
                    "cell {cell}: {}, ground cost {}",
                    map.terrain_at(cell).name(),
                    map.cost_field(Layer::Ground).get(cell)
                ))
            });
        }
        if requests.contains(&Request::Spawn) {
            let at = world
                .filter(|_| over_map)
                .unwrap_or_else(|| self.camera.screen_to_world(view.center(), view));
            actions.push(Action::Spawn {
                group: self.controls.tools.group,
                count: self.controls.spawn_count,
                centre: at,
            });
        }
        self.act(actions);
        self.draw(ctx, ui, view, origin);
    }

    fn draw(&mut self, ctx: &egui::Context, ui: &egui::Ui, view: Rect, origin: Vec2) {
        puffin::profile_function!();
        let started = Instant::now();
        self.refresh_terrain();
        self.gather();
        let painter = ui.painter_at(view);
        painter.rect_filled(view, 0.0, Color32::from_gray(24));
        // The textures cover whole `stride`-cell blocks: up to a block past the map's edge.
        let covered = {
            let map = self.plan.sim.map();
            let grid = map.grid();
            let cells = |n: u32| (n.div_ceil(self.stride) * self.stride) as f32;
            Vec2::new(cells(grid.width()), cells(grid.height())) * grid.cell_size()
        };
        let map_rect = Rect::from_min_max(
            self.camera.world_to_screen(origin, view),
            self.camera.world_to_screen(origin + covered, view),
        );
        let uv = Rect::from_min_max(pos2(0.0, 0.0), pos2(1.0, 1.0));
        painter.image(self.terrain.id(), map_rect, uv, Color32::WHITE);
        if self.controls.show_heat
            && let Some(tex) = self.heat_texture(ctx)
        {
            painter.image(tex, map_rect, uv, Color32::WHITE);
        }
        if self.controls.show_flow {
            let horde = self.plan.sim.horde();
            let class = self.controls.shown_class(&self.stats.classes);
            let id = horde
                .groups()
                .sized_field(self.controls.tools.group.0, Layer::Ground, class);
            if let Some(id) = id {
                let fields = horde.fields();
                let map = self.plan.sim.map();
                let segs = flow_arrows(
                    fields.get(id).flow(),
                    map.grid(),
                    &self.camera,
                    view,
                    ARROW_SPACING,
                );
                painter.add(Shape::mesh(segments_mesh(&segs, 1.5, ARROW_COLOUR)));
            }
        }
        // Goals: the box around each group's goal cells, in the group's colour.
        {
            let horde = self.plan.sim.horde();
            let groups = horde.groups();
            let grid = *self.plan.sim.map().grid();
            for g in 0..groups.len() {
                let Some(group) = groups.get(g as u16) else {
                    continue;
                };
                let cells = group.goal.cells();
                let (lo, hi) = cells.iter().fold((cells[0], cells[0]), |(lo, hi), c| {
                    (
                        horde::Cell::new(lo.x.min(c.x), lo.y.min(c.y)),
                        horde::Cell::new(hi.x.max(c.x), hi.y.max(c.y)),
                    )
                });
                let half = Vec2::splat(grid.cell_size() * 0.5);
                let a = self
                    .camera
                    .world_to_screen(grid.cell_centre(lo) - half, view);
                let b = self
                    .camera
                    .world_to_screen(grid.cell_centre(hi) + half, view);
                let width = if g == usize::from(self.controls.tools.group.0) {
                    3.0
                } else {
                    1.5
                };
                let stroke = Stroke::new(width, colour(unit_colour(g as u16, false)));
                painter.rect_stroke(
                    Rect::from_two_pos(a, b),
                    0.0,
                    stroke,
                    egui::StrokeKind::Outside,
                );
            }
        }
        {
            puffin::profile_scope!("unit mesh");
            let mesh: Mesh = unit_mesh(&self.dots, &self.camera, view, self.disc.id());
            painter.add(Shape::mesh(mesh));
        }
        // Force fields as rings with a dot at the centre.
        for (_, f) in self.plan.sim.horde().forces().iter() {
            let c = self.camera.world_to_screen(f.position(), view);
            let col = colour(force_colour(f.kind()));
            painter.circle_stroke(
                c,
                self.camera.len_to_screen(f.radius()),
                Stroke::new(2.0, col),
            );
            painter.circle_filled(c, 3.0, col);
        }
        if let Some((a, b)) = self.controls.tools.goal_drag() {
            let rect = Rect::from_two_pos(
                self.camera.world_to_screen(a, view),
                self.camera.world_to_screen(b, view),
            );
            let col = colour(unit_colour(self.controls.tools.group.0, false));
            painter.rect_stroke(rect, 0.0, Stroke::new(1.5, col), egui::StrokeKind::Middle);
        }
        let tool = format!(
            "{} | group {} | {}",
            self.controls.tools.tool.name(),
            self.controls.tools.group.0,
            if self.controls.paused {
                "paused"
            } else {
                "running"
            }
        );
        painter.text(
            view.left_top() + egui::vec2(8.0, 6.0),
            egui::Align2::LEFT_TOP,
            tool,
            egui::FontId::proportional(14.0),
            Color32::WHITE,
        );
        self.stats.draw_ms = started.elapsed().as_secs_f32() * 1e3;
    }

    /// `--frames`/`--screenshot`: asks for the screenshot, saves it when it comes, closes.
    fn fixed_run(&mut self, ctx: &egui::Context) {
        let Some(limit) = self.exit_after else {
            return;
        };
        if let Some(path) = self.screenshot.clone() {
            let shot = ctx.input(|i| {
                i.raw.events.iter().find_map(|e| match e {
                    egui::Event::Screenshot { image, .. } => Some(image.clone()),
                    _ => None,
                })
            });
            if let Some(image) = shot {
                let mut finish = self.finish.borrow_mut();
                match save_screenshot(&image, &path) {
                    Ok(()) => {
                        finish.screenshot_saved = true;
                        println!(
                            "wrote {} ({}x{} pixels, frame {} of {}, {} units)",
                            path.display(),
                            image.size[0],
                            image.size[1],
                            self.plan.sim.frame(),
                            crate::guard::printable(&self.plan.name),
                            self.plan.sim.unit_count()
                        );
                    }
                    Err(e) => finish.error = Some(e),
                }
                drop(finish);
                self.close(ctx);
                return;
            }
            match self.screenshot_asked {
                None if self.drawn >= limit => {
                    ctx.send_viewport_cmd(egui::ViewportCommand::Screenshot(
                        egui::UserData::default(),
                    ));
                    self.screenshot_asked = Some(self.drawn);
                }
                Some(at) if self.drawn > at + SCREENSHOT_WAIT => {
                    self.finish.borrow_mut().error = Some(AppError::Failed(format!(
                        "no screenshot came back within {SCREENSHOT_WAIT} frames"
                    )));
                    self.close(ctx);
                }
                _ => {}
            }
        } else if self.drawn >= limit {
            self.close(ctx);
        }
    }

    fn close(&mut self, ctx: &egui::Context) {
        if !self.closing {
            self.closing = true;
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
    }
}

impl eframe::App for Viewer {
    fn update(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        puffin::GlobalProfiler::lock().new_frame();
        puffin::profile_function!();
        let now = Instant::now();
        let dt = now.duration_since(self.last_frame).as_secs_f32();
        self.last_frame = now;
        if dt > 0.0 {
            let fps = 1.0 / dt;
            self.stats.fps = if self.stats.fps == 0.0 {
                fps
            } else {
                self.stats.fps + (fps - self.stats.fps) * 0.1
            };
        }
        let mut requests = keys(
            ctx,
            &mut self.controls,
            self.stats.groups,
            &self.stats.classes,
        );
        requests.extend(side_panel(
            ctx,
            &mut self.controls,
            &self.stats,
            &self.plan.name,
        ));
        if self.screenshot_asked.is_none() && !self.closing {
            self.simulate(&requests);
        }
        egui::CentralPanel::default()
            .frame(egui::Frame::NONE)
            .show(ctx, |ui| self.map_view(ctx, ui, &requests));
        if self.controls.show_profiler {
            self.controls.show_profiler = puffin_egui::profiler_window(ctx);
        }
        self.drawn += 1;
        self.fixed_run(ctx);
        ctx.request_repaint();
    }
}

#[cfg(test)]
mod tests {
    //! The viewer without a window: egui runs headless on synthetic input, so the whole path
    //! from pointer events to the simulation is exercised.
    use super::*;
    use crate::view::input::Tool;
    use egui::{Event, Modifiers, PointerButton, RawInput};
    use horde::fields::CostTable;
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
    }

    /// Index of the fastest speed.
    const SPEEDS_FAST: usize = crate::view::panel::SPEEDS.len() - 1;
}
