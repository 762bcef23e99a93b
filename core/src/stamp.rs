//! Content stamps: numbers that tell a cache whether what it read is still there.

use std::sync::atomic::{AtomicU32, Ordering};

/// A stamp no other call of this process has given, for data whose contents are new or
/// have changed (see [`crate::NavField::stamp`], [`crate::Clearance::stamp`]): equal stamps
/// mean the same data with the same contents. 0 once 2^32 - 1 stamps are spent, for every
/// later call: a cache then never matches, rather than ever matches wrongly.
pub(crate) fn next_stamp() -> u32 {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    NEXT.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_add(1))
        .unwrap_or(0)
}
