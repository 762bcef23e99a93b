//! The boundary's plumbing: the error every call can fail with ([`Failure`]), the thread's
//! last error message, the translation of horde's errors into statuses, and the guard that
//! keeps panics on the Rust side ([`guarded`], [`with_sim`]).

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};

use horde::SpawnError;
use horde::formats::TerrainLengthError;
use horde::{ConfigError, FileError, ForceFieldError, GridError, MapFormatError, SimError};

use crate::status::*;
use crate::types::{HordeSim, HordeStatus, SIM_MAGIC};

thread_local! {
    /// The message of the last call on this thread that failed; empty after a success.
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Replaces this thread's last error message.
pub(crate) fn set_last_error(message: &str) {
    LAST_ERROR.with(|last| {
        let mut last = last.borrow_mut();
        last.clear();
        last.push_str(message);
    });
}

/// Calls `f` with this thread's last error message.
pub(crate) fn with_last_error<R>(f: impl FnOnce(&str) -> R) -> R {
    LAST_ERROR.with(|last| f(&last.borrow()))
}

/// Why a call failed: its status and the message the caller can read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub(crate) status: HordeStatus,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn new(status: HordeStatus, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }

    /// A required pointer argument was NULL.
    pub(crate) fn null(argument: &str) -> Self {
        Self::new(
            HORDE_ERROR_NULL_POINTER,
            format!("`{argument}` is NULL; it must point to valid memory"),
        )
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Self::new(HORDE_ERROR_INVALID_ARGUMENT, message)
    }

    /// `what` is prefixed to the message (which item of a bulk call failed, say).
    pub(crate) fn context(mut self, what: &str) -> Self {
        self.message = format!("{what}: {}", self.message);
        self
    }

    /// Whether this failure leaves the simulation unusable (a panic in horde).
    pub(crate) fn poisons(&self) -> bool {
        self.status == HORDE_ERROR_PANIC
    }
}

impl From<SimError> for Failure {
    fn from(error: SimError) -> Self {
        let message = error.to_string();
        let status = match &error {
            SimError::Config(_) => HORDE_ERROR_INVALID_ARGUMENT,
            SimError::Spawn(spawn) => return Failure::from(spawn.clone()),
            SimError::GoalInWall(_) => HORDE_ERROR_BLOCKED,
            SimError::EmptyGoal => HORDE_ERROR_INVALID_ARGUMENT,
            SimError::CellOutside { .. } => HORDE_ERROR_OUTSIDE_MAP,
            SimError::BadTimeStep(_) => HORDE_ERROR_INVALID_ARGUMENT,
            SimError::Frame(_) => HORDE_ERROR_PANIC,
            SimError::Stage(_) => HORDE_ERROR_STAGE,
            SimError::TooManyGroups { .. } => HORDE_ERROR_LIMIT,
            SimError::Buckets(_) => HORDE_ERROR_LIMIT,
            SimError::Snapshot(file) if file.is_bad_input() => HORDE_ERROR_SNAPSHOT,
            SimError::NoSuchUnit(_) | SimError::NoUnitWithId(_) => HORDE_ERROR_NO_SUCH_UNIT,
            _ => HORDE_ERROR_INTERNAL,
        };
        Failure::new(status, message)
    }
}

impl From<SpawnError> for Failure {
    fn from(error: SpawnError) -> Self {
        let status = match error {
            SpawnError::OutsideMap(_) => HORDE_ERROR_OUTSIDE_MAP,
            SpawnError::Blocked { .. } => HORDE_ERROR_BLOCKED,
            SpawnError::NoSuchGroup(_) => HORDE_ERROR_NO_SUCH_GROUP,
            SpawnError::IdsExhausted(_) => HORDE_ERROR_LIMIT,
            _ => HORDE_ERROR_INVALID_ARGUMENT,
        };
        Failure::new(status, error.to_string())
    }
}

impl From<ConfigError> for Failure {
    /// The message names the setting by its `HordeConfig` field, which is what the caller
    /// wrote: horde's own messages name the contact settings by their Rust path
    /// (`contacts.passes`); every other setting has the same name on both sides.
    fn from(error: ConfigError) -> Self {
        let rust_path = match error {
            ConfigError::ContactPasses(_) => Some(("contacts.passes", "contact_passes")),
            ConfigError::ContactRelaxation(_) => {
                Some(("contacts.relaxation", "contact_relaxation"))
            }
            _ => None,
        };
        let mut message = error.to_string();
        if let Some((path, field)) = rust_path {
            message = message.replacen(path, field, 1);
        }
        Failure::invalid(format!("config: {message}"))
    }
}

impl From<ForceFieldError> for Failure {
    fn from(error: ForceFieldError) -> Self {
        Failure::invalid(error.to_string())
    }
}

impl From<GridError> for Failure {
    fn from(error: GridError) -> Self {
        Failure::invalid(error.to_string())
    }
}

impl From<TerrainLengthError> for Failure {
    fn from(error: TerrainLengthError) -> Self {
        Failure::invalid(error.to_string())
    }
}

impl From<MapFormatError> for Failure {
    fn from(error: MapFormatError) -> Self {
        Failure::new(HORDE_ERROR_MAP_FORMAT, error.to_string())
    }
}

impl From<FileError> for Failure {
    fn from(error: FileError) -> Self {
        let status = if error.is_bad_input() {
            HORDE_ERROR_SNAPSHOT
        } else {
            HORDE_ERROR_INTERNAL
        };
        Failure::new(status, error.to_string())
    }
}

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
