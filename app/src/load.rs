//! Which [`Plan`] a command runs: a scenario file, or the built-in demo; and the thread
//! counts the commands take.

use std::path::Path;

use horde::SimConfig;
use horde_scenario::{Demo, DemoError, Overrides, Plan, default_threads, load_scenario};

use crate::AppError;

/// The plan of `horde run` and `horde render`: the scenario file at `scenario`, or the
/// built-in demo (the only one `units` applies to). Bad scenario files are bad input.
/// `overrides.threads` replaces the scenario's `threads`; without either, every core is used
/// (the demo has no `threads` of its own). [`Plan::threads`] says what was chosen.
pub fn load_plan(
    scenario: Option<&Path>,
    overrides: &Overrides,
    units: Option<u32>,
) -> Result<Plan, AppError> {
    check_threads(overrides.threads)?;
    let mut plan = match scenario {
        Some(path) => {
            if units.is_some() {
                return Err(AppError::BadInput(
                    "--units applies to the built-in demo only: set the counts in the scenario"
                        .into(),
                ));
            }
            load_scenario(path, overrides).map_err(|e| {
                if e.is_bad_input() {
                    AppError::BadInput(e.to_string())
                } else {
                    AppError::Failed(e.to_string())
                }
            })
        }
        None => {
            let defaults = Demo::default();
            let demo = Demo {
                units: units.unwrap_or(defaults.units),
                seed: overrides.seed.unwrap_or(defaults.seed),
                frames: overrides.frames.unwrap_or(defaults.frames),
                threads: overrides.threads.unwrap_or_else(default_threads),
            };
            demo.plan().map_err(|e| match e {
                DemoError::TooManyUnits { .. } => {
                    AppError::BadInput(format!("--units {}: {e}", demo.units))
                }
                _ => AppError::Failed(e.to_string()),
            })
        }
    }?;
    let fingerprint = plan.fingerprint();
    let name = plan.name.clone();
    plan.sim.set_scenario(&name, fingerprint);
    Ok(plan)
}

/// `--threads` checked: `None` stays `None` (the scenario's or every core); a count outside
/// `1..=`[`SimConfig::MAX_THREADS`] is bad input (exit code 2), for every command and plan.
pub fn check_threads(threads: Option<usize>) -> Result<Option<usize>, AppError> {
    match threads {
        Some(n) if !(1..=SimConfig::MAX_THREADS).contains(&n) => Err(AppError::BadInput(format!(
            "--threads {n}: expected a thread count in 1..={}",
            SimConfig::MAX_THREADS
        ))),
        t => Ok(t),
    }
}

/// The thread count of `--threads` where no scenario gives one: every core when absent;
/// out of range is bad input ([`check_threads`]).
pub fn resolve_threads(threads: Option<usize>) -> Result<usize, AppError> {
    Ok(check_threads(threads)?.unwrap_or_else(default_threads))
}
