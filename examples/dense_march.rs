//! The whole life of the dense army an RTS lives in ([`horde_fixtures::DenseArmy`]), each phase
//! measured on its own: 100k units of radius 0.45 spawned packed, one per cell, marching
//! through a band of rocks, squeezing through the 8-cell gaps of a wall and filling a goal
//! area that holds them all, where they come to rest.
//!
//! Prints per phase the frames it spanned, the frame's median and p95, and each stage's
//! median in ns per unit; then the state hash (the same on any thread count).
//!
//! Run: `cargo run --release --example dense_march -- [MAX_FRAMES] [THREADS] [SCALE]
//! [AFTER_S]` (default 9000, 2, 1, 0; scale 2 or 4 is a quarter or a sixteenth of the army on
//! a map of half or a quarter the side). With fewer frames the run stops early and the phases
//! it did not reach are left out. With `AFTER_S`, the army then stands `AFTER_S` seconds
//! more, parked, and each 2 s window prints the units not at rest, the units awake and the
//! frame's median.

use horde_fixtures::DenseArmy;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut arg = |default: usize| args.next().and_then(|a| a.parse().ok()).unwrap_or(default);
    let (max_frames, threads, scale, after) = (arg(9000), arg(2), arg(1), arg(0));
    let Some(army) = u32::try_from(scale).ok().and_then(DenseArmy::new) else {
        eprintln!("dense_march: scale must be 1, 2 or 4, not {scale}");
        std::process::exit(2);
    };
    let mut sim = army.simulation(threads).expect("the army spawns");
    let units = f64::from(army.units());
    println!("dense_march: {units} units, {threads} threads");
    println!(
        "{:<8} {:>11} {:>9} {:>9}   stages: median ns per unit",
        "phase", "frames", "median ms", "p95 ms"
    );
    army.run(
        &mut sim,
        max_frames,
        |_, _| {},
        |r| {
            let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
            let span = format!("{}-{}", r.frames.start, r.frames.end);
            print!(
                "{:<8} {span:>11} {:>9.2} {:>9.2}  ",
                r.phase.name(),
                ms(r.median),
                ms(r.p95)
            );
            for (name, d) in &r.stages {
                print!(" {name} {:.0}", d.as_secs_f64() * 1e9 / units);
            }
            println!();
        },
    )
    .expect("the frame runs");
    let status = sim.group_status();
    println!(
        "at the end: arrived {}, settled {}, moving {}",
        status[0].arrived, status[0].settled, status[0].moving
    );
    println!("state_hash {:016x}", sim.state_hash());
    if after == 0 {
        return;
    }
    let window = (2.0 / DenseArmy::DT).round() as usize;
    for k in 0..after.div_ceil(2) {
        let mut times: Vec<std::time::Duration> = (0..window)
            .map(|_| {
                let started = std::time::Instant::now();
                sim.step(DenseArmy::DT).expect("the frame runs");
                started.elapsed()
            })
            .collect();
        times.sort_unstable();
        let status = sim.group_status();
        println!(
            "parked +{:>3} s: not at rest {:>5}, awake {:>5}, frame median {:.3} ms",
            2 * (k + 1),
            status[0].moving + status[0].blocked,
            sim.horde().awake_units(),
            times[window / 2].as_secs_f64() * 1e3
        );
    }
    println!("state_hash {:016x}", sim.state_hash());
}
