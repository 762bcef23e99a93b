//! Per-stage cost of the frame benchmark's scenario (1024x1024 clustered level, 8 force
//! fields, one goal): milliseconds and nanoseconds per unit, averaged over 100 frames (or
//! `FRAMES`). Prints the state hash at the end, which optimisations must not change.
//!
//! `cargo run --release --example frame_stages [UNITS] [THREADS]` (default: 10k and 100k
//! units on 1 and 2 threads). With `SPAWN=shuffled` the units are spawned in a random order
//! instead of row by row (the first frame then sorts their storage); with `GIANT=1` one of
//! them has radius 3 instead of 0.45; `FORCES=N` sets the number of force fields (8);
//! `RADIUS=R` gives the units radius R instead of 0.45, and `FIRST=R` the first unit spawned
//! radius R (it sizes the neighbour buckets until the first frame refits them); `GOALS=N`
//! splits the crowd into N groups with goals of their own, every neighbourhood mixing them;
//! `DEATHS=N` kills N random units before every frame (the last lines give the slowest frame
//! and how many frames sorted the storage); `PUFFIN=1` turns puffin's scopes on and ends a
//! puffin frame after every frame, as a profiled game would; `WARMUP=N` first runs N frames
//! unmeasured (the crowd walks to its goal and packs there, and each frame costs more than
//! the one before: the frame bench's `2_threads_after_2000_frames` row measures such frames).

use horde_fixtures::{BenchLevel, Crowd};
use rand_core::{RngCore, SeedableRng};

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("arguments are numbers: UNITS [THREADS]"))
        .collect();
    let cases = match args.as_slice() {
        [] => vec![(10_000, 1), (10_000, 2), (100_000, 1), (100_000, 2)],
        [units] => vec![(*units, 1), (*units, 2)],
        [units, threads, ..] => vec![(*units, *threads)],
    };
    let frames: u32 = std::env::var("FRAMES")
        .ok()
        .and_then(|f| f.parse().ok())
        .unwrap_or(100);
    println!(
        "{:>9} {:>7} {:<16} {:>9} {:>9}",
        "units", "threads", "stage", "ms", "ns/unit"
    );
    let shuffled = match std::env::var("SPAWN").as_deref() {
        Ok("shuffled") => true,
        Ok("rows") | Err(_) => false,
        Ok(other) => panic!("SPAWN is `rows` or `shuffled`, not `{other}`"),
    };
    let giant = match std::env::var("GIANT").as_deref() {
        Ok("1") => true,
        Ok("0") | Err(_) => false,
        Ok(other) => panic!("GIANT is `0` or `1`, not `{other}`"),
    };
    let radius = setting("RADIUS", "a radius").unwrap_or(Crowd::default().radius);
    let first = setting("FIRST", "a radius");
    let groups = setting("GOALS", "a number of groups with goals of their own")
        .unwrap_or(Crowd::default().groups);
    let deaths: usize = setting("DEATHS", "a number of units to kill per frame").unwrap_or(0);
    let profiled = match std::env::var("PUFFIN").as_deref() {
        Ok("1") => true,
        Ok("0") | Err(_) => false,
        Ok(other) => panic!("PUFFIN is `0` or `1`, not `{other}`"),
    };
    puffin::set_scopes_on(profiled);
    let warmup: u32 = setting("WARMUP", "a number of frames").unwrap_or(0);
    let force_fields =
        setting("FORCES", "a number of force fields").unwrap_or(Crowd::default().force_fields);
    for (wanted, threads) in cases {
        let crowd = Crowd {
            shuffled,
            giant,
            force_fields,
            radius,
            first,
            groups,
            ..Crowd::default()
        };
        let mut sim = BenchLevel::clustered()
            .expect("the clustered level generates")
            .simulation(wanted, threads, &crowd)
            .expect("the benchmark crowd spawns");
        // The scenario puts at most one unit on each open cell.
        let units = sim.unit_count();
        if let Some(first) = sim.horde().last_report() {
            let sort = first.stage("sort_units").unwrap_or_default();
            println!(
                "{units:>9} {threads:>7} first frame {:.3} ms, of which sort_units {:.3} ms",
                first.total().as_secs_f64() * 1e3,
                sort.as_secs_f64() * 1e3
            );
        }
        if units < wanted {
            eprintln!("{wanted} units asked for, {units} fit on the level's open cells");
        }
        for _ in 0..warmup {
            sim.step(1.0 / 60.0).expect("frame ran");
        }
        // Casualties: units die in a fixed random order, `deaths` before every frame.
        let mut doomed: Vec<hecs::Entity> = sim.world().iter().map(|e| e.entity()).collect();
        let mut rng = rand_pcg::Pcg64::seed_from_u64(17);
        for i in (1..doomed.len()).rev() {
            doomed.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
        }
        let (mut sorts, mut slowest) = (0, 0.0f64);
        let mut totals: Vec<(String, f64)> = Vec::new();
        let mut frame_ms = 0.0;
        for _ in 0..frames {
            for _ in 0..deaths {
                if let Some(entity) = doomed.pop() {
                    sim.despawn(entity).expect("a live unit");
                }
            }
            let report = sim.step(1.0 / 60.0).expect("frame ran");
            if profiled {
                puffin::GlobalProfiler::lock().new_frame();
            }
            frame_ms += report.total().as_secs_f64() * 1e3 / f64::from(frames);
            slowest = slowest.max(report.total().as_secs_f64() * 1e3);
            sorts +=
                usize::from(report.stage("sort_units").unwrap_or_default().as_secs_f64() > 1e-3);
            for (name, t) in sim.horde().stage_times() {
                let ms = t.as_secs_f64() * 1e3 / f64::from(frames);
                match totals.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, v)) => *v += ms,
                    None => totals.push((name, ms)),
                }
            }
        }
        for (name, ms) in totals.iter().chain([&("frame".to_string(), frame_ms)]) {
            let ns = ms * 1e6 / units as f64;
            println!("{units:>9} {threads:>7} {name:<16} {ms:>9.3} {ns:>9.1}");
        }
        println!(
            "{units:>9} {threads:>7} slowest frame {slowest:.3} ms, {sorts} frames sorted the storage"
        );
        // Optimisations that must not change behaviour keep this number.
        println!(
            "{units:>9} {threads:>7} state hash after {} frames: {:016x}",
            warmup + frames,
            sim.state_hash()
        );
    }
}

/// The environment variable `name` parsed as `T`, if it is set (`what` names the value a bad
/// one should have been).
fn setting<T: std::str::FromStr>(name: &str, what: &str) -> Option<T> {
    let value = std::env::var(name).ok()?;
    Some(
        value
            .parse()
            .unwrap_or_else(|_| panic!("{name} is {what}, not `{value}`")),
    )
}
