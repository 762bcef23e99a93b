//! Moving AI `.map` text: parsing never panics; an accepted map writes back and parses to the
//! same terrain projected on the Moving AI legend.
#![no_main]

use horde::Terrain;
use horde::formats::{movingai_char, parse_movingai_map, write_movingai_map};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(map) = parse_movingai_map(&text, "fuzz.map") {
        let again = parse_movingai_map(&write_movingai_map(&map), "again.map")
            .expect("a written map parses");
        let projected: Vec<Terrain> = map
            .terrain()
            .iter()
            .map(|&t| Terrain::from_char(movingai_char(t)).expect("a legend character"))
            .collect();
        assert_eq!(again.terrain(), projected.as_slice());
    }
});
