//! The status codes every call returns (`HORDE_OK` or an error).

/// The status every call returns: `HORDE_OK` (0) or one of the
/// `HORDE_ERROR_*` codes.
pub type HordeStatus = i32;

/// The call succeeded.
pub const HORDE_OK: HordeStatus = 0;
/// A pointer argument that must point to memory was NULL. Nothing changed.
pub const HORDE_ERROR_NULL_POINTER: HordeStatus = 1;
/// An argument is out of range: a number that is NaN, infinite or outside its range, an
/// unknown terrain, layer, kind or navigation value, a flag other than 0 or 1, a count that
/// does not fit, a handle that is not a simulation. Nothing changed.
pub const HORDE_ERROR_INVALID_ARGUMENT: HordeStatus = 2;
/// The caller's buffer is too small. The size needed was written to the call's size output
/// (see each call); nothing else was written and nothing changed. (`horde_last_error` is the
/// exception: it copies as much of the message as fits.)
pub const HORDE_ERROR_BUFFER_TOO_SMALL: HordeStatus = 3;
/// No group has this id (group ids are 0, 1, 2, ... in the order groups were added).
pub const HORDE_ERROR_NO_SUCH_GROUP: HordeStatus = 4;
/// No unit has this id (never spawned, or despawned already).
pub const HORDE_ERROR_NO_SUCH_UNIT: HordeStatus = 5;
/// A cell or a position lies outside the map.
pub const HORDE_ERROR_OUTSIDE_MAP: HordeStatus = 6;
/// A unit would spawn in a cell its layer cannot enter, or a goal cell is a wall for ground
/// and hover units alike.
pub const HORDE_ERROR_BLOCKED: HordeStatus = 7;
/// The Moving AI map text is malformed (the message names the line).
pub const HORDE_ERROR_MAP_FORMAT: HordeStatus = 8;
/// The snapshot bytes are not a valid horde snapshot of this version (wrong magic, version,
/// checksum, truncated, or a value out of range).
pub const HORDE_ERROR_SNAPSHOT: HordeStatus = 9;
/// A limit is reached: 65,536 groups, 2^32 - 1 unit ids, or a map whose cells or units are
/// too large for the neighbour buckets.
pub const HORDE_ERROR_LIMIT: HordeStatus = 10;
/// `horde_step`: a stage could not do its part of the frame (a field left unrepaired, say).
/// The frame ran to its end and counts; the simulation stays usable. Not expected on a
/// valid map.
pub const HORDE_ERROR_STAGE: HordeStatus = 11;
/// A panic inside horde (a stage of the frame, or the call itself): a bug in horde. The
/// panic was caught and did not cross into the caller. The simulation is now poisoned.
pub const HORDE_ERROR_PANIC: HordeStatus = 12;
/// The simulation was poisoned by an earlier `HORDE_ERROR_PANIC`: every call on it returns
/// this, except `horde_sim_free` and `horde_snapshot_restore` (which replaces its state and
/// clears the poison).
pub const HORDE_ERROR_POISONED: HordeStatus = 13;
/// Something failed that is not the caller's input (the operating system refused to start
/// a worker thread, say). The message says what.
pub const HORDE_ERROR_INTERNAL: HordeStatus = 14;
