//! [`Map`]: a grid of terrain and the per-layer cost fields derived from it.

use crate::cost_field::CostField;
use crate::grid::{Cell, Grid};
use crate::terrain::{CostTable, Layer, Terrain, WALL};

/// A terrain map: the grid, the terrain kind of every cell, the [`CostTable`] and one
/// [`CostField`] per [`Layer`] kept in step with the terrain; also, for the size classes
/// asked for ([`Map::prepare_size_class`]), each class's cost field of a layer
/// ([`crate::class_cost_field`]), kept in step too.
///
/// Two maps are equal when their grid, terrain, table and layer cost fields are: the class
/// cost fields are derived from those.
#[derive(Clone, Debug)]
pub struct Map {
    grid: Grid,
    terrain: Vec<Terrain>,
    table: CostTable,
    costs: [CostField; Layer::COUNT],
    /// The cost field of size class `c >= 1` on layer `l` at `(c - 1) * Layer::COUNT + l`,
    /// once prepared.
    class_costs: Vec<Option<CostField>>,
    /// [`Map::terrain_digest`], kept in step by every terrain change.
    digest: u64,
}

impl PartialEq for Map {
    fn eq(&self, other: &Self) -> bool {
        (
            self.grid,
            &self.terrain,
            self.table,
            &self.costs,
            self.digest,
        ) == (
            other.grid,
            &other.terrain,
            other.table,
            &other.costs,
            other.digest,
        )
    }
}

/// A change of one cell's cost in a size class's cost field (see
/// [`Map::set_terrain_with`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassCostChange {
    /// The layer.
    pub layer: Layer,
    /// The size class (`>= 1`; class 0's costs are the layer's).
    pub class: u8,
    /// The class cost field's version after the change.
    pub version: u64,
    /// The cell.
    pub cell: Cell,
    /// Its class cost before.
    pub before: u8,
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
            class_costs: Vec::new(),
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

    /// Whether ground or hover units can stand on `cell` (it is open on one of their cost
    /// fields): the cells a goal may hold, as flying units ignore terrain.
    #[must_use]
    pub fn is_open_underfoot(&self, cell: Cell) -> bool {
        self.cost_field(Layer::Ground).get(cell) != WALL
            || self.cost_field(Layer::Hover).get(cell) != WALL
    }

    /// The cost field size class `class` paths on over `layer` (docs/behaviour.md, "Unit
    /// sizes"): for class 0 the layer's own ([`Self::cost_field`]).
    ///
    /// # Panics
    /// If `class` is not 0 and was not prepared with [`Self::prepare_size_class`].
    #[must_use]
    #[inline]
    pub fn class_cost_field(&self, layer: Layer, class: u8) -> &CostField {
        self.prepared_class_cost_field(layer, class)
            .expect("the size class was not prepared on this map")
    }

    /// The cost field size class `class` paths on over `layer`, if the map has it (class 0
    /// always: the layer's own; another once [`Self::prepare_size_class`] built it).
    #[must_use]
    #[inline]
    pub fn prepared_class_cost_field(&self, layer: Layer, class: u8) -> Option<&CostField> {
        if class == 0 {
            return Some(self.cost_field(layer));
        }
        self.class_costs
            .get(Self::class_slot(layer, class))
            .and_then(Option::as_ref)
    }

    /// Whether size class `class` has a cost field on `layer` (class 0 always has).
    #[must_use]
    pub fn has_size_class(&self, layer: Layer, class: u8) -> bool {
        self.prepared_class_cost_field(layer, class).is_some()
    }

    /// Builds the cost field of size class `class` on `layer` if it is not built yet (one
    /// clearance transform of the layer); from then on terrain edits keep it in step. Class
    /// 0 needs nothing.
    pub fn prepare_size_class(&mut self, layer: Layer, class: u8) {
        if self.has_size_class(layer, class) {
            return;
        }
        let slot = Self::class_slot(layer, class);
        if self.class_costs.len() <= slot {
            self.class_costs.resize(slot + 1, None);
        }
        self.class_costs[slot] = Some(crate::class_cost_field(self.cost_field(layer), class));
    }

    fn class_slot(layer: Layer, class: u8) -> usize {
        (usize::from(class).max(1) - 1) * Layer::COUNT + layer as usize
    }

    /// Changes the terrain at `cell` and the costs of every layer. Returns the layers whose
    /// cost at `cell` changed (as a bit mask indexed by [`Layer`]).
    pub fn set_terrain(&mut self, cell: Cell, terrain: Terrain) -> u8 {
        self.set_terrain_with(cell, terrain, |_| {})
    }

    /// [`Self::set_terrain`], calling `changed` for every cell whose cost changed in a
    /// prepared size class's cost field (cells up to `class` cells from `cell`: their
    /// clearance changed), by class, then layer, then row-major.
    pub fn set_terrain_with(
        &mut self,
        cell: Cell,
        terrain: Terrain,
        changed: impl FnMut(ClassCostChange),
    ) -> u8 {
        let i = self.grid.index(cell);
        let old = std::mem::replace(&mut self.terrain[i], terrain);
        self.digest = self
            .digest
            .wrapping_sub(cell_digest(i, old))
            .wrapping_add(cell_digest(i, terrain));
        let mut changed_class = changed;
        let mut changed = 0u8;
        for layer in Layer::ALL {
            if self.costs[layer as usize].set(cell, self.table.cost(terrain, layer)) {
                changed |= 1 << layer as u8;
            }
        }
        self.update_classes(cell, changed, &mut changed_class);
        changed
    }

    /// Brings every prepared class cost field of the layers in `layers` (a bit mask) up to
    /// date after the cost of `cell` changed.
    fn update_classes(
        &mut self,
        cell: Cell,
        layers: u8,
        changed: &mut impl FnMut(ClassCostChange),
    ) {
        for (slot, field) in self.class_costs.iter_mut().enumerate() {
            let Some(field) = field else { continue };
            let layer = Layer::ALL[slot % Layer::COUNT];
            if layers & (1 << layer as u8) == 0 {
                continue;
            }
            let class = (slot / Layer::COUNT + 1) as u8;
            let costs = &self.costs[layer as usize];
            let mut seen = Vec::new();
            crate::update_class_cost(costs, field, class, cell, |c, before| {
                seen.push((c, before))
            });
            let version = field.version();
            for (c, before) in seen {
                changed(ClassCostChange {
                    layer,
                    class,
                    version,
                    cell: c,
                    before,
                });
            }
        }
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
        for (slot, field) in self.class_costs.iter_mut().enumerate() {
            if let Some(field) = field {
                let layer = Layer::ALL[slot % Layer::COUNT];
                let class = (slot / Layer::COUNT + 1) as u8;
                let fresh = crate::class_cost_field(&self.costs[layer as usize], class);
                for i in 0..self.grid.len() {
                    let cell = self.grid.cell(i);
                    field.set(cell, fresh.get(cell));
                }
            }
        }
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

    /// Prepared size classes' cost fields follow terrain edits and a new cost table, equal
    /// to fields built afresh; maps that differ only in the classes prepared are equal.
    #[test]
    fn class_cost_fields_follow_edits_and_tables() {
        let mut map = Map::new(Grid::new(12, 9).unwrap());
        let plain = map.clone();
        map.prepare_size_class(Layer::Ground, 2);
        assert!(map.has_size_class(Layer::Ground, 2));
        assert!(!map.has_size_class(Layer::Ground, 1));
        assert!(map.has_size_class(Layer::Air, 0));
        assert_eq!(map, plain);
        let fresh = |map: &Map| crate::class_cost_field(map.cost_field(Layer::Ground), 2);
        let mut changes = 0;
        map.set_terrain_with(Cell::new(5, 4), Terrain::BrickWall, |c| {
            assert_eq!((c.layer, c.class), (Layer::Ground, 2));
            changes += 1;
        });
        assert!(
            changes > 1,
            "the class's costs change around the edited cell"
        );
        assert_eq!(
            map.class_cost_field(Layer::Ground, 2).to_costs(),
            fresh(&map).to_costs()
        );
        let table = CostTable::default()
            .with(Terrain::BrickWall, Layer::Ground, 7)
            .unwrap();
        map.set_cost_table(table);
        assert_eq!(
            map.class_cost_field(Layer::Ground, 2).to_costs(),
            fresh(&map).to_costs()
        );
        assert_eq!(
            map.class_cost_field(Layer::Ground, 0),
            map.cost_field(Layer::Ground)
        );
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
