//! `horde field MAP --scen SCEN`: checks every line of a Moving AI scenario file.

use std::path::PathBuf;

use clap::Args;
use horde_core::{check_scenario_lines, load_map, load_scenario};

use crate::AppError;

/// Arguments of `horde field`.
#[derive(Args, Debug)]
pub struct FieldArgs {
    /// The map (`.map` Moving AI or `.txt` ASCII).
    map: PathBuf,
    /// A Moving AI `.map.scen` file: every line's distance is checked.
    #[arg(long)]
    scen: PathBuf,
    /// Also write the result as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

/// Runs `horde field`.
pub fn run(args: &FieldArgs) -> Result<(), AppError> {
    let map = load_map(&args.map).map_err(|e| AppError::BadInput(e.to_string()))?;
    let scen = load_scenario(&args.scen).map_err(|e| AppError::BadInput(e.to_string()))?;
    scen.check_against(&map)
        .map_err(|e| AppError::BadInput(e.to_string()))?;
    let report =
        check_scenario_lines(&map, &scen.lines).map_err(|e| AppError::Failed(e.to_string()))?;
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
    if let Some(path) = &args.json {
        let json = serde_json::json!({
            "lines": report.lines,
            "matched": report.matched,
            "max_rel_error": report.max_rel_error,
        });
        std::fs::write(path, format!("{json:#}\n"))
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
