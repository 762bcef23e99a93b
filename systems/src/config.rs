//! [`SimConfig`]: every tunable of the simulation, with its default.

use horde_core::{
    FlowConfig, KnockbackParams, KnockbackParamsError, MAX_SIZE_CLASSES, SteeringConfig,
    SteeringConfigError,
};

/// Where units get their walking direction from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Navigation {
    /// One full-map flow field per (goal, layer) (the default).
    #[default]
    Flat,
    /// Sector fields built lazily along a coarse route on the portal graph
    /// (`horde_core::hierarchy`), for big maps.
    Hierarchical,
}

/// How the simulation runs. Every field has a documented default.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimConfig {
    /// Seed of the per-unit random numbers (default 0).
    pub seed: u64,
    /// Worker threads, the caller included (default 1). Results do not depend on it.
    pub threads: usize,
    /// Units per data-parallel batch (default 1024). Batch boundaries depend on the unit count
    /// and this number only.
    pub batch_size: usize,
    /// Steering parameters.
    pub steering: SteeringConfig,
    /// Knock-back and stun parameters.
    pub knockback: KnockbackParams,
    /// Flow-field parameters.
    pub flow: FlowConfig,
    /// Where units get their direction: full-map flow fields (default) or hierarchical
    /// sector fields.
    pub navigation: Navigation,
    /// How overlapping bodies are pushed apart after they move (stage `resolve_contacts`).
    pub contacts: ContactConfig,
    /// With flat navigation, a field whose goal moved ("chase the player") is rebuilt only
    /// as far as the cells its followers stand in, then completed a slice per frame once the
    /// goal rests (default true). Steering reads the same values either way, so results do
    /// not depend on it; turn it off to always have complete fields to draw or read.
    pub partial_fields: bool,
    /// How many size classes units path in (docs/behaviour.md, "Unit sizes"; default 4, in
    /// `1..=`[`MAX_SIZE_CLASSES`]). A unit of radius `r` cells (its radius over the map's
    /// cell size) follows the fields of class
    /// [`horde_core::size_class`]`(r)`: the smallest `c` with `r <= c + 0.5`, capped at
    /// `size_classes - 1`. Class `c`'s fields block every cell with a wall (or the map
    /// edge) within `c` cells, so they lead a body only where it fits. With the default,
    /// class 0 holds radii up to 0.5 cells (the layer's own costs), 1 up to 1.5, 2 up to
    /// 2.5, and 3 everything bigger. 1 sends every unit along class 0's fields. Fields are
    /// built per class present in a group, not per unit; with hierarchical navigation,
    /// each class present has its own portal graph and each (group, layer, class) its own
    /// sector fields.
    pub size_classes: u8,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            seed: 0,
            threads: 1,
            batch_size: 1024,
            steering: SteeringConfig::default(),
            knockback: KnockbackParams::default(),
            flow: FlowConfig::default(),
            navigation: Navigation::Flat,
            contacts: ContactConfig::default(),
            partial_fields: true,
            size_classes: MAX_SIZE_CLASSES,
        }
    }
}

impl SimConfig {
    /// Same config with another seed.
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Same config with another navigation mode.
    #[must_use]
    pub fn with_navigation(mut self, navigation: Navigation) -> Self {
        self.navigation = navigation;
        self
    }

    /// Same config with partial fields for moving goals on or off.
    #[must_use]
    pub fn with_partial_fields(mut self, on: bool) -> Self {
        self.partial_fields = on;
        self
    }

    /// Same config with another number of size classes (see [`Self::size_classes`]).
    #[must_use]
    pub fn with_size_classes(mut self, classes: u8) -> Self {
        self.size_classes = classes;
        self
    }

    /// The size class whose fields a unit of `radius` (world units) follows on a map of
    /// cells `cell_size` across (see [`Self::size_classes`]).
    #[must_use]
    #[inline]
    pub fn size_class(&self, radius: f32, cell_size: f32) -> u8 {
        horde_core::size_class(radius / cell_size, self.size_classes)
    }

    /// Same config with another thread count.
    #[must_use]
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }
}

/// The contact step (stage `resolve_contacts`; docs/behaviour.md, "Bodies and crowds"): Jacobi
/// passes that push overlapping bodies apart, mass-weighted.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactConfig {
    /// Passes per frame at most (default 4; 0 turns contacts off, and bodies overlap as
    /// steering leaves them). Each pass resolves a unit's overlaps as they stood before the
    /// pass; more passes settle a packed crowd deeper in, at about one neighbour scan each.
    /// The passes stop early once one moves no unit (the rest would change nothing).
    pub passes: u32,
    /// Scale of the summed correction of a unit with several contacts, divided by their
    /// count (default 1.5; in `0.5..=2`): 1 moves it by the average of its contacts'
    /// corrections, more over-relaxes so a packed crowd opens faster.
    pub relaxation: f32,
}

impl Default for ContactConfig {
    fn default() -> Self {
        Self {
            passes: 4,
            relaxation: 1.5,
        }
    }
}

impl ContactConfig {
    /// The most passes a frame may run.
    pub const MAX_PASSES: u32 = 16;
}

/// A [`SimConfig`] value out of range.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// `threads` is 0 or above [`SimConfig::MAX_THREADS`].
    #[error("threads = {0} is invalid: it must be 1..={max}", max = SimConfig::MAX_THREADS)]
    Threads(usize),
    /// `batch_size` is 0 or does not fit in a `u32`.
    #[error("batch_size = {0} is invalid: it must be 1..=4294967295")]
    BatchSize(usize),
    /// `contacts.passes` is above [`ContactConfig::MAX_PASSES`].
    #[error("contacts.passes = {0} is invalid: it must be 0..={max}", max = ContactConfig::MAX_PASSES)]
    ContactPasses(u32),
    /// `contacts.relaxation` is not in `0.5..=2`.
    #[error(
        "contacts.relaxation = {0} is invalid: it must be in 0.5..=2 (outside it the passes overshoot or stall)"
    )]
    ContactRelaxation(f32),
    /// `size_classes` is 0 or above [`MAX_SIZE_CLASSES`].
    #[error("size_classes = {0} is invalid: it must be 1..={max}", max = MAX_SIZE_CLASSES)]
    SizeClasses(u8),
    /// A steering parameter.
    #[error(transparent)]
    Steering(#[from] SteeringConfigError),
    /// A knock-back parameter.
    #[error(transparent)]
    Knockback(#[from] KnockbackParamsError),
}

impl SimConfig {
    /// The most worker threads a simulation may start.
    pub const MAX_THREADS: usize = 1024;

    /// `Ok` when every value is in range, else the first bad one. [`crate::Simulation::new`]
    /// and [`crate::Horde::new`] call it.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.threads == 0 || self.threads > Self::MAX_THREADS {
            return Err(ConfigError::Threads(self.threads));
        }
        if self.batch_size == 0 || u32::try_from(self.batch_size).is_err() {
            return Err(ConfigError::BatchSize(self.batch_size));
        }
        if self.contacts.passes > ContactConfig::MAX_PASSES {
            return Err(ConfigError::ContactPasses(self.contacts.passes));
        }
        if !(0.5..=2.0).contains(&self.contacts.relaxation) {
            return Err(ConfigError::ContactRelaxation(self.contacts.relaxation));
        }
        if self.size_classes == 0 || self.size_classes > MAX_SIZE_CLASSES {
            return Err(ConfigError::SizeClasses(self.size_classes));
        }
        self.steering.validate()?;
        self.knockback.validate()?;
        Ok(())
    }
}
