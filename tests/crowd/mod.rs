//! Families of crowd scenarios and the properties every member must have (docs/behaviour.md,
//! "Coming to rest"). A member is a scenario file (docs/scenario.md) made from a seed, so a
//! failing one can be written out and looked at with `horde run` and `horde render`.
//!
//! Each member is judged by what a user sees, with fields of its own (integration fields
//! built here from the map, not the simulation's):
//! - **rest**: by the time limit, at least 98% of the units that can reach their goal are
//!   arrived or settled (arrived, for an army its goal can hold: its open cells are at
//!   least the cells the army needs), and at most 1% are still moving or blocked. The limit is
//!   `2 x (longest path / top speed) + 60 s`, the longest path being the farthest unit's
//!   path distance to its goal at spawn;
//! - **connected**: every settled unit is joined, through resting units of its army, to a
//!   unit arrived in the goal; two resting units are joined when the gap between their discs
//!   is less than the smaller one's radius;
//! - **compact**: an army bigger than its goal rests within the blob it needs: no resting
//!   unit farther (in path distance) from the goal than the distance within which the open
//!   cells could hold the army, plus two bodies (and one cell for the rings' rounding);
//! - **no stall**: no unit that is not at rest stands still (under 5% of its top speed per
//!   frame) for 30 s while the way ahead of it is open (no wall and no body in front);
//! - **bodies**: touching pairs overlap by at most 10% of their radius on average over the
//!   run, and no body reaches past `WALL_TOLERANCE` into a wall;
//! - the same final state on another thread count, for the members that ask.
#![allow(dead_code)]

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use glam::Vec2;
use horde::{
    Cell, GoalSet, Layer, Map, UnitState, UnitStatus,
    bodies::WALL_TOLERANCE,
    crowd::cell_share,
    fields::{IntegrationField, UNREACHABLE, WALL},
    formats::{load_map, load_scen},
    sizes::class_cost_field,
};
use horde_scenario::{Overrides, parse_scenario};

use super::common::movingai_dir;
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64;

/// One generated scenario.
#[derive(Clone, Debug)]
pub struct Member {
    /// Family and parameters, e.g. `movingai/den520d/seed3`.
    pub name: String,
    /// The scenario file.
    pub toml: String,
}

/// What a member's run measured.
#[derive(Clone, Debug, Default)]
pub struct Figures {
    pub name: String,
    pub units: usize,
    /// Units that can reach their goal (at spawn).
    pub reachable: usize,
    pub arrived: usize,
    pub settled: usize,
    /// Moving or blocked at the end.
    pub moving: usize,
    pub blocked: usize,
    /// Simulated seconds run, and the limit.
    pub seconds: f32,
    pub limit: f32,
    /// Settled units not joined through resting friends to one arrived in the goal.
    pub disconnected: usize,
    /// Units of armies their goal can hold that are not arrived at the end.
    pub not_in_goal: usize,
    /// Reachable units of armies their goal can hold.
    pub fits: usize,
    /// Resting units beyond the blob the army needs (plus two bodies), and the worst
    /// excess in cells.
    pub beyond_blob: usize,
    pub worst_excess: f32,
    /// The longest a unit not at rest stood still with the way ahead open, seconds, and
    /// that unit's id and position then.
    pub longest_open_stall: f32,
    pub stalled_unit: Option<(u32, Vec2)>,
    pub mean_overlap: f64,
    pub wall_depth_max: f32,
    pub hash: u64,
    /// Mean frame time, ms.
    pub frame_ms: f64,
}

impl Figures {
    /// Share of the reachable units at rest.
    pub fn resting_share(&self) -> f64 {
        (self.arrived + self.settled) as f64 / self.reachable.max(1) as f64
    }

    /// Share of the reachable units still moving or blocked.
    pub fn moving_share(&self) -> f64 {
        (self.moving + self.blocked) as f64 / self.reachable.max(1) as f64
    }

    /// Every property the member breaks, in words (empty: it passes).
    pub fn failures(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.resting_share() < 0.98 {
            out.push(format!(
                "only {:.1}% at rest by {:.0} s",
                100.0 * self.resting_share(),
                self.seconds
            ));
        }
        if self.fits > 0 && self.not_in_goal as f64 > 0.02 * self.fits as f64 {
            out.push(format!(
                "{} of {} units whose goal holds them not arrived",
                self.not_in_goal, self.fits
            ));
        }
        if self.moving_share() > 0.01 {
            out.push(format!(
                "{:.1}% still moving or blocked at the end",
                100.0 * self.moving_share()
            ));
        }
        if self.disconnected > 0 {
            out.push(format!(
                "{} settled units not joined to the goal",
                self.disconnected
            ));
        }
        if self.beyond_blob > 0 {
            out.push(format!(
                "{} resting units beyond the blob (worst {:.1} cells)",
                self.beyond_blob, self.worst_excess
            ));
        }
        if self.longest_open_stall >= 30.0 {
            out.push(format!(
                "a unit stood {:.0} s with its way open ({:?})",
                self.longest_open_stall, self.stalled_unit
            ));
        }
        if self.mean_overlap > 0.10 {
            out.push(format!("mean overlap {:.3}", self.mean_overlap));
        }
        if self.wall_depth_max > WALL_TOLERANCE + 1e-4 {
            out.push(format!("wall depth {:.3}", self.wall_depth_max));
        }
        out
    }

    /// One line for the test's output.
    pub fn line(&self) -> String {
        format!(
            "{}: {} units ({} reachable): arrived {} settled {} moving {} blocked {} at {:.0}/{:.0} s; \
             disconnected {}, beyond blob {} ({:.1}), open stall {:.1} s, overlap {:.3}, wall {:.3}, \
             {:.2} ms/frame, hash {:016x}",
            self.name,
            self.units,
            self.reachable,
            self.arrived,
            self.settled,
            self.moving,
            self.blocked,
            self.seconds,
            self.limit,
            self.disconnected,
            self.beyond_blob,
            self.worst_excess,
            self.longest_open_stall,
            self.mean_overlap,
            self.wall_depth_max,
            self.frame_ms,
            self.hash
        )
    }
}

/// The Moving AI maps' names (without `.map`), in name order.
pub fn movingai_names() -> Vec<String> {
    let Some(dir) = movingai_dir() else {
        return Vec::new();
    };
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "map").then(|| p.file_stem().unwrap().to_string_lossy().into())
        })
        .collect();
    names.sort();
    names
}

/// The members' units' top speed, cells a second (a scenario group's default `speed`).
pub const TOP_SPEED: f32 = 4.0;

fn rng(seed: u64, salt: u64) -> Pcg64 {
    Pcg64::seed_from_u64(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ salt)
}

fn below(rng: &mut Pcg64, n: u64) -> u64 {
    rng.next_u64() % n.max(1)
}

fn header(name: &str, seed: u64) -> String {
    format!("name = \"{name}\"\nseed = {seed}\ndt = 0.03333333333333333\nframes = 1\n\n")
}

fn cell_list(cells: &[Cell]) -> String {
    let items: Vec<String> = cells
        .iter()
        .map(|c| format!("[{}, {}]", c.x, c.y))
        .collect();
    format!("[{}]", items.join(", "))
}

/// A goal of `cells` cells around `at`: one cell, or the `cells` open cells nearest it.
fn goal_keys(at: Cell, cells: usize) -> String {
    if cells <= 1 {
        format!("goal = [[{}, {}]]\n", at.x, at.y)
    } else {
        format!("goal_near = [{}, {}]\ngoal_cells = {cells}\n", at.x, at.y)
    }
}

/// A group of `count` units of `radius` spawned in the rectangle `(x, y, w, h)` (cells), sent
/// to the goal [`goal_keys`] gives.
fn rect_group(count: usize, (x, y, w, h): (u32, u32, u32, u32), radius: f32, goal: &str) -> String {
    format!(
        "[[group]]\ncount = {count}\nspawn = {{ x = {x}, y = {y}, w = {w}, h = {h} }}\nradius = {radius}\n{goal}\n"
    )
}

/// Moving AI family: `groups` groups of `per_group` units (radius `radius`) spawned around
/// random cells that reach the goal of a random line of the map's `.scen` file, all sent to
/// that goal: one cell, or an area of `goal_cells` cells. `max_path` bounds the spawns'
/// path distance to the goal (cells), to keep a run short.
pub fn movingai(
    map_name: &str,
    seed: u64,
    groups: usize,
    per_group: usize,
    goal_cells: usize,
    radius: f32,
    max_path: Option<f64>,
) -> Option<Member> {
    let dir = movingai_dir()?;
    let path = dir.join(format!("{map_name}.map"));
    let map = load_map(&path).unwrap();
    let scen = load_scen(path.with_extension("map.scen")).unwrap();
    let lines = &scen.lines;
    let mut rng = rng(seed, 0x6d61_7073);
    let line = &lines[below(&mut rng, lines.len() as u64) as usize];
    let goal = line.goal;
    let field = IntegrationField::build(map.cost_field(Layer::Ground), &[goal]).unwrap();
    let grid = map.grid();
    // Spawn centres: reachable cells away from the goal (and within `max_path`).
    let far_enough = 12.0 + (goal_cells as f64).sqrt();
    let candidates: Vec<Cell> = (0..grid.len())
        .map(|i| grid.cell(i))
        .filter(|&c| {
            field
                .distance(c)
                .is_some_and(|d| d >= far_enough && max_path.is_none_or(|m| d <= m))
        })
        .collect();
    if candidates.len() < groups {
        return None;
    }
    let name =
        format!("movingai/{map_name}/seed{seed}-{groups}x{per_group}-goal{goal_cells}-r{radius}");
    let mut toml = header(&name, seed);
    writeln!(toml, "[map]\nfile = \"{}\"\n", path.display()).unwrap();
    for _ in 0..groups {
        let at = candidates[below(&mut rng, candidates.len() as u64) as usize];
        write!(
            toml,
            "[[group]]\ncount = {per_group}\nspawn_near = [{}, {}]\nradius = {radius}\n{}\n",
            at.x,
            at.y,
            goal_keys(goal, goal_cells)
        )
        .unwrap();
    }
    Some(Member { name, toml })
}

/// Generated-level family: a level of `tiles` x `tiles` tiles (4x4 cells each, every spawn
/// reaching the lair), groups from the three enemy spawns and the two player spawns, all
/// sent to a goal of `goal_cells` cells near the lair or near a random open cell.
pub fn generated(seed: u64, tiles: u32, per_group: usize, goal_cells: usize) -> Member {
    let mut rng = rng(seed, 0x6c65_7665);
    let groups = 2 + below(&mut rng, 4) as usize;
    let sites = [
        "enemy_spawn_0",
        "enemy_spawn_2",
        "enemy_spawn_1",
        "player_spawn_0",
        "player_spawn_1",
    ];
    let lair = below(&mut rng, 2) == 0;
    let name =
        format!("generated/seed{seed}-{tiles}t-{groups}x{per_group}-goal{goal_cells}-lair{lair}");
    let mut toml = header(&name, seed);
    writeln!(
        toml,
        "[map]\ngenerate = {{ seed = {seed}, width = {tiles}, height = {tiles}, cells_per_tile = 4, guarantee_reachable = true }}\n"
    )
    .unwrap();
    let goal = if lair {
        "\"lair\"".to_string()
    } else {
        "\"centre\"".to_string()
    };
    for site in sites.iter().take(groups) {
        let radius = [0.35, 0.4, 0.45, 0.5][below(&mut rng, 4) as usize];
        write!(
            toml,
            "[[group]]\ncount = {per_group}\nspawn_near = \"{site}\"\nradius = {radius}\ngoal_near = {goal}\ngoal_cells = {goal_cells}\n\n"
        )
        .unwrap();
    }
    Member { name, toml }
}

/// An open map of `w` x `h` cells with `walls` blocked, as inline rows.
fn rows(w: u32, h: u32, wall: impl Fn(u32, u32) -> bool) -> String {
    let mut out = String::from("[map]\nrows = \"\"\"\n");
    for y in 0..h {
        for x in 0..w {
            out.push(if wall(x, y) { 'X' } else { '.' });
        }
        out.push('\n');
    }
    out.push_str("\"\"\"\n\n");
    out
}

/// RVO2's Circle: eight groups of `per_group` units of `radius` on a circle, each sent to a
/// goal of `goal_cells` cells at the antipode.
pub fn circle(seed: u64, radius: f32, per_group: usize, goal_cells: usize) -> Member {
    let scale = (radius / 0.5).max(1.0);
    let side = (160.0 * scale).round() as u32;
    let name = format!("rvo2/circle-r{radius}-{per_group}-goal{goal_cells}-seed{seed}");
    let mut toml = header(&name, seed);
    toml.push_str(&rows(side, side, |_, _| false));
    let centre = side as f32 / 2.0;
    let ring = centre - 12.0 * scale;
    for k in 0..8 {
        let angle = k as f32 / 8.0 * std::f32::consts::TAU;
        let at = Vec2::splat(centre) + Vec2::from_angle(angle) * ring;
        let far = Vec2::splat(side as f32) - at;
        let area = (per_group as f32 * (2.0 * radius).powi(2) * 2.0).ceil() as u32;
        let w = (area as f32).sqrt().ceil() as u32;
        let (x, y) = (
            (at.x as u32).saturating_sub(w / 2),
            (at.y as u32).saturating_sub(w / 2),
        );
        let goal = goal_keys(Cell::new(far.x as u32, far.y as u32), goal_cells);
        toml.push_str(&rect_group(per_group, (x, y, w, w), radius, &goal));
    }
    Member { name, toml }
}

/// RVO2's Blocks: four groups of 25 units of `radius` in the corners of a map with four
/// blocks of wall in the middle, each sent to a goal of `goal_cells` cells in the opposite
/// corner. The layout scales with the radius (60x60 cells for radius 0.4).
pub fn blocks(seed: u64, radius: f32, goal_cells: usize) -> Member {
    let s = (radius / 0.4).max(1.0);
    let side = (60.0 * s).round() as u32;
    let at = |v: f32| (v * s).round() as u32;
    let blocks = [(18.0, 18.0), (34.0, 18.0), (18.0, 34.0), (34.0, 34.0)];
    let block = at(8.0);
    let name = format!("rvo2/blocks-r{radius}-goal{goal_cells}-seed{seed}");
    let mut toml = header(&name, seed);
    toml.push_str(&rows(side, side, |x, y| {
        blocks.iter().any(|&(bx, by)| {
            (at(bx)..at(bx) + block).contains(&x) && (at(by)..at(by) + block).contains(&y)
        })
    }));
    let corners = [(3.0, 3.0), (56.0, 3.0), (3.0, 56.0), (56.0, 56.0)];
    let spawn = at(12.0);
    for (k, &(cx, cy)) in corners.iter().enumerate() {
        let (gx, gy) = corners[3 - k];
        let (x0, y0) = (
            at(cx).saturating_sub(spawn / 4).min(side - spawn),
            at(cy).saturating_sub(spawn / 4).min(side - spawn),
        );
        let goal = goal_keys(
            Cell::new(at(gx).min(side - 1), at(gy).min(side - 1)),
            goal_cells,
        );
        toml.push_str(&rect_group(25, (x0, y0, spawn, spawn), radius, &goal));
    }
    Member { name, toml }
}

/// An open map of `w` x `h` cells with a wall two cells thick down its middle, open only in
/// a gap of `gap` cells at its centre, as inline rows.
fn wall_with_gap(w: u32, h: u32, gap: u32) -> String {
    let wall_x = w / 2;
    let (g0, g1) = (h / 2 - gap / 2, h / 2 - gap / 2 + gap);
    rows(w, h, |x, y| {
        (wall_x..wall_x + 2).contains(&x) && !(g0..g1).contains(&y)
    })
}

/// The start of a scenario `name` on an open map split by [`wall_with_gap`], `size` cells
/// across for bodies up to radius 0.5 and as much larger as `radius` is than that: the
/// scenario so far, the map's width and height, and the margin spawns and goals keep from
/// its edges.
fn split_level(
    name: &str,
    seed: u64,
    radius: f32,
    size: (f32, f32),
    gap: u32,
) -> (String, u32, u32, u32) {
    let s = (radius / 0.5).max(1.0);
    let (w, h) = ((size.0 * s) as u32, (size.1 * s) as u32);
    let mut toml = header(name, seed);
    toml.push_str(&wall_with_gap(w, h, gap));
    (toml, w, h, (4.0 * s) as u32)
}

/// The side in cells of a square that holds `count` bodies of `radius` at half density (at
/// least 4).
fn spawn_side(count: usize, radius: f32) -> u32 {
    ((count as f32 * (2.0 * radius).powi(2) * 2.0).sqrt().ceil() as u32).max(4)
}

/// Two armies through one gap of `gap` cells in a wall across the map: head-on (each to the
/// other's side) or crossing (both diagonally across, their ways crossing in the gap).
/// Each army has `per_group` units of `radius`; goals of `goal_cells` cells.
pub fn gap(
    seed: u64,
    gap: u32,
    radius: f32,
    per_group: usize,
    head_on: bool,
    goal_cells: usize,
) -> Member {
    let kind = if head_on { "head-on" } else { "crossing" };
    let name = format!("gap/{kind}-gap{gap}-r{radius}-{per_group}-goal{goal_cells}-seed{seed}");
    let (mut toml, w, h, margin) = split_level(&name, seed, radius, (80.0, 60.0), gap);
    let spawn = spawn_side(per_group, radius);
    let (left, right) = (margin, w - margin - spawn);
    let (top, bottom) = (margin, h - margin - spawn);
    let (mid_y, far_x) = (h / 2 - spawn / 2, w - margin - 1);
    // (spawn corner, goal cell) per army.
    let armies = if head_on {
        [
            ((left, mid_y), Cell::new(far_x, h / 2)),
            ((right, mid_y), Cell::new(margin, h / 2)),
        ]
    } else {
        [
            ((left, top), Cell::new(far_x, h - margin - 1)),
            ((left, bottom), Cell::new(far_x, margin)),
        ]
    };
    for ((x, y), goal) in armies {
        let goal = goal_keys(goal, goal_cells);
        toml.push_str(&rect_group(per_group, (x, y, spawn, spawn), radius, &goal));
    }
    Member { name, toml }
}

/// An army of `coming` units of `radius` sent through a gap of `gap` cells to one cell, round
/// which `leaving` units of another army stand, sent back the way the first comes: those
/// must get out of the first army's goal area while it comes in (docs/behaviour.md, "Jams
/// dissolve").
pub fn swap(seed: u64, gap: u32, radius: f32, coming: usize, leaving: usize) -> Member {
    let name = format!("gap/swap-gap{gap}-r{radius}-{coming}+{leaving}-seed{seed}");
    let (mut toml, w, h, margin) = split_level(&name, seed, radius, (80.0, 60.0), gap);
    let (side, small) = (spawn_side(coming, radius), spawn_side(leaving, radius));
    let goal = Cell::new(w - margin - 1 - small / 2, h / 2);
    let coming_goal = goal_keys(goal, 1);
    let leaving_goal = goal_keys(Cell::new(margin, h / 2), 1);
    toml.push_str(&rect_group(
        coming,
        (margin, h / 2 - side / 2, side, side),
        radius,
        &coming_goal,
    ));
    let around = (goal.x - small / 2, goal.y - small / 2, small, small);
    toml.push_str(&rect_group(leaving, around, radius, &leaving_goal));
    Member { name, toml }
}

/// One army of `count` units of `radius` through a gap of `gap` cells in a wall across an
/// open map, into a goal area of `goal_cells` cells beyond it.
pub fn through_gap(seed: u64, gap: u32, radius: f32, count: usize, goal_cells: usize) -> Member {
    let name = format!("gap/through-gap{gap}-r{radius}-{count}-goal{goal_cells}-seed{seed}");
    let (mut toml, w, h, margin) = split_level(&name, seed, radius, (160.0, 100.0), gap);
    let spawn = spawn_side(count, radius);
    let goal = goal_keys(Cell::new(w - w / 4, h / 2), goal_cells);
    toml.push_str(&rect_group(
        count,
        (margin, h / 2 - spawn / 2, spawn, spawn),
        radius,
        &goal,
    ));
    Member { name, toml }
}

/// A goal area in a corridor `width` cells wide (the map's own edges are its walls), fed
/// from both ends: `west` units of `radius` from the west end, `east` from the east end.
/// The area has a quarter more cells than the army's bodies cover (at least a cell a unit):
/// room for all, but the busier side's units outnumber the room on their side of it.
pub fn corridor(seed: u64, width: u32, radius: f32, west: usize, east: usize) -> Member {
    let s = (radius / 0.5).max(1.0);
    let w = (160.0 * s) as u32;
    let goal_cells = ((west + east) as f32 * (2.0 * radius).powi(2).max(1.0) * 1.25) as usize;
    let name = format!("corridor/w{width}-r{radius}-{west}+{east}-goal{goal_cells}-seed{seed}");
    let mut toml = header(&name, seed);
    toml.push_str(&rows(w, width, |_, _| false));
    let depth =
        |n: usize| ((n as f32 * (2.0 * radius).powi(2) * 2.0 / width as f32).ceil() as u32).max(2);
    let margin = (2.0 * s) as u32;
    let goal = Cell::new(w / 2, width / 2);
    let goal = goal_keys(goal, goal_cells);
    for (x, n) in [(margin, west), (w - margin - depth(east), east)] {
        toml.push_str(&rect_group(n, (x, 0, depth(n), width), radius, &goal));
    }
    Member { name, toml }
}

/// A unit's path distance to its goal in cells, from fields built here.
struct Distances {
    /// Per (goal, layer, class): the integration field.
    fields: HashMap<(Vec<Cell>, Layer, u8), IntegrationField>,
    /// Per (layer, class): the cost field.
    costs: HashMap<(Layer, u8), horde::fields::CostField>,
}

impl Distances {
    fn new() -> Self {
        Self {
            fields: HashMap::new(),
            costs: HashMap::new(),
        }
    }

    fn cost(&mut self, map: &Map, layer: Layer, class: u8) -> &horde::fields::CostField {
        self.costs
            .entry((layer, class))
            .or_insert_with(|| class_cost_field(map.cost_field(layer), class))
    }

    fn field(&mut self, map: &Map, goal: &GoalSet, layer: Layer, class: u8) -> &IntegrationField {
        let key = (goal.cells().to_vec(), layer, class);
        if !self.fields.contains_key(&key) {
            let cost = self.cost(map, layer, class).clone();
            let field = IntegrationField::build(&cost, goal.cells()).unwrap();
            self.fields.insert(key.clone(), field);
        }
        &self.fields[&key]
    }
}

/// A unit as the judge sees it.
#[derive(Clone, Copy)]
struct Seen {
    pos: Vec2,
    radius: f32,
    army: usize,
    resting: bool,
    arrived: bool,
}

/// Buckets of 2x2 cells over the units, for neighbour questions.
struct Buckets {
    side: f32,
    map: HashMap<(i32, i32), Vec<usize>>,
}

impl Buckets {
    fn new(units: &[Seen], side: f32) -> Self {
        let mut map: HashMap<(i32, i32), Vec<usize>> = HashMap::new();
        for (i, u) in units.iter().enumerate() {
            map.entry(Self::key(u.pos, side)).or_default().push(i);
        }
        Self { side, map }
    }

    fn key(p: Vec2, side: f32) -> (i32, i32) {
        ((p.x / side).floor() as i32, (p.y / side).floor() as i32)
    }

    /// Units within `reach` of `p` (a superset: the buckets around it).
    fn near(&self, p: Vec2, reach: f32) -> impl Iterator<Item = usize> + '_ {
        let (x0, y0) = Self::key(p - Vec2::splat(reach), self.side);
        let (x1, y1) = Self::key(p + Vec2::splat(reach), self.side);
        (y0..=y1)
            .flat_map(move |y| (x0..=x1).map(move |x| (x, y)))
            .filter_map(|k| self.map.get(&k))
            .flatten()
            .copied()
    }
}

/// Runs `member` on `threads` threads until its time limit (or until every unit has rested
/// for 2 s) and measures it.
pub fn judge(member: &Member, threads: usize) -> Figures {
    let overrides = Overrides {
        threads: Some(threads),
        ..Overrides::default()
    };
    let mut plan = parse_scenario(&member.toml, &member.name, Path::new("/"), &overrides)
        .unwrap_or_else(|e| panic!("{}: {e}\n{}", member.name, member.toml));
    let dt = plan.dt;
    let map = plan.sim.map().clone();
    let cell_size = map.grid().cell_size();
    let goals: Vec<GoalSet> = {
        let groups = plan.sim.horde().groups();
        (0..groups.len() as u16)
            .map(|g| groups.get(g).unwrap().goal.clone())
            .collect()
    };
    let army_of: Vec<usize> = (0..goals.len())
        .map(|g| goals.iter().position(|o| *o == goals[g]).unwrap())
        .collect();
    let config = *plan.sim.horde().config();
    let class_of = |u: &UnitState| config.size_class(u.radius, cell_size);
    let mut dist = Distances::new();
    let phi = |u: &UnitState, dist: &mut Distances| -> Option<f64> {
        let cell = map.grid().cell_at(u.position)?;
        let goal = &goals[usize::from(u.group.0)];
        dist.field(&map, goal, u.layer, class_of(u)).distance(cell)
    };

    let start = plan.sim.units();
    let reachable: Vec<bool> = start
        .iter()
        .map(|u| u.status != UnitStatus::Unreachable)
        .collect();
    let longest = start
        .iter()
        .zip(&reachable)
        .filter(|&(_, &r)| r)
        .filter_map(|(u, _)| {
            Some(phi(u, &mut dist)? * f64::from(cell_size) / f64::from(u.max_speed.max(0.1)))
        })
        .fold(0.0, f64::max) as f32;
    let limit = 2.0 * longest + 60.0;
    let frames = (limit / dt).ceil() as u32;

    let n = start.len();
    let mut still = vec![0u32; n];
    let mut open_stall = vec![0u32; n];
    let mut longest_open_stall = 0u32;
    let mut stalled_unit = None;
    let mut rested = 0u32;
    let (mut overlap_sum, mut pairs, mut wall_depth_max) = (0.0f64, 0u64, 0.0f32);
    let mut before = start;
    let started = std::time::Instant::now();
    let mut frame = 0;
    while frame < frames {
        plan.apply_events(frame).unwrap();
        plan.sim.step(dt).unwrap();
        frame += 1;
        let after = plan.sim.units();
        let mut candidates = Vec::new();
        for (i, (a, b)) in before.iter().zip(&after).enumerate() {
            let moved = a.position.distance(b.position);
            still[i] = if moved < 0.05 * a.max_speed * dt {
                still[i] + 1
            } else {
                0
            };
            let at_rest = matches!(
                b.status,
                UnitStatus::Arrived | UnitStatus::Settled | UnitStatus::Unreachable
            );
            if at_rest || still[i] == 0 {
                open_stall[i] = 0;
            } else if still[i] as f32 * dt >= 5.0 {
                candidates.push(i);
            }
        }
        if !candidates.is_empty() {
            let seen: Vec<Seen> = after
                .iter()
                .map(|u| Seen {
                    pos: u.position,
                    radius: u.radius,
                    army: army_of[usize::from(u.group.0)],
                    resting: false,
                    arrived: false,
                })
                .collect();
            let buckets = Buckets::new(&seen, 2.0 * cell_size);
            for i in candidates {
                let u = &after[i];
                let open = way_is_open(u, i, &seen, &buckets, &map, &goals, class_of(u), &mut dist);
                open_stall[i] = if open {
                    open_stall[i].max(still[i] - 1) + 1
                } else {
                    0
                };
                if open_stall[i] > longest_open_stall {
                    longest_open_stall = open_stall[i];
                    stalled_unit = Some((u.id.0, u.position));
                }
            }
        }
        if frame % 5 == 0 || frame == frames {
            let stats = plan.sim.body_stats();
            overlap_sum += stats.overlap_sum;
            pairs += stats.touching_pairs;
            wall_depth_max = wall_depth_max.max(stats.wall_depth_max);
        }
        let all_rest = after.iter().zip(&still).all(|(u, &s)| {
            matches!(
                u.status,
                UnitStatus::Arrived | UnitStatus::Settled | UnitStatus::Unreachable
            ) && s > 0
        });
        rested = if all_rest { rested + 1 } else { 0 };
        before = after;
        if rested as f32 * dt >= 2.0 {
            break;
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let end = before;
    let mut f = Figures {
        name: member.name.clone(),
        units: n,
        reachable: reachable.iter().filter(|&&r| r).count(),
        seconds: frame as f32 * dt,
        limit,
        longest_open_stall: longest_open_stall as f32 * dt,
        stalled_unit,
        mean_overlap: if pairs == 0 {
            0.0
        } else {
            overlap_sum / pairs as f64
        },
        wall_depth_max,
        hash: plan.sim.state_hash(),
        frame_ms: elapsed * 1000.0 / f64::from(frame.max(1)),
        ..Figures::default()
    };
    for (u, _) in end.iter().zip(&reachable).filter(|&(_, &r)| r) {
        match u.status {
            UnitStatus::Arrived => f.arrived += 1,
            UnitStatus::Settled => f.settled += 1,
            UnitStatus::Moving => f.moving += 1,
            _ => f.blocked += 1,
        }
    }
    // Connected: settled units reached from arrived ones through touching resting friends.
    let seen: Vec<Seen> = end
        .iter()
        .map(|u| Seen {
            pos: u.position,
            radius: u.radius,
            army: army_of[usize::from(u.group.0)],
            resting: matches!(u.status, UnitStatus::Arrived | UnitStatus::Settled),
            arrived: u.status == UnitStatus::Arrived,
        })
        .collect();
    let buckets = Buckets::new(&seen, 2.0 * cell_size);
    let mut joined: Vec<bool> = seen.iter().map(|s| s.arrived).collect();
    let mut queue: Vec<usize> = (0..n).filter(|&i| joined[i]).collect();
    while let Some(i) = queue.pop() {
        let a = seen[i];
        let reach = a.radius * 2.0 + 2.0 * cell_size;
        for j in buckets.near(a.pos, reach) {
            let b = seen[j];
            let near = a.radius + b.radius + a.radius.min(b.radius);
            if !joined[j] && b.resting && b.army == a.army && a.pos.distance(b.pos) <= near {
                joined[j] = true;
                queue.push(j);
            }
        }
    }
    f.disconnected = (0..n)
        .filter(|&i| seen[i].resting && !seen[i].arrived && !joined[i])
        .count();
    // Compact: per army, the path distance within which the open cells could hold it.
    let mut per_army: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, s) in seen.iter().enumerate() {
        per_army.entry(s.army).or_default().push(i);
    }
    let mut armies: Vec<_> = per_army.into_iter().collect();
    armies.sort_by_key(|(a, _)| *a);
    for (army, members) in armies {
        let need: f64 = members
            .iter()
            .map(|&i| {
                let r = end[i].radius / cell_size;
                if r <= 0.5 {
                    f64::from(cell_share(r, 1.0))
                } else {
                    f64::from(2.0 * r).powi(2)
                }
            })
            .sum();
        let goal = &goals[army];
        if (goal.cells().len() as f64) >= need {
            for &i in &members {
                if reachable[i] {
                    f.fits += 1;
                    f.not_in_goal += usize::from(!seen[i].arrived);
                }
            }
            continue;
        }
        let field = dist.field(&map, goal, Layer::Ground, 0);
        let mut ds: Vec<u32> = (0..map.grid().len())
            .map(|i| field.get(map.grid().cell(i)))
            .filter(|&d| d != UNREACHABLE)
            .collect();
        ds.sort_unstable();
        let fit = ds
            .get((need.ceil() as usize).min(ds.len().saturating_sub(1)))
            .map_or(0.0, |&d| f64::from(d) / 169.0);
        for &i in &members {
            if !seen[i].resting {
                continue;
            }
            let u = &end[i];
            let Some(d) = phi(u, &mut dist) else { continue };
            let allowed = fit + f64::from(4.0 * u.radius / cell_size) + 1.0;
            if d > allowed {
                f.beyond_blob += 1;
                f.worst_excess = f.worst_excess.max((d - allowed) as f32);
            }
        }
    }
    f
}

/// Whether the way ahead of unit `i` is open: the cell a body ahead of it along its field is
/// open, and no other unit stands in front of it within half a body of touching.
#[allow(clippy::too_many_arguments)]
fn way_is_open(
    u: &UnitState,
    i: usize,
    seen: &[Seen],
    buckets: &Buckets,
    map: &Map,
    goals: &[GoalSet],
    class: u8,
    dist: &mut Distances,
) -> bool {
    let grid = map.grid();
    let Some(cell) = grid.cell_at(u.position) else {
        return false;
    };
    let goal = &goals[usize::from(u.group.0)];
    let field = dist.field(map, goal, u.layer, class);
    let here = field.get(cell);
    if here == 0 || here == UNREACHABLE {
        return false;
    }
    // The lowest neighbour (8 directions, as the fields step).
    let cost = dist.cost(map, u.layer, class).clone();
    let field = dist.field(map, goal, u.layer, class);
    let Some((next, _)) = cost
        .steps_from(cell)
        .map(|(c, _)| (c, field.get(c)))
        .filter(|&(_, v)| v < here)
        .min_by_key(|&(c, v)| (v, c.y, c.x))
    else {
        return false;
    };
    let dir = (grid.cell_centre(next) - u.position).normalize_or_zero();
    let ahead = u.position + dir * (u.radius + 0.5 * grid.cell_size());
    if grid.cell_at(ahead).is_none_or(|c| cost.get(c) == WALL) {
        return false;
    }
    let reach = u.radius * 3.0 + 2.0 * grid.cell_size();
    !buckets.near(u.position, reach).any(|j| {
        let o = seen[j];
        let away = o.pos - u.position;
        j != i && away.length() < (u.radius + o.radius) * 1.5 && away.dot(dir) > 0.0
    })
}

/// Writes `member`'s scenario to `target/families/` (for `horde run` and `horde render`)
/// and returns the path.
pub fn write_out(member: &Member) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/families");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{}.toml", member.name.replace('/', "_")));
    std::fs::write(&path, &member.toml).unwrap();
    path
}
