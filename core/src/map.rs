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
    /// [`Map::terrain_digest`], kept in step by every terrain change.
    digest: u64,
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
        let digest = terrain
            .iter()
            .enumerate()
            .fold(0u64, |d, (i, &t)| d.wrapping_add(cell_digest(i, t)));
        Self {
            grid,
            terrain,
            table,
            costs,
            digest,
        }
    }

    /// A digest of the terrain of every cell: the wrapping sum over cells of a 64-bit mix of
    /// (cell index, terrain kind), so a terrain edit updates it in O(1) and any one changed
    /// cell changes it. Part of the state hash and of a map's [`fingerprint`](Self::fingerprint).
    #[must_use]
    pub const fn terrain_digest(&self) -> u64 {
        self.digest
    }

    /// A fingerprint of the whole map: grid size, cell size and origin, the cost table and
    /// the terrain of every cell ([`terrain_digest`](Self::terrain_digest)). Equal maps have
    /// equal fingerprints, on every machine.
    #[must_use]
    pub fn fingerprint(&self) -> u64 {
        let mut h = Fnv::default();
        h.word(u64::from(self.grid.width()));
        h.word(u64::from(self.grid.height()));
        h.word(u64::from(self.grid.cell_size().to_bits()));
        h.word(u64::from(self.grid.origin().x.to_bits()));
        h.word(u64::from(self.grid.origin().y.to_bits()));
        for t in Terrain::ALL {
            for l in Layer::ALL {
                h.word(u64::from(self.table.cost(t, l)));
            }
        }
        h.word(self.digest);
        h.0
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
        let old = std::mem::replace(&mut self.terrain[i], terrain);
        self.digest = self
            .digest
            .wrapping_sub(cell_digest(i, old))
            .wrapping_add(cell_digest(i, terrain));
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

/// One cell's part of [`Map::terrain_digest`] (splitmix64's finaliser of index and kind).
fn cell_digest(index: usize, terrain: Terrain) -> u64 {
    let mut z = ((index as u64) << 8 | terrain as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// FNV-1a over little-endian 64-bit words: the fingerprints' hash (stable across machines).
#[derive(Clone, Copy, Debug)]
pub struct Fnv(pub u64);

impl Default for Fnv {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    /// Adds the bytes of `bytes`.
    pub fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    /// Adds the 8 little-endian bytes of `w`.
    pub fn word(&mut self, w: u64) {
        self.bytes(&w.to_le_bytes());
    }
}

/// Hashes formatted text as it is written, without building the string.
impl std::fmt::Write for Fnv {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.bytes(s.as_bytes());
        Ok(())
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

    /// The digest kept in step by edits equals the digest of the same terrain built afresh,
    /// and an edit anywhere changes it (and the fingerprint).
    #[test]
    fn the_terrain_digest_follows_every_edit() {
        let mut map = Map::new(Grid::new(9, 7).unwrap());
        let empty = (map.terrain_digest(), map.fingerprint());
        map.set_terrain(Cell::new(8, 6), Terrain::Snow);
        assert_ne!(map.terrain_digest(), empty.0);
        assert_ne!(map.fingerprint(), empty.1);
        map.set_terrain(Cell::new(3, 2), Terrain::BrickWall);
        let again = Map::from_terrain(*map.grid(), map.terrain().to_vec(), *map.cost_table());
        assert_eq!(again.unwrap().terrain_digest(), map.terrain_digest());
        map.set_terrain(Cell::new(8, 6), Terrain::Empty);
        map.set_terrain(Cell::new(3, 2), Terrain::Empty);
        assert_eq!((map.terrain_digest(), map.fingerprint()), empty);
        let table = CostTable::default()
            .with(Terrain::Forest, Layer::Ground, 9)
            .unwrap();
        map.set_cost_table(table);
        assert_ne!(map.fingerprint(), empty.1, "the cost table is part of it");
    }
}
