//! Snapshots refuse small buffers and bad bytes.

use super::*;

#[test]
fn snapshots_refuse_small_buffers_and_bad_bytes() {
    let sim = sim_with(6);
    assert_eq!(step(sim), HORDE_OK);
    let bytes = snapshot(sim);
    let before = hash(sim);
    let mut small = vec![0u8; bytes.len() - 1];
    let mut len = 0;
    // SAFETY: `small` holds its length.
    let status = unsafe { horde_snapshot_write(sim, small.as_mut_ptr(), small.len(), &mut len) };
    expect_error(status, HORDE_ERROR_BUFFER_TOO_SMALL, "bytes");
    assert_eq!(len, bytes.len());
    assert!(small.iter().all(|&b| b == 0));
    let restore = |b: &[u8]| {
        // SAFETY: live handle; `b` holds its length.
        unsafe { horde_snapshot_restore(sim, b.as_ptr(), b.len()) }
    };
    expect_error(
        restore(&bytes[..bytes.len() / 2]),
        HORDE_ERROR_SNAPSHOT,
        "snapshot",
    );
    let mut flipped = bytes.clone();
    flipped[bytes.len() / 2] ^= 1;
    expect_error(restore(&flipped), HORDE_ERROR_SNAPSHOT, "checksum");
    expect_error(
        restore(b"definitely not a snapshot"),
        HORDE_ERROR_SNAPSHOT,
        "not a horde",
    );
    // SAFETY: NULL bytes.
    expect_error(
        unsafe { horde_snapshot_restore(sim, null(), 5) },
        HORDE_ERROR_NULL_POINTER,
        "bytes",
    );
    assert_eq!(hash(sim), before, "the state stays");
    let mut copy = null_mut();
    // SAFETY: `bytes` holds its length; bad thread counts and bytes are refused.
    unsafe {
        let status = horde_sim_create_from_snapshot(bytes.as_ptr(), bytes.len(), 0, &mut copy);
        expect_error(status, HORDE_ERROR_INVALID_ARGUMENT, "threads = 0");
        let status = horde_sim_create_from_snapshot(flipped.as_ptr(), flipped.len(), 1, &mut copy);
        expect_error(status, HORDE_ERROR_SNAPSHOT, "checksum");
        assert!(copy.is_null());
        assert_eq!(
            horde_sim_create_from_snapshot(bytes.as_ptr(), bytes.len(), 2, &mut copy),
            HORDE_OK
        );
    }
    assert_eq!(hash(copy), before);
    // The state moved on: the kept encoding was dropped, a new snapshot differs.
    assert_eq!(step(sim), HORDE_OK);
    assert_ne!(snapshot(sim), bytes);
    assert_eq!(restore(&bytes), HORDE_OK);
    assert_eq!(hash(sim), before);
    free(copy);
    free(sim);
}
