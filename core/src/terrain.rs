//! Terrain kinds, movement layers and the table that turns terrain into per-layer costs.

/// Cost of an open cell.
pub const OPEN: u8 = 1;
/// Cost of a cell that cannot be entered (a wall for that layer).
pub const WALL: u8 = 255;

/// What a cell is made of. The first seven kinds are the TankBattle level article's block
/// types; [`Terrain::Swamp`] and [`Terrain::Blocked`] carry the Moving AI map characters
/// `S` and `@`/`O`/`T`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(u8)]
pub enum Terrain {
    /// Open ground: everything passes.
    #[default]
    Empty = 0,
    /// Brick wall: blocks units, projectiles and sight; can be destroyed.
    BrickWall = 1,
    /// Steel plate: blocks units, projectiles and sight.
    SteelPlate = 2,
    /// Forest: passable but rough for ground units; blocks sight.
    Forest = 3,
    /// Water: blocks ground units; hover units cross it; projectiles fly over it.
    Water = 4,
    /// Snow: open, but slippery (less drag on knock-back).
    Snow = 5,
    /// The players' lair: blocks units and projectiles.
    Lair = 6,
    /// Swamp (Moving AI `S`): passable but rough.
    Swamp = 7,
    /// Out of bounds or trees (Moving AI `@`, `O`, `T`): blocks everything but air units.
    Blocked = 8,
}

impl Terrain {
    /// Every kind, in discriminant order.
    pub const ALL: [Terrain; 9] = [
        Terrain::Empty,
        Terrain::BrickWall,
        Terrain::SteelPlate,
        Terrain::Forest,
        Terrain::Water,
        Terrain::Snow,
        Terrain::Lair,
        Terrain::Swamp,
        Terrain::Blocked,
    ];

    /// Number of kinds.
    pub const COUNT: usize = Self::ALL.len();

    /// The static properties of this kind.
    #[must_use]
    pub const fn props(self) -> TerrainProps {
        let (blocks_ground, blocks_projectiles, blocks_vision, slippery) = match self {
            Terrain::Empty | Terrain::Swamp => (false, false, false, false),
            Terrain::BrickWall | Terrain::SteelPlate | Terrain::Blocked => {
                (true, true, true, false)
            }
            Terrain::Forest => (false, false, true, false),
            Terrain::Water => (true, false, false, false),
            Terrain::Snow => (false, false, false, true),
            Terrain::Lair => (true, true, false, false),
        };
        TerrainProps {
            blocks_ground,
            blocks_projectiles,
            blocks_vision,
            slippery,
        }
    }

    /// The kind with discriminant `value`, if any.
    #[must_use]
    pub fn from_u8(value: u8) -> Option<Self> {
        Self::ALL.get(usize::from(value)).copied()
    }

    /// The character that stands for this kind in horde's ASCII maps (see [`Terrain::from_char`]).
    #[must_use]
    pub const fn to_char(self) -> char {
        match self {
            Terrain::Empty => '.',
            Terrain::BrickWall => '#',
            Terrain::SteelPlate => 'X',
            Terrain::Forest => 'F',
            Terrain::Water => '~',
            Terrain::Snow => ':',
            Terrain::Lair => 'L',
            Terrain::Swamp => 'S',
            Terrain::Blocked => '@',
        }
    }

    /// The kind a character of an ASCII map stands for. The legend is a superset of the
    /// Moving AI `.map` body, so every Moving AI map is also a valid ASCII map:
    ///
    /// | char            | kind        |
    /// |-----------------|-------------|
    /// | `.` `G`         | empty       |
    /// | `#`             | brick wall  |
    /// | `X`             | steel plate |
    /// | `F`             | forest      |
    /// | `~` `W`         | water       |
    /// | `:`             | snow        |
    /// | `L`             | lair        |
    /// | `S`             | swamp       |
    /// | `@` `O` `T`     | blocked     |
    #[must_use]
    pub const fn from_char(c: char) -> Option<Self> {
        Some(match c {
            '.' | 'G' => Terrain::Empty,
            '#' => Terrain::BrickWall,
            'X' => Terrain::SteelPlate,
            'F' => Terrain::Forest,
            '~' | 'W' => Terrain::Water,
            ':' => Terrain::Snow,
            'L' => Terrain::Lair,
            'S' => Terrain::Swamp,
            '@' | 'O' | 'T' => Terrain::Blocked,
            _ => return None,
        })
    }

    /// Lower-case name, as used in scenario files and reports.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Terrain::Empty => "empty",
            Terrain::BrickWall => "brick_wall",
            Terrain::SteelPlate => "steel_plate",
            Terrain::Forest => "forest",
            Terrain::Water => "water",
            Terrain::Snow => "snow",
            Terrain::Lair => "lair",
            Terrain::Swamp => "swamp",
            Terrain::Blocked => "blocked",
        }
    }
}

/// Static properties of a terrain kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TerrainProps {
    /// Ground units cannot enter.
    pub blocks_ground: bool,
    /// Projectiles stop here.
    pub blocks_projectiles: bool,
    /// Sight stops here.
    pub blocks_vision: bool,
    /// Units slide: knock-back decays with less drag.
    pub slippery: bool,
}

/// How a unit moves, and so which cost field it follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(u8)]
pub enum Layer {
    /// Walks: stopped by walls, water and the lair; slowed by forest and swamp.
    #[default]
    Ground = 0,
    /// Hovers: like ground, but crosses water.
    Hover = 1,
    /// Flies: ignores terrain; only the map bounds stop it.
    Air = 2,
}

impl Layer {
    /// Every layer, in discriminant order.
    pub const ALL: [Layer; 3] = [Layer::Ground, Layer::Hover, Layer::Air];
    /// Number of layers.
    pub const COUNT: usize = Self::ALL.len();

    /// Lower-case name, as used in scenario files and reports.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Layer::Ground => "ground",
            Layer::Hover => "hover",
            Layer::Air => "air",
        }
    }
}

/// The cost of entering each terrain kind, per layer: `1` open, `2..=254` rough (slower,
/// avoided by the flow), `255` ([`WALL`]) impassable.
///
/// Defaults (`CostTable::default()`):
///
/// | terrain      | ground | hover | air |
/// |--------------|-------:|------:|----:|
/// | empty        | 1      | 1     | 1   |
/// | brick wall   | 255    | 255   | 1   |
/// | steel plate  | 255    | 255   | 1   |
/// | forest       | 3      | 3     | 1   |
/// | water        | 255    | 1     | 1   |
/// | snow         | 1      | 1     | 1   |
/// | lair         | 255    | 255   | 1   |
/// | swamp        | 2      | 2     | 1   |
/// | blocked      | 255    | 255   | 1   |
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CostTable {
    costs: [[u8; Layer::COUNT]; Terrain::COUNT],
}

impl Default for CostTable {
    fn default() -> Self {
        let mut costs = [[OPEN; Layer::COUNT]; Terrain::COUNT];
        for t in Terrain::ALL {
            let ground = match t {
                Terrain::Empty | Terrain::Snow => OPEN,
                Terrain::Forest => 3,
                Terrain::Swamp => 2,
                Terrain::BrickWall
                | Terrain::SteelPlate
                | Terrain::Water
                | Terrain::Lair
                | Terrain::Blocked => WALL,
            };
            let hover = if t == Terrain::Water { OPEN } else { ground };
            costs[t as usize] = [ground, hover, OPEN];
        }
        Self { costs }
    }
}

/// A cost of 0 was given: costs are `1..=255`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cost 0 for {terrain:?} on {layer:?} is invalid: costs are 1 (open) ..= 255 (wall)")]
pub struct ZeroCost {
    /// The terrain kind.
    pub terrain: Terrain,
    /// The layer.
    pub layer: Layer,
}

impl CostTable {
    /// The cost of entering `terrain` on `layer`.
    #[must_use]
    pub fn cost(&self, terrain: Terrain, layer: Layer) -> u8 {
        self.costs[terrain as usize][layer as usize]
    }

    /// Overrides one entry. Costs are `1..=255`; `0` is rejected.
    pub fn set(&mut self, terrain: Terrain, layer: Layer, cost: u8) -> Result<(), ZeroCost> {
        if cost == 0 {
            return Err(ZeroCost { terrain, layer });
        }
        self.costs[terrain as usize][layer as usize] = cost;
        Ok(())
    }

    /// The same table with one entry overridden.
    pub fn with(mut self, terrain: Terrain, layer: Layer, cost: u8) -> Result<Self, ZeroCost> {
        self.set(terrain, layer, cost)?;
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_table_follows_the_props() {
        let t = CostTable::default();
        for kind in Terrain::ALL {
            assert_eq!(t.cost(kind, Layer::Air), OPEN);
            assert_eq!(
                t.cost(kind, Layer::Ground) == WALL,
                kind.props().blocks_ground
            );
            assert_eq!(Terrain::from_u8(kind as u8), Some(kind));
        }
        assert_eq!(t.cost(Terrain::Water, Layer::Hover), OPEN);
        assert_eq!(t.cost(Terrain::Forest, Layer::Ground), 3);
        assert!(Terrain::Snow.props().slippery);
        assert_eq!(Terrain::from_u8(9), None);
        for kind in Terrain::ALL {
            assert_eq!(Terrain::from_char(kind.to_char()), Some(kind));
        }
        assert_eq!(Terrain::from_char('T'), Some(Terrain::Blocked));
        assert_eq!(Terrain::from_char('?'), None);
    }

    #[test]
    fn overrides() {
        let t = CostTable::default()
            .with(Terrain::Forest, Layer::Ground, 9)
            .unwrap();
        assert_eq!(t.cost(Terrain::Forest, Layer::Ground), 9);
        assert!(
            CostTable::default()
                .with(Terrain::Empty, Layer::Air, 0)
                .is_err()
        );
    }
}
