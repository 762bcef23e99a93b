//! Worker pools for the benches that measure how a piece scales with threads, shared by
//! `benches/fields.rs` and `benches/hierarchy.rs`.

use horde::jobs::WorkerPool;

/// Pools of 2 threads, and of 4, 8 and 16 where the machine has that many cores.
pub fn pools_up_to_cores() -> Vec<WorkerPool> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    [2, 4, 8, 16]
        .into_iter()
        .filter(|&t| t == 2 || t <= cores)
        .map(|t| WorkerPool::new(t).expect("the bench's worker threads start"))
        .collect()
}
