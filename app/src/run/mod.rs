//! `horde run`: runs a plan headless (progress bar on a terminal), then prints per-stage
//! times and the outcome; optionally writes JSON, a per-unit CSV trace and puffin captures.

use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Args;
use horde::GroupId;
use horde::bodies::BodyStats;
use horde::{FileError, GroupReach, SimError, Simulation, Snapshot, UnitState};
use horde_scenario::{Overrides, Plan};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::AppError;
use crate::guard::{self, printable};
use crate::load::{check_threads, load_plan};
use crate::timings::DurationStats;

mod report;
use report::{Outcome, Report};

/// Arguments of `horde run`.
#[derive(Args, Debug, Clone, Default)]
pub struct RunArgs {
    /// A scenario file (TOML, see docs/scenario.md); the built-in demo when absent.
    pub scenario: Option<PathBuf>,
    /// Frames to run (default: the scenario's; the built-in demo runs 4500 frames at 30 per
    /// simulated second).
    #[arg(long)]
    pub frames: Option<u32>,
    /// Worker threads, the caller included (default: every core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Number of units of the built-in demo (default 6000).
    #[arg(long)]
    pub units: Option<u32>,
    /// Seed of the built-in demo's level and of the per-unit randomness (default 1).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Also write the summary as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write every unit's state every `--trace-every` frames to this CSV file.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// Frames between two trace rows of a unit.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub trace_every: u32,
    /// Serve the puffin profiler on this address (puffin_viewer connects to it).
    #[arg(long, num_args = 0..=1, default_missing_value = "127.0.0.1:8585")]
    pub profile_server: Option<String>,
    /// Save a puffin capture of the run to this file (open it with puffin_viewer).
    #[arg(long)]
    pub profile_out: Option<PathBuf>,
    /// Record the run's commands to this replay file (play it back with `horde replay`).
    #[arg(long)]
    pub record: Option<PathBuf>,
    /// Save a snapshot of the whole state every this many frames, into --snapshot-dir.
    #[arg(long, requires = "snapshot_dir", value_parser = clap::value_parser!(u32).range(1..))]
    pub snapshot_every: Option<u32>,
    /// Folder for the snapshots of --snapshot-every (files frame-NNNNNNNN.hsnap).
    #[arg(long, requires = "snapshot_every")]
    pub snapshot_dir: Option<PathBuf>,
    /// Continue from this snapshot (of the same scenario) instead of starting afresh: the
    /// run goes on from the snapshot's frame to the scenario's last.
    #[arg(long)]
    pub resume: Option<PathBuf>,
}

/// A histogram of non-negative figures in bins of `1 / BINS_PER_UNIT` up to `MAX`, for
/// percentiles over millions of samples without keeping them.
#[derive(Clone, Debug)]
struct Histogram {
    bins: Vec<u64>,
    count: u64,
}

impl Histogram {
    const BINS_PER_UNIT: f32 = 1000.0;
    const MAX: f32 = 8.0;

    fn new() -> Self {
        Self {
            bins: vec![0; (Self::MAX * Self::BINS_PER_UNIT) as usize + 1],
            count: 0,
        }
    }

    fn add(&mut self, value: f32) {
        let i = (value.max(0.0) * Self::BINS_PER_UNIT).min(Self::MAX * Self::BINS_PER_UNIT);
        // NaN maps to the last bin too.
        let last = self.bins.len() - 1;
        let i = if i.is_nan() {
            last
        } else {
            (i as usize).min(last)
        };
        self.bins[i] += 1;
        self.count += 1;
    }

    /// The value below which a fraction `q` of the samples lie (to a bin), 0 with none.
    fn quantile(&self, q: f64) -> f64 {
        let target = (q * self.count as f64).ceil() as u64;
        let mut seen = 0;
        for (i, &n) in self.bins.iter().enumerate() {
            seen += n;
            if seen >= target.max(1) {
                return (i as f64 + 1.0) / f64::from(Self::BINS_PER_UNIT);
            }
        }
        0.0
    }
}

/// The run's body figures (docs/run-output.md defines each).
#[derive(Clone, Debug)]
struct BodyFigures {
    overlap_sum: f64,
    pairs: u64,
    overlap_max: f32,
    overlaps: Histogram,
    /// (frame, mean overlap) of the frame with the highest mean.
    worst_frame: Option<(u32, f64)>,
    wall_depth_max: f32,
    wall_violations: usize,
    walled_in: usize,
    /// Displacement per frame over (top speed + external speed) x dt.
    speed: Histogram,
}

impl BodyFigures {
    fn new() -> Self {
        Self {
            overlap_sum: 0.0,
            pairs: 0,
            overlap_max: 0.0,
            overlaps: Histogram::new(),
            worst_frame: None,
            wall_depth_max: 0.0,
            wall_violations: 0,
            walled_in: 0,
            speed: Histogram::new(),
        }
    }

    /// Adds the state after frame `frame` (`before`: the units before it).
    fn sample(
        &mut self,
        sim: &Simulation,
        frame: u32,
        before: &[UnitState],
        after: &[UnitState],
        dt: f32,
    ) {
        let overlaps = &mut self.overlaps;
        let stats = BodyStats::measure(sim.world(), &sim.map(), |o| overlaps.add(o));
        self.overlap_sum += stats.overlap_sum;
        self.pairs += stats.touching_pairs;
        self.overlap_max = self.overlap_max.max(stats.overlap_max);
        if stats.touching_pairs > 0
            && self
                .worst_frame
                .is_none_or(|(_, m)| stats.overlap_mean() > m)
        {
            self.worst_frame = Some((frame, stats.overlap_mean()));
        }
        let walled_in = sim.horde().last_walled_in();
        self.walled_in = self.walled_in.max(walled_in);
        self.wall_depth_max = self.wall_depth_max.max(stats.wall_depth_max);
        self.wall_violations += stats.in_walls;
        // Units are in id order in both lists; a unit spawned or despawned this frame
        // shows in one only.
        let mut old = before.iter().peekable();
        for u in after {
            while old.next_if(|o| o.id < u.id).is_some() {}
            if let Some(o) = old.next_if(|o| o.id == u.id) {
                let allowed = (u.max_speed + o.external.length().max(u.external.length())) * dt;
                let moved = o.position.distance(u.position);
                if allowed > 0.0 {
                    self.speed.add(moved / allowed);
                } else if moved > 0.0 {
                    self.speed.add(Histogram::MAX);
                }
            }
        }
    }

    fn overlap_mean(&self) -> f64 {
        if self.pairs == 0 {
            0.0
        } else {
            self.overlap_sum / self.pairs as f64
        }
    }
}

/// Where the run's profile goes.
struct Profiling {
    server: Option<puffin_http::Server>,
    capture: Option<(std::path::PathBuf, puffin::GlobalFrameView)>,
}

impl Profiling {
    fn start(args: &RunArgs) -> Result<Option<Self>, AppError> {
        if args.profile_server.is_none() && args.profile_out.is_none() {
            return Ok(None);
        }
        let server = match &args.profile_server {
            Some(addr) => {
                if let Some(warning) = guard::public_address_warning(addr) {
                    eprintln!("{warning}");
                }
                let server = puffin_http::Server::new(addr)
                    .map_err(|e| AppError::BadInput(format!("--profile-server {addr}: {e}")))?;
                eprintln!(
                    "puffin profiler listening on {addr} (connect with puffin_viewer --url {addr})"
                );
                Some(server)
            }
            None => None,
        };
        let capture = args
            .profile_out
            .clone()
            .map(|path| (path, puffin::GlobalFrameView::default()));
        puffin::set_scopes_on(true);
        Ok(Some(Self { server, capture }))
    }

    fn finish(self) -> Result<(), AppError> {
        puffin::GlobalProfiler::lock().new_frame();
        if let Some((path, view)) = self.capture {
            let file = File::create(&path)
                .map_err(|e| AppError::Failed(format!("{}: {e}", path.display())))?;
            let mut out = BufWriter::new(file);
            view.lock()
                .write(&mut out)
                .map_err(|e| AppError::Failed(format!("{}: {e}", path.display())))?;
            out.flush()
                .map_err(|e| AppError::Failed(format!("{}: {e}", path.display())))?;
            eprintln!("puffin capture written to {}", path.display());
        }
        drop(self.server);
        puffin::set_scopes_on(false);
        Ok(())
    }
}

fn create(path: &Path) -> Result<BufWriter<File>, AppError> {
    File::create(path)
        .map(BufWriter::new)
        .map_err(|e| AppError::Failed(format!("{}: {e}", path.display())))
}

/// Checks every output path of `args` before the run, so that a bad one fails at once rather
/// than after the run (bad input, exit code 2); takes the lock of `--snapshot-dir`.
fn check_outputs(args: &RunArgs) -> Result<Option<guard::FolderLock>, AppError> {
    let mut outputs: Vec<(&str, &std::path::PathBuf)> = Vec::new();
    for (flag, path) in [
        ("--json", &args.json),
        ("--trace", &args.trace),
        ("--record", &args.record),
        ("--profile-out", &args.profile_out),
    ] {
        if let Some(path) = path {
            guard::check_output(flag, path)?;
            outputs.push((flag, path));
        }
    }
    guard::distinct_outputs(&outputs)?;
    args.snapshot_dir
        .as_deref()
        .map(|dir| guard::lock_folder("--snapshot-dir", dir))
        .transpose()
}

/// Runs `horde run`.
pub fn run(args: &RunArgs) -> Result<(), AppError> {
    let started = Instant::now();
    check_threads(args.threads)?;
    let _lock = check_outputs(args)?;
    let overrides = Overrides {
        threads: args.threads,
        seed: args.seed,
        frames: args.frames,
    };
    let mut plan = load_plan(args.scenario.as_deref(), &overrides, args.units)?;
    if let Some(path) = &args.resume {
        let threads = plan.threads();
        resume(&mut plan, path, threads)?;
    }
    run_plan(plan, args, started.elapsed())
}

/// How a snapshot or replay file problem is reported: bad input (exit 2) when the file is
/// missing or its contents are wrong, a failure (exit 1) when the system failed.
pub fn file_error(e: FileError) -> AppError {
    if e.is_bad_input() {
        AppError::BadInput(e.to_string())
    } else {
        AppError::Failed(e.to_string())
    }
}

/// Replaces the plan's simulation by the snapshot at `path`, after checking it was taken
/// from this plan ([`Snapshot::differences`]: the map it started on, the seed, the settings
/// and the scenario's fingerprint). A snapshot of another run is bad input (exit code 2)
/// naming everything that differs.
fn resume(plan: &mut Plan, path: &Path, threads: usize) -> Result<(), AppError> {
    let snapshot = Snapshot::load(path).map_err(file_error)?;
    let differences = snapshot.differences(plan.sim.horde());
    if !differences.is_empty() {
        return Err(AppError::BadInput(format!(
            "{}: the snapshot was taken from another run than {}: {}; resume with the scenario and options the snapshot was taken with",
            path.display(),
            printable(&plan.name),
            printable(&differences.join("; "))
        )));
    }
    plan.sim = Simulation::from_snapshot(&snapshot, threads).map_err(|e| match e {
        SimError::Snapshot(e) => file_error(e.in_file(path)),
        e => AppError::BadInput(format!("{}: {e}", path.display())),
    })?;
    Ok(())
}

/// Writes one trace row per unit: the state after `frame` frames (0 = before the first).
fn write_trace(
    w: &mut BufWriter<File>,
    path: &Path,
    frame: u32,
    units: &[UnitState],
) -> Result<(), AppError> {
    for u in units {
        writeln!(
            w,
            "{},{},{},{},{},{},{},{},{},{},{},{},{}",
            frame,
            u.id.0,
            u.group.0,
            u.position.x,
            u.position.y,
            u.velocity.x,
            u.velocity.y,
            u.external.length(),
            u.stun,
            u8::from(u.arrived),
            u8::from(u.settled),
            u8::from(u.status == horde::UnitStatus::Blocked),
            u8::from(u.asleep)
        )
        .map_err(|e| AppError::Failed(format!("{}: {e}", path.display())))?;
    }
    Ok(())
}

/// The times units were found unable to reach their goal (at the start of the run and after
/// goal changes): the first [`CutOff::KEPT`] in full, the rest counted, so memory stays
/// bounded however many goal changes a run makes.
#[derive(Default)]
struct CutOff {
    reports: Vec<CutOffReport>,
    more: usize,
}

struct CutOffReport {
    frame: u32,
    cause: &'static str,
    group: GroupId,
    unreachable: usize,
    reachable: usize,
    /// The first few unreachable units' ids.
    first_units: Vec<u32>,
}

impl CutOff {
    const KEPT: usize = 64;

    fn add(&mut self, frame: u32, cause: &'static str, reach: &GroupReach) {
        if reach.unreachable.is_empty() {
            return;
        }
        if self.reports.len() == Self::KEPT {
            self.more += 1;
            return;
        }
        self.reports.push(CutOffReport {
            frame,
            cause,
            group: reach.group,
            unreachable: reach.unreachable.len(),
            reachable: reach.reachable,
            first_units: reach.unreachable.iter().take(16).map(|u| u.0).collect(),
        });
    }
}

/// What the frames of a run measured, in memory bounded however many frames run:
/// summaries of the times, not a record per frame.
struct Tally {
    per_stage: Vec<(String, DurationStats)>,
    totals: DurationStats,
    bodies: BodyFigures,
    /// Units that cannot reach their goal: where the run starts, and after each goal change.
    cut_off: CutOff,
    quarantined: usize,
    snapshots_written: usize,
}

impl Tally {
    fn new() -> Self {
        Self {
            per_stage: Vec::new(),
            totals: DurationStats::new(),
            bodies: BodyFigures::new(),
            cut_off: CutOff::default(),
            quarantined: 0,
            snapshots_written: 0,
        }
    }

    /// Adds one frame's stage times.
    fn add_stages(&mut self, sim: &Simulation) {
        for (name, time) in sim.horde().stage_times() {
            match self.per_stage.iter_mut().find(|(n, _)| *n == name) {
                Some((_, v)) => v.add(time),
                None => {
                    let mut v = DurationStats::new();
                    v.add(time);
                    self.per_stage.push((name, v));
                }
            }
        }
    }
}

/// Runs `plan` and reports (see the module docs).
pub fn run_plan(mut plan: Plan, args: &RunArgs, setup: Duration) -> Result<(), AppError> {
    let threads = plan.threads();
    let frames = args.frames.unwrap_or(plan.frames);
    let start = u32::try_from(plan.sim.frame())
        .ok()
        .filter(|&f| f <= frames)
        .ok_or_else(|| {
            AppError::BadInput(format!(
                "the snapshot is at frame {}, past the run's last frame {frames}",
                plan.sim.frame()
            ))
        })?;
    if args.record.is_some() {
        plan.sim.start_recording();
    }
    let tally = run_frames(&mut plan, args, start, frames)?;
    let replay = match (&args.record, plan.sim.finish_recording()) {
        (Some(path), Some(replay)) => {
            replay.save(path).map_err(file_error)?;
            Some((path, replay))
        }
        _ => None,
    };
    let outcome = Outcome::of(&plan);
    let report = Report {
        plan: &plan,
        args,
        start,
        frames,
        threads,
        setup,
        tally: &tally,
        outcome: &outcome,
    };
    report.print(
        replay
            .as_ref()
            .map(|(path, replay)| (path.as_path(), replay)),
    );
    if let Some(path) = &args.json {
        horde::formats::files::write_atomic(path, format!("{:#}\n", report.json()).as_bytes())
            .map_err(|e| AppError::Failed(format!("{}: {e}", path.display())))?;
    }
    let wall_violations = tally.bodies.wall_violations;
    if wall_violations > 0 {
        return Err(AppError::Failed(format!(
            "{wall_violations} unit-frames had a body more than {:.0}% of its radius inside a wall",
            horde::bodies::WALL_TOLERANCE * 100.0
        )));
    }
    Ok(())
}

/// Runs frames `start..frames` of `plan` with the run's outputs (the trace, snapshots,
/// puffin, the progress bar), and tallies what they measured.
fn run_frames(plan: &mut Plan, args: &RunArgs, start: u32, frames: u32) -> Result<Tally, AppError> {
    let profiling = Profiling::start(args)?;
    let mut trace = open_trace(args, start, plan)?;
    let every = args.trace_every.max(1);
    let progress = progress_bar(frames - start);
    let mut tally = Tally::new();
    let mut units_before = plan.sim.units();
    let cause = if start == 0 { "spawn" } else { "resume" };
    for reach in plan.sim.reachability() {
        tally.cut_off.add(start, cause, &reach);
    }
    for frame in start..frames {
        let reaches = plan
            .apply_events(frame)
            .map_err(|e| AppError::Failed(e.to_string()))?;
        for reach in &reaches {
            tally.cut_off.add(frame, "goal change", reach);
        }
        let t = Instant::now();
        plan.sim
            .step(plan.dt)
            .map_err(|e| AppError::Failed(e.to_string()))?;
        tally.totals.add(t.elapsed());
        tally.quarantined += plan.sim.horde().last_quarantined().len();
        if let (Some(every), Some(dir)) = (args.snapshot_every, &args.snapshot_dir)
            && (frame + 1) % every == 0
        {
            let path = dir.join(format!("frame-{:08}.hsnap", frame + 1));
            plan.sim.save_snapshot(&path).map_err(file_error)?;
            tally.snapshots_written += 1;
        }
        if profiling.is_some() {
            puffin::GlobalProfiler::lock().new_frame();
        }
        tally.add_stages(&plan.sim);
        let units = plan.sim.units();
        (tally.bodies).sample(&plan.sim, frame + 1, &units_before, &units, plan.dt);
        if let Some((path, w)) = &mut trace
            && (frame + 1) % every == 0
        {
            write_trace(w, path, frame + 1, &units)?;
        }
        units_before = units;
        progress.inc(1);
    }
    progress.finish_and_clear();
    if let Some((path, mut w)) = trace {
        w.flush()
            .map_err(|e| AppError::Failed(format!("{}: {e}", path.display())))?;
    }
    if let Some(p) = profiling {
        p.finish()?;
    }
    Ok(tally)
}

/// The `--trace` file, its header and the state before the first frame written.
fn open_trace(
    args: &RunArgs,
    start: u32,
    plan: &Plan,
) -> Result<Option<(PathBuf, BufWriter<File>)>, AppError> {
    let Some(path) = &args.trace else {
        return Ok(None);
    };
    let mut w = create(path)?;
    writeln!(
        w,
        "frame,unit,group,x,y,vx,vy,external_speed,stun,arrived,settled,blocked,asleep"
    )
    .map_err(|e| AppError::Failed(format!("{}: {e}", path.display())))?;
    write_trace(&mut w, path, start, &plan.sim.units())?;
    Ok(Some((path.clone(), w)))
}

/// A progress bar of `frames` frames on a terminal's stderr, hidden elsewhere.
fn progress_bar(frames: u32) -> ProgressBar {
    let progress = if std::io::stderr().is_terminal() {
        ProgressBar::with_draw_target(Some(u64::from(frames)), ProgressDrawTarget::stderr())
    } else {
        ProgressBar::hidden()
    };
    if let Ok(style) =
        ProgressStyle::with_template("{bar:40} {pos}/{len} frames {elapsed_precise} eta {eta}")
    {
        progress.set_style(style);
    }
    progress
}
