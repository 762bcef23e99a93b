//! What the viewer draws, built in one pass each: the terrain and the integration field as
//! one-pixel-per-cell images (drawn as textures), every unit as a textured quad of ONE
//! [`Mesh`], flow arrows as thin quads of one mesh. Colours come from [`crate::render`]'s
//! palette, the same as `horde render`'s pictures.

use eframe::egui::{Color32, ColorImage, Mesh, Pos2, Rect, TextureId, pos2, vec2};
use horde::fields::{FlowField, IntegrationField, UNREACHABLE};
use horde::glam::Vec2;
use horde::{Cell, Grid, Layer, Map};

use super::camera::Camera;
use crate::render::{shade_for_cost, terrain_colour, unit_colour};

/// Smallest on-screen radius of a unit, in points, so that units stay visible zoomed out.
pub const MIN_UNIT_RADIUS: f32 = 1.5;
/// Width of the dark ring around stunned units, in points.
pub const STUN_OUTLINE: f32 = 1.5;
/// Colour of the ring around stunned units.
pub const STUN_OUTLINE_COLOUR: Color32 = Color32::BLACK;
/// Side of the disc texture units are drawn with, in texels.
pub const DISC_TEXELS: usize = 32;

/// An opaque egui colour from an RGB triple.
#[must_use]
pub fn colour(rgb: [u8; 3]) -> Color32 {
    Color32::from_rgb(rgb[0], rgb[1], rgb[2])
}

/// One unit as the viewer draws it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UnitDot {
    /// Centre (world).
    pub position: Vec2,
    /// Radius (world).
    pub radius: f32,
    /// Group number (picks the colour).
    pub group: u16,
    /// Stunned units are white with a dark ring.
    pub stunned: bool,
    /// Units at their goal are drawn in a darker shade of their group's colour.
    pub arrived: bool,
}

/// How much of its group colour an arrived unit keeps.
pub const ARRIVED_SHADE: f32 = 0.55;

/// The colour a unit is drawn in: its group's ([`unit_colour`], white when stunned), darker
/// once it has arrived.
#[must_use]
pub fn dot_colour(u: &UnitDot) -> Color32 {
    let rgb = unit_colour(u.group, u.stunned);
    if u.arrived && !u.stunned {
        colour(rgb.map(|c| (f32::from(c) * ARRIVED_SHADE).round() as u8))
    } else {
        colour(rgb)
    }
}

/// A white disc with a soft one-texel edge (alpha only, premultiplied): units are quads
/// tinted with their colour and textured with it.
#[must_use]
pub fn disc_image() -> ColorImage {
    let n = DISC_TEXELS;
    let r = n as f32 * 0.5;
    let pixels = (0..n * n)
        .map(|i| {
            let (x, y) = ((i % n) as f32 + 0.5 - r, (i / n) as f32 + 0.5 - r);
            let edge = (r - (x * x + y * y).sqrt()).clamp(0.0, 1.0);
            Color32::from_white_alpha((edge * 255.0).round() as u8)
        })
        .collect();
    ColorImage::new([n, n], pixels)
}

/// Every unit whose disc touches `view`, as one mesh of quads textured with `texture` (see
/// [`disc_image`]) and tinted with [`dot_colour`]: 4 vertices and 2 triangles per unit, plus a dark quad behind each stunned
/// unit (drawn first, so the white unit sits on its ring).
#[must_use]
pub fn unit_mesh(units: &[UnitDot], camera: &Camera, view: Rect, texture: TextureId) -> Mesh {
    let mut mesh = Mesh::with_texture(texture);
    let stunned = units.iter().filter(|u| u.stunned).count();
    mesh.reserve_vertices(4 * (units.len() + stunned));
    mesh.reserve_triangles(2 * (units.len() + stunned));
    let uv = Rect::from_min_max(pos2(0.0, 0.0), pos2(1.0, 1.0));
    for u in units {
        let centre = camera.world_to_screen(u.position, view);
        let r = camera.len_to_screen(u.radius).max(MIN_UNIT_RADIUS);
        let outer = if u.stunned { r + STUN_OUTLINE } else { r };
        let rect = Rect::from_center_size(centre, vec2(2.0 * outer, 2.0 * outer));
        if !rect.intersects(view) || !centre.x.is_finite() || !centre.y.is_finite() {
            continue;
        }
        if u.stunned {
            mesh.add_rect_with_uv(rect, uv, STUN_OUTLINE_COLOUR);
        }
        let rect = Rect::from_center_size(centre, vec2(2.0 * r, 2.0 * r));
        mesh.add_rect_with_uv(rect, uv, dot_colour(u));
    }
    mesh
}

/// Cells per texel side so that a `width x height` map fits a texture of at most `max_side`
/// texels a side (1 for every map a GPU can show whole).
#[must_use]
pub fn texel_stride(width: u32, height: u32, max_side: usize) -> u32 {
    let max_side = u32::try_from(max_side.max(1)).unwrap_or(u32::MAX);
    width.max(height).div_ceil(max_side).max(1)
}

/// The cells a `stride`-subsampled image of a `width x height` grid shows, row by row: one
/// cell (the top-left) per `stride x stride` block, and the image's size.
fn sampled_cells(width: u32, height: u32, stride: u32) -> ([usize; 2], Vec<Cell>) {
    let stride = stride.max(1);
    let (w, h) = (width.div_ceil(stride), height.div_ceil(stride));
    let cells = (0..h)
        .flat_map(|y| (0..w).map(move |x| Cell::new(x * stride, y * stride)))
        .collect();
    ([w as usize, h as usize], cells)
}

/// The terrain, one pixel per cell (per `stride x stride` block on maps too big for one
/// texture, see [`texel_stride`]): coloured by kind, darker where ground units pay more (the
/// palette of `horde render`).
#[must_use]
pub fn terrain_image(map: &Map, stride: u32) -> ColorImage {
    let grid = map.grid();
    let cost = map.cost_field(Layer::Ground);
    let (size, cells) = sampled_cells(grid.width(), grid.height(), stride);
    let pixels = cells
        .into_iter()
        .map(|c| {
            colour(shade_for_cost(
                terrain_colour(map.terrain_at(c)),
                cost.get(c),
            ))
        })
        .collect();
    ColorImage::new(size, pixels)
}

/// Colour of the heat map at `t` (0 = at the goal, 1 = farthest reachable): yellow through
/// red to dark blue, partly transparent so the terrain shows through.
#[must_use]
pub fn heat_colour(t: f32) -> Color32 {
    let t = t.clamp(0.0, 1.0);
    let stops: [(f32, [f32; 3]); 3] = [
        (0.0, [255.0, 240.0, 60.0]),
        (0.4, [220.0, 40.0, 40.0]),
        (1.0, [30.0, 20.0, 120.0]),
    ];
    let (i, (t0, a)) = stops
        .iter()
        .enumerate()
        .take(2)
        .rev()
        .find(|(_, (s, _))| t >= *s)
        .map_or((0, stops[0]), |(i, s)| (i, *s));
    let (t1, b) = stops[i + 1];
    let f = (t - t0) / (t1 - t0);
    let mix = |k: usize| (a[k] + (b[k] - a[k]) * f).round() as u8;
    Color32::from_rgba_unmultiplied(mix(0), mix(1), mix(2), 170)
}

/// The integration field, one pixel per cell (or `stride x stride` block, as for
/// [`terrain_image`]): [`heat_colour`] of the path cost scaled by the largest reachable cost;
/// cells with no path (walls included) are transparent.
#[must_use]
pub fn heat_image(field: &IntegrationField, stride: u32) -> ColorImage {
    let (size, cells) = sampled_cells(field.width(), field.height(), stride);
    let max = cells
        .iter()
        .map(|&c| field.get(c))
        .filter(|&v| v != UNREACHABLE)
        .max()
        .unwrap_or(0)
        .max(1);
    let pixels = cells
        .into_iter()
        .map(|c| match field.get(c) {
            UNREACHABLE => Color32::TRANSPARENT,
            v => heat_colour(v as f32 / max as f32),
        })
        .collect();
    ColorImage::new(size, pixels)
}

/// The flow field's directions as arrows about `spacing` points apart over the cells `view`
/// shows: each arrow is three segments (shaft and two head strokes), returned as pairs of
/// screen points. Cells with no direction (walls, goals, unreachable) get none.
#[must_use]
pub fn flow_arrows(
    flow: &FlowField,
    grid: &Grid,
    camera: &Camera,
    view: Rect,
    spacing: f32,
) -> Vec<[Pos2; 2]> {
    let cell_px = camera.len_to_screen(grid.cell_size()).max(1e-3);
    let step = (spacing / cell_px).ceil().max(1.0) as u32;
    let (min, max) = camera.visible_world(view);
    let lo = grid.clamped_cell_at(min);
    let hi = grid.clamped_cell_at(max);
    let len = (step as f32 * cell_px * 0.7).max(4.0);
    let mut out = Vec::new();
    // Sample on a lattice anchored at cell 0 so that arrows do not swim while panning.
    let first = |lo: u32| lo.div_ceil(step) * step;
    for y in (first(lo.y)..=hi.y).step_by(step as usize) {
        for x in (first(lo.x)..=hi.x).step_by(step as usize) {
            let centre = grid.cell_centre(Cell::new(x, y));
            let dir = flow.sample(grid, centre);
            if dir == Vec2::ZERO {
                continue;
            }
            let c = camera.world_to_screen(centre, view);
            let half = vec2(dir.x, dir.y) * (len * 0.5);
            let (tail, tip) = (c - half, c + half);
            out.push([tail, tip]);
            for angle in [2.6_f32, -2.6] {
                let back = Vec2::from_angle(angle).rotate(dir) * (len * 0.35);
                out.push([tip, tip + vec2(back.x, back.y)]);
            }
        }
    }
    out
}

/// Line segments as one untextured mesh of `width`-point-wide quads.
#[must_use]
pub fn segments_mesh(segments: &[[Pos2; 2]], width: f32, colour: Color32) -> Mesh {
    let mut mesh = Mesh::default();
    mesh.reserve_vertices(4 * segments.len());
    mesh.reserve_triangles(2 * segments.len());
    for [a, b] in segments {
        let d = *b - *a;
        let len = d.length();
        if !(len.is_finite() && len > 0.0) {
            continue;
        }
        let n = vec2(-d.y, d.x) / len * (width * 0.5);
        let base = mesh.vertices.len() as u32;
        for p in [*a + n, *b + n, *b - n, *a - n] {
            mesh.colored_vertex(p, colour);
        }
        mesh.add_triangle(base, base + 1, base + 2);
        mesh.add_triangle(base, base + 2, base + 3);
    }
    mesh
}

#[cfg(test)]
mod tests {
    use super::*;
    use horde::fields::{CostTable, FlowConfig};
    use horde::{GoalSet, Terrain};

    fn view() -> Rect {
        Rect::from_min_max(pos2(0.0, 0.0), pos2(800.0, 600.0))
    }

    fn dots(n: usize, stunned_every: usize) -> Vec<UnitDot> {
        (0..n)
            .map(|i| UnitDot {
                position: Vec2::new((i % 100) as f32 + 0.5, (i / 100) as f32 + 0.5),
                radius: 0.4,
                group: (i % 3) as u16,
                stunned: stunned_every > 0 && i % stunned_every == 0,
                arrived: false,
            })
            .collect()
    }

    #[test]
    fn one_quad_per_unit_coloured_by_group() {
        let units = dots(3000, 0);
        let cam = Camera::fit(Vec2::ZERO, Vec2::new(100.0, 30.0), view());
        let mesh = unit_mesh(&units, &cam, view(), TextureId::Managed(7));
        assert_eq!(mesh.vertices.len(), 4 * 3000);
        assert_eq!(mesh.indices.len(), 6 * 3000);
        assert_eq!(mesh.texture_id, TextureId::Managed(7));
        assert!(mesh.is_valid());
        for (i, quad) in mesh.vertices.chunks(4).enumerate() {
            let want = colour(unit_colour((i % 3) as u16, false));
            assert!(quad.iter().all(|v| v.color == want), "unit {i}");
            // The quad is centred on the unit and spans its diameter.
            let centre = cam.world_to_screen(units[i].position, view());
            // Vertices: left top, right top, left bottom, right bottom.
            let (min, max) = (quad[0].pos, quad[3].pos);
            assert!(((min.x + max.x) * 0.5 - centre.x).abs() < 1e-3);
            let side = cam.len_to_screen(0.8);
            assert!((max.x - min.x - side).abs() < 1e-3 && (max.y - min.y - side).abs() < 1e-3);
            assert_eq!(quad[0].uv, pos2(0.0, 0.0));
            assert_eq!(quad[3].uv, pos2(1.0, 1.0));
        }
    }

    #[test]
    fn stunned_units_are_white_on_a_dark_ring() {
        let units = dots(100, 4);
        let cam = Camera::fit(Vec2::ZERO, Vec2::new(100.0, 1.0), view());
        let mesh = unit_mesh(&units, &cam, view(), TextureId::default());
        assert_eq!(mesh.vertices.len(), 4 * (100 + 25));
        assert_eq!(mesh.indices.len(), 6 * (100 + 25));
        let white = colour(unit_colour(0, true));
        assert_eq!(white, Color32::WHITE);
        // The first unit is stunned: its ring (bigger) comes first, then the white disc.
        let ring = &mesh.vertices[0..4];
        let disc = &mesh.vertices[4..8];
        assert!(ring.iter().all(|v| v.color == STUN_OUTLINE_COLOUR));
        assert!(disc.iter().all(|v| v.color == white));
        assert!(ring[3].pos.x - ring[0].pos.x > disc[3].pos.x - disc[0].pos.x);
        let whites = mesh.vertices.iter().filter(|v| v.color == white).count();
        assert_eq!(whites, 4 * 25);
    }

    #[test]
    fn arrived_units_are_a_darker_shade_of_their_group() {
        let mut units = dots(6, 0);
        for u in &mut units[3..] {
            u.arrived = true;
        }
        units[5].stunned = true;
        let cam = Camera::fit(Vec2::ZERO, Vec2::new(10.0, 1.0), view());
        let mesh = unit_mesh(&units, &cam, view(), TextureId::default());
        let quad_colour = |q: usize| mesh.vertices[4 * q].color;
        for g in 0..3 {
            assert_eq!(quad_colour(g), colour(unit_colour(g as u16, false)));
        }
        for g in 3..5 {
            let base = unit_colour((g % 3) as u16, false);
            let dark = base.map(|c| (f32::from(c) * ARRIVED_SHADE).round() as u8);
            assert_eq!(quad_colour(g), colour(dark), "unit {g}");
            assert_ne!(quad_colour(g), colour(base));
        }
        // Stunned wins over arrived: ring (quad 5) then a white disc (quad 6).
        assert_eq!(quad_colour(5), STUN_OUTLINE_COLOUR);
        assert_eq!(quad_colour(6), Color32::WHITE);
    }

    #[test]
    fn units_off_screen_are_skipped_and_tiny_ones_stay_visible() {
        let units = dots(1000, 0);
        // Zoomed in on the first 10x5 world units: only the units there are drawn (plus the
        // ones whose disc pokes into the view).
        let cam = Camera {
            centre: Vec2::new(5.0, 5.0),
            zoom: 80.0,
        };
        let mesh = unit_mesh(&units, &cam, view(), TextureId::default());
        let (min, max) = cam.visible_world(view());
        let inside = units
            .iter()
            .filter(|u| {
                u.position.x + 0.4 > min.x
                    && u.position.x - 0.4 < max.x
                    && u.position.y + 0.4 > min.y
                    && u.position.y - 0.4 < max.y
            })
            .count();
        assert!(inside > 0 && inside < 1000);
        assert_eq!(mesh.vertices.len(), 4 * inside);
        // Zoomed far out a unit is still MIN_UNIT_RADIUS points across.
        let far = Camera {
            centre: Vec2::ZERO,
            zoom: 0.05,
        };
        let mesh = unit_mesh(&units[..1], &far, view(), TextureId::default());
        let q = &mesh.vertices;
        assert!((q[3].pos.x - q[0].pos.x - 2.0 * MIN_UNIT_RADIUS).abs() < 1e-4);
    }

    #[test]
    fn the_mesh_of_100k_units_is_one_mesh() {
        let units = dots(100_000, 50);
        let cam = Camera::fit(Vec2::ZERO, Vec2::new(100.0, 1000.0), view());
        let mesh = unit_mesh(&units, &cam, view(), TextureId::default());
        assert_eq!(mesh.vertices.len(), 4 * (100_000 + 2000));
        assert!(mesh.is_valid());
    }

    #[test]
    fn disc_texture_is_opaque_inside_and_clear_outside() {
        let img = disc_image();
        assert_eq!(img.size, [DISC_TEXELS, DISC_TEXELS]);
        let at = |x: usize, y: usize| img.pixels[y * DISC_TEXELS + x];
        assert_eq!(at(DISC_TEXELS / 2, DISC_TEXELS / 2), Color32::WHITE);
        assert_eq!(at(0, 0), Color32::TRANSPARENT);
        assert_eq!(at(DISC_TEXELS - 1, DISC_TEXELS - 1), Color32::TRANSPARENT);
    }

    fn test_map() -> Map {
        let mut terrain = vec![Terrain::Empty; 8 * 4];
        terrain[1] = Terrain::BrickWall;
        terrain[8 + 2] = Terrain::Water;
        terrain[2 * 8 + 3] = Terrain::Forest;
        Map::from_terrain(
            Grid::new(8, 4).expect("grid"),
            terrain,
            CostTable::default(),
        )
        .expect("map")
    }

    #[test]
    fn terrain_pixels_use_the_render_palette() {
        let map = test_map();
        let img = terrain_image(&map, 1);
        assert_eq!(img.size, [8, 4]);
        let cost = map.cost_field(Layer::Ground);
        for i in 0..map.grid().len() {
            let c = map.grid().cell(i);
            let want = shade_for_cost(terrain_colour(map.terrain_at(c)), cost.get(c));
            assert_eq!(img.pixels[i], colour(want), "cell {c}");
        }
        assert_eq!(img.pixels[1], colour(terrain_colour(Terrain::BrickWall)));
        // Forest costs more than open ground, so it is darker than its base colour.
        assert_ne!(
            img.pixels[2 * 8 + 3],
            colour(terrain_colour(Terrain::Forest))
        );
    }

    #[test]
    fn maps_too_big_for_one_texture_are_subsampled() {
        assert_eq!(texel_stride(128, 128, 8192), 1);
        assert_eq!(texel_stride(8192, 100, 8192), 1);
        assert_eq!(texel_stride(8193, 100, 8192), 2);
        assert_eq!(texel_stride(100, 32768, 8192), 4);
        assert_eq!(texel_stride(5, 5, 0), 5);
        let map = test_map();
        let img = terrain_image(&map, 3);
        // 8x4 cells in 3x3 blocks: 3x2 texels, each the block's top-left cell.
        assert_eq!(img.size, [3, 2]);
        let cost = map.cost_field(Layer::Ground);
        for (i, c) in [(0, 0), (3, 0), (6, 0), (0, 3), (3, 3), (6, 3)]
            .into_iter()
            .enumerate()
        {
            let c = Cell::new(c.0, c.1);
            let want = shade_for_cost(terrain_colour(map.terrain_at(c)), cost.get(c));
            assert_eq!(img.pixels[i], colour(want), "texel {i}");
        }
        let goal = GoalSet::single(Cell::new(0, 0));
        let field = IntegrationField::build(cost, goal.cells()).expect("field");
        let heat = heat_image(&field, 2);
        assert_eq!(heat.size, [4, 2]);
        assert_eq!(heat.pixels[0], heat_colour(0.0));
    }

    #[test]
    fn heat_map_is_hottest_at_the_goal_and_clear_in_walls() {
        let map = test_map();
        let goal = GoalSet::single(Cell::new(7, 3));
        let field =
            IntegrationField::build(map.cost_field(Layer::Ground), goal.cells()).expect("field");
        let img = heat_image(&field, 1);
        assert_eq!(img.size, [8, 4]);
        assert_eq!(img.pixels[3 * 8 + 7], heat_colour(0.0));
        assert_eq!(img.pixels[1], Color32::TRANSPARENT, "the brick wall");
        // The farthest reachable cell gets the cold end.
        assert!(img.pixels.contains(&heat_colour(1.0)));
        assert_ne!(heat_colour(0.0), heat_colour(0.5));
        assert_eq!(heat_colour(-3.0), heat_colour(0.0));
        assert_eq!(heat_colour(7.0), heat_colour(1.0));
    }

    #[test]
    fn flow_arrows_point_along_the_field() {
        let map = test_map();
        let goal = GoalSet::single(Cell::new(7, 0));
        let cost = map.cost_field(Layer::Ground);
        let integ = IntegrationField::build(cost, goal.cells()).expect("field");
        let flow = FlowField::build(cost, &integ, goal.cells(), &FlowConfig::default());
        let cam = Camera::fit(Vec2::ZERO, Vec2::new(8.0, 4.0), view());
        // 100 points per cell and 1 point spacing: one arrow per cell with a direction.
        let segs = flow_arrows(&flow, map.grid(), &cam, view(), 1.0);
        let with_dir = (0..map.grid().len())
            .filter(|&i| {
                flow.sample(map.grid(), map.grid().cell_centre(map.grid().cell(i))) != Vec2::ZERO
            })
            .count();
        assert!(with_dir > 20);
        assert_eq!(segs.len(), 3 * with_dir);
        // The arrow of cell (6, 0) points right, toward the goal.
        let c = cam.world_to_screen(map.grid().cell_centre(Cell::new(6, 0)), view());
        let shaft = segs
            .chunks(3)
            .map(|a| a[0])
            .find(|[a, b]| {
                ((a.x + b.x) * 0.5 - c.x).abs() < 1e-2 && ((a.y + b.y) * 0.5 - c.y).abs() < 1e-2
            })
            .expect("an arrow on cell (6, 0)");
        assert!(shaft[1].x > shaft[0].x);
        let mesh = segments_mesh(&segs, 2.0, Color32::BLACK);
        assert_eq!(mesh.vertices.len(), 4 * segs.len());
        assert_eq!(mesh.indices.len(), 6 * segs.len());
    }
}
