//! `horde view`: the interactive viewer (cargo feature `viewer`: eframe + glow, with the
//! puffin_egui profiler). It runs a scenario file or the built-in demo in a window; the user
//! pans and zooms, sets goals, drops force fields, paints walls and spawns units, all through
//! the public `Simulation` API.
//!
//! - `camera`: screen <-> world.
//! - `mesh`: what is drawn (terrain and heat-map images, units as one mesh, flow arrows).
//! - `input`: the mouse tools as actions on the simulation.
//! - `panel`: the side panel and the keys.
//! - `viewer`: the eframe app tying them together (and `--frames`/`--screenshot`); its
//!   `scene` handles the mouse over the map and draws it.
//!
//! Built without the feature, `horde view` says how to rebuild and exits with code 2.

use std::path::PathBuf;

use clap::Args;

use crate::AppError;

#[cfg(feature = "viewer")]
pub mod camera;
#[cfg(feature = "viewer")]
pub mod input;
#[cfg(feature = "viewer")]
pub mod mesh;
#[cfg(feature = "viewer")]
pub mod panel;
#[cfg(feature = "viewer")]
mod viewer;

/// What `horde view` says when the binary was built without the viewer.
#[cfg(not(feature = "viewer"))]
pub const NOT_BUILT: &str = "horde was built without the viewer: rebuild with \
     `--features viewer`, e.g. `cargo run --release -p horde-app --features viewer -- view`";

/// Smallest window side `--size` accepts, in points.
pub const MIN_WINDOW_SIDE: u32 = 320;
/// Largest window side `--size` accepts, in points.
pub const MAX_WINDOW_SIDE: u32 = 8192;

/// A window size in points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowSize {
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

/// Parses `WIDTHxHEIGHT` (each side in `MIN_WINDOW_SIDE..=MAX_WINDOW_SIDE`).
///
/// # Errors
/// A message naming the bad value.
pub fn parse_window_size(s: &str) -> Result<WindowSize, String> {
    let bad = || format!("{s:?} is not WIDTHxHEIGHT, e.g. 1280x800");
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let (width, height) = (
        w.trim().parse::<u32>().map_err(|_| bad())?,
        h.trim().parse::<u32>().map_err(|_| bad())?,
    );
    for side in [width, height] {
        if !(MIN_WINDOW_SIDE..=MAX_WINDOW_SIDE).contains(&side) {
            return Err(format!(
                "window side {side} must be in {MIN_WINDOW_SIDE}..={MAX_WINDOW_SIDE}"
            ));
        }
    }
    Ok(WindowSize { width, height })
}

/// Arguments of `horde view`.
#[derive(Args, Debug, Clone)]
#[cfg_attr(not(feature = "viewer"), allow(dead_code))]
pub struct ViewArgs {
    /// A scenario file (TOML, see docs/scenario.md); the built-in demo when absent.
    pub scenario: Option<PathBuf>,
    /// Close the window after this many drawn frames (one simulation step each).
    #[arg(long)]
    pub frames: Option<u32>,
    /// Save a PNG of the window after `--frames` frames (default 120), then close.
    #[arg(long, value_name = "FILE.png")]
    pub screenshot: Option<PathBuf>,
    /// Window size in points.
    #[arg(long, value_name = "WxH", default_value = "1280x800", value_parser = parse_window_size)]
    pub size: WindowSize,
    /// Start with the selected group's flow field drawn as arrows (key F toggles it; key C
    /// cycles the size class whose field the arrows and the heat map show).
    #[arg(long)]
    pub flow: bool,
    /// Start with the selected group's integration field drawn as a heat map (key H).
    #[arg(long)]
    pub heat: bool,
    /// Start with the puffin profiler window open (key P toggles it).
    #[arg(long)]
    pub profiler: bool,
    /// Built-in demo only: number of units (default 6000).
    #[arg(long)]
    pub units: Option<u32>,
    /// Seed of the level and of the per-unit randomness (default: the scenario's; 1 for the
    /// built-in demo).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Worker threads, the caller included (default: every core).
    #[arg(long)]
    pub threads: Option<usize>,
}

/// Runs `horde view`.
///
/// # Errors
/// Without the `viewer` feature: [`AppError::BadInput`] saying how to rebuild. With it: bad
/// arguments or scenario files as for `horde run`, and a window that cannot open or a
/// screenshot that cannot be written as [`AppError::Failed`].
pub fn run(args: &ViewArgs) -> Result<(), AppError> {
    #[cfg(feature = "viewer")]
    {
        viewer::run(args)
    }
    #[cfg(not(feature = "viewer"))]
    {
        let _ = args;
        Err(AppError::BadInput(NOT_BUILT.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_sizes_parse_and_bad_ones_say_why() {
        assert_eq!(
            parse_window_size("1280x800"),
            Ok(WindowSize {
                width: 1280,
                height: 800
            })
        );
        assert_eq!(
            parse_window_size("640X480").map(|s| (s.width, s.height)),
            Ok((640, 480))
        );
        for bad in ["", "1280", "x800", "12a0x800", "1280x-5", "1280*800"] {
            let err = parse_window_size(bad).expect_err(bad);
            assert!(err.contains("WIDTHxHEIGHT"), "{bad}: {err}");
        }
        let err = parse_window_size("100x800").expect_err("too narrow");
        assert!(err.contains("320"), "{err}");
        assert!(parse_window_size("1000x9000").is_err());
    }
}
