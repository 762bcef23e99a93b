//! Runs a scenario file (docs/scenario.md) the way an engine that reuses horde's files would:
//! `horde_scenario` reads it into a plan (the simulation with its units, and the commands
//! due at given frames), and the loop applies each frame's commands before stepping. Prints
//! each group's outcome and the state hash, which `horde run FILE` prints too.
//!
//! `cargo run --release --example scenario_file -- [FILE] [THREADS]` (default
//! `scenarios/corridor.toml`, every core). A bad file is refused with its line and key.

use std::path::Path;
use std::process::ExitCode;

use horde_scenario::{Overrides, load_scenario};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let file = args
        .next()
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/corridor.toml").into());
    let overrides = Overrides {
        threads: args.next().and_then(|t| t.parse().ok()),
        ..Overrides::default()
    };
    let mut plan = match load_scenario(Path::new(&file), &overrides) {
        Ok(plan) => plan,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    for frame in 0..plan.frames {
        let stepped = plan
            .apply_events(frame)
            .and_then(|_| plan.sim.step(plan.dt));
        if let Err(e) = stepped {
            eprintln!("frame {frame}: {e}");
            return ExitCode::FAILURE;
        }
    }
    for status in plan.sim.group_status() {
        println!(
            "{}: {} units, {} arrived, {} settled, {} moving, {} cannot reach the goal",
            plan.group_name(status.group),
            status.units,
            status.arrived,
            status.settled,
            status.moving,
            status.unreachable
        );
    }
    println!(
        "{}: {} frames on {} threads, state_hash {:016x}",
        plan.name,
        plan.frames,
        plan.threads(),
        plan.sim.state_hash()
    );
    ExitCode::SUCCESS
}
