//! The guard that keeps panics on the Rust side of the boundary ([`guarded`], [`with_sim`])
//! and turns every call's outcome into its status and last error message.

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::failure::{Failure, set_last_error};
use crate::status::*;
use crate::types::{HordeSim, SIM_MAGIC};

/// The text of a caught panic's payload.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&'static str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "<non-string panic payload>".to_owned()
    }
}

/// Turns the outcome of a call into its status, recording the message for
/// `horde_last_error` (empty on success).
fn finish(outcome: Result<(), Failure>) -> HordeStatus {
    match outcome {
        Ok(()) => {
            set_last_error("");
            HORDE_OK
        }
        Err(failure) => {
            set_last_error(&failure.message);
            failure.status
        }
    }
}

/// Runs the body of a call that takes no simulation: a panic inside it becomes
/// [`HORDE_ERROR_PANIC`] instead of unwinding into the caller's frames.
pub(crate) fn guarded(body: impl FnOnce() -> Result<(), Failure>) -> HordeStatus {
    finish(catch_panic(body))
}

/// Runs `body`, a panic inside it caught and returned as a [`HORDE_ERROR_PANIC`] failure.
fn catch_panic(body: impl FnOnce() -> Result<(), Failure>) -> Result<(), Failure> {
    catch_unwind(AssertUnwindSafe(|| {
        #[cfg(test)]
        crate::tests::hook::maybe_panic();
        body()
    }))
    .unwrap_or_else(|payload| {
        Err(Failure::new(
            HORDE_ERROR_PANIC,
            format!("panic inside horde: {}", panic_text(&*payload)),
        ))
    })
}

/// Runs the body of a call on the simulation `sim`: checks the handle (not NULL, a live
/// simulation, not poisoned), then runs `body` under [`guarded`]'s rules. A panic, or a
/// stage that panicked, poisons the handle.
///
/// # Safety
/// `sim` is NULL or a pointer returned by a `horde_sim_create*` call and not yet freed,
/// used by no other thread during the call.
pub(crate) unsafe fn with_sim(
    sim: *mut HordeSim,
    body: impl FnOnce(&mut HordeSim) -> Result<(), Failure>,
) -> HordeStatus {
    // SAFETY: this function's contract is `with_sim_inner`'s.
    unsafe { with_sim_inner(sim, false, body) }
}

/// [`with_sim`] for the one call that may run on a poisoned simulation (restoring a
/// snapshot replaces its whole state).
///
/// # Safety
/// As [`with_sim`].
pub(crate) unsafe fn with_sim_even_poisoned(
    sim: *mut HordeSim,
    body: impl FnOnce(&mut HordeSim) -> Result<(), Failure>,
) -> HordeStatus {
    // SAFETY: this function's contract is `with_sim_inner`'s.
    unsafe { with_sim_inner(sim, true, body) }
}

/// The simulation a non-NULL handle points to, refused (`HORDE_ERROR_INVALID_ARGUMENT`) when
/// the pointer is misaligned or does not hold a live handle's magic.
///
/// # Safety
/// `sim` is not NULL, and is a pointer returned by a `horde_sim_create*` call and not yet
/// freed, used by no other thread while the reference lives.
pub(crate) unsafe fn live_handle<'a>(sim: *mut HordeSim) -> Result<&'a mut HordeSim, Failure> {
    if !sim.is_aligned() {
        return Err(Failure::invalid(
            "`sim` is not a simulation handle (misaligned pointer)",
        ));
    }
    // SAFETY: the caller promises that `sim` came from a `horde_sim_create*` call, was not
    // freed, and is used by no other thread now; it is aligned (checked above), so it points
    // to a live `HordeSim` we may borrow mutably while the reference lives.
    let handle = unsafe { &mut *sim };
    if handle.magic != SIM_MAGIC {
        return Err(Failure::invalid(
            "`sim` is not a simulation handle (freed already, or not made by \
             horde_sim_create*)",
        ));
    }
    Ok(handle)
}

/// [`with_sim`] and [`with_sim_even_poisoned`]: `allow_poisoned` says which.
///
/// # Safety
/// As [`with_sim`].
unsafe fn with_sim_inner(
    sim: *mut HordeSim,
    allow_poisoned: bool,
    body: impl FnOnce(&mut HordeSim) -> Result<(), Failure>,
) -> HordeStatus {
    if sim.is_null() {
        return finish(Err(Failure::null("sim")));
    }
    // SAFETY: not NULL (checked above); the caller promises the rest of `live_handle`'s
    // contract: a live handle, used by no other thread during the call.
    let handle = match unsafe { live_handle(sim) } {
        Ok(handle) => handle,
        Err(failure) => return finish(Err(failure)),
    };
    if handle.poisoned && !allow_poisoned {
        return finish(Err(Failure::new(
            HORDE_ERROR_POISONED,
            "the simulation is poisoned by an earlier panic inside horde; restore a snapshot \
             into it (horde_snapshot_restore) or free it",
        )));
    }
    let outcome = catch_panic(|| body(handle));
    if let Err(failure) = &outcome
        && failure.poisons()
    {
        // The body's borrow ended with the closure: the handle is ours again.
        handle.poisoned = true;
        handle.snapshot_bytes = None;
    }
    finish(outcome)
}
