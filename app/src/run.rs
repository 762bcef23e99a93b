//! `horde run`: runs a plan headless (progress bar on a terminal), then prints per-stage
//! times and the outcome; optionally writes JSON, a per-unit CSV trace and puffin captures.

use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use horde_core::{SpatialGrid, WALL};
use horde_systems::{FileError, SimError, Simulation, Snapshot};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::AppError;
use crate::demo::RunArgs;
use crate::plan::{Plan, load_plan, resolve_threads};
use crate::scenario::Overrides;

/// Median, 95th percentile and maximum of `samples` in milliseconds.
fn stats(samples: &mut [Duration]) -> (f64, f64, f64) {
    samples.sort_unstable();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let n = samples.len();
    if n == 0 {
        return (0.0, 0.0, 0.0);
    }
    (
        ms(samples[n / 2]),
        ms(samples[(n * 95 / 100).min(n - 1)]),
        ms(samples[n - 1]),
    )
}

/// Penetration between touching units, as a fraction of the pair's mean radius.
#[derive(Clone, Copy, Debug, Default)]
struct Overlap {
    sum: f64,
    pairs: u64,
    max: f64,
}

impl Overlap {
    /// Adds every touching pair of `sim`'s units.
    fn sample(&mut self, sim: &Simulation) {
        let units = sim.units();
        let Some(max_radius) = units.iter().map(|u| u.radius).reduce(f32::max) else {
            return;
        };
        let map = sim.map();
        let Ok(mut grid) = SpatialGrid::new(map.grid(), (2.0 * max_radius).max(0.5)) else {
            return;
        };
        let positions: Vec<_> = units.iter().map(|u| u.position).collect();
        if grid.rebuild(&positions).is_err() {
            return;
        }
        for (i, a) in units.iter().enumerate() {
            grid.for_each_neighbour(a.position, 2.0 * max_radius, |j| {
                let j = j as usize;
                if j <= i {
                    return;
                }
                let b = &units[j];
                let touch = a.radius + b.radius;
                let d = a.position.distance(b.position);
                if d < touch {
                    let depth = f64::from((touch - d) / (0.5 * touch));
                    self.sum += depth;
                    self.pairs += 1;
                    self.max = self.max.max(depth);
                }
            });
        }
    }

    fn mean(&self) -> f64 {
        if self.pairs == 0 {
            0.0
        } else {
            self.sum / self.pairs as f64
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

/// Runs `horde run`.
pub fn run(args: &RunArgs) -> Result<(), AppError> {
    let threads = resolve_threads(args.threads)?;
    let started = Instant::now();
    let overrides = Overrides {
        threads: Some(threads),
        seed: args.seed,
        frames: args.frames,
    };
    let mut plan = load_plan(args.scenario.as_deref(), &overrides, args.units, threads)?;
    if let Some(path) = &args.resume {
        resume(&mut plan, path, threads)?;
    }
    run_plan(plan, args, threads, started.elapsed())
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

/// Replaces the plan's simulation by the snapshot at `path`, after checking it fits the plan.
fn resume(plan: &mut Plan, path: &Path, threads: usize) -> Result<(), AppError> {
    let snapshot = Snapshot::load(path).map_err(file_error)?;
    let planned = (plan.sim.map().width(), plan.sim.map().height());
    if snapshot.map_size() != planned {
        return Err(AppError::BadInput(format!(
            "{}: the snapshot is of a {}x{} map, but {} runs on a {}x{} map: resume with the scenario the snapshot was taken from",
            path.display(),
            snapshot.map_size().0,
            snapshot.map_size().1,
            plan.name,
            planned.0,
            planned.1
        )));
    }
    plan.sim = Simulation::from_snapshot(&snapshot, threads).map_err(|e| match e {
        SimError::Snapshot(e) => file_error(e.in_file(path)),
        e => AppError::BadInput(format!("{}: {e}", path.display())),
    })?;
    Ok(())
}

/// Runs `plan` and reports (see the module docs).
pub fn run_plan(
    mut plan: Plan,
    args: &RunArgs,
    threads: usize,
    setup: Duration,
) -> Result<(), AppError> {
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
    if let Some(dir) = &args.snapshot_dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| AppError::Failed(format!("{}: {e}", dir.display())))?;
    }
    if args.record.is_some() {
        plan.sim.start_recording();
    }
    let mut snapshots_written = 0usize;
    let mut quarantined = 0usize;
    let profiling = Profiling::start(args)?;
    let mut trace = match &args.trace {
        Some(path) => {
            let mut w = create(path)?;
            writeln!(w, "frame,unit,group,x,y,vx,vy,external_speed,stun")
                .map_err(|e| AppError::Failed(format!("{}: {e}", path.display())))?;
            Some((path.clone(), w))
        }
        None => None,
    };
    let every = args.trace_every.max(1);
    let progress = if std::io::stderr().is_terminal() {
        ProgressBar::with_draw_target(
            Some(u64::from(frames - start)),
            ProgressDrawTarget::stderr(),
        )
    } else {
        ProgressBar::hidden()
    };
    if let Ok(style) =
        ProgressStyle::with_template("{bar:40} {pos}/{len} frames {elapsed_precise} eta {eta}")
    {
        progress.set_style(style);
    }

    let mut per_stage: Vec<(String, Vec<Duration>)> = Vec::new();
    let mut totals = Vec::with_capacity((frames - start) as usize);
    let mut wall_violations = 0usize;
    let mut arrived_at: Vec<Option<u32>> = Vec::new();
    let mut overlap = Overlap::default();
    for frame in start..frames {
        plan.apply_events(frame)
            .map_err(|e| AppError::Failed(e.to_string()))?;
        let t = Instant::now();
        plan.sim
            .step(plan.dt)
            .map_err(|e| AppError::Failed(e.to_string()))?;
        totals.push(t.elapsed());
        quarantined += plan.sim.horde().last_quarantined().len();
        if let (Some(every), Some(dir)) = (args.snapshot_every, &args.snapshot_dir)
            && (frame + 1) % every == 0
        {
            let path = dir.join(format!("frame-{:08}.hsnap", frame + 1));
            plan.sim.save_snapshot(&path).map_err(file_error)?;
            snapshots_written += 1;
        }
        if profiling.is_some() {
            puffin::GlobalProfiler::lock().new_frame();
        }
        for (name, time) in plan.sim.horde().stage_times() {
            match per_stage.iter_mut().find(|(n, _)| *n == name) {
                Some((_, v)) => v.push(time),
                None => per_stage.push((name, vec![time])),
            }
        }
        let units = plan.sim.units();
        {
            let map = plan.sim.map();
            wall_violations += units
                .iter()
                .filter(|u| {
                    map.grid()
                        .cell_at(u.position)
                        .is_none_or(|c| map.cost_field(u.layer).get(c) == WALL)
                })
                .count();
        }
        for u in &units {
            let i = u.id.0 as usize;
            if arrived_at.len() <= i {
                arrived_at.resize(i + 1, None);
            }
            if u.arrived && arrived_at[i].is_none() {
                arrived_at[i] = Some(frame + 1);
            }
        }
        if frame % 10 == 9 || frame + 1 == frames {
            overlap.sample(&plan.sim);
        }
        if let Some((path, w)) = &mut trace
            && frame % every == 0
        {
            for u in &units {
                writeln!(
                    w,
                    "{},{},{},{},{},{},{},{},{}",
                    frame,
                    u.id.0,
                    u.group.0,
                    u.position.x,
                    u.position.y,
                    u.velocity.x,
                    u.velocity.y,
                    u.external.length(),
                    u.stun
                )
                .map_err(|e| AppError::Failed(format!("{}: {e}", path.display())))?;
            }
        }
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
    let replay = match (&args.record, plan.sim.finish_recording()) {
        (Some(path), Some(replay)) => {
            replay.save(path).map_err(file_error)?;
            Some((path, replay))
        }
        _ => None,
    };

    let sim = &plan.sim;
    let units = sim.units();
    let arrived = units.iter().filter(|u| u.arrived).count();
    let stunned = units.iter().filter(|u| u.stun > 0.0).count();
    let hash = sim.state_hash();
    let mut arrival_s: Vec<f64> = arrived_at
        .iter()
        .flatten()
        .map(|&f| f64::from(f) * f64::from(plan.dt))
        .collect();
    arrival_s.sort_by(f64::total_cmp);
    let (arrival_median, arrival_max) = match arrival_s.as_slice() {
        [] => (None, None),
        s => (Some(s[s.len() / 2]), s.last().copied()),
    };

    println!(
        "horde: {}: {} units, {} frames, {} threads",
        plan.name,
        units.len(),
        frames - start,
        threads
    );
    if start > 0 {
        println!("resumed at frame {start}");
    }
    println!("setup {:.1} ms", setup.as_secs_f64() * 1e3);
    println!(
        "{:<18} {:>10} {:>10} {:>10}",
        "stage", "median ms", "p95 ms", "max ms"
    );
    let mut json_stages = serde_json::Map::new();
    let mut rows: Vec<(String, Vec<Duration>)> = per_stage;
    rows.push(("frame".to_string(), totals));
    for (name, samples) in &mut rows {
        let (med, p95, max) = stats(samples);
        println!("{name:<18} {med:>10.3} {p95:>10.3} {max:>10.3}");
        json_stages.insert(
            name.clone(),
            serde_json::json!({ "median_ms": med, "p95_ms": p95, "max_ms": max }),
        );
    }
    println!(
        "arrived {arrived} (median {} s, max {} s), stunned {stunned}, wall violations {wall_violations}",
        arrival_median.map_or("-".into(), |s| format!("{s:.2}")),
        arrival_max.map_or("-".into(), |s| format!("{s:.2}")),
    );
    println!(
        "overlap mean {:.3}, max {:.3} (penetration / mean radius of touching pairs)",
        overlap.mean(),
        overlap.max
    );
    if quarantined > 0 {
        println!("quarantined {quarantined} units (their state stopped being finite)");
    }
    if let Some(dir) = &args.snapshot_dir {
        println!("{snapshots_written} snapshots written to {}", dir.display());
    }
    if let Some((path, replay)) = &replay {
        println!(
            "replay of {} frames, {} commands written to {}",
            replay.frames(),
            replay.commands(),
            path.display()
        );
    }
    println!("state_hash {hash:016x}");
    if let Some(path) = &args.json {
        let json = serde_json::json!({
            "scenario": plan.name,
            "frames": frames - start,
            "start_frame": start,
            "end_frame": frames,
            "quarantined": quarantined,
            "snapshots_written": snapshots_written,
            "units": units.len(),
            "threads": threads,
            "arrived": arrived,
            "stunned": stunned,
            "state_hash": format!("{hash:016x}"),
            "wall_violations": wall_violations,
            "stages": json_stages,
            "overlap": { "mean": overlap.mean(), "max": overlap.max },
            "arrival_s": { "median": arrival_median, "max": arrival_max },
        });
        std::fs::write(path, format!("{json:#}\n"))
            .map_err(|e| AppError::Failed(format!("{}: {e}", path.display())))?;
    }
    if wall_violations > 0 {
        return Err(AppError::Failed(format!(
            "{wall_violations} unit-frames had a centre inside a wall"
        )));
    }
    Ok(())
}
