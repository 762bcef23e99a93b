//! horde-core: the data and algorithms of horde, with no threads.
//!
//! Grid geometry ([`Grid`], [`Cell`]), terrain ([`Terrain`], [`Layer`], [`CostTable`]) and the
//! navigation fields built from it ([`CostField`] -> [`IntegrationField`] -> [`FlowField`]),
//! cached per goal set and layer in a [`FieldCache`].
#![warn(missing_docs)]

mod cost_field;
mod direction;
mod grid;
mod map;
mod terrain;

pub use cost_field::{CostField, CostFieldError};
pub use direction::{DIAG_STEP, Direction, ORTHO_STEP};
pub use grid::{Cell, Grid, GridError, MAX_GRID_SIDE};
pub use terrain::{CostTable, Layer, OPEN, Terrain, TerrainProps, WALL, ZeroCost};
pub use map::{Map, TerrainLengthError};
