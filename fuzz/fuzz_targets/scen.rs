//! Moving AI `.scen` text: parsing never panics; accepted lines hold finite lengths.
#![no_main]

use horde::formats::parse_scen;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(scen) = parse_scen(&text, "fuzz.scen") {
        for line in &scen.lines {
            assert!(line.optimal_length.is_finite() && line.optimal_length >= 0.0);
        }
    }
});
