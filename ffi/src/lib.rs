//! horde-ffi: a C ABI for [horde](https://docs.rs/horde), so that engines written in C, C++,
//! C# (P/Invoke) or anything else with a C FFI can drive a horde simulation.
//!
//! The library builds as a `cdylib` (`libhorde_ffi.so`, `horde_ffi.dll`, `libhorde_ffi.dylib`)
//! and a `staticlib` (`libhorde_ffi.a`); its header, `include/horde.h`, is generated from this
//! crate by cbindgen and checked to be current by the crate's tests. `docs/ffi.md` in the
//! repository is the guide: ownership, threading, errors and an engine loop.
//!
//! Rules every function keeps:
//!
//! - Only plain `#[repr(C)]` data crosses the boundary; a simulation is an opaque
//!   [`HordeSim`] handle.
//! - Every function but [`horde_abi_version`] and [`horde_status_name`] returns a
//!   [`HordeStatus`]: [`HORDE_OK`](status::HORDE_OK) or an error code; after an error,
//!   [`horde_last_error`] copies the message into a caller's buffer.
//! - No panic crosses the boundary: a panic inside horde is caught and returned as
//!   [`HORDE_ERROR_PANIC`](status::HORDE_ERROR_PANIC) (and poisons the simulation).
//! - A call that fails changes nothing, except where its documentation says otherwise.
//!
//! This crate is the one place in the workspace where `unsafe` is allowed, for the
//! boundary only: every block says why it is sound in a `SAFETY:` comment.

// The modules are declared in the header's order (cbindgen writes items in the order it
// reads them, module by module): the data first, then the calls, each group in the order a
// program uses them. Each declaration stands alone so that rustfmt keeps this order.

// The `#[repr(C)]` structs, the constants and the handle.
mod types;

// `HordeConfig`, written from horde's settings (tests/settings.rs).
mod config;

pub mod status;

// Failures, the last error message, horde's errors as statuses.
mod failure;

// The panic guard around every call.
mod guard;

// Checks of the caller's pointers and buffers.
mod pointers;

// The ABI version, status names and the last error.
mod errors;

// Defaults, creating and freeing a simulation.
mod create;

// The calls that change a simulation.
mod commands;

// The calls that read a simulation.
mod reads;

// Writing and restoring snapshots.
mod snapshot;

#[cfg(test)]
mod tests;

pub use commands::*;
pub use create::*;
pub use errors::*;
pub use reads::*;
pub use snapshot::*;
pub use types::*;
