//! The eframe app of `horde view`: steps the plan, draws it, turns the mouse and keys into
//! actions on the simulation, and (with `--frames`/`--screenshot`) runs a fixed number of
//! frames, saves the window as a PNG and closes. What it shows of the map is `scene.rs`.

mod scene;

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;

use eframe::egui::{self, TextureHandle, TextureOptions};
use horde::components::{Agent, Position, Steering, Stun};
use horde::fields::FieldId;
use horde::{Layer, Terrain};
use image::{ImageFormat, RgbImage};

use super::ViewArgs;
use super::camera::Camera;
use super::input::{Action, apply};
use super::mesh::{UnitDot, disc_image, terrain_image, texel_stride};
use super::panel::{Controls, Request, Stats, keys, side_panel};
use crate::AppError;
use crate::load::{check_threads, load_plan};
use crate::render::group_classes;
use horde_scenario::Overrides;
use horde_scenario::Plan;

/// Frames `--screenshot` waits for when `--frames` is not given.
const DEFAULT_SCREENSHOT_FRAMES: u32 = 120;
/// Frames to wait for a requested screenshot before giving up.
const SCREENSHOT_WAIT: u32 = 120;
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
mod tests;
