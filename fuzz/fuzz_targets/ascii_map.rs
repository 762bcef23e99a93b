//! horde's ASCII map text: parsing never panics; an accepted map round-trips exactly.
#![no_main]

use horde::formats::{parse_ascii_map, write_ascii_map};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(map) = parse_ascii_map(&text, "fuzz.txt") {
        let again =
            parse_ascii_map(&write_ascii_map(&map), "again.txt").expect("a written map parses");
        assert_eq!(again.terrain(), map.terrain());
    }
});
