//! Snapshots: the whole state as bytes the caller owns, written on demand (encoded once
//! per state) and restored into a handle or a new simulation.

use horde::{SimConfig, Simulation, Snapshot};

use crate::failure::Failure;
use crate::guard::{with_sim, with_sim_even_poisoned};
use crate::pointers::{fill, in_slice, out_buffer, out_ptr, write_out};
use crate::types::*;

/// A new simulation from the snapshot `bytes`, on `threads` threads (checked: 1..=`SimConfig::MAX_THREADS`);
/// shared by `horde_sim_create_from_snapshot` and `horde_snapshot_restore`.
pub(crate) fn restore(bytes: &[u8], threads: usize) -> Result<Simulation, Failure> {
    if threads == 0 || threads > SimConfig::MAX_THREADS {
        return Err(Failure::invalid(format!(
            "threads = {threads} is invalid: it must be 1..={}",
            SimConfig::MAX_THREADS
        )));
    }
    let snapshot = Snapshot::from_bytes(bytes)?;
    Ok(Simulation::from_snapshot(&snapshot, threads)?)
}

/// The bytes of the current state's snapshot, encoded once and kept until the state changes.
fn snapshot_bytes(h: &mut HordeSim) -> Result<&[u8], Failure> {
    let bytes = match h.snapshot_bytes.take() {
        Some(bytes) => bytes,
        None => h.sim.snapshot().to_bytes()?,
    };
    Ok(h.snapshot_bytes.insert(bytes))
}

/// Writes the size in bytes of the current state's snapshot to `*out_size`: the buffer
/// `horde_snapshot_write` needs. (The snapshot is encoded here and kept, so the write that
/// follows does not encode it again.)
///
/// # Safety
/// `sim` is a live handle; `out_size` points to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_snapshot_size(
    sim: *mut HordeSim,
    out_size: *mut usize,
) -> HordeStatus {
    // SAFETY: `sim` is a live handle no other thread uses (what `with_sim` needs) and
    // `out_size` is writable (`write_out`): this function's contract promises both.
    unsafe {
        with_sim(sim, |h| {
            out_ptr(out_size, "out_size")?;
            let size = snapshot_bytes(h)?.len();
            write_out(out_size, "out_size", size)
        })
    }
}

/// Writes the snapshot of the current state (the whole state: map, settings but the thread
/// count, groups, force fields, units, frame; a versioned, checksummed byte string) into
/// `buffer[0..capacity]` and its length to `*out_len`. When `capacity` is smaller nothing is
/// written but `*out_len`, which receives the size needed, and the call returns
/// `HORDE_ERROR_BUFFER_TOO_SMALL`. The bytes belong to the caller: save them, send them, and
/// give them to `horde_snapshot_restore` or `horde_sim_create_from_snapshot`.
///
/// `buffer` NULL with a non-zero `capacity` is `HORDE_ERROR_NULL_POINTER`, before any size check
/// (every output buffer is checked in the same order: docs/ffi.md, "Buffers").
///
/// # Safety
/// `sim` is a live handle; `buffer` points to `capacity` writable bytes (or is NULL with
/// `capacity` 0); `out_len` points to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_snapshot_write(
    sim: *mut HordeSim,
    buffer: *mut u8,
    capacity: usize,
    out_len: *mut usize,
) -> HordeStatus {
    // SAFETY: `sim` is a live handle no other thread uses (what `with_sim` needs), `buffer`
    // has room for `capacity` bytes (`out_buffer` is given no more) and `out_len` is
    // writable (`write_out`): this function's contract promises all three.
    unsafe {
        with_sim(sim, |h| {
            out_ptr(out_len, "out_len")?;
            let bytes = snapshot_bytes(h)?;
            write_out(out_len, "out_len", bytes.len())?;
            fill(
                out_buffer(buffer, capacity, bytes.len(), 1, ("buffer", "bytes"))?,
                bytes,
            );
            Ok(())
        })
    }
}

/// Replaces the whole state of `sim` with the snapshot in `bytes[0..len]` (written by
/// `horde_snapshot_write`), keeping its thread count; the handle stays the same. It then
/// continues exactly as the simulation that was saved. This is the one call allowed on a
/// poisoned simulation, and it clears the poison. On failure (`HORDE_ERROR_SNAPSHOT` for bytes
/// that are not a valid snapshot) the state is unchanged.
///
/// # Safety
/// `sim` is a live handle; `bytes` points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_snapshot_restore(
    sim: *mut HordeSim,
    bytes: *const u8,
    len: usize,
) -> HordeStatus {
    // SAFETY: `sim` is a live handle no other thread uses (what `with_sim_even_poisoned`
    // needs) and `bytes` holds `len` bytes (`in_slice`): this function's contract promises
    // both.
    unsafe {
        with_sim_even_poisoned(sim, |h| {
            if bytes.is_null() {
                return Err(Failure::null("bytes"));
            }
            let bytes = in_slice(bytes, len, "bytes")?;
            let threads = h.sim.horde().config().threads;
            let restored = restore(bytes, threads)?;
            h.sim = restored;
            h.poisoned = false;
            h.snapshot_bytes = None;
            Ok(())
        })
    }
}
