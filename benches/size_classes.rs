//! What size classes cost (docs/behaviour.md, "Unit sizes").
//!
//! - `size_class_fields`: building the fields (integration, flow, escapes) of one goal for
//!   1, 2 and 3 size classes on `Cauldron.map` (from `../shared/data/movingai` when present,
//!   else a generated 1024x1024 level), from a fresh field cache as a new goal does, on one
//!   thread; and the classes' cost fields, which a map builds once (when the first unit of a
//!   class appears). Target: three classes at most 3.5x one.
//! - `size_class_frame`: the 100k frame (the frame bench's clustered level, 2 threads) with
//!   a crowd mixing radius 0.45 and 0.9 (classes 0 and 1: two fields), against the same
//!   crowd with one size class (one field). Target: within 10%.
//!
//! Both print the ratio after criterion's runs, from medians measured in the same run.
//! Run: `cargo bench --bench size_classes`.
#![allow(missing_docs)] // criterion_group! generates undocumented functions

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use horde::{
    Cell, GoalSet, Layer, Map,
    fields::{FieldCache, FieldKey, FlowConfig},
    sizes::class_cost_field,
};
use horde_fixtures::{BENCH_DT, BenchLevel, Crowd};

#[path = "common/window.rs"]
mod window;
use window::Window;
#[path = "common/cauldron.rs"]
mod cauldron;
use cauldron::bench_map;

/// The cell nearest the middle of the map that is open for every class up to `classes - 1`
/// (so that every class's field has a goal to stand in).
fn central_goal(map: &Map, classes: u8) -> Cell {
    let top = class_cost_field(map.cost_field(Layer::Ground), classes - 1);
    let (w, h) = (map.width(), map.height());
    (0..h)
        .flat_map(|y| (0..w).map(move |x| Cell::new(x, y)))
        .filter(|&c| top.is_passable(c))
        .min_by_key(|c| {
            (i64::from(c.x) - i64::from(w / 2)).abs() + (i64::from(c.y) - i64::from(h / 2)).abs()
        })
        .expect("the map has room for the biggest class")
}

/// Builds the fields of `goal` for classes `0..classes` from a fresh cache.
fn build_fields(map: &Map, goal: Cell, classes: u8) -> FieldCache {
    let mut cache = FieldCache::new(FlowConfig::default());
    for class in 0..classes {
        cache
            .request(
                FieldKey::sized(GoalSet::single(goal), Layer::Ground, class),
                map,
            )
            .expect("the class is prepared");
    }
    assert_eq!(
        cache.rebuild_dirty(map).expect("the fields build"),
        usize::from(classes)
    );
    cache
}

/// The median of `samples` timings of `f`.
fn median_of(samples: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..samples)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn size_class_fields(c: &mut Criterion) {
    let (name, mut map) = bench_map();
    for class in 1..3 {
        map.prepare_size_class(Layer::Ground, class);
    }
    let goal = central_goal(&map, 3);
    let mut group = c.benchmark_group(format!("size_class_fields/{name}"));
    group.sample_size(10);
    for classes in 1..=3u8 {
        group.bench_function(format!("fields_of_{classes}_classes"), |b| {
            b.iter(|| build_fields(&map, goal, classes))
        });
    }
    let layer = map.cost_field(Layer::Ground).clone();
    group.bench_function("class_cost_fields_1_and_2", |b| {
        b.iter(|| [class_cost_field(&layer, 1), class_cost_field(&layer, 2)])
    });
    group.finish();
    // The ratios, from medians taken one after another in this run.
    let fields: Vec<f64> = (1..=3u8)
        .map(|k| median_of(11, || drop(build_fields(&map, goal, k))).as_secs_f64())
        .collect();
    let costs = median_of(11, || {
        drop([class_cost_field(&layer, 1), class_cost_field(&layer, 2)]);
    })
    .as_secs_f64();
    println!(
        "size classes on {name}, medians of 11: fields of 1 / 2 / 3 classes {:.1} / {:.1} / \
         {:.1} ms: 3 classes {:.2}x one (target <= 3.5x); with the one-time class cost fields \
         ({:.1} ms) {:.2}x",
        fields[0] * 1e3,
        fields[1] * 1e3,
        fields[2] * 1e3,
        fields[2] / fields[0],
        costs * 1e3,
        (fields[2] + costs) / fields[0],
    );
}

fn size_class_frame(c: &mut Criterion) {
    let level = BenchLevel::clustered().expect("the clustered level generates");
    let mixed = Crowd {
        mixed: Some(0.9),
        ..Crowd::default()
    };
    let one_class = Crowd {
        size_classes: 1,
        ..mixed
    };
    let mut windows: Vec<(&str, Window)> = [("two_classes", mixed), ("one_class", one_class)]
        .into_iter()
        .map(|(name, crowd)| {
            let sim = level
                .simulation(100_000, 2, &crowd)
                .expect("the crowd spawns");
            (name, Window::new(sim, 2, BENCH_DT))
        })
        .collect();
    let mut group = c.benchmark_group("size_class_frame");
    group.sample_size(10);
    for (name, window) in &mut windows {
        group.bench_function(
            format!("2_threads_radius_0.45_and_0.9_{name}/100000"),
            |b| b.iter_custom(|iters| window.frames(iters, || {})),
        );
    }
    group.finish();
    // Interleaved windows of 20 frames, so that both see the same machine.
    let mut pair = [windows.remove(0).1, windows.remove(0).1];
    let [two, one] = window::interleaved_medians(&mut pair, 10);
    println!(
        "100k frame, radius 0.45 and 0.9 mixed, 2 threads, median of 10 x 20 frames: two size \
         classes {:.2} ms, one size class {:.2} ms: {:+.1}% (target within 10%)",
        two * 1e3,
        one * 1e3,
        (two / one - 1.0) * 100.0
    );
}

criterion_group!(benches, size_class_fields, size_class_frame);
criterion_main!(benches);
