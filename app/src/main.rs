//! The `horde` command-line app: runs a crowd headless and checks fields against Moving AI
//! benchmark files.

mod bench;
mod field_check;
mod guard;
mod load;
mod map_cmd;
mod render;
mod replay;
mod run;
mod timings;
mod view;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Moves huge RTS armies: flow fields, ray-fan steering and force fields.
#[derive(Parser, Debug)]
#[command(name = "horde", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Runs a scenario file (or the built-in demo) headless and prints per-stage times and
    /// the outcome.
    Run(run::RunArgs),
    /// Checks horde's integration field against a Moving AI scenario file (--scen), or
    /// draws the fields toward one goal (--goal).
    Field(field_check::FieldArgs),
    /// Generates a level: Moving AI .map, ASCII .txt or .png picture (ASCII to stdout).
    Map(map_cmd::MapArgs),
    /// Runs a crowd and draws it: the last frame as a PNG or the run as a GIF.
    Render(render::RenderArgs),
    /// Measures horde against its peers (ORCA, kiddo, Dijkstra) in one run and prints tables.
    Bench(bench::BenchArgs),
    /// Plays a replay file (from `horde run --record`), checking every frame's state hash.
    Replay(replay::ReplayArgs),
    /// Opens the interactive viewer on a scenario file or the built-in demo (feature `viewer`).
    View(view::ViewArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let outcome = match cli.command {
        None => run::run(&run::RunArgs::default()),
        Some(Command::Run(args)) => run::run(&args),
        Some(Command::Field(args)) => field_check::run(&args),
        Some(Command::Map(args)) => map_cmd::run(&args),
        Some(Command::Render(args)) => render::run(&args),
        Some(Command::Bench(args)) => bench::run(&args),
        Some(Command::Replay(args)) => replay::run(&args),
        Some(Command::View(args)) => view::run(&args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        // Messages quote file contents and paths: control characters are escaped.
        Err(AppError::BadInput(msg)) => {
            eprintln!("error: {}", guard::printable_message(&msg));
            ExitCode::from(2)
        }
        Err(AppError::Failed(msg)) => {
            eprintln!("error: {}", guard::printable_message(&msg));
            ExitCode::FAILURE
        }
    }
}

/// How a command failed: bad input (exit code 2) or a failure while running (exit code 1).
#[derive(Debug)]
pub enum AppError {
    /// The user's input was wrong.
    BadInput(String),
    /// Something failed while running.
    Failed(String),
}
