//! Which way from here: a unit's direction and path distance from its sector's field, or
//! toward its sector's waypoint while that field is not built.

use super::*;

impl HierarchicalField {
    /// Which way from here: the unit direction to walk from world position `pos` on `grid`
    /// (the graph's grid), and the path cost to the goals from there (same units as
    /// [`crate::IntegrationField`]), for arrival and slowing down.
    ///
    /// - In a sector with a field: the field's move, and its value where the field keeps its
    ///   values (near the goals, see [`EXACT_DISTANCE`]), else the sector's lowest value (a
    ///   lower bound above `EXACT_DISTANCE`).
    /// - In a sector without one: straight toward the coarse route's waypoint
    ///   ([`CoarseRoute::waypoint`]), and the coarse estimate that picked it (the route's
    ///   cost from the waypoint plus the straight-line, octile, cost to it).
    /// - Zero and [`UNREACHABLE`] outside the grid and where no route exists; zero at goals
    ///   and in walls.
    ///
    /// Never builds anything, so every unit has a direction as soon as the route exists;
    /// [`Self::ensure_sector`] builds a sector's field (the frame builds those of the sectors
    /// that hold units). `memo` is the asking unit's [`CellMemo`]: while it stays in a cell
    /// whose sector field is unchanged, the field's byte and distance come from the memo
    /// instead of the field's arrays (on a big map each of those reads misses the cache).
    /// The result does not depend on the memo; a one-off question passes
    /// `&mut CellMemo::default()`.
    #[must_use]
    #[inline]
    pub fn guide(
        &self,
        graph: &PortalGraph,
        grid: &Grid,
        pos: Vec2,
        memo: &mut CellMemo,
    ) -> (Vec2, u32) {
        let (dir, distance, toward) = self.aim(graph, grid, pos, memo);
        (if toward { dir.normalize_or_zero() } else { dir }, distance)
    }

    /// [`Self::guide`] but for the last step: the direction, the distance, and whether
    /// the direction is the offset to a waypoint still to be made a unit vector.
    #[inline(always)]
    pub(super) fn aim(
        &self,
        graph: &PortalGraph,
        grid: &Grid,
        pos: Vec2,
        memo: &mut CellMemo,
    ) -> (Vec2, u32, bool) {
        let Some(cell) = grid.cell_at(pos) else {
            return (Vec2::ZERO, UNREACHABLE, false);
        };
        let sectors = graph.sectors();
        let sector = sectors.sector_of(cell);
        if self.has_field(sector) {
            return self.field_aim(sectors, grid, cell, sector, memo);
        }
        Self::waypoint_aim(grid, pos, self.route.waypoint_in(graph, cell, sector))
    }

    /// [`Self::aim`] in a sector with a field.
    #[inline(always)]
    pub(super) fn field_aim(
        &self,
        sectors: &SectorGrid,
        grid: &Grid,
        cell: Cell,
        sector: usize,
        memo: &mut CellMemo,
    ) -> (Vec2, u32, bool) {
        let index = grid.index(cell) as u32;
        // A memo hit reads nothing of the field itself.
        let (byte, distance) = memo.sector(index, self.stamps[sector], || {
            match &self.fields[sector] {
                Some(field) => {
                    let local = sectors.bounds(sector).local(cell);
                    let distance = field.values.as_ref().map_or(field.min, |v| v[local]);
                    (field.dirs[local], distance)
                }
                // `has_field` is set exactly while the field is there.
                None => (NO_DIRECTION, UNREACHABLE),
            }
        });
        let dir = if byte < NO_DIRECTION {
            Direction::from_index(byte).unit_vector()
        } else {
            Vec2::ZERO
        };
        (dir, distance, false)
    }

    /// [`Self::aim`] in a sector without a field, from the route's waypoint choice `way`.
    #[inline(always)]
    pub(super) fn waypoint_aim(
        grid: &Grid,
        pos: Vec2,
        way: Option<(Option<Cell>, u32)>,
    ) -> (Vec2, u32, bool) {
        match way {
            Some((Some(c), cost)) => (grid.cell_centre(c) - pos, cost, true),
            Some((None, cost)) => (Vec2::ZERO, cost, false),
            None => (Vec2::ZERO, UNREACHABLE, false),
        }
    }
}
