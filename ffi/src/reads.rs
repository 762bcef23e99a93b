//! The calls that read a simulation without changing it: the units (whole or positions
//! only), the frame, the map, the state hash and the last frame's stage times.

use std::ffi::c_char;
use std::time::Duration;

use horde::Cell;
use horde::components::{Agent, ExternalForce, Position, Quarantined, Steering, Stun, Velocity};
use horde::{GroupId, UnitId, UnitStatus};

use crate::commands::check_group;
use crate::failure::Failure;
use crate::guard::with_sim;
use crate::pointers::{fill, out_buffer, out_ptr, write_out};
use crate::status::*;
use crate::types::*;

/// Writes the number of units to `*out_count` (quarantined ones included): the number of
/// entries `horde_read_units` and `horde_read_positions` write.
///
/// # Safety
/// `sim` is a live handle; `out_count` points to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_unit_count(
    sim: *mut HordeSim,
    out_count: *mut usize,
) -> HordeStatus {
    // SAFETY: `sim` is a live handle no other thread uses (what `with_sim` needs) and
    // `out_count` is writable (`write_out`): this function's contract promises both.
    unsafe {
        with_sim(sim, |h| {
            write_out(out_count, "out_count", h.sim.unit_count())
        })
    }
}

/// Fills `h.scratch` with every unit, in id order.
fn gather_units(h: &mut HordeSim) {
    let world = h.sim.world();
    let out = &mut h.scratch;
    out.clear();
    out.reserve(world.len() as usize);
    let bit = |on: bool, bit: u32| if on { bit } else { 0 };
    let flags = |steering: &Steering, controllable: bool| {
        bit(steering.asleep.is_some(), HORDE_UNIT_ASLEEP)
            | bit(controllable, HORDE_UNIT_CONTROLLABLE)
    };
    // At most one of the status bits, as `UnitStatus` has one status: a unit that cannot
    // reach its goal is unreachable, not blocked, however long it stands.
    let status_bit = |status: UnitStatus| match status {
        UnitStatus::Arrived => HORDE_UNIT_ARRIVED,
        UnitStatus::Settled => HORDE_UNIT_SETTLED,
        UnitStatus::Blocked => HORDE_UNIT_BLOCKED,
        UnitStatus::Unreachable => HORDE_UNIT_UNREACHABLE,
        _ => 0,
    };
    type Parts<'a> = (
        &'a UnitId,
        &'a Position,
        &'a Velocity,
        &'a ExternalForce,
        &'a Stun,
    );
    let unit = |(id, p, v, e, s): Parts<'_>, agent: &Agent, flags: u32| HordeUnit {
        id: id.0,
        group: agent.group.0,
        layer: agent.layer as u8,
        reserved: 0,
        flags,
        x: p.0.x,
        y: p.0.y,
        vx: v.0.x,
        vy: v.0.y,
        external_x: e.0.x,
        external_y: e.0.y,
        stun: s.0,
        radius: agent.radius,
    };
    h.sim.horde().with_unit_status(|status| {
        for (parts, agent, steering) in world.query::<(Parts<'_>, &Agent, &Steering)>().iter() {
            let f =
                flags(steering, agent.controllable) | status_bit(status(parts.1, agent, steering));
            out.push(unit(parts, agent, f));
        }
    });
    // A quarantined unit keeps the bits it had (its steering is kept in the marker); it is
    // out of the simulation, so it is neither blocked nor unreachable.
    for (parts, q) in world.query::<(Parts<'_>, &Quarantined)>().iter() {
        let s = &q.steering;
        let f = flags(s, q.agent.controllable)
            | bit(s.arrived, HORDE_UNIT_ARRIVED)
            | bit(s.settled && !s.arrived, HORDE_UNIT_SETTLED)
            | HORDE_UNIT_QUARANTINED;
        out.push(unit(parts, &q.agent, f));
    }
    out.sort_unstable_by_key(|u| u.id);
}

/// Copies every unit, in id order, into `out[0..capacity]` and writes their number to
/// `*out_count`. When `capacity` is smaller than the number of units nothing is copied,
/// `*out_count` receives the number needed and the call returns
/// `HORDE_ERROR_BUFFER_TOO_SMALL` (pass `out` NULL and `capacity` 0 to ask for it, or use
/// `horde_unit_count`).
///
/// `out` NULL with a non-zero `capacity` is `HORDE_ERROR_NULL_POINTER`, before any size check
/// (every output buffer is checked in the same order: docs/ffi.md, "Buffers").
///
/// # Safety
/// `sim` is a live handle; `out` points to `capacity` writable `HordeUnit`s (or is NULL with
/// `capacity` 0); `out_count` points to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_read_units(
    sim: *mut HordeSim,
    out: *mut HordeUnit,
    capacity: usize,
    out_count: *mut usize,
) -> HordeStatus {
    // SAFETY: `sim` is a live handle no other thread uses (what `with_sim` needs), `out`
    // has room for `capacity` units (`out_buffer` is given no more) and `out_count` is
    // writable (`write_out`): this function's contract promises all three.
    unsafe {
        with_sim(sim, |h| {
            let needed = h.sim.unit_count();
            write_out(out_count, "out_count", needed)?;
            let out = out_buffer(out, capacity, needed, 1, ("out", "units"))?;
            gather_units(h);
            fill(out, &h.scratch);
            Ok(())
        })
    }
}

/// Copies every unit's position, in id order (the order of `horde_read_units`), into
/// `out_xy` as `x0, y0, x1, y1, ...`: `2 * count` floats. `capacity` counts units (pairs of
/// floats), not floats. `*out_count` receives the number of units; when `capacity` is smaller
/// nothing is copied and the call returns `HORDE_ERROR_BUFFER_TOO_SMALL`.
///
/// `out_xy` NULL with a non-zero `capacity` is `HORDE_ERROR_NULL_POINTER`, before any size check
/// (every output buffer is checked in the same order: docs/ffi.md, "Buffers").
///
/// # Safety
/// `sim` is a live handle; `out_xy` points to `2 * capacity` writable floats (or is NULL with
/// `capacity` 0); `out_count` points to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_read_positions(
    sim: *mut HordeSim,
    out_xy: *mut f32,
    capacity: usize,
    out_count: *mut usize,
) -> HordeStatus {
    // SAFETY: `sim` is a live handle no other thread uses (what `with_sim` needs), `out_xy`
    // has room for `2 * capacity` floats (`out_buffer` is given no more) and `out_count` is
    // writable (`write_out`): this function's contract promises all three.
    unsafe {
        with_sim(sim, |h| {
            let needed = h.sim.unit_count();
            write_out(out_count, "out_count", needed)?;
            let out = out_buffer(out_xy, capacity, needed, 2, ("out_xy", "positions"))?;
            gather_units(h);
            for (pair, unit) in out.chunks_exact_mut(2).zip(&h.scratch) {
                pair[0].write(unit.x);
                pair[1].write(unit.y);
            }
            Ok(())
        })
    }
}

/// Writes the number of frames run so far to `*out_frame`.
///
/// # Safety
/// `sim` is a live handle; `out_frame` points to a writable `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_frame(sim: *mut HordeSim, out_frame: *mut u64) -> HordeStatus {
    // SAFETY: `sim` is a live handle no other thread uses (what `with_sim` needs) and
    // `out_frame` is writable (`write_out`): this function's contract promises both.
    unsafe { with_sim(sim, |h| write_out(out_frame, "out_frame", h.sim.frame())) }
}

/// Writes the map's width and height, in cells, to `*out_width` and `*out_height`.
///
/// # Safety
/// `sim` is a live handle; `out_width` and `out_height` point to writable `uint32_t`s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_map_size(
    sim: *mut HordeSim,
    out_width: *mut u32,
    out_height: *mut u32,
) -> HordeStatus {
    // SAFETY: `sim` is a live handle no other thread uses (what `with_sim` needs) and
    // `out_width` and `out_height` are writable (`write_out`): this function's contract
    // promises all three.
    unsafe {
        with_sim(sim, |h| {
            out_ptr(out_width, "out_width")?;
            out_ptr(out_height, "out_height")?;
            let map = h.sim.map();
            write_out(out_width, "out_width", map.width())?;
            write_out(out_height, "out_height", map.height())
        })
    }
}

/// Writes the terrain of cell `(x, y)` (a `HORDE_TERRAIN_*` value) to `*out_terrain`.
///
/// # Safety
/// `sim` is a live handle; `out_terrain` points to a writable `uint8_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_terrain_at(
    sim: *mut HordeSim,
    x: u32,
    y: u32,
    out_terrain: *mut u8,
) -> HordeStatus {
    // SAFETY: `sim` is a live handle no other thread uses (what `with_sim` needs) and
    // `out_terrain` is writable (`write_out`): this function's contract promises both.
    unsafe {
        with_sim(sim, |h| {
            out_ptr(out_terrain, "out_terrain")?;
            let map = h.sim.map();
            if x >= map.width() || y >= map.height() {
                return Err(Failure::new(
                    HORDE_ERROR_OUTSIDE_MAP,
                    format!(
                        "cell ({x}, {y}) lies outside the {}x{} map",
                        map.width(),
                        map.height()
                    ),
                ));
            }
            write_out(
                out_terrain,
                "out_terrain",
                map.terrain_at(Cell::new(x, y)) as u8,
            )
        })
    }
}

/// Writes where group `group` stands with the unit it follows (`horde_follow_unit`) to
/// `*out_state`: 0 it follows none, 1 it follows unit `*out_unit`, 2 it stopped because unit
/// `*out_unit` is gone, 3 it stopped because none of its units can reach unit `*out_unit`.
///
/// # Safety
/// `sim` is a live handle; `out_state` and `out_unit` point to a writable `uint32_t` each.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_group_target(
    sim: *mut HordeSim,
    group: u16,
    out_state: *mut u32,
    out_unit: *mut u32,
) -> HordeStatus {
    // SAFETY: `sim` is a live handle no other thread uses (what `with_sim` needs) and both
    // outputs are writable (`write_out`): this function's contract promises all three.
    unsafe {
        with_sim(sim, |h| {
            out_ptr(out_state, "out_state")?;
            out_ptr(out_unit, "out_unit")?;
            check_group(&h.sim, GroupId(group))?;
            let groups = h.sim.horde().groups();
            let (state, unit) = groups
                .get(group)
                .map(|g| g.target_state)
                .unwrap_or_default()
                .code();
            write_out(out_state, "out_state", u32::from(state))?;
            write_out(out_unit, "out_unit", unit.0)
        })
    }
}

/// Writes the state hash to `*out_hash`: a 64-bit hash of the whole state (every unit's
/// state in id order, the terrain, the groups' goals, the force fields). Equal on every
/// machine and thread count for the same commands, so lockstep peers compare it to detect
/// desyncs; equal to `horde::Simulation::state_hash` in Rust for the same commands.
///
/// # Safety
/// `sim` is a live handle; `out_hash` points to a writable `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_state_hash(sim: *mut HordeSim, out_hash: *mut u64) -> HordeStatus {
    // SAFETY: `sim` is a live handle no other thread uses (what `with_sim` needs) and
    // `out_hash` is writable (`write_out`): this function's contract promises both.
    unsafe { with_sim(sim, |h| write_out(out_hash, "out_hash", h.sim.state_hash())) }
}

/// Copies the wall time of each stage of the last frame, in the order they were declared
/// (the storage sort, `sort_units`, last), into `out[0..capacity]` and writes their number to
/// `*out_count` (0 before the first frame). When `capacity` is smaller nothing is copied and
/// the call returns `HORDE_ERROR_BUFFER_TOO_SMALL` with the number needed in `*out_count`.
/// `*out_total_seconds` (when `out_total_seconds` is not NULL) receives the whole frame's
/// wall time.
///
/// `out` NULL with a non-zero `capacity` is `HORDE_ERROR_NULL_POINTER`, before any size check
/// (every output buffer is checked in the same order: docs/ffi.md, "Buffers").
///
/// # Safety
/// `sim` is a live handle; `out` points to `capacity` writable `HordeStageTime`s (or is NULL
/// with `capacity` 0); `out_count` points to a writable `size_t`; `out_total_seconds` is
/// NULL or points to a writable `double`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_stage_times(
    sim: *mut HordeSim,
    out: *mut HordeStageTime,
    capacity: usize,
    out_count: *mut usize,
    out_total_seconds: *mut f64,
) -> HordeStatus {
    // SAFETY: `sim` is a live handle no other thread uses (what `with_sim` needs), `out`
    // has room for `capacity` stage times (`out_buffer` is given no more), `out_count` is
    // writable and `out_total_seconds` is NULL or writable (`write_out`): this function's
    // contract promises all four.
    unsafe {
        with_sim(sim, |h| {
            out_ptr(out_count, "out_count")?;
            if !out_total_seconds.is_null() {
                out_ptr(out_total_seconds, "out_total_seconds")?;
            }
            let report = h.sim.horde().last_report();
            let stages = report.map_or(&[][..], |r| r.stages());
            write_out(out_count, "out_count", stages.len())?;
            let out = out_buffer(out, capacity, stages.len(), 1, ("out", "stages"))?;
            for (slot, stage) in out.iter_mut().zip(stages) {
                slot.write(HordeStageTime {
                    name: stage_name(&stage.name),
                    seconds: stage.duration.as_secs_f64(),
                });
            }
            if !out_total_seconds.is_null() {
                let total = report.map_or(Duration::ZERO, |r| r.total());
                write_out(out_total_seconds, "out_total_seconds", total.as_secs_f64())?;
            }
            Ok(())
        })
    }
}

/// `name` as a NUL-terminated C array, cut to fit.
fn stage_name(name: &str) -> [c_char; HORDE_STAGE_NAME_LEN] {
    let mut out = [0 as c_char; HORDE_STAGE_NAME_LEN];
    for (slot, &byte) in out
        .iter_mut()
        .zip(name.as_bytes().iter().take(HORDE_STAGE_NAME_LEN - 1))
    {
        *slot = byte as c_char;
    }
    out
}
