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
