//! A simulation's lifecycle: the defaults of the structs a caller fills in, creating a
//! simulation (from terrain bytes, Moving AI text or a snapshot) and freeing it.

use std::ffi::c_char;

use horde::formats::MapFormat;
use horde::glam::Vec2;
use horde::{Grid, Map, SimConfig, Simulation, Terrain, UnitSpec};

use crate::failure::Failure;
use crate::guard::{guarded, live_handle};
use crate::pointers::{check_aligned, in_slice, out_ptr, write_out};
use crate::snapshot::restore;
use crate::types::*;

/// The body of every `horde_sim_create*` call: `*out_sim` is set to NULL first (when it can
/// be written), so a failed create leaves no stale handle; then `out_sim` is checked, `make`
/// runs under [`guarded`], and the handle of the simulation it makes is written to
/// `*out_sim`.
///
/// # Safety
/// `out_sim` is NULL or points to writable memory for one `HordeSim*`.
unsafe fn create_into(
    out_sim: *mut *mut HordeSim,
    make: impl FnOnce() -> Result<Simulation, Failure>,
) -> HordeStatus {
    if !out_sim.is_null() && out_sim.is_aligned() {
        // SAFETY: not NULL and aligned (checked just above); the caller promises writable
        // memory for one pointer there.
        unsafe { out_sim.write(std::ptr::null_mut()) };
    }
    guarded(|| {
        let out_sim = out_ptr(out_sim, "out_sim")?;
        let sim = make()?;
        let handle = Box::into_raw(Box::new(HordeSim::new(sim)));
        // SAFETY: not NULL and aligned (checked by `out_ptr`); the caller promises writable
        // memory for one pointer there.
        unsafe { out_sim.write(handle) };
        Ok(())
    })
}

/// The config `config` points to, or the defaults for NULL.
///
/// # Safety
/// `config` is NULL or points to a `HordeConfig`.
unsafe fn config_of(config: *const HordeConfig) -> Result<SimConfig, Failure> {
    if config.is_null() {
        return Ok(SimConfig::default());
    }
    check_aligned(config, "config")?;
    // SAFETY: not NULL, aligned; the caller promises it points to a `HordeConfig`, whose
    // fields are plain integers and floats (any bit pattern is a value).
    let config = unsafe { config.read() };
    config.to_sim_config()
}

// ---------------------------------------------------------------------------------------
// Defaults

/// Writes the default config to `*out` (every field's default is in `HordeConfig`'s docs).
///
/// # Safety
/// `out` is NULL or points to a writable `HordeConfig`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_config_default(out: *mut HordeConfig) -> HordeStatus {
    guarded(|| {
        let config = HordeConfig::from_sim_config(&SimConfig::default());
        // SAFETY: `out` is NULL or points to a writable `HordeConfig` (this function's
        // contract), which is what `write_out` requires.
        unsafe { write_out(out, "out", config) }
    })
}

/// Writes the default unit spec to `*out`: position (0, 0), radius 0.5, top speed 4, turn
/// rate 2 pi, mass 1, group 0, ground layer, controllable. Set the position and group.
///
/// # Safety
/// `out` is NULL or points to a writable `HordeUnitSpec`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_unit_spec_default(out: *mut HordeUnitSpec) -> HordeStatus {
    guarded(|| {
        let s = UnitSpec::at(Vec2::ZERO);
        let spec = HordeUnitSpec {
            x: s.position.x,
            y: s.position.y,
            radius: s.radius,
            max_speed: s.max_speed,
            turn_rate: s.turn_rate,
            mass: s.mass,
            group: s.group.0,
            layer: s.layer as u8,
            controllable: u8::from(s.controllable),
        };
        // SAFETY: `out` is NULL or points to a writable `HordeUnitSpec` (this function's
        // contract), which is what `write_out` requires.
        unsafe { write_out(out, "out", spec) }
    })
}

/// Writes the default force field to `*out`: an explosion at (0, 0), radius 1, strength 0,
/// duration 0 (one frame), linear falloff, no time decay, push direction (1, 0), clockwise,
/// affecting controllable units. Set kind, centre, radius and strength.
///
/// # Safety
/// `out` is NULL or points to a writable `HordeForceField`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_force_field_default(out: *mut HordeForceField) -> HordeStatus {
    guarded(|| {
        let field = HordeForceField {
            kind: HORDE_FORCE_EXPLOSION,
            x: 0.0,
            y: 0.0,
            radius: 1.0,
            strength: 0.0,
            duration: 0.0,
            falloff: 1,
            time_decay: 0.0,
            direction_x: 1.0,
            direction_y: 0.0,
            clockwise: 1,
            affects_controllable: 1,
        };
        // SAFETY: `out` is NULL or points to a writable `HordeForceField` (this function's
        // contract), which is what `write_out` requires.
        unsafe { write_out(out, "out", field) }
    })
}

// ---------------------------------------------------------------------------------------
// Lifecycle

/// Creates a simulation on a `width x height` map and writes its handle to `*out_sim`.
///
/// `terrain` holds `terrain_len == width * height` bytes, row by row from the top
/// (`terrain[y * width + x]` is cell `(x, y)`), each a `HORDE_TERRAIN_*` value (0..=8). Cells
/// are 1 world unit wide and the map's corner is at world (0, 0), so cell `(x, y)` covers
/// `[x, x + 1) x [y, y + 1)`. Each side is 1..=32768. `config` NULL means the defaults.
///
/// On failure `*out_sim` is set to NULL (when `out_sim` is not NULL) and nothing is made.
///
/// # Safety
/// `terrain` points to `terrain_len` readable bytes; `config` is NULL or points to a
/// `HordeConfig`; `out_sim` is NULL or points to a writable `HordeSim*`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_sim_create(
    width: u32,
    height: u32,
    terrain: *const u8,
    terrain_len: usize,
    config: *const HordeConfig,
    out_sim: *mut *mut HordeSim,
) -> HordeStatus {
    let make = || {
        if terrain.is_null() {
            return Err(Failure::null("terrain"));
        }
        let grid = Grid::new(width, height)?;
        if terrain_len != grid.len() {
            return Err(Failure::invalid(format!(
                "terrain_len = {terrain_len}, but a {width}x{height} map has {} cells",
                grid.len()
            )));
        }
        // SAFETY: `terrain` points to `terrain_len` readable bytes (this function's
        // contract), which is what `in_slice` requires.
        let bytes = unsafe { in_slice(terrain, terrain_len, "terrain")? };
        let cells = bytes
            .iter()
            .enumerate()
            .map(|(i, &b)| {
                terrain_of(b).map_err(|f| {
                    f.context(&format!(
                        "terrain[{i}] (cell {}, {})",
                        i % width as usize,
                        i / width as usize
                    ))
                })
            })
            .collect::<Result<Vec<Terrain>, Failure>>()?;
        // SAFETY: `config` is NULL or points to a `HordeConfig` (this function's
        // contract), which is what `config_of` requires.
        let config = unsafe { config_of(config)? };
        let map = Map::from_terrain(grid, cells, horde::fields::CostTable::default())?;
        Ok(Simulation::new(map, config)?)
    };
    // SAFETY: `out_sim` is NULL or points to a writable `HordeSim*` (this function's
    // contract), which is what `create_into` requires.
    unsafe { create_into(out_sim, make) }
}

/// Creates a simulation on a Moving AI `.map` file's text and writes its handle to
/// `*out_sim`. `text` holds `text_len` bytes of UTF-8 (no terminating NUL needed):
/// `type octile`, `height H`, `width W`, `map`, then H rows of W characters (`.` `G` empty,
/// `@` `O` `T` blocked, `S` swamp, `W` water; horde's own `#` `X` `F` `~` `:` `L` too). Row 0
/// is the first row. `config` NULL means the defaults.
///
/// On failure `*out_sim` is set to NULL (when `out_sim` is not NULL); a malformed file gives
/// `HORDE_ERROR_MAP_FORMAT` with the line in the message.
///
/// # Safety
/// `text` points to `text_len` readable bytes; `config` is NULL or points to a
/// `HordeConfig`; `out_sim` is NULL or points to a writable `HordeSim*`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_sim_create_movingai(
    text: *const c_char,
    text_len: usize,
    config: *const HordeConfig,
    out_sim: *mut *mut HordeSim,
) -> HordeStatus {
    let make = || {
        if text.is_null() {
            return Err(Failure::null("text"));
        }
        // SAFETY: `text` points to `text_len` readable bytes (this function's contract),
        // which is what `in_slice` requires.
        let bytes = unsafe { in_slice(text.cast::<u8>(), text_len, "text")? };
        // SAFETY: `config` is NULL or points to a `HordeConfig` (this function's
        // contract), which is what `config_of` requires.
        let config = unsafe { config_of(config)? };
        let map = MapFormat::MovingAi.parse_bytes(bytes, "map text")?;
        Ok(Simulation::new(map, config)?)
    };
    // SAFETY: `out_sim` is NULL or points to a writable `HordeSim*` (this function's
    // contract), which is what `create_into` requires.
    unsafe { create_into(out_sim, make) }
}

/// Creates a simulation in the state a snapshot holds (bytes written by
/// `horde_snapshot_write`, from this library version), running on `threads` threads
/// (1..=1024; the snapshot holds every other setting), and writes its handle to `*out_sim`.
/// It continues exactly as the simulation that was saved: same state hash, frame by frame.
///
/// On failure `*out_sim` is set to NULL (when `out_sim` is not NULL).
///
/// # Safety
/// `bytes` points to `len` readable bytes; `out_sim` is NULL or points to a writable
/// `HordeSim*`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_sim_create_from_snapshot(
    bytes: *const u8,
    len: usize,
    threads: u32,
    out_sim: *mut *mut HordeSim,
) -> HordeStatus {
    let make = || {
        if bytes.is_null() {
            return Err(Failure::null("bytes"));
        }
        // SAFETY: `bytes` points to `len` readable bytes (this function's contract),
        // which is what `in_slice` requires.
        let bytes = unsafe { in_slice(bytes, len, "bytes")? };
        restore(bytes, threads as usize)
    };
    // SAFETY: `out_sim` is NULL or points to a writable `HordeSim*` (this function's
    // contract), which is what `create_into` requires.
    unsafe { create_into(out_sim, make) }
}

/// Frees a simulation (its worker threads are stopped and joined). `sim` must not be used
/// afterwards. NULL is allowed and does nothing (returns `HORDE_OK`). A poisoned simulation
/// is freed too.
///
/// # Safety
/// `sim` is NULL or a handle from a `horde_sim_create*` call not yet freed, used by no other
/// thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_sim_free(sim: *mut HordeSim) -> HordeStatus {
    guarded(|| {
        if sim.is_null() {
            return Ok(());
        }
        // SAFETY: not NULL (checked above); the caller promises `sim` is a live handle used
        // by no other thread, which is the rest of `live_handle`'s contract.
        let handle = unsafe { live_handle(sim)? };
        // Clearing the magic only helps a second free of the same handle to be refused while
        // the memory is not reused; it is no guarantee (that memory is freed), which is why
        // the docs forbid it. A volatile store, because a plain one right before the memory
        // is freed is a dead store the optimiser may drop.
        // SAFETY: `handle.magic` is a live, aligned, writable field of the handle.
        unsafe { std::ptr::write_volatile(&mut handle.magic, 0) };
        // SAFETY: `sim` came from `Box::into_raw` in `create_into` and is not freed yet (the
        // caller's promise, and its magic was live), so it may be turned back into its `Box`
        // and dropped, once; `handle` is not used again.
        unsafe { drop(Box::from_raw(sim)) };
        Ok(())
    })
}
