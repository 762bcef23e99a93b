//! [`ParallelIntegration`]: the integration field built by several threads at once, equal
//! to the one-thread [`IntegrationField::rebuild`] cell for cell.
//!
//! The one-thread builder drains a ring of buckets one [`ORTHO_STEP`] wide; every cell in a
//! bucket is final when the bucket is reached, because the cheapest step is one bucket wide.
//! So all cells of one bucket can be relaxed *at the same time*: that is delta-stepping with
//! every edge "heavy". Here each worker owns the cells of interleaved bands of rows; a worker
//! relaxes the cells it owns in the current bucket, lowers neighbour values with an atomic
//! `fetch_min`, and hands each improved cell to the ring of the worker that owns it. A
//! barrier separates buckets. The final values are the unique shortest distances, so they do
//! not depend on the number of workers or on which worker won a race.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use horde_core::{
    Cell, CostField, DIAG_STEP, FieldError, IntegrationField, ORTHO_STEP, UNREACHABLE, WALL,
};
use parking_lot::Mutex;

use crate::job_graph::{JobPanic, StageContext, WorkerPool};

/// Something that runs `f(0)`, ..., `f(n - 1)` at the same time on its threads: a
/// [`WorkerPool`], or a stage's [`StageContext`] (whose batches run on the frame's pool).
pub trait Workers {
    /// Number of threads, the caller included.
    fn threads(&self) -> usize;
    /// Runs `f(i)` for every `i < n`, in parallel, and waits for all of them.
    fn run_each(&self, n: usize, f: &(dyn Fn(usize) + Sync)) -> Result<(), JobPanic>;
}

impl Workers for WorkerPool {
    fn threads(&self) -> usize {
        WorkerPool::threads(self)
    }

    fn run_each(&self, n: usize, f: &(dyn Fn(usize) + Sync)) -> Result<(), JobPanic> {
        self.for_each_batch(n, 1, |i, _| f(i))
    }
}

impl Workers for StageContext<'_> {
    fn threads(&self) -> usize {
        StageContext::threads(self)
    }

    fn run_each(&self, n: usize, f: &(dyn Fn(usize) + Sync)) -> Result<(), JobPanic> {
        // A panicking batch unwinds through the stage, which reports it.
        self.for_each_batch(n, 1, |i, _| f(i));
        Ok(())
    }
}

const RING: usize = 512;
/// Rows per ownership band: bands alternate between workers, so a wavefront crossing the map
/// keeps every worker busy.
const BAND_ROWS: usize = 16;

/// Scratch memory for parallel builds, kept between builds.
#[derive(Debug, Default)]
pub struct ParallelIntegration {
    values: Vec<AtomicU32>,
    /// `inbox[to][from]`: cells worker `from` improved that worker `to` owns, per bucket.
    inbox: Vec<Vec<Mutex<Vec<Vec<u32>>>>>,
}

/// A spin-then-yield barrier for a fixed number of threads that all run at once.
struct Barrier {
    count: AtomicUsize,
    generation: AtomicUsize,
    threads: usize,
}

impl Barrier {
    fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.threads {
            self.count.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
        } else {
            let mut spins = 0u32;
            while self.generation.load(Ordering::Acquire) == generation {
                spins += 1;
                if spins < 64 {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
        }
    }
}

impl ParallelIntegration {
    /// Rebuilds `field` from `cost` toward `goals` on every thread of `pool`. With one thread
    /// this is [`IntegrationField::rebuild`]; the result is the same for any thread count.
    ///
    /// Every worker must run at the same time (they meet at a barrier per bucket), which a
    /// [`WorkerPool`] guarantees: a waiting thread runs queued jobs, so each worker's job is
    /// picked up.
    pub fn rebuild(
        &mut self,
        pool: &impl Workers,
        cost: &CostField,
        goals: &[Cell],
        field: &mut IntegrationField,
    ) -> Result<Result<(), FieldError>, JobPanic> {
        let workers = pool.threads();
        if workers == 1 {
            return Ok(field.rebuild(cost, goals));
        }
        // Validate sizes and goals as the one-thread builder does.
        if (field.width(), field.height()) != (cost.width(), cost.height()) {
            return Ok(Err(FieldError::SizeMismatch {
                field: (field.width(), field.height()),
                cost: (cost.width(), cost.height()),
            }));
        }
        for &g in goals {
            if g.x >= cost.width() || g.y >= cost.height() {
                return Ok(Err(FieldError::GoalOutside {
                    cell: g,
                    width: cost.width(),
                    height: cost.height(),
                }));
            }
        }
        self.prepare(cost.padded_costs().len(), workers);
        let stride = cost.stride();
        let owner = |i: usize| (i / stride / BAND_ROWS) % workers;
        let costs = cost.padded_costs();
        for &g in goals {
            let i = cost.padded_index(g);
            if costs[i] != WALL && self.values[i].load(Ordering::Relaxed) != 0 {
                self.values[i].store(0, Ordering::Relaxed);
                self.inbox[owner(i)][0].lock()[0].push(i as u32);
            }
        }
        let barrier = Barrier {
            count: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            threads: workers,
        };
        // queued[w]: cells waiting in worker w's inbox (stale entries included).
        let queued: Vec<AtomicUsize> = (0..workers)
            .map(|w| {
                let n = self.inbox[w].iter().map(|r| r.lock()[0].len()).sum();
                AtomicUsize::new(n)
            })
            .collect();
        let values = &self.values;
        let inbox = &self.inbox;
        let moves = cost.padded_moves();
        let offsets = cost.neighbour_offsets();
        pool.run_each(workers, &|me| {
            let mut outgoing: Vec<Vec<u32>> = vec![Vec::new(); workers];
            let mut list: Vec<u32> = Vec::new();
            let mut current: u32 = 0;
            loop {
                let slot = current as usize & (RING - 1);
                let low = current * ORTHO_STEP;
                for sender in &inbox[me] {
                    std::mem::swap(&mut list, &mut sender.lock()[slot]);
                    queued[me].fetch_sub(list.len(), Ordering::Relaxed);
                    for &u in &list {
                        let u = u as usize;
                        let d = values[u].load(Ordering::Relaxed);
                        if d.wrapping_sub(low) >= ORTHO_STEP {
                            continue; // stale: settled from an earlier bucket
                        }
                        let c = u32::from(costs[u]);
                        let steps = [
                            d.saturating_add(c * ORTHO_STEP),
                            d.saturating_add(c * DIAG_STEP),
                        ];
                        // As in the one-thread builder: compare all eight neighbours first,
                        // then take the atomic minimum only where it can help.
                        let mut better = 0u32;
                        for (dir, &offset) in offsets.iter().enumerate() {
                            let v = u.wrapping_add_signed(offset);
                            better |= u32::from(steps[dir & 1] < values[v].load(Ordering::Relaxed))
                                << dir;
                        }
                        better &= u32::from(moves[u]);
                        while better != 0 {
                            let dir = better.trailing_zeros() as usize;
                            better &= better - 1;
                            let v = u.wrapping_add_signed(offsets[dir]);
                            let nd = steps[dir & 1];
                            if nd < values[v].fetch_min(nd, Ordering::Relaxed) {
                                outgoing[owner(v)].push(v as u32);
                            }
                        }
                    }
                    list.clear();
                }
                // Hand this bucket's improvements to their owners, bucketed by value. A cell
                // improved twice is queued twice; the stale copy is skipped when popped.
                for (to, cells) in outgoing.iter_mut().enumerate() {
                    if cells.is_empty() {
                        continue;
                    }
                    let mut rings = inbox[to][me].lock();
                    for &v in cells.iter() {
                        let nd = values[v as usize].load(Ordering::Relaxed);
                        rings[(nd / ORTHO_STEP) as usize & (RING - 1)].push(v);
                    }
                    queued[to].fetch_add(cells.len(), Ordering::Relaxed);
                    cells.clear();
                }
                // Barrier A: this bucket is done everywhere. Barrier B: everyone has read the
                // count before anyone changes it again.
                barrier.wait();
                let left: usize = queued.iter().map(|q| q.load(Ordering::Relaxed)).sum();
                barrier.wait();
                if left == 0 {
                    break;
                }
                current += 1;
            }
        })?;
        let out = field.padded_values_mut();
        for (o, v) in out.iter_mut().zip(values.iter()) {
            *o = v.load(Ordering::Relaxed);
        }
        Ok(Ok(()))
    }

    fn prepare(&mut self, len: usize, workers: usize) {
        if self.values.len() != len {
            self.values = (0..len).map(|_| AtomicU32::new(UNREACHABLE)).collect();
        } else {
            for v in &self.values {
                v.store(UNREACHABLE, Ordering::Relaxed);
            }
        }
        if self.inbox.len() != workers {
            self.inbox = (0..workers)
                .map(|_| {
                    (0..workers)
                        .map(|_| Mutex::new(vec![Vec::new(); RING]))
                        .collect()
                })
                .collect();
        }
        for row in &self.inbox {
            for rings in row {
                for b in rings.lock().iter_mut() {
                    b.clear();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use horde_core::Grid;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(60))]
        #[test]
        fn equals_the_one_thread_field(
            (w, h, costs, goals) in (1u32..70, 1u32..70).prop_flat_map(|(w, h)| {
                let cost = prop_oneof![6 => Just(1u8), 2 => 2u8..=254, 2 => Just(WALL)];
                (
                    Just(w),
                    Just(h),
                    proptest::collection::vec(cost, (w * h) as usize),
                    proptest::collection::vec((0..w, 0..h), 1..4),
                )
            }),
            threads in 2usize..4,
        ) {
            let grid = Grid::new(w, h).unwrap();
            let cost = CostField::from_costs(&grid, &costs).unwrap();
            let goals: Vec<Cell> = goals.into_iter().map(|(x, y)| Cell::new(x, y)).collect();
            let expected = IntegrationField::build(&cost, &goals).unwrap();
            let pool = WorkerPool::new(threads).unwrap();
            let mut field = IntegrationField::unreachable(&cost);
            let mut builder = ParallelIntegration::default();
            builder.rebuild(&pool, &cost, &goals, &mut field).unwrap().unwrap();
            prop_assert_eq!(&field, &expected);
            // Reusing the scratch gives the same again.
            builder.rebuild(&pool, &cost, &goals, &mut field).unwrap().unwrap();
            prop_assert_eq!(&field, &expected);
        }
    }

    #[test]
    fn bad_goals_are_errors() {
        let grid = Grid::new(8, 8).unwrap();
        let cost = CostField::filled(&grid, 1);
        let pool = WorkerPool::new(2).unwrap();
        let mut field = IntegrationField::unreachable(&cost);
        let out =
            ParallelIntegration::default().rebuild(&pool, &cost, &[Cell::new(8, 0)], &mut field);
        assert!(matches!(out, Ok(Err(FieldError::GoalOutside { .. }))));
    }
}
