//! Where armies stream: per tile of the map, the lowest army with a unit on its way there and
//! that army's summed heading. `bucket_units` builds it from the frame-start snapshot while
//! two armies or more have units on their way; steering reads it so that a unit makes way
//! for the stream of a lower army coming at it (docs/behaviour.md, "Jams dissolve").
//!
//! Headings are summed as the snapshot's bytes, in integers, and the lowest army wins a
//! tile: the result does not depend on the order units are added in, so it is the same on
//! every thread count.

use glam::Vec2;
use horde_core::Grid;

use crate::frame::neighbours::NeighbourInfo;
use crate::frame::steer_units::ONCOMING_COS;

/// The most tiles the grid holds: on bigger maps a tile spans 2x2 cells or more.
const MAX_TILES: u64 = 1 << 20;

/// One tile of [`Streams`].
#[derive(Clone, Copy, Debug, Default)]
struct Tile {
    /// The build that wrote it (older tiles are empty).
    stamp: u32,
    /// The lowest army with a unit on its way in it.
    army: u16,
    /// How many of that army's units it holds.
    count: u16,
    /// Their headings, summed (each axis times 127, as [`NeighbourInfo::heading`]).
    flux: [i32; 2],
}

/// The streams of units on their way, for the frame.
#[derive(Clone, Debug, Default)]
pub struct Streams {
    /// Whether the frame has them (two armies or more on their way).
    on: bool,
    /// This build's stamp (never 0 once built).
    stamp: u32,
    /// A tile's side, in cells.
    side: u32,
    columns: u32,
    rows: u32,
    tiles: Vec<Tile>,
    /// The lowest army with a unit on its way.
    lowest: u16,
}

/// A lower army's stream coming at a unit ([`Streams::oncoming`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Oncoming {
    /// The way the stream goes (a unit vector).
    pub along: Vec2,
    /// From the unit to the stream's middle, across the stream (in cells; zero when the
    /// unit stands on its line).
    pub across: Vec2,
}

impl Streams {
    /// Rebuilds the streams from `units` (the frame-start snapshot, in any order) when two
    /// armies or more have units on their way (`coming`: per army, how many).
    pub fn build(&mut self, grid: &Grid, units: &[NeighbourInfo], coming: &[u32]) {
        let mut armies = coming.iter().enumerate().filter(|&(_, &c)| c > 0);
        let lowest = armies.next().map(|(a, _)| a);
        self.on = lowest.is_some() && armies.next().is_some();
        if !self.on {
            return;
        }
        self.lowest = lowest.map_or(0, |a| u16::try_from(a).unwrap_or(u16::MAX));
        let mut side = 1u32;
        while u64::from(grid.width().div_ceil(side)) * u64::from(grid.height().div_ceil(side))
            > MAX_TILES
        {
            side *= 2;
        }
        let (columns, rows) = (grid.width().div_ceil(side), grid.height().div_ceil(side));
        if (side, columns, rows) != (self.side, self.columns, self.rows) {
            self.tiles = vec![Tile::default(); columns as usize * rows as usize];
            (self.side, self.columns, self.rows, self.stamp) = (side, columns, rows, 0);
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.tiles.fill(Tile::default());
            self.stamp = 1;
        }
        for unit in units.iter().filter(|u| !u.at_rest && !u.asleep) {
            let Some(cell) = grid.cell_at(unit.pos) else {
                continue;
            };
            let i = (cell.y / side * columns + cell.x / side) as usize;
            let tile = &mut self.tiles[i];
            let heading = [i32::from(unit.heading[0]), i32::from(unit.heading[1])];
            if tile.stamp != self.stamp || unit.army < tile.army {
                *tile = Tile {
                    stamp: self.stamp,
                    army: unit.army,
                    count: 1,
                    flux: heading,
                };
            } else if unit.army == tile.army {
                tile.count = tile.count.saturating_add(1);
                tile.flux = [tile.flux[0] + heading[0], tile.flux[1] + heading[1]];
            }
        }
    }

    /// The stream of armies lower than `army` coming at a unit at `pos` bound along `way`
    /// (within 60 degrees of straight at it) whose units are within `reach` cells of it, if
    /// any.
    #[must_use]
    pub fn oncoming(
        &self,
        grid: &Grid,
        pos: Vec2,
        army: u16,
        way: Vec2,
        reach: f32,
    ) -> Option<Oncoming> {
        if !self.on || army <= self.lowest || way == Vec2::ZERO {
            return None;
        }
        let local = grid.local(pos);
        if !(local.x >= 0.0 && local.y >= 0.0) {
            return None;
        }
        let side = self.side as f32;
        // A tile `k` tiles away has its centre at least `(k - 0.5) * side` away.
        let span = (reach / side).floor() as i64 + 1;
        let (tx, ty) = ((local.x / side) as i64, (local.y / side) as i64);
        let (mut flux, mut middle, mut count) = (Vec2::ZERO, Vec2::ZERO, 0.0f32);
        let reach2 = (reach + side * 0.5) * (reach + side * 0.5);
        for y in (ty - span).max(0)..=(ty + span).min(i64::from(self.rows) - 1) {
            for x in (tx - span).max(0)..=(tx + span).min(i64::from(self.columns) - 1) {
                let tile = self.tiles[(y * i64::from(self.columns) + x) as usize];
                if tile.stamp != self.stamp || tile.army >= army {
                    continue;
                }
                let centre = (Vec2::new(x as f32, y as f32) + 0.5) * side;
                let offset = centre - local;
                if offset.length_squared() > reach2 {
                    continue;
                }
                let f = Vec2::new(tile.flux[0] as f32, tile.flux[1] as f32);
                if f.dot(way) >= -ONCOMING_COS * f.length() || f == Vec2::ZERO {
                    continue;
                }
                let n = f32::from(tile.count);
                flux += f;
                middle += offset * n;
                count += n;
            }
        }
        let along = flux.normalize_or_zero();
        if count == 0.0 || along == Vec2::ZERO {
            return None;
        }
        let middle = middle / count;
        Some(Oncoming {
            along,
            across: middle - along * middle.dot(along),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(x: f32, y: f32, army: u16, heading: Vec2) -> NeighbourInfo {
        NeighbourInfo {
            pos: Vec2::new(x, y),
            radius: 0.4,
            army,
            heading: NeighbourInfo::pack_heading(heading),
            ..NeighbourInfo::default()
        }
    }

    #[test]
    fn a_lower_armys_stream_coming_at_a_unit_is_seen_with_its_side() {
        let grid = Grid::new(40, 20).unwrap();
        // Army 0 streams east along y = 10.5.
        let units: Vec<_> = (0..10)
            .map(|i| unit(5.5 + i as f32, 10.5, 0, Vec2::X))
            .chain([unit(30.0, 12.0, 1, -Vec2::X)])
            .collect();
        let mut streams = Streams::default();
        streams.build(&grid, &units, &[10, 1]);
        // A unit of army 1 bound west, a cell and a half north of the stream.
        let seen = streams
            .oncoming(&grid, Vec2::new(12.0, 12.0), 1, -Vec2::X, 2.5)
            .unwrap();
        assert!(seen.along.distance(Vec2::X) < 1e-3);
        assert!(
            seen.across.x.abs() < 1e-3 && seen.across.y < -1.0,
            "{seen:?}"
        );
        // Bound the stream's way, crossing it, or out of reach: nothing comes at it.
        assert_eq!(
            streams.oncoming(&grid, Vec2::new(12.0, 12.0), 1, Vec2::X, 2.5),
            None
        );
        assert_eq!(
            streams.oncoming(&grid, Vec2::new(12.0, 12.0), 1, Vec2::Y, 2.5),
            None
        );
        assert_eq!(
            streams.oncoming(&grid, Vec2::new(12.0, 15.0), 1, -Vec2::X, 2.5),
            None
        );
        // The stream's own army, and a lower one, make way for nobody.
        assert_eq!(
            streams.oncoming(&grid, Vec2::new(12.0, 12.0), 0, -Vec2::X, 2.5),
            None
        );
        // One army alone on its way: no streams.
        streams.build(&grid, &units, &[10, 0]);
        assert_eq!(
            streams.oncoming(&grid, Vec2::new(12.0, 12.0), 1, -Vec2::X, 2.5),
            None
        );
    }

    #[test]
    fn the_streams_do_not_depend_on_the_order_units_come_in() {
        let grid = Grid::new(30, 30).unwrap();
        let mut units: Vec<_> = (0..200u32)
            .map(|i| {
                let a = i as f32 * 0.7;
                let p = Vec2::new(15.0 + (a * 1.3).sin() * 9.0, 15.0 + a.cos() * 9.0);
                unit(p.x, p.y, (i % 3) as u16, Vec2::new(a.cos(), a.sin()))
            })
            .collect();
        let probe = |streams: &Streams| {
            (0..30)
                .flat_map(|y| (0..30).map(move |x| Vec2::new(x as f32 + 0.3, y as f32 + 0.6)))
                .map(|p| streams.oncoming(&grid, p, 2, Vec2::new(-0.6, 0.8), 2.5))
                .collect::<Vec<_>>()
        };
        let mut streams = Streams::default();
        streams.build(&grid, &units, &[70, 70, 60]);
        let first = probe(&streams);
        assert!(first.iter().any(Option::is_some));
        units.reverse();
        units.rotate_left(37);
        streams.build(&grid, &units, &[70, 70, 60]);
        assert_eq!(first, probe(&streams));
    }
}
