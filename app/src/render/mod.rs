//! Pictures of maps, fields and running simulations, and `horde render`.
//!
//! Everything is drawn with plain pixel loops on an [`RgbImage`] through a [`Canvas`], which
//! maps the map's cells onto pixels: terrain coloured by kind (darker where it costs more to
//! walk), flow arrows, units as dots coloured by group (stunned units white), force fields as
//! rings. [`render_plan`] runs a [`Plan`] and writes the last frame as a PNG or every K-th
//! frame as an animated GIF.

use std::path::{Path, PathBuf};

use clap::Args;
use horde::Simulation;
use horde::fields::{FlowField, WALL};
use horde::glam::Vec2;
use horde::{Cell, ForceKind, Grid, Layer, Map, Terrain};
use image::{ImageFormat, Rgb, RgbImage};

use crate::AppError;
use crate::load::{check_threads, load_plan};

mod picture;
use horde_scenario::Overrides;
use horde_scenario::Plan;
pub use picture::{GifWriter, PictureKind};

/// Narrowest picture `--size` accepts, in pixels.
pub const MIN_WIDTH: u32 = 16;
/// Widest (and tallest) picture, in pixels; also keeps GIF sides within their 16-bit limit.
pub const MAX_SIDE: u32 = 4096;
/// Most frames a GIF may hold (raise `--every` for long runs).
pub const MAX_GIF_FRAMES: u32 = 500;
/// Width of `horde render` pictures when `--size` is not given.
pub const DEFAULT_RENDER_WIDTH: u32 = 512;
/// Frames a GIF aims for when `--every` is not given.
const GIF_TARGET_FRAMES: u32 = 40;

/// Colour of arrows.
const ARROW: [u8; 3] = [60, 50, 40];
/// Colour of the stripes over cells a size class cannot enter although its layer can
/// (too close to a wall for its bodies).
pub const CLASS_BLOCKED: [u8; 3] = [200, 0, 150];
/// Colour of stunned units.
const STUNNED: [u8; 3] = [255, 255, 255];
/// Outline of stunned units.
const OUTLINE: [u8; 3] = [0, 0, 0];
/// Unit colours by group (cycled).
const GROUP_COLOURS: [[u8; 3]; 8] = [
    [220, 30, 30],
    [150, 40, 200],
    [255, 130, 0],
    [0, 190, 190],
    [230, 60, 160],
    [110, 200, 30],
    [100, 60, 20],
    [0, 90, 255],
];

/// The colour of a terrain kind, before shading by cost.
#[must_use]
pub const fn terrain_colour(terrain: Terrain) -> [u8; 3] {
    match terrain {
        Terrain::Empty => [226, 216, 188],
        Terrain::BrickWall => [150, 72, 50],
        Terrain::SteelPlate => [112, 118, 128],
        Terrain::Forest => [70, 140, 70],
        Terrain::Water => [70, 120, 200],
        Terrain::Snow => [200, 222, 236],
        Terrain::Lair => [205, 165, 30],
        Terrain::Swamp => [130, 140, 80],
        Terrain::Blocked => [40, 40, 40],
    }
}

/// `colour` darkened for a ground cost: cost 1 (and walls, which have their own colour) keep
/// it; each extra cost step takes 12% off, down to 55%.
#[must_use]
pub fn shade_for_cost(colour: [u8; 3], cost: u8) -> [u8; 3] {
    if cost <= 1 || cost == WALL {
        return colour;
    }
    let factor = (1.0 - 0.12 * f32::from(cost - 1)).max(0.55);
    colour.map(|c| (f32::from(c) * factor).round() as u8)
}

/// Unit colours by status with `horde render --status`: arrived, settled, moving, blocked,
/// unreachable.
pub const STATUS_COLOURS: [[u8; 3]; 5] = [
    [20, 170, 40],
    [30, 90, 230],
    [90, 90, 90],
    [230, 20, 20],
    [200, 0, 200],
];

/// Colour of goal cells with `horde render --status`.
const GOAL_TINT: [u8; 3] = [170, 235, 160];

/// The colour of a unit of `status` ([`STATUS_COLOURS`]).
#[must_use]
pub fn status_colour(status: horde::UnitStatus) -> [u8; 3] {
    use horde::UnitStatus as S;
    STATUS_COLOURS[match status {
        S::Arrived => 0,
        S::Settled => 1,
        S::Moving => 2,
        S::Blocked => 3,
        S::Unreachable => 4,
    }]
}

/// The colour of units of `group`; stunned units are white whatever their group.
#[must_use]
pub fn unit_colour(group: u16, stunned: bool) -> [u8; 3] {
    if stunned {
        STUNNED
    } else {
        GROUP_COLOURS[usize::from(group) % GROUP_COLOURS.len()]
    }
}

/// The ring colour of a force field kind.
#[must_use]
pub const fn force_colour(kind: ForceKind) -> [u8; 3] {
    match kind {
        ForceKind::Explosion => [255, 90, 0],
        ForceKind::Attractor => [90, 0, 140],
        ForceKind::Push { .. } => [240, 200, 0],
        ForceKind::Vortex { .. } => [0, 150, 220],
    }
}

/// The default picture width for a map of `width x height` cells: up to 8 pixels per cell,
/// the longer side at most 1024 pixels, the width at least [`MIN_WIDTH`].
#[must_use]
pub fn default_width(width: u32, height: u32) -> u32 {
    let longest = width.max(height).max(1) as f32;
    let px_per_cell = (1024.0 / longest).min(8.0);
    ((width as f32 * px_per_cell).round() as u32).clamp(MIN_WIDTH, MAX_SIDE)
}

/// An image showing a map: `px_per_cell` pixels per cell, the map's grid placing world
/// positions.
#[derive(Clone, Debug)]
pub struct Canvas {
    /// The picture.
    pub image: RgbImage,
    px_per_cell: f32,
    grid: Grid,
}

impl Canvas {
    /// A blank canvas `width` pixels wide showing `grid`; the height keeps the aspect ratio.
    ///
    /// # Errors
    /// [`AppError::BadInput`] when `width` is below [`MIN_WIDTH`] or either side would exceed
    /// [`MAX_SIDE`].
    pub fn new(grid: &Grid, width: u32) -> Result<Self, AppError> {
        if !(MIN_WIDTH..=MAX_SIDE).contains(&width) {
            return Err(AppError::BadInput(format!(
                "picture width {width} must be in {MIN_WIDTH}..={MAX_SIDE} pixels"
            )));
        }
        let px_per_cell = width as f32 / grid.width().max(1) as f32;
        let height = (grid.height() as f32 * px_per_cell).round().max(1.0);
        if height > MAX_SIDE as f32 {
            return Err(AppError::BadInput(format!(
                "a {width}-pixel-wide picture of a {}x{} map would be {height} pixels tall \
                 (at most {MAX_SIDE}): use a smaller --size",
                grid.width(),
                grid.height()
            )));
        }
        Ok(Self {
            image: RgbImage::new(width, height as u32),
            px_per_cell,
            grid: *grid,
        })
    }

    /// Pixels per cell side.
    #[must_use]
    pub fn px_per_cell(&self) -> f32 {
        self.px_per_cell
    }

    /// Pixel position of world position `pos`.
    #[must_use]
    pub fn to_px(&self, pos: Vec2) -> Vec2 {
        (pos - self.grid.origin()) / self.grid.cell_size() * self.px_per_cell
    }

    /// Pixel length of a world length.
    #[must_use]
    pub fn len_px(&self, len: f32) -> f32 {
        len / self.grid.cell_size() * self.px_per_cell
    }

    /// Fills every pixel with the colour `colour_of` gives the cell under the pixel's centre.
    pub fn fill_cells(&mut self, mut colour_of: impl FnMut(Cell) -> [u8; 3]) {
        self.paint_cells(|_, _, cell| Some(colour_of(cell)));
    }

    /// Draws diagonal stripes of `colour` (every other pair of pixels) over the cells
    /// `marked` picks, leaving the rest of their pixels as they are.
    pub fn hatch_cells(&mut self, mut marked: impl FnMut(Cell) -> bool, colour: [u8; 3]) {
        self.paint_cells(|px, py, cell| ((px + py) % 4 < 2 && marked(cell)).then_some(colour));
    }

    /// Sets every pixel `(px, py)` to the colour `colour_of(px, py, cell)` gives, `cell`
    /// being the cell under the pixel's centre; `None` leaves the pixel as it is.
    fn paint_cells(&mut self, mut colour_of: impl FnMut(u32, u32, Cell) -> Option<[u8; 3]>) {
        let (w, h) = (self.grid.width(), self.grid.height());
        if w == 0 || h == 0 {
            return;
        }
        let inv = 1.0 / self.px_per_cell;
        let cols: Vec<u32> = (0..self.image.width())
            .map(|px| (((px as f32 + 0.5) * inv) as u32).min(w - 1))
            .collect();
        for py in 0..self.image.height() {
            let y = (((py as f32 + 0.5) * inv) as u32).min(h - 1);
            for (px, &x) in cols.iter().enumerate() {
                if let Some(c) = colour_of(px as u32, py, Cell::new(x, y)) {
                    self.image.put_pixel(px as u32, py, Rgb(c));
                }
            }
        }
    }

    /// Stripes (in [`CLASS_BLOCKED`]) over the cells open on `layer` that size class `class`
    /// cannot enter: too close to a wall for its bodies (docs/behaviour.md, "Unit sizes").
    /// Returns how many cells that is; nothing for class 0 or a class the map has not
    /// prepared.
    pub fn draw_class_blocked(&mut self, map: &Map, layer: Layer, class: u8) -> usize {
        let sized = match map.prepared_class_cost_field(layer, class) {
            Some(sized) if class != 0 => sized,
            _ => return 0,
        };
        let open = map.cost_field(layer);
        let blocked = |c: Cell| open.get(c) != WALL && sized.get(c) == WALL;
        let grid = *map.grid();
        let count = (0..grid.len()).filter(|&i| blocked(grid.cell(i))).count();
        self.hatch_cells(blocked, CLASS_BLOCKED);
        count
    }

    /// Draws the terrain: colour by kind, darker where the ground cost is higher.
    pub fn draw_terrain(&mut self, map: &Map) {
        let cost = map.cost_field(Layer::Ground);
        self.fill_cells(|c| shade_for_cost(terrain_colour(map.terrain_at(c)), cost.get(c)));
    }

    /// Draws the flow directions as arrows, one every few cells so that arrows stay about
    /// 16 pixels apart.
    pub fn draw_flow(&mut self, flow: &FlowField, colour: [u8; 3]) {
        let step = (16.0 / self.px_per_cell).ceil().max(1.0) as u32;
        let len = (step as f32 * self.px_per_cell * 0.7).max(3.0);
        let grid = self.grid;
        for y in (step / 2..grid.height()).step_by(step as usize) {
            for x in (step / 2..grid.width()).step_by(step as usize) {
                let centre = grid.cell_centre(Cell::new(x, y));
                let dir = flow.sample(&grid, centre);
                if dir != Vec2::ZERO {
                    self.arrow(self.to_px(centre), dir, len, colour);
                }
            }
        }
    }

    /// Draws every unit of `sim` as a dot coloured by group (or, with `status`, by
    /// [`status_colour`]); stunned units are white with a black outline.
    pub fn draw_units(&mut self, sim: &Simulation, status: bool) {
        for u in sim.units() {
            let centre = self.to_px(u.position);
            let r = self.len_px(u.radius).max(0.7);
            let stunned = u.stun > 0.0;
            if stunned {
                self.disc(centre, r + 1.0, OUTLINE);
            }
            let colour = if status && !stunned {
                status_colour(u.status)
            } else {
                unit_colour(u.group.0, stunned)
            };
            self.disc(centre, r, colour);
        }
    }

    /// Tints every group's goal cells.
    pub fn draw_goals(&mut self, sim: &Simulation) {
        let horde = sim.horde();
        let groups = horde.groups();
        let mut goal = vec![false; sim.map().grid().len()];
        let grid = *sim.map().grid();
        for g in 0..groups.len() as u16 {
            if let Some(group) = groups.get(g) {
                for &c in group.goal.cells() {
                    goal[grid.index(c)] = true;
                }
            }
        }
        self.paint_cells(|_, _, cell| goal[grid.index(cell)].then_some(GOAL_TINT));
    }

    /// Draws every formation of `sim`: its slots as small rings in its group's colour, its
    /// anchor as a ring with a tick along its heading (docs/behaviour.md, "Formations").
    pub fn draw_formations(&mut self, sim: &Simulation) {
        let horde = sim.horde();
        let formations = horde.formations();
        for (group, f) in formations.iter() {
            let colour = unit_colour(group, false);
            let r = self.len_px(f.radius * 0.5).max(1.5);
            for &t in &f.targets {
                let at = self.to_px(t);
                self.ring(at, r, 1.0, colour);
            }
            let anchor = self.to_px(f.anchor);
            let size = self.len_px(f.spacing).max(4.0);
            self.ring(anchor, size * 0.6, 1.5, OUTLINE);
            self.line(anchor, anchor + f.heading * size * 1.5, OUTLINE);
        }
    }

    /// Draws every active force field of `sim` as a ring of its radius with a dot at its
    /// centre.
    pub fn draw_forces(&mut self, sim: &Simulation) {
        let forces: Vec<_> = sim
            .horde()
            .forces()
            .iter()
            .map(|(_, f)| (f.position(), f.radius(), f.kind()))
            .collect();
        for (pos, radius, kind) in forces {
            let centre = self.to_px(pos);
            let colour = force_colour(kind);
            self.ring(centre, self.len_px(radius), 2.0, colour);
            self.disc(centre, 2.0, colour);
        }
    }

    /// Sets the pixel at `(x, y)` if it lies in the picture.
    pub fn plot(&mut self, x: i64, y: i64, colour: [u8; 3]) {
        if x >= 0
            && y >= 0
            && x < i64::from(self.image.width())
            && y < i64::from(self.image.height())
        {
            self.image.put_pixel(x as u32, y as u32, Rgb(colour));
        }
    }

    /// Fills the pixels whose centres lie within `radius` of `centre` (at least the pixel
    /// under `centre`).
    pub fn disc(&mut self, centre: Vec2, radius: f32, colour: [u8; 3]) {
        if !(centre.is_finite() && radius.is_finite()) {
            return;
        }
        self.plot(centre.x.floor() as i64, centre.y.floor() as i64, colour);
        let (x0, x1) = ((centre.x - radius).floor(), (centre.x + radius).ceil());
        let (y0, y1) = ((centre.y - radius).floor(), (centre.y + radius).ceil());
        let r2 = radius * radius;
        for y in y0 as i64..=y1 as i64 {
            for x in x0 as i64..=x1 as i64 {
                let d = Vec2::new(x as f32 + 0.5, y as f32 + 0.5) - centre;
                if d.length_squared() <= r2 {
                    self.plot(x, y, colour);
                }
            }
        }
    }

    /// Draws a circle of `radius` around `centre`, `thickness` pixels wide.
    pub fn ring(&mut self, centre: Vec2, radius: f32, thickness: f32, colour: [u8; 3]) {
        if !(centre.is_finite() && radius.is_finite() && thickness.is_finite()) {
            return;
        }
        let outer = radius + thickness * 0.5;
        let inner = (radius - thickness * 0.5).max(0.0);
        let (x0, x1) = ((centre.x - outer).floor(), (centre.x + outer).ceil());
        let (y0, y1) = ((centre.y - outer).floor(), (centre.y + outer).ceil());
        // Clip to the picture so that a huge ring costs no more than the picture.
        let (w, h) = (self.image.width() as f32, self.image.height() as f32);
        for y in y0.max(0.0) as i64..=y1.min(h) as i64 {
            for x in x0.max(0.0) as i64..=x1.min(w) as i64 {
                let d = (Vec2::new(x as f32 + 0.5, y as f32 + 0.5) - centre).length();
                if d >= inner && d <= outer {
                    self.plot(x, y, colour);
                }
            }
        }
    }

    /// Draws a one-pixel line from `a` to `b`.
    pub fn line(&mut self, a: Vec2, b: Vec2, colour: [u8; 3]) {
        if !(a.is_finite() && b.is_finite()) {
            return;
        }
        let d = b - a;
        let steps = d.x.abs().max(d.y.abs()).ceil().clamp(1.0, 1.0e5) as u32;
        for i in 0..=steps {
            let p = a + d * (i as f32 / steps as f32);
            self.plot(p.x.floor() as i64, p.y.floor() as i64, colour);
        }
    }

    /// Draws an arrow `len` pixels long centred on `centre`, pointing along `dir` (a unit
    /// vector in picture space, `+y` down).
    pub fn arrow(&mut self, centre: Vec2, dir: Vec2, len: f32, colour: [u8; 3]) {
        let half = dir * (len * 0.5);
        let (tail, tip) = (centre - half, centre + half);
        self.line(tail, tip, colour);
        let head = len * 0.35;
        for angle in [2.6_f32, -2.6] {
            let back = Vec2::from_angle(angle).rotate(dir);
            self.line(tip, tip + back * head, colour);
        }
    }

    /// Writes the picture as a PNG.
    ///
    /// # Errors
    /// [`AppError::Failed`] naming `path` when the file cannot be written.
    pub fn save_png(&self, path: &Path) -> Result<(), AppError> {
        self.image
            .save_with_format(path, ImageFormat::Png)
            .map_err(|e| AppError::Failed(format!("{}: {e}", path.display())))
    }
}

/// What [`render_plan`] draws and where.
#[derive(Clone, Debug)]
pub struct RenderOptions {
    /// The output: `.png` (the last frame) or `.gif` (every `every`-th frame).
    pub out: PathBuf,
    /// Frames to run; `None` = the plan's own count.
    pub frames: Option<u32>,
    /// GIF: keep every `every`-th frame; `None` = about 40 frames in all.
    pub every: Option<u32>,
    /// Draw group 0's ground flow field as arrows.
    pub flow: bool,
    /// With `flow`: the size class whose field is drawn (its blocked cells striped); `None`
    /// = the smallest class among group 0's ground units (see [`flow_class`]).
    pub class: Option<u8>,
    /// Picture width in pixels (the height keeps the map's aspect); `None` =
    /// [`DEFAULT_RENDER_WIDTH`].
    pub width: Option<u32>,
    /// Colour units by status instead of group, and tint the goal cells ([`STATUS_COLOURS`]).
    pub status: bool,
}

/// The size classes whose ground field the units of `group` follow, smallest first (none
/// when the group has no ground units).
#[must_use]
pub fn group_classes(sim: &Simulation, group: u16) -> Vec<u8> {
    let horde = sim.horde();
    let groups = horde.groups();
    (0..horde.config().size_classes)
        .filter(|&c| groups.sized_field(group, Layer::Ground, c).is_some())
        .collect()
}

/// The size class whose ground field of group 0 `horde render --flow` draws: `asked`
/// (`--class`), checked, or else the smallest class among group 0's ground units (`None`
/// when it has none: no arrows, as before size classes).
///
/// # Errors
/// [`AppError::BadInput`] when `asked` is not below the simulation's `size_classes`, or
/// group 0 has no ground units of that class (the message lists the classes it has).
pub fn flow_class(sim: &Simulation, asked: Option<u8>) -> Result<Option<u8>, AppError> {
    let classes = group_classes(sim, 0);
    let Some(class) = asked else {
        return Ok(classes.first().copied());
    };
    let count = sim.horde().config().size_classes;
    if class >= count {
        return Err(AppError::BadInput(format!(
            "--class {class} is out of range: this simulation has {count} size class{} \
             (0..={})",
            if count == 1 { "" } else { "es" },
            count.saturating_sub(1)
        )));
    }
    if classes.contains(&class) {
        return Ok(Some(class));
    }
    let has = if classes.is_empty() {
        "it has no ground units".to_string()
    } else {
        let list: Vec<String> = classes.iter().map(u8::to_string).collect();
        format!("its ground units are of class {}", list.join(", "))
    };
    Err(AppError::BadInput(format!(
        "--class {class}: group 0 has no ground units of size class {class} ({}); {has}",
        class_radii(class, count)
    )))
}

/// The radii (in cells) size class `class` holds among `classes` classes, in words:
/// "radius up to 0.5 cells", "radius over 0.5 and up to 1.5 cells", "radius over 2.5
/// cells" for the largest class, "any radius" when there is one class.
#[must_use]
pub fn class_radii(class: u8, classes: u8) -> String {
    let top = class + 1 >= classes;
    match (class, top) {
        (0, true) => "any radius".to_string(),
        (0, false) => "radius up to 0.5 cells".to_string(),
        (c, true) => format!("radius over {}.5 cells", c - 1),
        (c, false) => format!("radius over {}.5 and up to {c}.5 cells", c - 1),
    }
}

/// Draws the current state of `sim`: terrain, the ground flow arrows of group 0 for size
/// class `flow` (if given and the field exists) over stripes on the cells that class cannot
/// enter, units and force fields.
///
/// # Errors
/// [`AppError::BadInput`] for a bad width (see [`Canvas::new`]).
pub fn draw_frame(
    sim: &Simulation,
    width: u32,
    flow: Option<u8>,
    status: bool,
) -> Result<RgbImage, AppError> {
    let mut canvas = {
        let map = sim.map();
        let mut canvas = Canvas::new(map.grid(), width)?;
        canvas.draw_terrain(&map);
        canvas
    };
    if status {
        canvas.draw_goals(sim);
    }
    if let Some(class) = flow {
        let horde = sim.horde();
        if let Some(id) = horde.groups().sized_field(0, Layer::Ground, class) {
            canvas.draw_class_blocked(&sim.map(), Layer::Ground, class);
            let fields = horde.fields();
            canvas.draw_flow(fields.get(id).flow(), ARROW);
        }
    }
    canvas.draw_formations(sim);
    canvas.draw_units(sim, status);
    canvas.draw_forces(sim);
    Ok(canvas.image)
}

/// Runs `plan` (events, then a step, frame after frame) and writes the picture `options`
/// ask for: a PNG of the last frame, or a GIF of the start, the state after every
/// `every`-th frame, and the end.
///
/// # Errors
/// [`AppError::BadInput`] for an output that is neither `.png` nor `.gif`, `every == 0`, a bad
/// width or too many GIF frames; [`AppError::Failed`] when the simulation or the file write
/// fails.
pub fn render_plan(plan: &mut Plan, options: &RenderOptions) -> Result<(), AppError> {
    let kind = PictureKind::from_path(&options.out)?;
    let frames = options.frames.unwrap_or(plan.frames);
    let every = options
        .every
        .unwrap_or_else(|| frames.div_ceil(GIF_TARGET_FRAMES).max(1));
    if every == 0 {
        return Err(AppError::BadInput("--every must be at least 1".into()));
    }
    let width = options.width.unwrap_or(DEFAULT_RENDER_WIDTH);
    // Check the size and the class before running anything.
    Canvas::new(plan.sim.map().grid(), width)?;
    let flow = if options.flow {
        flow_class(&plan.sim, options.class)?
    } else {
        None
    };
    let mut gif = match kind {
        PictureKind::Png => None,
        PictureKind::Gif => {
            let count = frames.div_ceil(every).saturating_add(1);
            if count > MAX_GIF_FRAMES {
                return Err(AppError::BadInput(format!(
                    "{frames} frames every {every} would make {count} GIF frames (at most \
                     {MAX_GIF_FRAMES}): raise --every or lower --frames"
                )));
            }
            let first = draw_frame(&plan.sim, width, flow, options.status)?;
            let mut writer = GifWriter::create(
                &options.out,
                first.width(),
                first.height(),
                plan.dt * every as f32,
            )?;
            writer.push(&first)?;
            Some(writer)
        }
    };
    let failed = |e: horde::SimError| AppError::Failed(e.to_string());
    for frame in 0..frames {
        plan.apply_events(frame).map_err(failed)?;
        plan.sim.step(plan.dt).map_err(failed)?;
        if let Some(writer) = gif.as_mut()
            && ((frame + 1) % every == 0 || frame + 1 == frames)
        {
            writer.push(&draw_frame(&plan.sim, width, flow, options.status)?)?;
        }
    }
    match gif {
        Some(writer) => println!(
            "wrote {} ({} frames of {}, {} units)",
            options.out.display(),
            writer.frames(),
            crate::guard::printable(&plan.name),
            plan.sim.unit_count()
        ),
        None => {
            let image = draw_frame(&plan.sim, width, flow, options.status)?;
            image
                .save_with_format(&options.out, ImageFormat::Png)
                .map_err(|e| AppError::Failed(format!("{}: {e}", options.out.display())))?;
            let arrows = flow.map_or(String::new(), |c| {
                format!(", group 0's flow for size class {c}")
            });
            println!(
                "wrote {} ({}x{} pixels, frame {frames} of {}, {} units{arrows})",
                options.out.display(),
                image.width(),
                image.height(),
                crate::guard::printable(&plan.name),
                plan.sim.unit_count()
            );
        }
    }
    Ok(())
}

/// Arguments of `horde render`.
#[derive(Args, Debug)]
pub struct RenderArgs {
    /// A scenario file (TOML, see docs/scenario.md); the built-in demo when absent.
    scenario: Option<PathBuf>,
    /// The picture: `.png` (the last frame) or `.gif` (an animation of the run).
    #[arg(long)]
    out: PathBuf,
    /// Frames to run (default: the scenario's own count).
    #[arg(long)]
    frames: Option<u32>,
    /// GIF only: keep every K-th frame (default: about 40 frames in all).
    #[arg(long, value_name = "K")]
    every: Option<u32>,
    /// Draw group 0's ground flow field as arrows.
    #[arg(long)]
    flow: bool,
    /// With --flow: the size class whose field is drawn (docs/behaviour.md, "Unit sizes":
    /// class C holds radii up to C + 0.5 cells); cells open to ground units but too close
    /// to a wall for the class are striped magenta. Default: the smallest class among group
    /// 0's ground units (0 unless they are all big).
    #[arg(long, value_name = "C", requires = "flow")]
    class: Option<u8>,
    /// Picture width in pixels; the height keeps the map's aspect.
    #[arg(long, value_name = "PX", default_value_t = DEFAULT_RENDER_WIDTH)]
    size: u32,
    /// Colour units by status instead of group: arrived green, settled blue, moving grey,
    /// blocked red, unreachable magenta (stunned white); goal cells tinted green.
    #[arg(long)]
    status: bool,
    /// Built-in demo only: number of units (default 6000).
    #[arg(long)]
    units: Option<u32>,
    /// Seed of the level and of the per-unit randomness (default: the scenario's; 1 for the
    /// built-in demo).
    #[arg(long)]
    seed: Option<u64>,
    /// Worker threads, the caller included (default: every core).
    #[arg(long)]
    threads: Option<usize>,
}

/// Runs `horde render`: builds the plan (the scenario file, or the built-in demo) and draws it
/// with [`render_plan`].
///
/// # Errors
/// See [`render_plan`]; also [`AppError::BadInput`] for `--threads 0`, a bad scenario file, or
/// `--units` with a scenario.
pub fn run(args: &RenderArgs) -> Result<(), AppError> {
    check_threads(args.threads)?;
    // Check the cheap things before building the simulation.
    PictureKind::from_path(&args.out)?;
    crate::guard::check_output("--out", &args.out)?;
    if args.every == Some(0) {
        return Err(AppError::BadInput("--every must be at least 1".into()));
    }
    if !(MIN_WIDTH..=MAX_SIDE).contains(&args.size) {
        return Err(AppError::BadInput(format!(
            "--size {} must be in {MIN_WIDTH}..={MAX_SIDE} pixels",
            args.size
        )));
    }
    let overrides = Overrides {
        threads: args.threads,
        seed: args.seed,
        frames: None,
    };
    let mut plan = load_plan(args.scenario.as_deref(), &overrides, args.units)?;
    let options = RenderOptions {
        out: args.out.clone(),
        frames: args.frames,
        every: args.every,
        flow: args.flow,
        class: args.class,
        width: Some(args.size),
        status: args.status,
    };
    render_plan(&mut plan, &options)
}
