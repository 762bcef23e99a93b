//! horde's scenario files (TOML): parsing never panics; every refusal names the file; an
//! accepted scenario applies its first events and runs a frame.
#![no_main]

use std::path::Path;

use horde_scenario::{Overrides, parse_scenario};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let overrides = Overrides {
        threads: Some(1),
        ..Overrides::default()
    };
    match parse_scenario(&text, "fuzz.toml", Path::new("."), &overrides) {
        Ok(mut plan) => {
            plan.apply_events(0).expect("the first frame's events apply");
            plan.sim.step(plan.dt).expect("an accepted scenario runs a frame");
        }
        Err(e) => assert!(e.to_string().starts_with("fuzz.toml"), "{e}"),
    }
});
