//! The calls that need no simulation to tell what went wrong: the ABI version, a status
//! code's name, and this thread's last error message.

use std::ffi::c_char;

use crate::failure::with_last_error;
use crate::status::*;
use crate::types::{HORDE_ABI_VERSION, HordeStatus};

/// The ABI version of the library (`HORDE_ABI_VERSION` of the header it was built with).
/// A program should check it equals the `HORDE_ABI_VERSION` it was compiled against.
#[unsafe(no_mangle)]
pub extern "C" fn horde_abi_version() -> u32 {
    HORDE_ABI_VERSION
}

/// The name of a status code (`"HORDE_OK"`, `"HORDE_ERROR_NULL_POINTER"`, ...;
/// `"HORDE_ERROR_UNKNOWN"` for a code that is none of them), as a static NUL-terminated
/// string the caller must not free.
#[unsafe(no_mangle)]
pub extern "C" fn horde_status_name(status: HordeStatus) -> *const c_char {
    let name: &'static [u8] = match status {
        HORDE_OK => b"HORDE_OK\0",
        HORDE_ERROR_NULL_POINTER => b"HORDE_ERROR_NULL_POINTER\0",
        HORDE_ERROR_INVALID_ARGUMENT => b"HORDE_ERROR_INVALID_ARGUMENT\0",
        HORDE_ERROR_BUFFER_TOO_SMALL => b"HORDE_ERROR_BUFFER_TOO_SMALL\0",
        HORDE_ERROR_NO_SUCH_GROUP => b"HORDE_ERROR_NO_SUCH_GROUP\0",
        HORDE_ERROR_NO_SUCH_UNIT => b"HORDE_ERROR_NO_SUCH_UNIT\0",
        HORDE_ERROR_OUTSIDE_MAP => b"HORDE_ERROR_OUTSIDE_MAP\0",
        HORDE_ERROR_BLOCKED => b"HORDE_ERROR_BLOCKED\0",
        HORDE_ERROR_MAP_FORMAT => b"HORDE_ERROR_MAP_FORMAT\0",
        HORDE_ERROR_SNAPSHOT => b"HORDE_ERROR_SNAPSHOT\0",
        HORDE_ERROR_LIMIT => b"HORDE_ERROR_LIMIT\0",
        HORDE_ERROR_STAGE => b"HORDE_ERROR_STAGE\0",
        HORDE_ERROR_PANIC => b"HORDE_ERROR_PANIC\0",
        HORDE_ERROR_POISONED => b"HORDE_ERROR_POISONED\0",
        HORDE_ERROR_INTERNAL => b"HORDE_ERROR_INTERNAL\0",
        _ => b"HORDE_ERROR_UNKNOWN\0",
    };
    name.as_ptr().cast()
}

/// Copies the message of the last call on this thread that failed into `buffer`, as UTF-8
/// with a terminating NUL; the message is empty ("") when the last call succeeded. This call
/// does not change the message.
///
/// `*out_len` (when `out_len` is not NULL) receives the message's length in bytes, NUL not
/// included: a buffer of `*out_len + 1` bytes holds it whole. When `capacity` is smaller than
/// that, the first bytes that fit in `capacity - 1` are copied (cut at a UTF-8 character
/// boundary), terminated by a NUL, and the call returns `HORDE_ERROR_BUFFER_TOO_SMALL`.
/// `capacity` 0 writes nothing but `*out_len` and returns `HORDE_ERROR_BUFFER_TOO_SMALL`;
/// `buffer` may be NULL only then (`horde_last_error(NULL, 0, &len)` asks for the length).
/// A NULL `buffer` with a `capacity` returns `HORDE_ERROR_NULL_POINTER`.
///
/// # Safety
/// `buffer` points to `capacity` writable bytes (or is NULL with `capacity` 0); `out_len` is
/// NULL or points to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_last_error(
    buffer: *mut c_char,
    capacity: usize,
    out_len: *mut usize,
) -> HordeStatus {
    // Not `guarded`: it records every call's outcome as the last error, and this call must
    // leave the message it reads as it was.
    let outcome = std::panic::catch_unwind(|| {
        with_last_error(|message| {
            if !out_len.is_null() {
                if !out_len.is_aligned() {
                    return HORDE_ERROR_INVALID_ARGUMENT;
                }
                // SAFETY: not NULL, aligned; the caller promises a writable `size_t`.
                unsafe { out_len.write(message.len()) };
            }
            if capacity == 0 {
                return HORDE_ERROR_BUFFER_TOO_SMALL;
            }
            if buffer.is_null() {
                return HORDE_ERROR_NULL_POINTER;
            }
            let mut copy = message.len().min(capacity - 1);
            while !message.is_char_boundary(copy) {
                copy -= 1;
            }
            // SAFETY: `buffer` is not NULL and the caller promises `capacity` writable bytes;
            // we write `copy + 1 <= capacity` of them, from the message, which does not
            // overlap the caller's buffer (it lives in this thread's storage).
            unsafe {
                std::ptr::copy_nonoverlapping(message.as_ptr(), buffer.cast::<u8>(), copy);
                buffer.add(copy).write(0);
            }
            if copy < message.len() {
                HORDE_ERROR_BUFFER_TOO_SMALL
            } else {
                HORDE_OK
            }
        })
    });
    outcome.unwrap_or(HORDE_ERROR_PANIC)
}
