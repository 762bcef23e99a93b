//! The eight grid directions and their step weights.

use glam::Vec2;

/// Weight of an orthogonal step through a cell of cost 1.
pub const ORTHO_STEP: u32 = 169;
/// Weight of a diagonal step through a cell of cost 1. `239 / 169 = 1.414201`, within
/// `9e-6` (relative) of `sqrt(2)`; the article's `14 / 10` is 1% off.
pub const DIAG_STEP: u32 = 239;

/// One of the eight moves between neighbouring cells. Orthogonal moves have even
/// discriminants, diagonal moves odd ones; `y` grows downwards (row order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Direction {
    /// `(0, -1)`: up the map file.
    N = 0,
    /// `(1, -1)`.
    NE = 1,
    /// `(1, 0)`.
    E = 2,
    /// `(1, 1)`.
    SE = 3,
    /// `(0, 1)`: down the map file.
    S = 4,
    /// `(-1, 1)`.
    SW = 5,
    /// `(-1, 0)`.
    W = 6,
    /// `(-1, -1)`.
    NW = 7,
}

impl Direction {
    /// All eight, in discriminant order.
    pub const ALL: [Direction; 8] = [
        Direction::N,
        Direction::NE,
        Direction::E,
        Direction::SE,
        Direction::S,
        Direction::SW,
        Direction::W,
        Direction::NW,
    ];

    /// Cell offsets `(dx, dy)` indexed by discriminant.
    pub const OFFSETS: [(i32, i32); 8] = [
        (0, -1),
        (1, -1),
        (1, 0),
        (1, 1),
        (0, 1),
        (-1, 1),
        (-1, 0),
        (-1, -1),
    ];

    /// The direction with discriminant `index & 7`.
    #[must_use]
    pub const fn from_index(index: u8) -> Self {
        Self::ALL[(index & 7) as usize]
    }

    /// Cell offset of this move.
    #[must_use]
    pub const fn offset(self) -> (i32, i32) {
        Self::OFFSETS[self as usize]
    }

    /// Whether this is a diagonal move.
    #[must_use]
    pub const fn is_diagonal(self) -> bool {
        (self as u8) & 1 == 1
    }

    /// The reverse move.
    #[must_use]
    pub const fn opposite(self) -> Self {
        Self::from_index(self as u8 + 4)
    }

    /// Step weight through a cell of cost 1 ([`ORTHO_STEP`] or [`DIAG_STEP`]).
    #[must_use]
    pub const fn step(self) -> u32 {
        if self.is_diagonal() {
            DIAG_STEP
        } else {
            ORTHO_STEP
        }
    }

    /// Unit vector of this move in world space (`+y` down the map).
    #[must_use]
    #[inline]
    pub fn unit_vector(self) -> Vec2 {
        const D: f32 = std::f32::consts::FRAC_1_SQRT_2;
        const V: [Vec2; 8] = [
            Vec2::new(0.0, -1.0),
            Vec2::new(D, -D),
            Vec2::new(1.0, 0.0),
            Vec2::new(D, D),
            Vec2::new(0.0, 1.0),
            Vec2::new(-D, D),
            Vec2::new(-1.0, 0.0),
            Vec2::new(-D, -D),
        ];
        V[self as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_ratio_is_close_to_sqrt2() {
        let ratio = f64::from(DIAG_STEP) / f64::from(ORTHO_STEP);
        assert!(
            (ratio / std::f64::consts::SQRT_2 - 1.0).abs() < 1e-4,
            "{ratio}"
        );
    }

    #[test]
    fn opposites_and_offsets() {
        for d in Direction::ALL {
            let (dx, dy) = d.offset();
            let (ox, oy) = d.opposite().offset();
            assert_eq!((dx + ox, dy + oy), (0, 0));
            assert_eq!(d.is_diagonal(), dx != 0 && dy != 0);
            let v = d.unit_vector();
            assert!((v.length() - 1.0).abs() < 1e-6);
            let sign = |f: f32| i32::from(f > 0.1) - i32::from(f < -0.1);
            assert_eq!((sign(v.x), sign(v.y)), (dx, dy));
        }
    }
}
