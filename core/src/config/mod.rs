//! Every setting of a simulation, declared once.
//!
//! `settings.rs` holds one entry per setting: its field, type, default, range
//! and doc. From that one list come the config structs ([`SimConfig`] and the groups it
//! holds), their defaults, [`SimConfig::validate`] and its error text, and [`SETTINGS`], the
//! table every other place reads: the scenario format's `[config]` keys, the snapshot
//! record, the C ABI's `HordeConfig` (generated from the table, with the docs' tables of
//! settings, by `HORDE_BLESS=1 cargo test --test settings`). Adding a setting is one entry
//! there and the code that uses it.

use std::fmt;

mod declare;
mod settings;

pub use settings::{ContactConfig, FlowConfig, KnockbackParams, SimConfig, SteeringConfig};

/// Where units get their walking direction from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Navigation {
    /// One full-map flow field per (goal, layer) (the default).
    #[default]
    Flat,
    /// Sector fields built lazily along a coarse route on the portal graph
    /// ([`crate::hierarchy`]), for big maps.
    Hierarchical,
}

/// A setting's value, as every format outside Rust holds it: a whole number (counts, seeds,
/// flags as 0 or 1, a choice as its index) or a real.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// A whole number.
    Int(u64),
    /// A real number.
    Real(f32),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Real(v) => write!(f, "{v}"),
        }
    }
}

/// What kind of number a setting's type holds, and the largest a whole one can be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Whole numbers up to `max`.
    Int {
        /// The type's largest value (`u32::MAX` for a `u32`).
        max: u64,
    },
    /// `f32`.
    Real,
}

/// The values a setting accepts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Range {
    /// Every value of its type.
    Any,
    /// Whole numbers in `min..=max`.
    Ints {
        /// Smallest.
        min: u64,
        /// Largest.
        max: u64,
    },
    /// Finite reals in `min..=max`, or `(min, max]` when `above` is set.
    Reals {
        /// Smallest (or the bound it must exceed).
        min: f32,
        /// Whether `min` itself is refused.
        above: bool,
        /// Largest.
        max: f32,
    },
    /// A switch: 0 (off) or 1 (on).
    Flag,
    /// One of several named choices, by index.
    Choice(&'static [&'static str]),
}

impl Range {
    /// `min..=max` on whole numbers.
    #[must_use]
    pub const fn ints(min: u64, max: u64) -> Self {
        Range::Ints { min, max }
    }

    /// Finite reals in `min..=max`.
    #[must_use]
    pub const fn reals(min: f32, max: f32) -> Self {
        Range::Reals {
            min,
            above: false,
            max,
        }
    }

    /// Finite reals in `(min, max]`.
    #[must_use]
    pub const fn reals_above(min: f32, max: f32) -> Self {
        Range::Reals {
            min,
            above: true,
            max,
        }
    }

    /// Whether `value`, of a setting of `kind`, is in range.
    #[must_use]
    pub fn contains(&self, kind: Kind, value: Value) -> bool {
        match (kind, value) {
            (Kind::Int { max: type_max }, Value::Int(v)) => {
                v <= type_max
                    && match *self {
                        Range::Any => true,
                        Range::Ints { min, max } => (min..=max).contains(&v),
                        Range::Flag => v <= 1,
                        Range::Choice(names) => v < names.len() as u64,
                        Range::Reals { .. } => false,
                    }
            }
            (Kind::Real, Value::Real(v)) => {
                v.is_finite()
                    && match *self {
                        Range::Any => true,
                        Range::Reals { min, above, max } => {
                            (if above { v > min } else { v >= min }) && v <= max
                        }
                        _ => false,
                    }
            }
            _ => false,
        }
    }

    /// The range as its error message and the docs write it, for a setting of `kind`:
    /// `finite, in 0..=100`, `an integer in 1..=1024`, `0 ("flat") or 1 ("hierarchical")`.
    #[must_use]
    pub fn describe(&self, kind: Kind) -> String {
        match (*self, kind) {
            (Range::Any, Kind::Int { max: u64::MAX }) => "any whole number".to_owned(),
            (Range::Any, Kind::Int { max }) => format!("an integer in 0..={max}"),
            (Range::Any, Kind::Real) => "finite".to_owned(),
            (Range::Ints { min, max }, _) => format!("an integer in {min}..={max}"),
            (Range::Reals { min, above, max }, _) => {
                let (min, max) = (real(min), real(max));
                if above {
                    format!("finite, in ({min}, {max}]")
                } else {
                    format!("finite, in {min}..={max}")
                }
            }
            (Range::Flag, _) => "0 or 1".to_owned(),
            (Range::Choice(names), _) => names
                .iter()
                .enumerate()
                .map(|(i, n)| format!("{i} ({n:?})"))
                .collect::<Vec<_>>()
                .join(" or "),
        }
    }
}

/// A bound as people write it: `pi` for the `f32` nearest pi, `1e6` for a million.
fn real(v: f32) -> String {
    if v == std::f32::consts::PI {
        "pi".to_owned()
    } else if v >= 1.0e5 && v.fract() == 0.0 {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// Where a setting can be given besides Rust and the C ABI (both hold every setting).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// A `[config]` key of scenario files.
    Scenario,
    /// Saved in snapshots and replays (settings that change results).
    Snapshot,
}

/// One setting: what the declaration in `settings.rs` says of it, and how to read and write
/// it on a [`SimConfig`].
#[derive(Clone, Copy)]
pub struct Setting {
    /// Its name outside Rust: the C field, the snapshot entry, error messages
    /// (`contact_relaxation`).
    pub name: &'static str,
    /// Its path in [`SimConfig`], which is also its scenario key under `[config]`
    /// (`contacts.relaxation`).
    pub key: &'static str,
    /// What it does (the field's doc).
    pub doc: &'static str,
    /// Its Rust type, as written in the struct (`f32`, `usize`, `Navigation`).
    pub rust_type: &'static str,
    /// The kind of number its type holds.
    pub kind: Kind,
    /// The values it accepts.
    pub range: Range,
    /// Where else it can be given.
    pub places: &'static [Place],
    get: fn(&SimConfig) -> Value,
    set: fn(&mut SimConfig, Value),
}

impl fmt::Debug for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Setting")
            .field("name", &self.name)
            .field("key", &self.key)
            .field("kind", &self.kind)
            .field("range", &self.range)
            .finish_non_exhaustive()
    }
}

impl Setting {
    /// Its value in `config`.
    #[must_use]
    pub fn get(&self, config: &SimConfig) -> Value {
        (self.get)(config)
    }

    /// Its default (in [`SimConfig::default`]).
    #[must_use]
    pub fn default_value(&self) -> Value {
        self.get(&SimConfig::default())
    }

    /// Whether it can be given in `place`.
    #[must_use]
    pub fn is_in(&self, place: Place) -> bool {
        self.places.contains(&place)
    }

    /// `Ok` when `value` is one this setting accepts, else the error that names it.
    pub fn check(&self, value: Value) -> Result<(), ConfigError> {
        if self.range.contains(self.kind, value) {
            Ok(())
        } else {
            Err(ConfigError {
                name: self.name,
                key: self.key,
                value,
                expected: self.range.describe(self.kind),
            })
        }
    }

    /// Sets it to `value` in `config` once [`Self::check`] accepts it.
    pub fn apply(&self, config: &mut SimConfig, value: Value) -> Result<(), ConfigError> {
        self.check(value)?;
        (self.set)(config, value);
        Ok(())
    }

    /// The setting named `name` (`contact_relaxation`).
    #[must_use]
    pub fn named(name: &str) -> Option<&'static Setting> {
        SETTINGS.iter().find(|s| s.name == name)
    }

    /// The setting at `key`, its path in [`SimConfig`] (`contacts.relaxation`).
    #[must_use]
    pub fn at_key(key: &str) -> Option<&'static Setting> {
        SETTINGS.iter().find(|s| s.key == key)
    }
}

pub use settings::SETTINGS;

/// A setting out of its range: [`SimConfig::validate`] and [`Setting::check`] give it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{name} = {value} is invalid: it must be {expected}")]
pub struct ConfigError {
    /// The setting's name outside Rust ([`Setting::name`]).
    pub name: &'static str,
    /// Its path in [`SimConfig`] and scenario key ([`Setting::key`]).
    pub key: &'static str,
    /// The value refused.
    pub value: Value,
    /// What it must be ([`Range::describe`]).
    pub expected: String,
}

impl SimConfig {
    /// The most worker threads a simulation may start.
    pub const MAX_THREADS: usize = 1024;

    /// `Ok` when every setting is in its range, else the first bad one in [`SETTINGS`]
    /// order. Creating a simulation calls it.
    pub fn validate(&self) -> Result<(), ConfigError> {
        SETTINGS.iter().try_for_each(|s| s.check(s.get(self)))
    }
}

impl SimConfig {
    /// Same config with another seed.
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Same config with another thread count.
    #[must_use]
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads;
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
        crate::size_class(radius / cell_size, self.size_classes)
    }
}

impl ContactConfig {
    /// The most passes a frame may run.
    pub const MAX_PASSES: u32 = 16;
}

/// A type a setting can have: how it reads and writes as a [`Value`].
pub(crate) trait SettingType: Copy {
    /// What kind of number it holds.
    const KIND: Kind;
    /// It as a value.
    fn to_value(self) -> Value;
    /// From a value [`Range::contains`] accepted for [`Self::KIND`].
    fn from_value(value: Value) -> Self;
}

macro_rules! whole_numbers {
    ($($t:ty),*) => {$(
        impl SettingType for $t {
            const KIND: Kind = Kind::Int { max: <$t>::MAX as u64 };
            fn to_value(self) -> Value {
                Value::Int(self as u64)
            }
            fn from_value(value: Value) -> Self {
                match value {
                    Value::Int(v) => <$t>::try_from(v).unwrap_or(<$t>::MAX),
                    Value::Real(_) => 0,
                }
            }
        }
    )*};
}

whole_numbers!(u8, u32, u64, usize);

impl SettingType for f32 {
    const KIND: Kind = Kind::Real;
    fn to_value(self) -> Value {
        Value::Real(self)
    }
    fn from_value(value: Value) -> Self {
        match value {
            Value::Real(v) => v,
            Value::Int(v) => v as f32,
        }
    }
}

impl SettingType for bool {
    const KIND: Kind = Kind::Int { max: 1 };
    fn to_value(self) -> Value {
        Value::Int(u64::from(self))
    }
    fn from_value(value: Value) -> Self {
        value == Value::Int(1)
    }
}

impl SettingType for Navigation {
    const KIND: Kind = Kind::Int { max: 1 };
    fn to_value(self) -> Value {
        Value::Int(match self {
            Navigation::Flat => 0,
            Navigation::Hierarchical => 1,
        })
    }
    fn from_value(value: Value) -> Self {
        if value == Value::Int(1) {
            Navigation::Hierarchical
        } else {
            Navigation::Flat
        }
    }
}

#[cfg(test)]
mod tests;
