//! The frame's resources ([`Shared`]) and its report channel ([`StageErrors`]).

use std::marker::PhantomData;

use parking_lot::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::error::StageError;
use crate::job_graph::StageContext;
use crate::job_graph::declared::{check, check_query};

/// One resource of the frame: a value behind a lock, which a stage takes only as its access
/// declares. The graph guarantees that stages which declare conflicting accesses never
/// overlap, so the lock is never contended; in debug builds, [`Self::read`] and
/// [`Self::write`] inside a stage panic when the stage did not declare `Key` (reading, or
/// writing). `Key` is the type the access names, `T` itself unless said otherwise (the
/// clearance of every layer is declared as [`horde_core::Clearance`]).
pub struct Shared<T, Key: ?Sized + 'static = T> {
    lock: RwLock<T>,
    key: PhantomData<fn() -> *const Key>,
}

impl<T, Key: ?Sized + 'static> Shared<T, Key> {
    /// `value`, shared.
    pub fn new(value: T) -> Self {
        Self {
            lock: RwLock::new(value),
            key: PhantomData,
        }
    }

    /// Reads the value (a stage must declare reading or writing `Key`).
    pub fn read(&self) -> RwLockReadGuard<'_, T> {
        check::<Key>(false);
        self.lock.read()
    }

    /// Writes the value (a stage must declare writing `Key`).
    pub fn write(&self) -> RwLockWriteGuard<'_, T> {
        check::<Key>(true);
        self.lock.write()
    }

    /// The value, between frames.
    pub fn get_mut(&mut self) -> &mut T {
        self.lock.get_mut()
    }
}

impl<T: Default, Key: ?Sized + 'static> Default for Shared<T, Key> {
    fn default() -> Self {
        Self::new(T::default())
    }
}

/// `world.query::<Q>()`, for stage code: in debug builds it panics when the running stage did
/// not declare every component `Q` borrows (reading, or writing for `&mut`).
pub(crate) fn query<Q: hecs::Query>(world: &hecs::World) -> hecs::QueryBorrow<'_, Q> {
    check_query::<Q>();
    world.query::<Q>()
}

/// What stages could not do this frame. Any stage may report, at any time, from any thread
/// (a report is not an access, and reporting stages may overlap); [`Self::take`] hands them
/// over in the graph's stage order, so that which stage finished first does not change the
/// order, nor which failure [`crate::Horde::step`] returns.
#[derive(Default)]
pub struct StageErrors(Mutex<Vec<(usize, StageError)>>);

impl StageErrors {
    /// Reports `error` of the stage running as `ctx`.
    pub(crate) fn report(&self, ctx: &StageContext<'_>, error: StageError) {
        self.0.lock().push((ctx.index(), error));
    }

    /// The failures reported since the last call, in stage order (each stage's in the order it
    /// reported them).
    pub(crate) fn take(&mut self) -> Vec<StageError> {
        let mut errors = std::mem::take(self.0.get_mut());
        errors.sort_by_key(|(stage, _)| *stage);
        errors.into_iter().map(|(_, error)| error).collect()
    }
}
