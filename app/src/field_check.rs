//! `horde field MAP --scen SCEN`: checks every line of a Moving AI scenario file.
//! `horde field MAP --goal X,Y [--class C | --radius R] [--out FILE.png]`: builds the ground
//! integration and flow fields of one size class toward one goal cell and prints a summary
//! or draws them.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use clap::{ArgGroup, Args};
use horde::fields::{Clearance, CostField, FlowConfig, FlowField, IntegrationField, WALL};
use horde::formats::{check_scen_lines, load_map, load_scen};
use horde::sizes::{MAX_SIZE_CLASSES, class_clearance, class_cost_field, size_class};
use horde::{Cell, Layer, Map};

use crate::AppError;
use crate::render::{CLASS_BLOCKED, Canvas, PictureKind, class_radii, default_width};

/// Arguments of `horde field`: exactly one of `--scen` and `--goal`.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("mode").required(true).args(["scen", "goal"])))]
pub struct FieldArgs {
    /// The map (`.map` Moving AI or `.txt` ASCII).
    map: PathBuf,
    /// A Moving AI `.map.scen` file: every line's distance is checked.
    #[arg(long)]
    scen: Option<PathBuf>,
    /// With --scen: also write the result as JSON to this file.
    #[arg(long, requires = "scen")]
    json: Option<PathBuf>,
    /// Goal cell `X,Y` (column, row; row 0 is the map file's first row): builds the ground
    /// fields toward it.
    #[arg(long, value_name = "X,Y")]
    goal: Option<GoalCell>,
    /// With --goal: draw the integration field (heat map) and flow (arrows) to this PNG.
    #[arg(long, requires = "goal")]
    out: Option<PathBuf>,
    /// With --goal --out: picture width in pixels (default: up to 8 per cell, at most 1024).
    #[arg(long, value_name = "PX", requires = "out")]
    size: Option<u32>,
    /// With --goal: build the fields of size class C, 0..=3 (docs/behaviour.md, "Unit
    /// sizes"): cells with a wall or the map edge within C cells are blocked, so the fields
    /// lead only where bodies of radius up to C + 0.5 cells fit. Default 0 (the ground
    /// costs as they are).
    #[arg(long, value_name = "C", requires = "goal", conflicts_with = "radius")]
    class: Option<u8>,
    /// With --goal: build the fields of the size class of a body of radius R cells (the
    /// smallest C with R <= C + 0.5, at most 3).
    #[arg(
        long,
        value_name = "R",
        requires = "goal",
        allow_negative_numbers = true
    )]
    radius: Option<f32>,
}

/// A goal cell written `X,Y`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GoalCell {
    /// Column.
    pub x: u32,
    /// Row.
    pub y: u32,
}

impl FromStr for GoalCell {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("`{s}` is not a cell: write X,Y with non-negative integers, e.g. 3,7");
        let (x, y) = s.split_once(',').ok_or_else(bad)?;
        Ok(Self {
            x: x.trim().parse().map_err(|_| bad())?,
            y: y.trim().parse().map_err(|_| bad())?,
        })
    }
}

/// Runs `horde field`.
///
/// # Errors
/// [`AppError::BadInput`] for an unreadable map or scenario, or a goal outside the map or in
/// a wall; [`AppError::Failed`] when scenario lines do not match or a file cannot be written.
pub fn run(args: &FieldArgs) -> Result<(), AppError> {
    if let Some(out) = &args.out
        && PictureKind::from_path(out)? != PictureKind::Png
    {
        return Err(AppError::BadInput(format!(
            "{}: the field picture must be a .png",
            out.display()
        )));
    }
    for (flag, path) in [("--out", &args.out), ("--json", &args.json)] {
        if let Some(path) = path {
            crate::guard::check_output(flag, path)?;
        }
    }
    // clap's `requires` does not hold these back when the other mode's flag is given, so
    // they are checked here: a flag that would be ignored is an error, never silence.
    if args.goal.is_none() {
        for (flag, given, why) in [
            (
                "--class",
                args.class.is_some(),
                "the --scen check is for class 0 bodies",
            ),
            (
                "--radius",
                args.radius.is_some(),
                "the --scen check is for class 0 bodies",
            ),
            (
                "--out",
                args.out.is_some(),
                "--scen prints its check; --json writes it",
            ),
            ("--size", args.size.is_some(), "it sizes the --goal picture"),
        ] {
            if given {
                return Err(AppError::BadInput(format!(
                    "{flag} goes with --goal X,Y ({why})"
                )));
            }
        }
    }
    if args.scen.is_none() && args.json.is_some() {
        return Err(AppError::BadInput(
            "--json goes with --scen SCEN (it writes the scenario check)".into(),
        ));
    }
    let class = goal_class(args.class, args.radius)?;
    let map = load_map(&args.map).map_err(|e| AppError::BadInput(e.to_string()))?;
    match (&args.scen, args.goal) {
        (_, Some(goal)) => draw_goal(&map, goal, class, args.out.as_deref(), args.size),
        (Some(scen), None) => check_scen(&map, scen, args.json.as_deref()),
        (None, None) => Err(AppError::BadInput("give --scen SCEN or --goal X,Y".into())),
    }
}

/// The size class `--class` or `--radius` asks for (0 when neither is given).
///
/// # Errors
/// [`AppError::BadInput`] for a class above the largest one or a radius that is not a
/// positive number.
fn goal_class(class: Option<u8>, radius: Option<f32>) -> Result<u8, AppError> {
    if let Some(c) = class {
        if c >= MAX_SIZE_CLASSES {
            return Err(AppError::BadInput(format!(
                "--class {c} is out of range: size classes are 0..={}",
                MAX_SIZE_CLASSES - 1
            )));
        }
        return Ok(c);
    }
    match radius {
        None => Ok(0),
        Some(r) if r.is_finite() && r > 0.0 => Ok(size_class(r, MAX_SIZE_CLASSES)),
        Some(r) => Err(AppError::BadInput(format!(
            "--radius {r} must be a positive number of cells"
        ))),
    }
}

/// The ground fields of one size class toward one goal.
struct GoalFields {
    /// The class's cost field (the ground's own for class 0).
    cost: CostField,
    integration: IntegrationField,
    flow: FlowField,
}

/// Builds the ground integration and flow fields of size class `class` of `map` toward
/// `goal`, as the simulation builds a group's field: on the class's cost field (cells too
/// close to walls for the class have no direction; a unit there walks out by
/// `horde::sizes::escape_from`).
fn goal_fields(map: &Map, goal: GoalCell, class: u8) -> Result<(Cell, GoalFields), AppError> {
    let grid = map.grid();
    if !grid.contains(i64::from(goal.x), i64::from(goal.y)) {
        return Err(AppError::BadInput(format!(
            "goal ({}, {}) is outside the {}x{} map",
            goal.x,
            goal.y,
            map.width(),
            map.height()
        )));
    }
    let cell = Cell::new(goal.x, goal.y);
    let cost = map.cost_field(Layer::Ground);
    if cost.get(cell) == WALL {
        return Err(AppError::BadInput(format!(
            "goal ({}, {}) is in a wall ({}) for ground units",
            goal.x,
            goal.y,
            map.terrain_at(cell).name()
        )));
    }
    let sized = class_cost_field(cost, class);
    if sized.get(cell) == WALL {
        let clearance = Clearance::build(cost).get(cell.x, cell.y);
        return Err(AppError::BadInput(format!(
            "goal ({}, {}) is unreachable for size class {class} ({}): its bodies need a \
             clearance of {} cells (no wall or map edge within {class}) and this cell has {}",
            goal.x,
            goal.y,
            class_radii(class, MAX_SIZE_CLASSES),
            class_clearance(class),
            clearance
        )));
    }
    let integration =
        IntegrationField::build(&sized, &[cell]).map_err(|e| AppError::Failed(e.to_string()))?;
    let flow = FlowField::build(&sized, &integration, &[cell], &FlowConfig::default());
    Ok((
        cell,
        GoalFields {
            cost: sized,
            integration,
            flow,
        },
    ))
}

/// The colour of a reachable cell `t` of the way (0 = goal, 1 = farthest) along the heat
/// ramp: pale yellow, orange, red, purple, blue.
fn heat_colour(t: f32) -> [u8; 3] {
    const STOPS: [[f32; 3]; 5] = [
        [255.0, 250.0, 200.0],
        [250.0, 170.0, 70.0],
        [220.0, 70.0, 60.0],
        [150.0, 70.0, 160.0],
        [70.0, 100.0, 190.0],
    ];
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        1.0
    };
    let pos = t * (STOPS.len() - 1) as f32;
    let i = (pos as usize).min(STOPS.len() - 2);
    let f = pos - i as f32;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    [0, 1, 2].map(|k| (a[k] + (b[k] - a[k]) * f).round() as u8)
}

/// `horde field MAP --goal X,Y [--class C] [--out FILE.png]`.
fn draw_goal(
    map: &Map,
    goal: GoalCell,
    class: u8,
    out: Option<&Path>,
    size: Option<u32>,
) -> Result<(), AppError> {
    let (cell, fields) = goal_fields(map, goal, class)?;
    let grid = map.grid();
    let cost = map.cost_field(Layer::Ground);
    let mut passable = 0usize;
    let mut too_close = 0usize;
    let mut reachable = 0usize;
    let mut max_distance = 0.0f64;
    for i in 0..grid.len() {
        let c = grid.cell(i);
        if fields.cost.get(c) != WALL {
            passable += 1;
        } else if cost.get(c) != WALL {
            too_close += 1;
        }
        if let Some(d) = fields.integration.distance(c) {
            reachable += 1;
            max_distance = max_distance.max(d);
        }
    }
    let Some(path) = out else {
        println!("map:           {}x{} cells", map.width(), map.height());
        println!("goal:          ({}, {})", cell.x, cell.y);
        println!(
            "size_class:    {class} ({})",
            class_radii(class, MAX_SIZE_CLASSES)
        );
        println!("passable:      {passable}");
        if class != 0 {
            println!("too_close:     {too_close} (open to ground units, too near a wall)");
        }
        println!("reachable:     {reachable}");
        println!("unreachable:   {}", passable - reachable);
        println!("max_distance:  {max_distance:.3}");
        return Ok(());
    };
    let width = size.unwrap_or_else(|| default_width(map.width(), map.height()));
    let mut canvas = Canvas::new(grid, width)?;
    let max = max_distance.max(1e-9);
    canvas.fill_cells(|c| match fields.integration.distance(c) {
        Some(d) => heat_colour((d / max) as f32),
        None if cost.get(c) == WALL => [50, 50, 50],
        None => [130, 130, 130],
    });
    canvas.hatch_cells(
        |c| cost.get(c) != WALL && fields.cost.get(c) == WALL,
        CLASS_BLOCKED,
    );
    canvas.draw_flow(&fields.flow, [20, 20, 20]);
    let centre = canvas.to_px(grid.cell_centre(cell));
    let r = (canvas.px_per_cell() * 0.6).max(3.0);
    canvas.disc(centre, r + 1.5, [0, 0, 0]);
    canvas.disc(centre, r, [255, 255, 255]);
    canvas.save_png(path)?;
    let striped = if class == 0 {
        String::new()
    } else {
        format!(", size class {class}: {too_close} cells too near a wall striped")
    };
    println!(
        "wrote {} (goal ({}, {}), {reachable} of {passable} passable cells reachable, max \
         distance {max_distance:.3}{striped})",
        path.display(),
        cell.x,
        cell.y
    );
    Ok(())
}

/// `horde field MAP --scen SCEN [--json FILE]`.
fn check_scen(map: &Map, scen: &Path, json: Option<&Path>) -> Result<(), AppError> {
    let scen = load_scen(scen).map_err(|e| AppError::BadInput(e.to_string()))?;
    scen.check_against(map)
        .map_err(|e| AppError::BadInput(e.to_string()))?;
    let report = check_scen_lines(map, &scen.lines).map_err(|e| AppError::Failed(e.to_string()))?;
    println!("lines:         {}", report.lines);
    println!(
        "matched:       {} (within 1e-4 relative + the file's printed precision)",
        report.matched
    );
    println!("max_rel_error: {:.3e}", report.max_rel_error);
    for m in report.mismatches.iter().take(10) {
        println!(
            "  line {}: expected {}, found {}",
            m.line_number,
            m.expected,
            m.found.map_or("no path".to_string(), |f| format!("{f:.6}"))
        );
    }
    if let Some(path) = json {
        let json = serde_json::json!({
            "lines": report.lines,
            "matched": report.matched,
            "max_rel_error": report.max_rel_error,
        });
        horde::formats::files::write_atomic(path, format!("{json:#}\n").as_bytes())
            .map_err(|e| AppError::Failed(format!("{}: {e}", path.display())))?;
    }
    if report.matched == report.lines {
        Ok(())
    } else {
        Err(AppError::Failed(format!(
            "{} of {} lines do not match",
            report.lines - report.matched,
            report.lines
        )))
    }
}
