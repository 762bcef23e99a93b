//! Checks of the caller's pointers and buffers: NULL, alignment, a length that fits in
//! memory, and a buffer too small for what a read must write.

use std::mem::MaybeUninit;

use crate::failure::Failure;
use crate::status::*;

/// Checks an output pointer: not NULL, aligned for `T`.
pub(crate) fn out_ptr<T>(ptr: *mut T, name: &str) -> Result<*mut T, Failure> {
    if ptr.is_null() {
        return Err(Failure::null(name));
    }
    check_aligned(ptr.cast_const(), name)?;
    Ok(ptr)
}

/// Refuses a pointer that is not aligned for `T` (dereferencing it would be undefined).
pub(crate) fn check_aligned<T>(ptr: *const T, name: &str) -> Result<(), Failure> {
    if ptr.is_aligned() {
        return Ok(());
    }
    Err(Failure::invalid(format!(
        "`{name}` is not aligned for its type: it must be a multiple of {} bytes",
        std::mem::align_of::<T>()
    )))
}

/// Refuses a buffer of `len` `T`s whose size in bytes does not fit `isize` (no allocation
/// can be that large, and a slice must not be).
fn check_fits_in_memory<T>(len: usize, name: &str) -> Result<(), Failure> {
    if len
        .checked_mul(std::mem::size_of::<T>())
        .is_none_or(|bytes| bytes > isize::MAX as usize)
    {
        return Err(Failure::invalid(format!(
            "`{name}`: {len} elements of {} bytes are more than memory can hold \
             (at most isize::MAX bytes)",
            std::mem::size_of::<T>()
        )));
    }
    Ok(())
}

/// Writes `value` through the output pointer `ptr`.
///
/// # Safety
/// `ptr` is NULL or points to memory the caller lets us write a `T` to.
pub(crate) unsafe fn write_out<T>(ptr: *mut T, name: &str, value: T) -> Result<(), Failure> {
    let ptr = out_ptr(ptr, name)?;
    // SAFETY: not NULL and aligned (checked by `out_ptr`); the caller promises it points to
    // writable memory for one `T`.
    unsafe { ptr.write(value) };
    Ok(())
}

/// The `len` elements at `ptr` as a slice; NULL is allowed only for `len == 0`.
///
/// # Safety
/// A non-NULL `ptr` points to `len` initialised `T`s that stay unchanged during the call.
pub(crate) unsafe fn in_slice<'a, T>(
    ptr: *const T,
    len: usize,
    name: &str,
) -> Result<&'a [T], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Failure::null(name));
    }
    check_aligned(ptr, name)?;
    check_fits_in_memory::<T>(len, name)?;
    // SAFETY: `ptr` is not NULL, aligned, and the byte length fits `isize` (checked above);
    // the caller promises it points to `len` initialised elements that nothing changes while
    // the call runs.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// The `len` elements at `ptr` as a slice of slots to write; NULL is allowed only for
/// `len == 0`. The slots are `MaybeUninit`: the caller's buffer need not be initialised.
///
/// # Safety
/// A non-NULL `ptr` points to `len` `T`s the caller lets us overwrite, used by nothing else
/// during the call.
pub(crate) unsafe fn out_slice<'a, T>(
    ptr: *mut T,
    len: usize,
    name: &str,
) -> Result<&'a mut [MaybeUninit<T>], Failure> {
    if len == 0 {
        return Ok(&mut []);
    }
    let ptr = out_ptr(ptr, name)?;
    check_fits_in_memory::<T>(len, name)?;
    // SAFETY: `ptr` is not NULL, aligned, and the byte length fits `isize` (checked above);
    // the caller promises `len` writable elements there that nothing else touches during the
    // call. They are seen as `MaybeUninit<T>` (same layout), so whatever the caller left
    // there is never read, only overwritten.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr.cast::<MaybeUninit<T>>(), len) })
}

/// Writes `from` into the slots `to` (of the same length).
pub(crate) fn fill<T: Copy>(to: &mut [MaybeUninit<T>], from: &[T]) {
    for (slot, value) in to.iter_mut().zip(from) {
        slot.write(*value);
    }
}

/// The caller's output buffer `name`, checked: room for `capacity` items of `per_item`
/// `T`s each at `ptr`, of which the first `needed` items are returned as slots to write.
/// `what` names the items ("units", "bytes", ...).
///
/// Every buffer of the ABI is checked in this one order, so that a caller learns of the
/// same mistake the same way whatever the call:
/// 1. `ptr` NULL with `capacity > 0`: `HORDE_ERROR_NULL_POINTER` (NULL means "no buffer",
///    which only `capacity == 0` says);
/// 2. `ptr` not aligned for `T`: `HORDE_ERROR_INVALID_ARGUMENT`;
/// 3. `capacity < needed`: `HORDE_ERROR_BUFFER_TOO_SMALL` (NULL with `capacity == 0` is
///    how a caller asks for the size: it gets this, or `HORDE_OK` when nothing is needed);
/// 4. more bytes than memory can hold: `HORDE_ERROR_INVALID_ARGUMENT`.
///
/// The caller's count output is written before this check, so it holds `needed` whatever
/// the outcome.
///
/// # Safety
/// A non-NULL `ptr` points to `capacity * per_item` `T`s the caller lets us overwrite, used
/// by nothing else during the call.
pub(crate) unsafe fn out_buffer<'a, T>(
    ptr: *mut T,
    capacity: usize,
    needed: usize,
    per_item: usize,
    (name, what): (&str, &str),
) -> Result<&'a mut [MaybeUninit<T>], Failure> {
    if ptr.is_null() && capacity > 0 {
        return Err(Failure::new(
            HORDE_ERROR_NULL_POINTER,
            format!(
                "`{name}` is NULL with a capacity of {capacity} {what}: pass a buffer, or \
                 NULL with capacity 0 to ask how many are needed"
            ),
        ));
    }
    if !ptr.is_null() {
        check_aligned(ptr.cast_const(), name)?;
    }
    if capacity < needed {
        return Err(Failure::new(
            HORDE_ERROR_BUFFER_TOO_SMALL,
            format!("`{name}` holds {capacity} {what}, {needed} are needed"),
        ));
    }
    let len = needed.checked_mul(per_item).ok_or_else(|| {
        Failure::invalid(format!(
            "`{name}`: {needed} {what} of {per_item} elements are more than SIZE_MAX elements"
        ))
    })?;
    // SAFETY: NULL only when `len == 0` (then `out_slice` touches nothing); otherwise the
    // caller promises `capacity * per_item >= len` writable elements at `ptr`.
    unsafe { out_slice(ptr, len, name) }
}
