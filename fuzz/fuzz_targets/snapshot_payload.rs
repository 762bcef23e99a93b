//! Snapshot contents behind a valid header and checksum: the decoder and the validation are
//! reached, not only the checksum. A snapshot that reads must restore and run a frame.
//! Seeds: the committed snapshots without their 24-byte header.
#![no_main]

use horde::persistence::SNAPSHOT_VERSION;
use horde::{Simulation, Snapshot};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|payload: &[u8]| {
    let mut bytes = b"HORDSNAP".to_vec();
    bytes.extend_from_slice(&SNAPSHOT_VERSION.to_le_bytes());
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    bytes.extend_from_slice(payload);
    if let Ok(snapshot) = Snapshot::from_bytes(&bytes) {
        let mut sim = Simulation::from_snapshot(&snapshot, 1).expect("a valid snapshot restores");
        sim.step(0.05).expect("a restored simulation runs");
    }
});
