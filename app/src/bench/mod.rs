//! `horde bench`: horde against the crates users would pick instead, on the same machine, in
//! one run, with the same maps and units, the dense army's life phase by phase, and an army
//! at rest. Seven tables (one module each), printed and optionally written as JSON; `--plot` draws ms per
//! frame against units (log-log).
//!
//! Every time is the median of several repetitions measured in this run.

#[cfg(feature = "rapier")]
mod bodies;
mod dense;
mod fields;
mod frame;
mod neighbours;
mod orca;
mod plot;
mod rest;
mod scenario;
mod seed;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{Map as JsonMap, Value};

use crate::AppError;
use scenario::Level;

/// Arguments of `horde bench`.
#[derive(Args, Debug, Clone, Default)]
pub struct BenchArgs {
    /// Smaller sizes and fewer frames: the whole run takes well under a minute.
    #[arg(long)]
    pub quick: bool,
    /// Also write every table as JSON (an object of lists of rows) to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Draw ms per frame against units (log-log; horde and ORCA) to this PNG file.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Folder holding the Moving AI maps (Cauldron.map); default: `../shared/data/movingai`
    /// next to the repository. Tables that use it are skipped with a note when it is absent.
    #[arg(long)]
    pub movingai: Option<PathBuf>,
    /// Run only this table (repeat for more): frame, dense, rest, orca, bodies, neighbours,
    /// fields, seed. Default: all.
    #[arg(long = "table", value_name = "NAME")]
    pub tables: Vec<String>,
}

/// One row of a table, columns in order: sizes, times in ms, a ratio where there is one.
pub type Row = Vec<(String, Value)>;

/// The value of column `key` of `row`.
pub fn get<'a>(row: &'a Row, key: &str) -> Option<&'a Value> {
    row.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// What every table gets: the size switch, the levels and the progress bar.
pub struct Ctx {
    /// `--quick` was given.
    pub quick: bool,
    /// The generated clustered-obstacle level of the frame benchmark.
    pub clustered: Level,
    /// `Cauldron.map` when present.
    pub cauldron: Option<Level>,
    /// Progress on a terminal, hidden otherwise.
    pub progress: ProgressBar,
}

impl Ctx {
    /// Shows what is being measured now.
    pub fn status(&self, msg: impl Into<String>) {
        self.progress.set_message(msg.into());
    }
}

/// Median wall time of `reps` calls of `f`, in milliseconds (`reps` >= 1).
pub fn median_ms(reps: usize, mut f: impl FnMut()) -> f64 {
    let mut samples: Vec<Duration> = (0..reps.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    median(&mut samples)
}

/// Median of `samples` in milliseconds (0 when empty).
pub fn median(samples: &mut [Duration]) -> f64 {
    samples.sort_unstable();
    samples
        .get(samples.len() / 2)
        .map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

/// `a / b`, rounded for display, or null when `b` is zero.
pub fn ratio(a: f64, b: f64) -> Value {
    if b > 0.0 {
        Value::from(round(a / b))
    } else {
        Value::Null
    }
}

/// Rounds to 4 significant digits (JSON stays readable).
pub fn round(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let digits = 3 - x.abs().log10().floor() as i32;
    let scale = 10f64.powi(digits);
    (x * scale).round() / scale
}

/// Builds a row from `(key, value)` pairs.
pub fn row<const N: usize>(pairs: [(&str, Value); N]) -> Row {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// Runs `horde bench`.
pub fn run(args: &BenchArgs) -> Result<(), AppError> {
    let started = Instant::now();
    let progress = if std::io::stderr().is_terminal() {
        let bar = ProgressBar::with_draw_target(
            Some(8 + u64::from(cfg!(feature = "rapier"))),
            ProgressDrawTarget::stderr(),
        );
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len}  {elapsed}  {msg}")
                .map_err(|e| AppError::Failed(e.to_string()))?,
        );
        bar
    } else {
        ProgressBar::hidden()
    };
    progress.set_message("generating the clustered level");
    let clustered = scenario::clustered()?;
    let dir = args
        .movingai
        .clone()
        .unwrap_or_else(scenario::default_movingai_dir);
    let cauldron = scenario::cauldron(&dir);
    let mut notes = Vec::new();
    if cauldron.is_none() {
        notes.push(format!(
            "{} is absent: the Moving AI rows are skipped and `fields` uses a generated level",
            dir.join("Cauldron.map").display()
        ));
    }
    progress.inc(1);
    let ctx = Ctx {
        quick: args.quick,
        clustered,
        cauldron,
        progress,
    };

    let mut tables: Vec<(&str, Vec<Row>)> = Vec::new();
    type Table = fn(&Ctx) -> Result<Vec<Row>, AppError>;
    let all: Vec<(&str, Table)> = vec![
        ("frame", frame::run),
        ("dense", dense::run),
        ("rest", rest::run),
        ("orca", orca::run),
        ("neighbours", neighbours::run),
        ("fields", fields::run),
        ("seed", seed::run),
    ];
    #[cfg(feature = "rapier")]
    let all = {
        let mut all = all;
        all.insert(4, ("bodies", bodies::run));
        all
    };
    #[cfg(not(feature = "rapier"))]
    notes.push(
        "the `bodies` table (rapier2d against horde's solid bodies) needs the build with \
         `--features rapier`"
            .to_owned(),
    );
    for wanted in &args.tables {
        if !all.iter().any(|(name, _)| name == wanted) && wanted != "bodies" {
            let names: Vec<&str> = all.iter().map(|(name, _)| *name).collect();
            return Err(AppError::Failed(format!(
                "--table {wanted}: no such table (the tables: {})",
                names.join(", ")
            )));
        }
    }
    let chosen = |name: &str| args.tables.is_empty() || args.tables.iter().any(|t| t == name);
    for (name, table) in all {
        if !chosen(name) {
            continue;
        }
        let rows = table(&ctx)?;
        ctx.progress.inc(1);
        ctx.progress.suspend(|| print_table(name, &rows));
        tables.push((name, rows));
    }
    ctx.progress.finish_and_clear();
    for note in &notes {
        println!("note: {note}");
    }
    println!(
        "{} run in {:.1} s",
        if args.quick { "quick" } else { "full" },
        started.elapsed().as_secs_f64()
    );

    if let Some(path) = &args.json {
        let mut doc = JsonMap::new();
        doc.insert("quick".into(), Value::from(args.quick));
        doc.insert(
            "threads_available".into(),
            Value::from(std::thread::available_parallelism().map_or(1, |n| n.get())),
        );
        doc.insert(
            "notes".into(),
            Value::Array(notes.iter().map(|n| Value::from(n.as_str())).collect()),
        );
        for (name, rows) in &tables {
            doc.insert(
                (*name).into(),
                Value::Array(
                    rows.iter()
                        .map(|r| Value::Object(r.iter().cloned().collect()))
                        .collect(),
                ),
            );
        }
        let text = serde_json::to_string_pretty(&Value::Object(doc))
            .map_err(|e| AppError::Failed(e.to_string()))?;
        std::fs::write(path, text + "\n")
            .map_err(|e| AppError::Failed(format!("cannot write {}: {e}", path.display())))?;
    }
    if let Some(path) = &args.plot {
        let find = |name: &str| {
            tables
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(&[][..], |(_, r)| r.as_slice())
        };
        plot::draw(path, find("orca"))?;
    }
    Ok(())
}

/// Prints `rows` as an aligned text table; columns are the keys of the first row (plus any
/// later ones), in order.
fn print_table(name: &str, rows: &[Row]) {
    println!("\n## {name}");
    let mut columns: Vec<&str> = Vec::new();
    for r in rows {
        for (k, _) in r {
            if !columns.contains(&k.as_str()) {
                columns.push(k);
            }
        }
    }
    let cell = |v: Option<&Value>| match v {
        None | Some(Value::Null) => "-".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => match (n.as_u64(), n.as_f64()) {
            (Some(u), _) => u.to_string(),
            (None, Some(f)) if f.abs() >= 100.0 => format!("{f:.1}"),
            (None, Some(f)) if f.abs() >= 1.0 => format!("{f:.2}"),
            (None, Some(f)) => format!("{f:.3}"),
            _ => n.to_string(),
        },
        Some(other) => other.to_string(),
    };
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| columns.iter().map(|c| cell(get(r, c))).collect())
        .collect();
    let widths: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| body.iter().map(|b| b[i].len()).fold(c.len(), usize::max))
        .collect();
    let line = |cells: Vec<String>| {
        cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:>w$}"))
            .collect::<Vec<_>>()
            .join("  ")
    };
    println!("{}", line(columns.iter().map(|c| c.to_string()).collect()));
    for b in body {
        println!("{}", line(b));
    }
}
