//! Replay files: reading never panics; a replay that reads plays or fails with an error.
#![no_main]

use horde::Replay;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(replay) = Replay::from_bytes(data) {
        let _ = replay.play(1, |_| {});
    }
});
