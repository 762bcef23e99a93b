//! The error every call can fail with ([`Failure`]), the thread's last error message, and
//! the translation of horde's errors into statuses.

use std::cell::RefCell;

use horde::SpawnError;
use horde::formats::TerrainLengthError;
use horde::{ConfigError, FileError, ForceFieldError, GridError, MapFormatError, SimError};

use crate::status::*;

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
            SimError::Formation(_) | SimError::TargetInGroup { .. } => HORDE_ERROR_INVALID_ARGUMENT,
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
    /// The message names the setting by its `HordeConfig` field (settings have one name
    /// outside Rust).
    fn from(error: ConfigError) -> Self {
        Failure::invalid(format!("config: {error}"))
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
