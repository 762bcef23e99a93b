//! The check that a running stage touches only what it declared.
//!
//! The graph proves that stages which may overlap never declare conflicting [`Access`]es; this
//! module checks the other half, that a stage's code stays inside its declaration. While a
//! stage runs (its own call and each of its batches, on whichever thread runs them), the
//! thread knows which stage it serves; every lock of a frame resource and every query of the
//! units asks [`check`] or [`check_query`] first, and a touch the stage did not declare panics
//! with the stage's name and what it touched. Outside a stage (between frames) nothing is
//! checked.
//!
//! The check runs in debug builds (every test frame is checked); in release builds both
//! functions are empty and the stage is run as it is.

#[cfg(debug_assertions)]
use std::cell::RefCell;

use super::Access;
#[cfg(debug_assertions)]
use super::Resource;

#[cfg(debug_assertions)]
thread_local! {
    /// The stage this thread is running code of: its name and declared access.
    static RUNNING: RefCell<Option<(String, Access)>> = const { RefCell::new(None) };
}

/// Runs `f` as code of the stage `name` with `access` on this thread, then restores what
/// the thread was doing before (a thread that waits for its batches may run another stage's
/// work meanwhile, so stages nest).
pub(crate) fn as_stage<R>(name: &str, access: &Access, f: impl FnOnce() -> R) -> R {
    #[cfg(debug_assertions)]
    {
        /// Puts the previous stage back, also when `f` unwinds.
        struct Restore(Option<(String, Access)>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let previous = self.0.take();
                RUNNING.with(|running| *running.borrow_mut() = previous);
            }
        }
        let previous = RUNNING.with(|running| {
            running
                .borrow_mut()
                .replace((name.to_owned(), access.clone()))
        });
        let _restore = Restore(previous);
        f()
    }
    #[cfg(not(debug_assertions))]
    {
        let _ = (name, access);
        f()
    }
}

/// Panics (debug builds) if code of a stage runs on this thread and the stage did not declare
/// reading the resource `T`, or writing it when `write`.
pub fn check<T: ?Sized + 'static>(write: bool) {
    #[cfg(debug_assertions)]
    RUNNING.with(|running| {
        if let Some((stage, access)) = &*running.borrow() {
            let resource = Resource::of::<T>();
            if !access.allows(&resource, write) {
                panic!(
                    "stage `{stage}` {} `{resource}` without declaring it: add \
                     `.{}::<{resource}>()` to its access in the stage graph",
                    if write { "writes" } else { "reads" },
                    if write { "write" } else { "read" },
                );
            }
        }
    });
    #[cfg(not(debug_assertions))]
    let _ = write;
}

/// [`check`] for every component the hecs query `Q` borrows (shared borrows as reads, unique
/// ones as writes).
pub fn check_query<Q: hecs::Query>() {
    #[cfg(debug_assertions)]
    RUNNING.with(|running| {
        if let Some((stage, access)) = &*running.borrow() {
            // `Fetch::for_each_borrow` is hidden in hecs's docs (its macros use it) but public;
            // it lists exactly the borrows hecs itself checks when the query runs.
            <Q::Fetch as hecs::Fetch>::for_each_borrow(|id, unique| {
                if !access.allows_type(id, unique) {
                    panic!(
                        "stage `{stage}` queries `{}`, which {} a component it did not \
                         declare {}",
                        std::any::type_name::<Q>(),
                        if unique { "writes" } else { "reads" },
                        if unique { "writing" } else { "reading" },
                    );
                }
            });
        }
    });
}
