//! The viewer's camera: which world position sits at the centre of the map view and how
//! many screen points a world unit spans. World `+y` points down, like the screen's.

use eframe::egui::{Pos2, Rect, pos2};
use horde::glam::Vec2;

/// Closest zoom out, in screen points per world unit.
pub const MIN_ZOOM: f32 = 0.02;
/// Closest zoom in, in screen points per world unit.
pub const MAX_ZOOM: f32 = 500.0;

/// Maps world positions onto a screen rectangle (the map view) and back.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// World position shown at the centre of the view.
    pub centre: Vec2,
    /// Screen points per world unit.
    pub zoom: f32,
}

impl Default for Camera {
    fn default() -> Self {
        Self {
            centre: Vec2::ZERO,
            zoom: 1.0,
        }
    }
}

impl Camera {
    /// A camera showing the world box `min..max` whole and centred in `view`, with a small
    /// margin.
    #[must_use]
    pub fn fit(min: Vec2, max: Vec2, view: Rect) -> Self {
        let size = (max - min).max(Vec2::splat(1e-3));
        let zoom = (view.width() / size.x).min(view.height() / size.y) * 0.96;
        Self {
            centre: (min + max) * 0.5,
            zoom: zoom.clamp(MIN_ZOOM, MAX_ZOOM),
        }
    }

    /// Screen position of world position `world`.
    #[must_use]
    pub fn world_to_screen(&self, world: Vec2, view: Rect) -> Pos2 {
        let c = view.center();
        let d = (world - self.centre) * self.zoom;
        pos2(c.x + d.x, c.y + d.y)
    }

    /// World position under screen position `screen`.
    #[must_use]
    pub fn screen_to_world(&self, screen: Pos2, view: Rect) -> Vec2 {
        let c = view.center();
        self.centre + Vec2::new(screen.x - c.x, screen.y - c.y) / self.zoom
    }

    /// Screen length of world length `len`.
    #[must_use]
    pub fn len_to_screen(&self, len: f32) -> f32 {
        len * self.zoom
    }

    /// Moves the view by `dx, dy` screen points (the world follows the mouse).
    pub fn pan(&mut self, dx: f32, dy: f32) {
        self.centre -= Vec2::new(dx, dy) / self.zoom;
    }

    /// Multiplies the zoom by `factor` (clamped to [`MIN_ZOOM`]..=[`MAX_ZOOM`]), keeping the
    /// world position under `screen` where it is.
    pub fn zoom_about(&mut self, screen: Pos2, factor: f32, view: Rect) {
        if !(factor.is_finite() && factor > 0.0) {
            return;
        }
        let anchor = self.screen_to_world(screen, view);
        self.zoom = (self.zoom * factor).clamp(MIN_ZOOM, MAX_ZOOM);
        let c = view.center();
        self.centre = anchor - Vec2::new(screen.x - c.x, screen.y - c.y) / self.zoom;
    }

    /// The world box `(min, max)` that `view` shows.
    #[must_use]
    pub fn visible_world(&self, view: Rect) -> (Vec2, Vec2) {
        (
            self.screen_to_world(view.min, view),
            self.screen_to_world(view.max, view),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view() -> Rect {
        Rect::from_min_max(pos2(200.0, 10.0), pos2(1000.0, 610.0))
    }

    #[test]
    fn screen_world_round_trip() {
        let cam = Camera {
            centre: Vec2::new(37.5, -12.25),
            zoom: 6.4,
        };
        for world in [
            Vec2::ZERO,
            Vec2::new(37.5, -12.25),
            Vec2::new(100.0, 3.0),
            Vec2::new(-4.2, 88.8),
        ] {
            let back = cam.screen_to_world(cam.world_to_screen(world, view()), view());
            assert!((back - world).length() < 1e-3, "{world} -> {back}");
        }
        // The camera's centre is drawn at the view's centre.
        assert_eq!(cam.world_to_screen(cam.centre, view()), view().center());
        // One world unit is `zoom` points.
        let a = cam.world_to_screen(Vec2::ZERO, view());
        let b = cam.world_to_screen(Vec2::new(1.0, 0.0), view());
        assert!((b.x - a.x - 6.4).abs() < 1e-4);
    }

    #[test]
    fn zoom_about_the_cursor_keeps_the_point_under_it() {
        let mut cam = Camera {
            centre: Vec2::new(64.0, 64.0),
            zoom: 4.0,
        };
        let cursor = pos2(820.0, 95.0);
        let under = cam.screen_to_world(cursor, view());
        for factor in [1.25, 0.5, 3.0, 0.9] {
            cam.zoom_about(cursor, factor, view());
            let now = cam.screen_to_world(cursor, view());
            assert!((now - under).length() < 1e-3, "{under} moved to {now}");
        }
        assert!((cam.zoom - 4.0 * 1.25 * 0.5 * 3.0 * 0.9).abs() < 1e-4);
        // Zooming about the centre keeps the centre.
        let before = cam.centre;
        cam.zoom_about(view().center(), 2.0, view());
        assert!((cam.centre - before).length() < 1e-4);
    }

    #[test]
    fn zoom_is_clamped_and_ignores_bad_factors() {
        let mut cam = Camera::default();
        cam.zoom_about(pos2(300.0, 300.0), 1e9, view());
        assert_eq!(cam.zoom, MAX_ZOOM);
        cam.zoom_about(pos2(300.0, 300.0), 1e-12, view());
        assert_eq!(cam.zoom, MIN_ZOOM);
        let before = cam;
        cam.zoom_about(pos2(300.0, 300.0), f32::NAN, view());
        cam.zoom_about(pos2(300.0, 300.0), -2.0, view());
        assert_eq!(cam, before);
    }

    #[test]
    fn pan_moves_the_world_with_the_mouse() {
        let mut cam = Camera {
            centre: Vec2::new(10.0, 10.0),
            zoom: 5.0,
        };
        let p = cam.world_to_screen(Vec2::new(12.0, 9.0), view());
        cam.pan(25.0, -10.0);
        let q = cam.world_to_screen(Vec2::new(12.0, 9.0), view());
        assert!((q.x - p.x - 25.0).abs() < 1e-3 && (q.y - p.y + 10.0).abs() < 1e-3);
    }

    #[test]
    fn fit_shows_the_whole_box_centred() {
        let cam = Camera::fit(Vec2::ZERO, Vec2::new(128.0, 64.0), view());
        let (min, max) = cam.visible_world(view());
        assert!(min.x <= 0.0 && min.y <= 0.0 && max.x >= 128.0 && max.y >= 64.0);
        assert_eq!(
            cam.world_to_screen(Vec2::new(64.0, 32.0), view()),
            view().center()
        );
        // The box's limiting side (width: 800/128 < 600/64) nearly fills the view.
        assert!((cam.zoom - 800.0 / 128.0 * 0.96).abs() < 1e-4);
    }
}
