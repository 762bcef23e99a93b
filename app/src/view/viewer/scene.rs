//! What the viewer shows of the map: the mouse over it (camera moves and the tools'
//! actions), then the terrain, heat map, flow arrows, goals, units, force fields and the
//! tool's label.

use std::time::Instant;

use eframe::egui::{self, Color32, Mesh, Rect, Sense, Shape, Stroke, TextureOptions, pos2};
use horde::Layer;
use horde::glam::Vec2;

use super::Viewer;
use crate::render::{force_colour, unit_colour};
use crate::view::camera::Camera;
use crate::view::input::Action;
use crate::view::mesh::{colour, flow_arrows, heat_image, segments_mesh, unit_mesh};
use crate::view::panel::Request;

/// Arrow spacing of the flow overlay, in points.
const ARROW_SPACING: f32 = 22.0;
/// Colour of flow arrows.
const ARROW_COLOUR: Color32 = Color32::from_rgb(30, 25, 20);

impl Viewer {
    /// The heat-map texture of the selected group's ground field, rebuilt when it changed.
    fn heat_texture(&mut self, ctx: &egui::Context) -> Option<egui::TextureId> {
        let group = self.controls.tools.group.0;
        let class = self.controls.shown_class(&self.stats.classes);
        let horde = self.plan.sim.horde();
        let id = horde.groups().sized_field(group, Layer::Ground, class)?;
        let fields = horde.fields();
        let nav = fields.get(id);
        let key = (group, id, nav.built_from());
        match &mut self.heat {
            Some((k, tex)) if *k == key => Some(tex.id()),
            Some((k, tex)) => {
                tex.set(
                    heat_image(nav.integration(), self.stride),
                    TextureOptions::NEAREST,
                );
                *k = key;
                Some(tex.id())
            }
            None => {
                let tex = ctx.load_texture(
                    "heat",
                    heat_image(nav.integration(), self.stride),
                    TextureOptions::NEAREST,
                );
                let id = tex.id();
                self.heat = Some((key, tex));
                Some(id)
            }
        }
    }

    /// The map view: mouse handling, then drawing.
    pub(super) fn map_view(
        &mut self,
        ctx: &egui::Context,
        ui: &mut egui::Ui,
        requests: &[Request],
    ) {
        let (view, response) = ui.allocate_exact_size(ui.available_size(), Sense::click_and_drag());
        let (origin, size) = {
            let map = self.plan.sim.map();
            (map.grid().origin(), map.grid().world_size())
        };
        if !self.fitted || requests.contains(&Request::FitView) {
            self.camera = Camera::fit(origin, origin + size, view);
            self.fitted = true;
        }
        // The last known position: a drag released outside the window still ends there.
        let pointer = ctx.input(|i| i.pointer.latest_pos());
        let over_map = response.hovered();
        // Zoom about the cursor, pan with the right or middle button.
        if over_map && let Some(p) = pointer {
            let (scroll, pinch) = ctx.input(|i| (i.smooth_scroll_delta.y, i.zoom_delta()));
            let factor = pinch * (scroll * 0.0015).exp();
            if factor != 1.0 {
                self.camera.zoom_about(p, factor, view);
            }
        }
        if response.dragged_by(egui::PointerButton::Secondary)
            || response.dragged_by(egui::PointerButton::Middle)
        {
            let d = response.drag_delta();
            self.camera.pan(d.x, d.y);
        }
        // The left button's tool.
        let (pressed, down, released) = ctx.input(|i| {
            (
                i.pointer.primary_pressed(),
                i.pointer.primary_down(),
                i.pointer.primary_released(),
            )
        });
        let world = pointer.map(|p| self.camera.screen_to_world(p, view));
        let mut actions = Vec::new();
        {
            // The map is only read here; the actions change it afterwards.
            let map = self.plan.sim.map();
            let tools = &mut self.controls.tools;
            if let Some(w) = world {
                if pressed && over_map {
                    actions.extend(tools.press(&map, w));
                } else if down && tools.is_pressed() {
                    actions.extend(tools.drag(&map, w));
                }
                if released && tools.is_pressed() {
                    match tools.release(&map, w) {
                        Ok(a) => actions.extend(a),
                        Err(msg) => self.controls.message = format!("refused: {msg}"),
                    }
                }
            }
            self.stats.hover = world.filter(|_| over_map).and_then(|w| {
                let cell = map.grid().cell_at(w)?;
                Some(format!(
                    "cell {cell}: {}, ground cost {}",
                    map.terrain_at(cell).name(),
                    map.cost_field(Layer::Ground).get(cell)
                ))
            });
        }
        if requests.contains(&Request::Spawn) {
            let at = world
                .filter(|_| over_map)
                .unwrap_or_else(|| self.camera.screen_to_world(view.center(), view));
            actions.push(Action::Spawn {
                group: self.controls.tools.group,
                count: self.controls.spawn_count,
                centre: at,
            });
        }
        if requests.contains(&Request::Formation) {
            let group = self.controls.tools.group;
            let now = self
                .plan
                .sim
                .horde()
                .formations()
                .get(group.0)
                .map(|f| f.order.shape.clone());
            let next = match now {
                None => Some(horde::prelude::Shape::Line { width: 20 }),
                Some(horde::prelude::Shape::Line { .. }) => Some(horde::prelude::Shape::Box),
                Some(horde::prelude::Shape::Box) => Some(horde::prelude::Shape::Wedge),
                Some(_) => None,
            };
            actions.push(Action::Command(horde::Command::SetFormation {
                group,
                order: next.map(|shape| horde::FormationOrder {
                    shape,
                    spacing: None,
                    facing: None,
                }),
            }));
        }
        self.act(actions);
        self.draw(ctx, ui, view, origin);
    }

    fn draw(&mut self, ctx: &egui::Context, ui: &egui::Ui, view: Rect, origin: Vec2) {
        puffin::profile_function!();
        let started = Instant::now();
        self.refresh_terrain();
        self.gather();
        let painter = ui.painter_at(view);
        painter.rect_filled(view, 0.0, Color32::from_gray(24));
        // The textures cover whole `stride`-cell blocks: up to a block past the map's edge.
        let covered = {
            let map = self.plan.sim.map();
            let grid = map.grid();
            let cells = |n: u32| (n.div_ceil(self.stride) * self.stride) as f32;
            Vec2::new(cells(grid.width()), cells(grid.height())) * grid.cell_size()
        };
        let map_rect = Rect::from_min_max(
            self.camera.world_to_screen(origin, view),
            self.camera.world_to_screen(origin + covered, view),
        );
        let uv = Rect::from_min_max(pos2(0.0, 0.0), pos2(1.0, 1.0));
        painter.image(self.terrain.id(), map_rect, uv, Color32::WHITE);
        if self.controls.show_heat
            && let Some(tex) = self.heat_texture(ctx)
        {
            painter.image(tex, map_rect, uv, Color32::WHITE);
        }
        if self.controls.show_flow {
            let horde = self.plan.sim.horde();
            let class = self.controls.shown_class(&self.stats.classes);
            let id = horde
                .groups()
                .sized_field(self.controls.tools.group.0, Layer::Ground, class);
            if let Some(id) = id {
                let fields = horde.fields();
                let map = self.plan.sim.map();
                let segs = flow_arrows(
                    fields.get(id).flow(),
                    map.grid(),
                    &self.camera,
                    view,
                    ARROW_SPACING,
                );
                painter.add(Shape::mesh(segments_mesh(&segs, 1.5, ARROW_COLOUR)));
            }
        }
        self.draw_goals(&painter, view);
        self.draw_formations(&painter, view);
        {
            puffin::profile_scope!("unit mesh");
            let mesh: Mesh = unit_mesh(&self.dots, &self.camera, view, self.disc.id());
            painter.add(Shape::mesh(mesh));
        }
        // Force fields as rings with a dot at the centre.
        for (_, f) in self.plan.sim.horde().forces().iter() {
            let c = self.camera.world_to_screen(f.position(), view);
            let col = colour(force_colour(f.kind()));
            painter.circle_stroke(
                c,
                self.camera.len_to_screen(f.radius()),
                Stroke::new(2.0, col),
            );
            painter.circle_filled(c, 3.0, col);
        }
        if let Some((a, b)) = self.controls.tools.goal_drag() {
            let rect = Rect::from_two_pos(
                self.camera.world_to_screen(a, view),
                self.camera.world_to_screen(b, view),
            );
            let col = colour(unit_colour(self.controls.tools.group.0, false));
            painter.rect_stroke(rect, 0.0, Stroke::new(1.5, col), egui::StrokeKind::Middle);
        }
        let tool = format!(
            "{} | group {} | {}",
            self.controls.tools.tool.name(),
            self.controls.tools.group.0,
            if self.controls.paused {
                "paused"
            } else {
                "running"
            }
        );
        painter.text(
            view.left_top() + egui::vec2(8.0, 6.0),
            egui::Align2::LEFT_TOP,
            tool,
            egui::FontId::proportional(14.0),
            Color32::WHITE,
        );
        self.stats.draw_ms = started.elapsed().as_secs_f32() * 1e3;
    }

    /// Each formation's slots as small rings in its group's colour, and its anchor as a
    /// white ring with a tick along its heading (docs/behaviour.md, "Formations").
    fn draw_formations(&self, painter: &egui::Painter, view: Rect) {
        let horde = self.plan.sim.horde();
        let formations = horde.formations();
        for (group, f) in formations.iter() {
            let col = colour(unit_colour(group, false));
            let r = self.camera.len_to_screen(f.radius * 0.5).max(1.5);
            for &t in &f.targets {
                painter.circle_stroke(
                    self.camera.world_to_screen(t, view),
                    r,
                    Stroke::new(1.0, col),
                );
            }
            let a = self.camera.world_to_screen(f.anchor, view);
            let size = self.camera.len_to_screen(f.spacing).max(4.0);
            let tip = self
                .camera
                .world_to_screen(f.anchor + f.heading * f.spacing * 1.5, view);
            painter.circle_stroke(a, size * 0.6, Stroke::new(1.5, Color32::WHITE));
            painter.line_segment([a, tip], Stroke::new(1.5, Color32::WHITE));
        }
    }

    /// The box around each group's goal cells, in the group's colour (the selected group's
    /// drawn thicker).
    fn draw_goals(&self, painter: &egui::Painter, view: Rect) {
        let horde = self.plan.sim.horde();
        let groups = horde.groups();
        let grid = *self.plan.sim.map().grid();
        for g in 0..groups.len() {
            let Some(group) = groups.get(g as u16) else {
                continue;
            };
            let cells = group.goal.cells();
            let (lo, hi) = cells.iter().fold((cells[0], cells[0]), |(lo, hi), c| {
                (
                    horde::Cell::new(lo.x.min(c.x), lo.y.min(c.y)),
                    horde::Cell::new(hi.x.max(c.x), hi.y.max(c.y)),
                )
            });
            let half = Vec2::splat(grid.cell_size() * 0.5);
            let a = self
                .camera
                .world_to_screen(grid.cell_centre(lo) - half, view);
            let b = self
                .camera
                .world_to_screen(grid.cell_centre(hi) + half, view);
            let width = if g == usize::from(self.controls.tools.group.0) {
                3.0
            } else {
                1.5
            };
            let stroke = Stroke::new(width, colour(unit_colour(g as u16, false)));
            painter.rect_stroke(
                Rect::from_two_pos(a, b),
                0.0,
                stroke,
                egui::StrokeKind::Outside,
            );
        }
    }
}
