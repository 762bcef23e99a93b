//! `horde replay`: plays a replay file recorded by `horde run --record`, checking the state
//! hash after every frame, and prints the final state hash.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use horde::{Replay, ReplayError, SimError};

use crate::AppError;
use crate::load::resolve_threads;
use crate::run::file_error;

/// Arguments of `horde replay`.
#[derive(Args, Debug, Clone)]
pub struct ReplayArgs {
    /// The replay file (written by `horde run --record FILE`).
    pub file: PathBuf,
    /// Worker threads, the caller included (default: every core). The result does not
    /// depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Also write the outcome as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// Runs `horde replay`.
pub fn run(args: &ReplayArgs) -> Result<(), AppError> {
    let threads = resolve_threads(args.threads)?;
    if let Some(path) = &args.json {
        crate::guard::check_output("--json", path)?;
    }
    let replay = Replay::load(&args.file).map_err(file_error)?;
    let started = Instant::now();
    let mut frames = 0usize;
    let sim = replay.play(threads, |_| frames += 1).map_err(|e| match e {
        ReplayError::Start(SimError::Snapshot(e)) => file_error(e.in_file(&args.file)),
        e @ (ReplayError::Start(_) | ReplayError::Command { .. }) => {
            AppError::BadInput(format!("{}: {e}", args.file.display()))
        }
        e @ ReplayError::Desync { .. } => AppError::Failed(format!("{}: {e}", args.file.display())),
        e => AppError::Failed(format!("{}: {e}", args.file.display())),
    })?;
    let seconds = started.elapsed().as_secs_f64();
    let hash = sim.state_hash();
    println!(
        "horde: replay {}: {} units, {} frames from frame {}, {} commands, {} threads, {:.2} s",
        crate::guard::printable_path(&args.file),
        sim.unit_count(),
        frames,
        replay.start_frame(),
        replay.commands(),
        threads,
        seconds
    );
    println!("every frame's state hash matches the recording");
    println!("state_hash {hash:016x}");
    if let Some(path) = &args.json {
        let json = serde_json::json!({
            "replay": args.file.display().to_string(),
            "frames": frames,
            "start_frame": replay.start_frame(),
            "end_frame": sim.frame(),
            "commands": replay.commands(),
            "units": sim.unit_count(),
            "threads": threads,
            "state_hash": format!("{hash:016x}"),
        });
        horde::formats::files::write_atomic(path, format!("{json:#}\n").as_bytes())
            .map_err(|e| AppError::Failed(format!("{}: {e}", path.display())))?;
    }
    Ok(())
}
