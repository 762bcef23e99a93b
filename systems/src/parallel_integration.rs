//! [`ParallelIntegration`]: the integration field built by several threads at once, equal
//! to the one-thread [`IntegrationField::rebuild`] cell for cell: horde-core's
//! [`DeltaStepping`] (exact delta-stepping, the one-thread builder's relaxation kernel) run on
//! a [`WorkerPool`] or a stage's threads.

use horde_core::Job;
use horde_core::{Cell, CostField, DeltaStepping, FieldError, IntegrationField};

use crate::job_graph::{JobPanic, StageContext, WorkerPool};

/// Something that runs `f(0)`, ..., `f(n - 1)` at the same time on its threads: a
/// [`WorkerPool`], or a stage's [`StageContext`] (whose batches run on the frame's pool).
pub trait Workers {
    /// Number of threads, the caller included.
    fn threads(&self) -> usize;
    /// Runs `f(i)` for every `i < n`, in parallel, and waits for all of them.
    fn run_each(&self, n: usize, f: &Job<'_>) -> Result<(), JobPanic>;
}

impl Workers for WorkerPool {
    fn threads(&self) -> usize {
        WorkerPool::threads(self)
    }

    fn run_each(&self, n: usize, f: &Job<'_>) -> Result<(), JobPanic> {
        self.for_each_batch(n, 1, |i, _| f(i))
    }
}

impl Workers for StageContext<'_> {
    fn threads(&self) -> usize {
        StageContext::threads(self)
    }

    fn run_each(&self, n: usize, f: &Job<'_>) -> Result<(), JobPanic> {
        // A panicking batch unwinds through the stage, which reports it.
        self.for_each_batch(n, 1, |i, _| f(i));
        Ok(())
    }
}

/// Scratch memory for parallel builds, kept between builds.
#[derive(Debug, Default)]
pub struct ParallelIntegration {
    scratch: DeltaStepping,
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
        self.scratch
            .rebuild(field, cost, goals, pool.threads(), |n, job| {
                pool.run_each(n, job)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use horde_core::{Grid, WALL};
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
    fn a_parallel_field_repairs_like_a_one_thread_one() {
        // The frame builds a lone field in parallel from 8 threads and repairs it after
        // terrain edits: the parallel build must leave the field as a rebuild does.
        let grid = Grid::new(40, 30).unwrap();
        let mut cost = CostField::filled(&grid, 1);
        let goals = [Cell::new(3, 4)];
        let pool = WorkerPool::new(3).unwrap();
        let mut field = IntegrationField::unreachable(&cost);
        ParallelIntegration::default()
            .rebuild(&pool, &cost, &goals, &mut field)
            .unwrap()
            .unwrap();
        let edits: Vec<(Cell, u8)> = (5..25).map(|y| (Cell::new(20, y), 1)).collect();
        for &(c, _) in &edits {
            cost.set(c, WALL);
        }
        field.repair(&cost, &goals, &edits).unwrap();
        assert_eq!(field, IntegrationField::build(&cost, &goals).unwrap());
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
