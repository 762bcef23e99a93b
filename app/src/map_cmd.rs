//! `horde map --seed S [--size WxH] [--cells-per-tile K] [--out FILE]`: the level generator.
//!
//! The level is `generate_level(seed, LevelConfig::default().with_size(W, H)
//! .with_cells_per_tile(K).with_guarantee_reachable(true))`, written as a Moving AI `.map`, a
//! horde ASCII `.txt` or a `.png` picture by the output's extension, or as ASCII on stdout.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use clap::Args;
use horde::Map;
use horde::formats::{write_ascii_map, write_movingai_map};
use horde::level::{LevelConfig, generate_level};

use crate::AppError;
use crate::render::{Canvas, default_width};

/// Most cells a generated map may have (4096 x 4096).
pub const MAX_CELLS: u64 = 4096 * 4096;

/// A level size in tiles, written `WxH` (e.g. `13x13`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileSize {
    /// Tile columns.
    pub width: u32,
    /// Tile rows.
    pub height: u32,
}

impl FromStr for TileSize {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("`{s}` is not a size: write WIDTHxHEIGHT in tiles, e.g. 13x13");
        let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
        let width = w.trim().parse().map_err(|_| bad())?;
        let height = h.trim().parse().map_err(|_| bad())?;
        Ok(Self { width, height })
    }
}

impl std::fmt::Display for TileSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}", self.width, self.height)
    }
}

/// Arguments of `horde map`.
#[derive(Args, Debug)]
pub struct MapArgs {
    /// Seed of the generator: the same seed and settings give the same level.
    #[arg(long)]
    seed: u64,
    /// Level size in tiles, WIDTHxHEIGHT (each side at least 5).
    #[arg(long, value_name = "WxH", default_value = "13x13")]
    size: TileSize,
    /// Crowd cells per tile side: the map is (W*K)x(H*K) cells.
    #[arg(long, value_name = "K", default_value_t = 4)]
    cells_per_tile: u32,
    /// Output file: `.map` (Moving AI, lossy for horde-only kinds), `.txt` (horde ASCII, every
    /// kind) or `.png` (a picture). ASCII on stdout when absent.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// The generator settings `horde map` uses for a size and cells per tile.
#[must_use]
pub fn level_config(size: TileSize, cells_per_tile: u32) -> LevelConfig {
    LevelConfig::default()
        .with_size(size.width, size.height)
        .with_cells_per_tile(cells_per_tile)
        .with_guarantee_reachable(true)
}

/// Runs `horde map`.
///
/// # Errors
/// [`AppError::BadInput`] for a size or cells per tile the generator refuses, a map above
/// [`MAX_CELLS`] cells or an output extension other than `.map`, `.txt` and `.png`;
/// [`AppError::Failed`] when the file cannot be written.
pub fn run(args: &MapArgs) -> Result<(), AppError> {
    let out_kind = args.out.as_deref().map(OutKind::from_path).transpose()?;
    if let Some(out) = &args.out {
        crate::guard::check_output("--out", out)?;
    }
    let cpt = u64::from(args.cells_per_tile);
    let cells = u64::from(args.size.width)
        .saturating_mul(u64::from(args.size.height))
        .saturating_mul(cpt.saturating_mul(cpt));
    if cells > MAX_CELLS {
        return Err(AppError::BadInput(format!(
            "--size {} with --cells-per-tile {} makes {cells} cells (at most {MAX_CELLS})",
            args.size, args.cells_per_tile
        )));
    }
    let config = level_config(args.size, args.cells_per_tile);
    let level =
        generate_level(args.seed, &config).map_err(|e| AppError::BadInput(e.to_string()))?;
    let map = level.map();
    let (Some(kind), Some(path)) = (out_kind, args.out.as_deref()) else {
        print!("{}", write_ascii_map(map));
        return Ok(());
    };
    match kind {
        OutKind::MovingAi => write_text(path, &write_movingai_map(map))?,
        OutKind::Ascii => write_text(path, &write_ascii_map(map))?,
        OutKind::Png => {
            let canvas = terrain_picture(map)?;
            canvas.save_png(path)?;
        }
    }
    println!(
        "wrote {} ({}x{} cells, seed {})",
        path.display(),
        map.width(),
        map.height(),
        args.seed
    );
    Ok(())
}

/// A picture of `map`'s terrain, [`default_width`] pixels wide.
///
/// # Errors
/// [`AppError::BadInput`] when the picture would be too tall (see [`Canvas::new`]).
pub fn terrain_picture(map: &Map) -> Result<Canvas, AppError> {
    let mut canvas = Canvas::new(map.grid(), default_width(map.width(), map.height()))?;
    canvas.draw_terrain(map);
    Ok(canvas)
}

fn write_text(path: &Path, text: &str) -> Result<(), AppError> {
    horde::formats::files::write_atomic(path, text.as_bytes())
        .map_err(|e| AppError::Failed(format!("{}: {e}", path.display())))
}

/// What `--out` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OutKind {
    MovingAi,
    Ascii,
    Png,
}

impl OutKind {
    fn from_path(path: &Path) -> Result<Self, AppError> {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if ext.eq_ignore_ascii_case("map") {
            Ok(Self::MovingAi)
        } else if ext.eq_ignore_ascii_case("txt") {
            Ok(Self::Ascii)
        } else if ext.eq_ignore_ascii_case("png") {
            Ok(Self::Png)
        } else {
            Err(AppError::BadInput(format!(
                "{}: the output must end in .map, .txt or .png",
                path.display()
            )))
        }
    }
}
