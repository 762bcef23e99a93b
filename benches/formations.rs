//! What a formation costs (docs/behaviour.md, "Formations"): 10,000 units marching across an
//! open map, sent as a box formation, against the same crowd sent as a blob,
//! 2 threads, frames measured in windows that start 60 frames into the march (the slots
//! handed out, the anchor walking). Target: the formation adds at most 10% to the frame.
//!
//! The same box at rest in its slots at its goal is measured too, against its march (an
//! army at rest should cost a small part of one that marches).
//!
//! Prints the ratios after criterion's runs, from medians of interleaved windows measured in
//! the same run. Run: `cargo bench --bench formations`.
#![allow(missing_docs)] // criterion_group! generates undocumented functions

use criterion::{Criterion, criterion_group, criterion_main};
use horde::prelude::*;

#[path = "common/window.rs"]
mod window;
use window::Window;

const DT: f32 = 1.0 / 30.0;
const UNITS: usize = 10_000;

/// A 400x300 open map, the army in a block on the west side, its goal on the east side; in
/// formation or not.
fn march(formation: bool) -> Simulation {
    let (w, h) = (400u32, 300u32);
    let map = Map::new(Grid::new(w, h).expect("the map fits"));
    let mut sim = Simulation::new(map, SimConfig::default().with_threads(2)).expect("it builds");
    let group = sim
        .add_group(GoalSet::single(Cell::new(w - 30, h / 2)))
        .expect("the goal is open");
    let side = (UNITS as f32).sqrt().ceil() as usize;
    for i in 0..UNITS {
        let (row, col) = (i / side, i % side);
        let pos = Vec2::new(10.0 + col as f32 * 1.1, 95.0 + row as f32 * 1.1);
        sim.spawn(UnitSpec {
            radius: 0.45,
            group,
            ..UnitSpec::at(pos)
        })
        .expect("the unit spawns");
    }
    if formation {
        let order = FormationOrder {
            shape: Shape::Box,
            spacing: None,
            facing: None,
        };
        sim.set_formation(group, Some(order))
            .expect("the order is valid");
    }
    for _ in 0..60 {
        sim.step(DT).expect("the frame runs");
    }
    sim
}

/// The box of [`march`] walked on until at least 99.9% of its units rest in their slots at
/// the goal (its east ranks do not fit between the goal and the map's edge: the squeezed
/// slots are spread, and the last ten units take a few seconds more to find theirs), and
/// how many rest.
fn at_rest() -> (Simulation, usize) {
    let mut sim = march(true);
    for _ in 0..20_000 {
        let st = sim.group_status()[0];
        if st.arrived * 1000 >= st.units * 999 {
            return (sim, st.arrived);
        }
        sim.step(DT).expect("the frame runs");
    }
    panic!("the box did not come to rest in 20,000 frames");
}

fn formation_frame(c: &mut Criterion) {
    let mut windows: Vec<(&str, Window)> = [("formation", true), ("blob", false)]
        .into_iter()
        .map(|(name, formation)| (name, Window::new(march(formation), 2, DT)))
        .collect();
    let (resting_box, at_rest_units) = at_rest();
    windows.push(("formation_at_rest", Window::new(resting_box, 2, DT)));
    let mut group = c.benchmark_group("formation_frame");
    group.sample_size(10);
    for (name, window) in &mut windows {
        group.bench_function(format!("2_threads_box_march_{name}/{UNITS}"), |b| {
            b.iter_custom(|iters| window.frames(iters, || {}));
        });
    }
    group.finish();
    // Interleaved windows of 20 frames, so that all see the same machine.
    let mut all = [
        windows.remove(0).1,
        windows.remove(0).1,
        windows.remove(0).1,
    ];
    let [formation, blob, resting] = window::interleaved_medians(&mut all, 10);
    println!(
        "{UNITS} units marching, 2 threads, median of 10 x 20 frames: as a box formation \
         {:.2} ms, as a blob {:.2} ms: {:+.1}% (target at most +10%); the box at its goal \
         ({at_rest_units} units at rest) {:.3} ms, {:.1}% of its march",
        formation * 1e3,
        blob * 1e3,
        (formation / blob - 1.0) * 100.0,
        resting * 1e3,
        resting / formation * 100.0
    );
}

criterion_group!(benches, formation_frame);
criterion_main!(benches);
