//! Snapshot files: reading never panics; a snapshot that reads restores into a simulation
//! that runs a frame.
#![no_main]

use horde::{Simulation, Snapshot};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(snapshot) = Snapshot::from_bytes(data) {
        let mut sim = Simulation::from_snapshot(&snapshot, 1).expect("a valid snapshot restores");
        sim.step(0.05).expect("a restored simulation runs");
    }
});
