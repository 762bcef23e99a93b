//! The version check, status names and the last error message.

use super::*;

#[test]
fn abi_version_and_status_names() {
    assert_eq!(horde_abi_version(), HORDE_ABI_VERSION);
    let name = |s| {
        // SAFETY: horde_status_name returns a static NUL-terminated string.
        unsafe { CStr::from_ptr(horde_status_name(s)) }
            .to_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(name(HORDE_OK), "HORDE_OK");
    assert_eq!(name(HORDE_ERROR_POISONED), "HORDE_ERROR_POISONED");
    let names: std::collections::BTreeSet<String> = (0..=14).map(name).collect();
    assert_eq!(names.len(), 15, "every code has its own name");
    assert_eq!(name(-1), "HORDE_ERROR_UNKNOWN");
    assert_eq!(name(15), "HORDE_ERROR_UNKNOWN");
}

#[test]
fn last_error_is_empty_after_success_and_copied_whole_or_cut() {
    let sim = sim_with(0);
    assert_eq!(last_error(), "");
    // SAFETY: `sim` is live; NaN is refused.
    let status = unsafe { horde_step(sim, f32::NAN) };
    expect_error(status, HORDE_ERROR_INVALID_ARGUMENT, "time step NaN");
    let full = last_error();
    // Asking for the length.
    let mut len = 0;
    // SAFETY: NULL buffer with capacity 0; `len` is a local.
    let status = unsafe { horde_last_error(null_mut(), 0, &mut len) };
    assert_eq!(status, HORDE_ERROR_BUFFER_TOO_SMALL);
    assert_eq!(len, full.len());
    // A NULL buffer with a capacity is refused.
    // SAFETY: NULL buffer, refused before any write.
    let status = unsafe { horde_last_error(null_mut(), 8, null_mut()) };
    assert_eq!(status, HORDE_ERROR_NULL_POINTER);
    // Cut to the buffer, NUL-terminated; the message stays.
    let mut small = [0x7f as c_char; 6];
    // SAFETY: `small` holds 6 bytes.
    let status = unsafe { horde_last_error(small.as_mut_ptr(), small.len(), &mut len) };
    assert_eq!(status, HORDE_ERROR_BUFFER_TOO_SMALL);
    assert_eq!(len, full.len());
    // SAFETY: NUL-terminated by horde_last_error.
    let cut = unsafe { CStr::from_ptr(small.as_ptr()) }.to_str().unwrap();
    assert_eq!(cut, &full[..5]);
    assert_eq!(last_error(), full);
    // A success clears it; capacity 0 still only tells the length.
    assert_eq!(step(sim), HORDE_OK);
    assert_eq!(last_error(), "");
    // SAFETY: NULL buffer with capacity 0; `len` is a local.
    let status = unsafe { horde_last_error(null_mut(), 0, &mut len) };
    assert_eq!((status, len), (HORDE_ERROR_BUFFER_TOO_SMALL, 0));
    free(sim);
}

#[test]
fn a_cut_message_ends_at_a_character_boundary() {
    // The Moving AI parser quotes the bad first line: "é" is two bytes.
    let text = "type é\nheight 1\nwidth 1\nmap\n.\n";
    let mut sim = null_mut();
    // SAFETY: `text` has `text.len()` bytes; `sim` is a local.
    let status =
        unsafe { horde_sim_create_movingai(text.as_ptr().cast(), text.len(), null(), &mut sim) };
    expect_error(status, HORDE_ERROR_MAP_FORMAT, "type é");
    let full = last_error();
    let at = full.find('é').unwrap();
    // A buffer that ends in the middle of "é": the cut drops the whole character.
    let mut buffer = vec![0 as c_char; at + 2];
    let mut len = 0;
    // SAFETY: `buffer` holds `at + 2` bytes.
    let status = unsafe { horde_last_error(buffer.as_mut_ptr(), buffer.len(), &mut len) };
    assert_eq!(status, HORDE_ERROR_BUFFER_TOO_SMALL);
    // SAFETY: NUL-terminated.
    let cut = unsafe { CStr::from_ptr(buffer.as_ptr()) }
        .to_str()
        .expect("valid UTF-8");
    assert_eq!(cut, &full[..at]);
    assert!(sim.is_null());
}
