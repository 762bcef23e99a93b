//! [`Map`]: a grid of terrain and the per-layer cost fields derived from it.

use crate::cost_field::CostField;
use crate::grid::{Cell, Grid};
use crate::terrain::{CostTable, Layer, Terrain};

/// A terrain map: the grid, the terrain kind of every cell, the [`CostTable`] and one
/// [`CostField`] per [`Layer`] kept in step with the terrain.
#[derive(Clone, Debug, PartialEq)]
pub struct Map {
    grid: Grid,
    terrain: Vec<Terrain>,
    table: CostTable,
    costs: [CostField; Layer::COUNT],
}

/// The terrain given to [`Map::from_terrain`] does not fit the grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("expected {expected} terrain cells for the grid, got {got}")]
pub struct TerrainLengthError {
    /// `width * height`.
    pub expected: usize,
    /// What was given.
    pub got: usize,
}

impl Map {
    /// An all-[`Terrain::Empty`] map with the default cost table.
    #[must_use]
    pub fn new(grid: Grid) -> Self {
        Self::from_parts(grid, vec![Terrain::Empty; grid.len()], CostTable::default())
    }

    /// A map from row-major terrain (`width * height` cells) and a cost table.
    pub fn from_terrain(
        grid: Grid,
        terrain: Vec<Terrain>,
        table: CostTable,
    ) -> Result<Self, TerrainLengthError> {
        if terrain.len() != grid.len() {
            return Err(TerrainLengthError {
                expected: grid.len(),
                got: terrain.len(),
            });
        }
        Ok(Self::from_parts(grid, terrain, table))
    }

    fn from_parts(grid: Grid, terrain: Vec<Terrain>, table: CostTable) -> Self {
        let costs = Layer::ALL.map(|layer| {
            let bytes: Vec<u8> = terrain.iter().map(|&t| table.cost(t, layer)).collect();
            CostField::from_costs(&grid, &bytes).expect("the table holds costs 1..=255")
        });
        Self {
            grid,
            terrain,
            table,
            costs,
        }
    }

    /// The grid geometry.
    #[must_use]
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// Number of columns.
    #[must_use]
    pub fn width(&self) -> u32 {
        self.grid.width()
    }

    /// Number of rows.
    #[must_use]
    pub fn height(&self) -> u32 {
        self.grid.height()
    }

    /// The cost table the cost fields were derived from.
    #[must_use]
    pub fn cost_table(&self) -> &CostTable {
        &self.table
    }

    /// Row-major terrain of every cell.
    #[must_use]
    pub fn terrain(&self) -> &[Terrain] {
        &self.terrain
    }

    /// Terrain at `cell` (must be inside the grid).
    #[must_use]
    #[inline]
    pub fn terrain_at(&self, cell: Cell) -> Terrain {
        self.terrain[self.grid.index(cell)]
    }

    /// The cost field of `layer`.
    #[must_use]
    #[inline]
    pub fn cost_field(&self, layer: Layer) -> &CostField {
        &self.costs[layer as usize]
    }

    /// Changes the terrain at `cell` and the costs of every layer. Returns the layers whose
    /// cost at `cell` changed (as a bit mask indexed by [`Layer`]).
    pub fn set_terrain(&mut self, cell: Cell, terrain: Terrain) -> u8 {
        let i = self.grid.index(cell);
        self.terrain[i] = terrain;
        let mut changed = 0u8;
        for layer in Layer::ALL {
            if self.costs[layer as usize].set(cell, self.table.cost(terrain, layer)) {
                changed |= 1 << layer as u8;
            }
        }
        changed
    }

    /// Replaces the cost table and re-derives every cost field.
    pub fn set_cost_table(&mut self, table: CostTable) {
        for i in 0..self.grid.len() {
            let cell = self.grid.cell(i);
            for layer in Layer::ALL {
                self.costs[layer as usize].set(cell, table.cost(self.terrain[i], layer));
            }
        }
        self.table = table;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::{OPEN, WALL};

    #[test]
    fn terrain_edits_update_the_costs() {
        let mut map = Map::new(Grid::new(4, 3).unwrap());
        let c = Cell::new(2, 1);
        assert_eq!(map.set_terrain(c, Terrain::Water), 0b001);
        assert_eq!(map.cost_field(Layer::Ground).get(c), WALL);
        assert_eq!(map.cost_field(Layer::Hover).get(c), OPEN);
        assert_eq!(map.set_terrain(c, Terrain::BrickWall), 0b010);
        assert_eq!(map.terrain_at(c), Terrain::BrickWall);
        let table = CostTable::default()
            .with(Terrain::BrickWall, Layer::Ground, 7)
            .unwrap();
        map.set_cost_table(table);
        assert_eq!(map.cost_field(Layer::Ground).get(c), 7);
        assert!(Map::from_terrain(*map.grid(), vec![], table).is_err());
    }
}
