//! [`DeltaStepping`]: the integration field built by several threads at once, equal to the
//! one-thread [`IntegrationField::rebuild`] cell for cell.
//!
//! The one-thread builder drains a ring of buckets one [`ORTHO_STEP`] wide; every cell in a
//! bucket is final when the bucket is reached, because the cheapest step is one bucket wide.
//! So all cells of one bucket can be relaxed *at the same time*: that is delta-stepping with
//! every edge "heavy". Here each worker owns the cells of interleaved bands of rows; a worker
//! relaxes the cells it owns in the current bucket with the one-thread builder's kernel
//! ([`super::relax`]), lowers neighbour values with an atomic `fetch_min`, and hands each
//! improved cell to the ring of the worker that owns it. A barrier separates buckets. The
//! final values are the unique shortest distances, so they do not depend on the number of
//! workers or on which worker won a race.

use crate::Job;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use parking_lot::Mutex;

use super::{FieldError, IntegrationField, ORTHO_STEP, RING, UNREACHABLE, relax};
use crate::cost_field::CostField;
use crate::grid::Cell;
use crate::terrain::WALL;

/// Rows per ownership band: bands alternate between workers, so a wavefront crossing the map
/// keeps every worker busy.
const BAND_ROWS: usize = 16;

/// Scratch memory of parallel integration-field builds ([`Self::rebuild`]), kept between
/// builds.
#[derive(Debug, Default)]
pub struct DeltaStepping {
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

impl DeltaStepping {
    /// Rebuilds `field` from `cost` toward `goals` with `workers` workers. With one (or
    /// none) this is [`IntegrationField::rebuild`]; the result is the same for any count.
    ///
    /// `run(n, job)` must call `job(i)` for every `i < n`, *all at the same time* (the
    /// workers meet at a barrier per bucket: a `run` that calls them one after the other
    /// never returns), and wait for them; its error (a job that panicked, say) is returned
    /// as is, the field then left unspecified.
    pub fn rebuild<E>(
        &mut self,
        field: &mut IntegrationField,
        cost: &CostField,
        goals: &[Cell],
        workers: usize,
        run: impl FnOnce(usize, &Job<'_>) -> Result<(), E>,
    ) -> Result<Result<(), FieldError>, E> {
        if workers <= 1 {
            return Ok(field.rebuild(cost, goals));
        }
        // Validate sizes and goals as the one-thread builder does.
        if let Err(e) = field.check(cost, goals) {
            return Ok(Err(e));
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
        run(workers, &|me| {
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
                        // The atomic minimum is taken only where the kernel's comparison
                        // says a step can help.
                        let value = |v: usize| values[v].load(Ordering::Relaxed);
                        for (v, nd) in relax(u, d, costs, moves, offsets, value) {
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
        let out = field.padded_values_mut(cost);
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
