//! Size classes (docs/behaviour.md, "Unit sizes"): a unit's radius picks the cost field it
//! paths on, in which every cell too close to a wall for its body is blocked.
//!
//! Class `c` needs a [`Clearance`] of at least `c + 1` cells: no wall cell (and no map edge)
//! within Chebyshev distance `c` of the cell. A disc centred in such a cell is at least
//! `c + 0.5` cells from every wall, so class `c` holds the radii up to `c + 0.5` cells
//! ([`size_class`]). Class 0 (radius up to half a cell) needs only an open cell: its cost
//! field is the layer's own, so its fields are exactly the fields of a map without classes.

use crate::clearance::Clearance;
use crate::cost_field::CostField;
use crate::direction::Direction;
use crate::grid::Cell;
use crate::terrain::WALL;

/// The most size classes a simulation may have (classes `0..MAX_SIZE_CLASSES`).
pub const MAX_SIZE_CLASSES: u8 = 4;

/// The size class of a unit of radius `radius_cells` (in cells) among `classes` classes:
/// the smallest `c` with `radius_cells <= c + 0.5`, capped at `classes - 1` (a unit bigger
/// than the largest class paths as that class does). `classes` 0 or 1: always 0; a radius
/// that is not a number: 0.
#[must_use]
pub fn size_class(radius_cells: f32, classes: u8) -> u8 {
    let top = classes.clamp(1, MAX_SIZE_CLASSES) - 1;
    let needed = (radius_cells - 0.5).ceil();
    if needed.is_nan() || needed <= 0.0 {
        0
    } else if needed >= f32::from(top) {
        top
    } else {
        needed as u8
    }
}

/// The clearance (in cells, see [`Clearance`]) a cell needs to be open for class `class`.
#[must_use]
pub const fn class_clearance(class: u8) -> u8 {
    class.saturating_add(1)
}

/// The cost field of size class `class` on a layer whose cost field is `layer`: the layer's
/// cost where the cell's clearance is at least [`class_clearance`], [`WALL`] elsewhere. For
/// class 0 this is `layer` itself (costs and moves).
#[must_use]
pub fn class_cost_field(layer: &CostField, class: u8) -> CostField {
    let clearance = Clearance::build(layer);
    let need = class_clearance(class);
    let mut out = layer.clone();
    for y in 0..layer.height() {
        for x in 0..layer.width() {
            if clearance.get(x, y) < need {
                out.set(Cell::new(x, y), WALL);
            }
        }
    }
    out
}

/// Brings `class_cost` (the field of `class` on `layer`, see [`class_cost_field`]) up to
/// date after the cost of `cell` on `layer` changed: only cells within Chebyshev distance
/// `class` of `cell` can change (their clearance is all a wall there can change). Calls
/// `changed(cell, cost before)` for every cell whose class cost changed, in row-major order.
pub fn update_class_cost(
    layer: &CostField,
    class_cost: &mut CostField,
    class: u8,
    cell: Cell,
    mut changed: impl FnMut(Cell, u8),
) {
    let r = i64::from(class);
    let (cx, cy) = (i64::from(cell.x), i64::from(cell.y));
    let (w, h) = (i64::from(layer.width()), i64::from(layer.height()));
    for y in (cy - r).max(0)..=(cy + r).min(h - 1) {
        for x in (cx - r).max(0)..=(cx + r).min(w - 1) {
            let here = Cell::new(x as u32, y as u32);
            let near_wall = ((y - r)..=(y + r))
                .any(|wy| ((x - r)..=(x + r)).any(|wx| layer.get_or_wall(wx, wy) == WALL));
            let cost = if near_wall { WALL } else { layer.get(here) };
            let before = class_cost.get(here);
            if class_cost.set(here, cost) {
                changed(here, before);
            }
        }
    }
}

/// The way out for a body of size class `class` standing in a cell that is open on its
/// layer but too close to a wall for the class (see [`escape_from`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Escape {
    /// The first move of the walk out.
    pub first: Direction,
    /// The nearest cell open for the class, where the walk ends.
    pub to: Cell,
    /// The walk's length, in the fields' units ([`Direction::step`] per move, costs aside).
    pub length: u32,
}

/// The cells on a side of the box [`escape_from`] looks in, for the biggest class.
const ESCAPE_SIDE: usize = 4 * (MAX_SIZE_CLASSES as usize - 1) + 3;

/// The way out for a body of size class `class` standing in `cell` when the cell is open
/// on the layer (`layer`) but blocked for the class (in `class_cost`, see
/// [`class_cost_field`]): a walk of the fewest legal moves on the layer, orthogonal moves
/// tried before diagonal ones, to the nearest cell open for the class, looked for within `2 * class + 1` cells (the band
/// near a wall is `class` cells deep; a corridor too narrow for the class has no way out
/// there). `None` when `cell` is open for the class, a wall on the layer, outside the grid,
/// `class` is 0, or no such cell is that close.
///
/// A body pushed against a wall, where its class's fields have no direction, walks back to
/// where it fits with this (docs/behaviour.md, "Unit sizes"). It is asked per unit, in the
/// unit's cell only, so building a class's fields costs nothing for it. Allocates nothing.
#[must_use]
pub fn escape_from(
    layer: &CostField,
    class_cost: &CostField,
    cell: Cell,
    class: u8,
) -> Option<Escape> {
    if class == 0
        || cell.x >= layer.width()
        || cell.y >= layer.height()
        || class_cost.get(cell) != WALL
        || layer.get(cell) == WALL
    {
        return None;
    }
    // Orthogonal directions first, then diagonals (escapes run straight off walls).
    const ORDER: [u8; 8] = [0, 2, 4, 6, 1, 3, 5, 7];
    let reach = 2 * i64::from(class.min(MAX_SIZE_CLASSES - 1)) + 1;
    let side = (2 * reach + 1) as usize;
    let (cx, cy) = (i64::from(cell.x), i64::from(cell.y));
    let local = |x: i64, y: i64| ((y - cy + reach) as usize) * side + (x - cx + reach) as usize;
    // Per cell of the box around `cell`: the walk's length to it (u32::MAX: not reached),
    // and the walk's first move. The queue holds each reached cell once.
    let mut walked = [u32::MAX; ESCAPE_SIDE * ESCAPE_SIDE];
    let mut first = [Direction::N; ESCAPE_SIDE * ESCAPE_SIDE];
    let mut queue = [cell; ESCAPE_SIDE * ESCAPE_SIDE];
    let (mut head, mut tail) = (0, 1);
    walked[local(cx, cy)] = 0;
    while head < tail {
        let here = queue[head];
        head += 1;
        let at = local(i64::from(here.x), i64::from(here.y));
        let moves = layer.moves(here);
        for d in ORDER {
            if moves & (1 << d) == 0 {
                continue;
            }
            let dir = Direction::from_index(d);
            let (dx, dy) = dir.offset();
            let (nx, ny) = (
                i64::from(here.x) + i64::from(dx),
                i64::from(here.y) + i64::from(dy),
            );
            if (nx - cx).abs() > reach || (ny - cy).abs() > reach {
                continue;
            }
            let n = local(nx, ny);
            if walked[n] != u32::MAX {
                continue;
            }
            walked[n] = walked[at] + dir.step();
            first[n] = if at == local(cx, cy) { dir } else { first[at] };
            let next = Cell::new(nx as u32, ny as u32);
            if class_cost.get(next) != WALL {
                return Some(Escape {
                    first: first[n],
                    to: next,
                    length: walked[n],
                });
            }
            queue[tail] = next;
            tail += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Grid;
    use proptest::prelude::*;

    #[test]
    fn radii_map_to_classes() {
        assert_eq!(size_class(0.4, 4), 0);
        assert_eq!(
            size_class(0.5, 4),
            0,
            "half a cell is class 0: today's fields"
        );
        assert_eq!(size_class(0.51, 4), 1);
        assert_eq!(size_class(1.2, 4), 1);
        assert_eq!(size_class(1.5, 4), 1);
        assert_eq!(size_class(1.6, 4), 2);
        assert_eq!(size_class(3.5, 4), 3);
        assert_eq!(size_class(100.0, 4), 3, "capped at the largest class");
        assert_eq!(size_class(f32::INFINITY, 4), 3);
        assert_eq!(size_class(f32::NAN, 4), 0);
        assert_eq!(
            size_class(1.2, 1),
            0,
            "one class: every unit paths as today"
        );
        assert_eq!(size_class(1.2, 0), 0);
        assert_eq!(size_class(2.0, 2), 1);
    }

    #[test]
    fn class_zero_is_the_layer_and_bigger_classes_keep_off_walls() {
        let grid = Grid::new(7, 5).unwrap();
        let mut costs = vec![1u8; 35];
        costs[2 * 7 + 3] = WALL; // (3, 2)
        costs[7 + 5] = 9; // (5, 1): rough
        let layer = CostField::from_costs(&grid, &costs).unwrap();
        assert_eq!(class_cost_field(&layer, 0), layer);
        let one = class_cost_field(&layer, 1);
        // Open for class 1: clearance >= 2, i.e. no wall or edge in the 3x3 around.
        let open: Vec<Cell> = (0..35)
            .map(|i| grid.cell(i))
            .filter(|&c| one.get(c) != WALL)
            .collect();
        assert_eq!(
            open,
            [(1, 1), (5, 1), (1, 2), (5, 2), (1, 3), (5, 3)].map(|(x, y)| Cell::new(x, y))
        );
        assert_eq!(one.get(Cell::new(5, 1)), 9, "rough costs are kept");
        assert!(
            class_cost_field(&layer, 2)
                .to_costs()
                .iter()
                .all(|&c| c == WALL)
        );
    }

    #[test]
    fn a_body_against_a_wall_walks_back_to_where_it_fits() {
        // A 9x7 room, a wall column at x = 6.
        let grid = Grid::new(9, 7).unwrap();
        let mut costs = vec![1u8; 63];
        for y in 0..7 {
            costs[y * 9 + 6] = WALL;
        }
        let layer = CostField::from_costs(&grid, &costs).unwrap();
        let one = class_cost_field(&layer, 1);
        // (5, 3) touches the wall: one step west is open for class 1.
        let out = escape_from(&layer, &one, Cell::new(5, 3), 1).unwrap();
        assert_eq!(out.first, Direction::W);
        assert_eq!(out.to, Cell::new(4, 3));
        assert_eq!(out.length, Direction::W.step());
        // The corner (5, 0): near the wall and the map edge; the way out is diagonal.
        let corner = escape_from(&layer, &one, Cell::new(5, 0), 1).unwrap();
        assert_eq!(corner.to, Cell::new(4, 1));
        assert_eq!(corner.first, Direction::SW);
        // Open for the class, a wall, class 0, outside: nothing to escape.
        assert_eq!(escape_from(&layer, &one, Cell::new(3, 3), 1), None);
        assert_eq!(escape_from(&layer, &one, Cell::new(6, 3), 1), None);
        assert_eq!(escape_from(&layer, &layer, Cell::new(5, 3), 0), None);
        assert_eq!(escape_from(&layer, &one, Cell::new(20, 3), 1), None);
        // East of the wall the strip is two cells wide: no room for class 1 anywhere near.
        assert_eq!(escape_from(&layer, &one, Cell::new(7, 3), 1), None);
    }

    proptest! {
        /// Updating a class field edit by edit equals building it afresh, and the reported
        /// changes are exactly the cells whose cost differs (with their cost before).
        #[test]
        fn updates_equal_a_fresh_build(
            w in 1u32..14, h in 1u32..14, class in 0u8..4,
            walls in proptest::collection::vec((0u32..14, 0u32..14), 0..30),
            edits in proptest::collection::vec((0u32..14, 0u32..14, prop_oneof![Just(WALL), Just(1u8), 2u8..=254]), 1..20),
        ) {
            let grid = Grid::new(w, h).unwrap();
            let mut layer = CostField::filled(&grid, 1);
            for (x, y) in walls {
                if x < w && y < h {
                    layer.set(Cell::new(x, y), WALL);
                }
            }
            let mut class_cost = class_cost_field(&layer, class);
            for (x, y, cost) in edits {
                let cell = Cell::new(x % w, y % h);
                let before_all = class_cost.to_costs();
                layer.set(cell, cost);
                let mut seen = Vec::new();
                update_class_cost(&layer, &mut class_cost, class, cell, |c, b| seen.push((c, b)));
                let fresh = class_cost_field(&layer, class);
                prop_assert_eq!(class_cost.to_costs(), fresh.to_costs());
                for i in 0..grid.len() {
                    prop_assert_eq!(class_cost.moves(grid.cell(i)), fresh.moves(grid.cell(i)));
                }
                let expected: Vec<(Cell, u8)> = (0..grid.len())
                    .filter(|&i| before_all[i] != fresh.to_costs()[i])
                    .map(|i| (grid.cell(i), before_all[i]))
                    .collect();
                prop_assert_eq!(seen, expected);
            }
        }
    }
}
