//! horde's scenario format: a TOML description of a run (a map, groups of units, timed
//! force fields, terrain edits and goal changes, the simulation's settings) turned into a
//! [`Plan`], a [`horde::Simulation`] ready to run with the commands that happen at
//! given frames. The format is documented in `docs/scenario.md`; `scenarios/` holds examples.
//! The built-in demo ([`Demo`]) is a plan too, and `scenarios/demo.toml` reproduces it.
//!
//! ```no_run
//! use horde_scenario::{Overrides, load_scenario};
//!
//! let mut plan = load_scenario("scenarios/demo.toml".as_ref(), &Overrides::default())?;
//! for frame in 0..plan.frames {
//!     plan.apply_events(frame)?;
//!     plan.sim.step(plan.dt)?;
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Every problem in a file (a syntax error, an unknown key, a wrong type, an impossible value
//! such as a negative count, NaN, a spawn area outside the map or a goal inside a wall, a
//! missing map file) is a [`ScenarioError`] that names the file, the line and the key:
//! `scenarios/x.toml:12: group[1].count: expected a count >= 1, found -3`. Nothing here
//! panics on any input.
//!
//! How a file becomes a plan (one private module a step): `batches` cuts the `[[force]]`
//! tables out of the text (they are parsed in batches, so a file of a million of them never
//! holds them all parsed), serde reads the rest into the `raw` types, `ctx` checks each value
//! against its key and line, `world` builds the map, `build` the groups, units and events,
//! `force` each force field and `config` the `[config]` table.

use std::path::Path;

use horde::SimConfig;

mod batches;
mod build;
mod config;
mod ctx;
mod demo;
mod error;
mod force;
mod plan;
mod raw;
mod world;

pub use demo::{Demo, DemoError, open_cells_near};
pub use error::{ScenarioError, ScenarioErrorKind};
pub use plan::{Plan, TimedEvent, default_threads};

/// Seconds per frame when a scenario gives no `dt`.
pub const DEFAULT_DT: f64 = 1.0 / 30.0;
/// Frames to run when a scenario gives no `frames`.
pub const DEFAULT_FRAMES: u32 = 600;
/// Most worker threads a scenario may ask for.
pub const MAX_THREADS: usize = SimConfig::MAX_THREADS;
/// The most bytes a scenario file may hold (a map of [`MAX_MAP_CELLS`] cells given in
/// `map.rows` is about 17 MB). A larger file, a device such as `/dev/zero` or a folder is
/// refused before it is read.
pub const MAX_SCENARIO_BYTES: u64 = 32 << 20;
/// Most cells (width x height) a scenario's map may have.
pub const MAX_MAP_CELLS: u64 = 1 << 24;
/// Largest distance falloff exponent of a force field.
pub const MAX_FALLOFF: u32 = 64;

/// Values given on the command line that replace the scenario's own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    /// Worker threads (replaces `threads`; with neither, every core is used).
    pub threads: Option<usize>,
    /// Seed (replaces `seed`, and so the level of a `generate` map without its own seed).
    pub seed: Option<u64>,
    /// Frames to run (replaces `frames`).
    pub frames: Option<u32>,
}

/// Reads the scenario file at `path` and builds its [`Plan`], with `overrides` from the
/// command line. Map files are found relative to the scenario file's folder.
pub fn load_scenario(path: &Path, overrides: &Overrides) -> Result<Plan, ScenarioError> {
    let source = path.display().to_string();
    let text =
        horde::formats::files::read_bounded_text(path, MAX_SCENARIO_BYTES, "a scenario file")
            .map_err(|e| ScenarioError {
                source: source.clone(),
                line: None,
                key: None,
                kind: ScenarioErrorKind::Read,
                message: format!("cannot read the scenario file: {e}"),
            })?;
    let base_dir = path.parent().unwrap_or_else(|| Path::new(""));
    parse_scenario(&text, &source, base_dir, overrides)
}

/// Builds the [`Plan`] of scenario `text`. `source_name` labels the file in errors and names
/// the plan when the file has no `name`; map files are found relative to `base_dir`.
pub fn parse_scenario(
    text: &str,
    source_name: &str,
    base_dir: &Path,
    overrides: &Overrides,
) -> Result<Plan, ScenarioError> {
    // The `[[force]]` tables are parsed in batches after the rest of the file (which is
    // parsed without them; errors map its offsets back), so that a file of a million force
    // tables never holds the parsed form of all of them at once.
    let forces = batches::force_batches(text);
    let ctx = ctx::Ctx {
        text,
        source: source_name,
        base: 0,
        holes: &forces,
    };
    let raw: raw::RawScenario = if forces.is_empty() {
        toml::from_str(text)
    } else {
        toml::from_str(&batches::leave_out(text, &forces))
    }
    .map_err(|e| ctx.toml_error(&e))?;
    build::build(&ctx, raw, base_dir, overrides, &forces)
}
