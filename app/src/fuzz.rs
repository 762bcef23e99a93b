//! Bounded fuzz run of the scenario parser (the other parsers' runs are in
//! `tests/fuzz_parsers.rs`): every seed of `tests/corpus/scenario/` and thousands of
//! mutations of each go through the whole scenario builder. Nothing may panic; every refusal
//! names the file and a line; what is accepted must run a frame.
//! `HORDE_FUZZ_CASES` sets the mutations per seed (default 3000).

#[path = "../../tests/common/mutate.rs"]
mod mutate;

use std::path::Path;

use crate::scenario::{Overrides, parse_scenario_with};

#[test]
fn scenarios_never_panic() {
    let cases: usize = std::env::var("HORDE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    let overrides = Overrides {
        threads: Some(1),
        ..Overrides::default()
    };
    let mut mutator = mutate::Mutator::new(8);
    let (mut runs, mut accepted) = (0usize, 0usize);
    for (name, seed) in mutate::corpus("scenario") {
        let text = String::from_utf8(seed).unwrap();
        let mut plan = parse_scenario_with(&text, &name, Path::new("."), &overrides)
            .unwrap_or_else(|e| panic!("corpus seed {name} is refused: {e}"));
        plan.sim.step(plan.dt).unwrap();
        for _ in 0..cases {
            let input = String::from_utf8_lossy(&mutator.mutate(text.as_bytes())).into_owned();
            runs += 1;
            match parse_scenario_with(&input, "fuzz.toml", Path::new("."), &overrides) {
                Ok(mut plan) => {
                    accepted += 1;
                    plan.apply_events(0).ok();
                    plan.sim.step(plan.dt).unwrap();
                }
                Err(e) => {
                    let msg = e.to_string();
                    assert!(msg.starts_with("fuzz.toml"), "{msg}\n--- input:\n{input}");
                }
            }
        }
    }
    println!("scenario: {runs} mutated inputs, {accepted} accepted");
}
