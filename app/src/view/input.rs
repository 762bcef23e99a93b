//! The viewer's tools: what a press, drag and release of the left mouse button do, as
//! [`Action`]s, and [`apply`], which carries them out through the public [`Simulation`] API
//! (and nothing else).

use horde::fields::WALL;
use horde::glam::Vec2;
use horde::{Cell, ForceField, ForceKind, GoalSet, GroupId, Layer, Map, Terrain, UnitSpec};
use horde::{Command, Simulation};

use horde_scenario::open_cells_near;

/// What the left mouse button does on the map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// Click: the selected group's goal is the cell; drag: every open cell of the box.
    Goal,
    /// Click: a blast (one-frame push away from the point).
    Explosion,
    /// Click: a black hole pulling units in for a few seconds.
    Attractor,
    /// Click: a whirlpool turning units for a few seconds.
    Vortex,
    /// Press and drag: brick walls on the cells under the mouse.
    Wall,
    /// Press and drag: the cells under the mouse become open ground.
    Erase,
}

impl Tool {
    /// Every tool, in the panel's order.
    pub const ALL: [Tool; 6] = [
        Tool::Goal,
        Tool::Explosion,
        Tool::Attractor,
        Tool::Vortex,
        Tool::Wall,
        Tool::Erase,
    ];

    /// Name shown in the panel.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Tool::Goal => "goal",
            Tool::Explosion => "explosion",
            Tool::Attractor => "attractor",
            Tool::Vortex => "vortex",
            Tool::Wall => "paint wall",
            Tool::Erase => "erase wall",
        }
    }

    /// The key that picks the tool (shown in the panel).
    #[must_use]
    pub const fn key(self) -> char {
        match self {
            Tool::Goal => 'G',
            Tool::Explosion => 'E',
            Tool::Attractor => 'A',
            Tool::Vortex => 'V',
            Tool::Wall => 'W',
            Tool::Erase => 'X',
        }
    }

    /// The force field this tool drops at `position` on a map of `cell_size`-wide cells
    /// (sizes and strengths of the built-in demo's events), or `None` for the other tools.
    #[must_use]
    pub fn force_at(self, position: Vec2, cell_size: f32) -> Option<ForceField> {
        let (kind, radius, strength, seconds) = match self {
            Tool::Explosion => (ForceKind::Explosion, 14.0, 2500.0, 0.0),
            Tool::Attractor => (ForceKind::Attractor, 18.0, 60.0, 3.0),
            Tool::Vortex => (ForceKind::Vortex { clockwise: true }, 16.0, 50.0, 4.0),
            Tool::Goal | Tool::Wall | Tool::Erase => return None,
        };
        ForceField::new(position, kind, radius * cell_size, strength * cell_size)
            .and_then(|f| f.with_duration(seconds))
            .ok()
    }
}

/// A change the user asks of the simulation: one of its commands, or a crowd to spawn.
#[derive(Clone, Debug)]
pub enum Action {
    /// A simulation command (a goal, a force field, a terrain stroke).
    Command(Command),
    /// Units of a group appear on the open cells nearest a point: one
    /// [`Command::Spawn`] per unit, placed when the action is carried out.
    Spawn {
        /// Their group.
        group: GroupId,
        /// How many.
        count: u32,
        /// Where (world).
        centre: Vec2,
    },
}

/// The cells a straight stroke from `a` to `b` (world) passes over, in order, without
/// repeats or gaps (so that a fast mouse paints a closed wall); cells off the map are
/// left out.
#[must_use]
pub fn cells_on_stroke(map: &Map, a: Vec2, b: Vec2) -> Vec<Cell> {
    let grid = map.grid();
    if !(a.is_finite() && b.is_finite()) {
        return Vec::new();
    }
    // Steps of a quarter cell cannot skip a cell (also diagonally: corners are crossed
    // into one of the two side cells, which keeps the wall closed for 8-way movement).
    let steps = ((b - a).length() / (grid.cell_size() * 0.25))
        .ceil()
        .clamp(1.0, 1e6) as u32;
    let mut out: Vec<Cell> = Vec::new();
    let mut last: Option<Cell> = None;
    for i in 0..=steps {
        let p = a + (b - a) * (i as f32 / steps as f32);
        if let Some(c) = grid.cell_at(p) {
            if let Some(prev) = last
                && prev.x != c.x
                && prev.y != c.y
            {
                // A diagonal step: also fill the side cell so that the wall stays closed.
                let side = Cell::new(c.x, prev.y);
                if !out.contains(&side) {
                    out.push(side);
                }
            }
            if last != Some(c) && !out.contains(&c) {
                out.push(c);
            }
            last = Some(c);
        } else {
            last = None;
        }
    }
    out
}

/// The goal of a press at `from` and release at `to` (world): the one cell when both fall in
/// the same cell, else every cell of the box between them that is not a ground wall.
///
/// # Errors
/// A message when the press is off the map or the box has no open cell.
pub fn goal_between(map: &Map, from: Vec2, to: Vec2) -> Result<GoalSet, String> {
    let grid = map.grid();
    let Some(a) = grid.cell_at(from) else {
        return Err("the goal must be on the map".into());
    };
    let b = grid.clamped_cell_at(to);
    if a == b {
        return Ok(GoalSet::single(a));
    }
    let cost = map.cost_field(Layer::Ground);
    let cells: Vec<Cell> = (a.y.min(b.y)..=a.y.max(b.y))
        .flat_map(|y| (a.x.min(b.x)..=a.x.max(b.x)).map(move |x| Cell::new(x, y)))
        .filter(|&c| cost.get(c) != WALL)
        .collect();
    GoalSet::new(cells).map_err(|_| "the goal box holds no open cell".to_string())
}

/// The left button's state: the tool, the selected group and the press in progress.
#[derive(Clone, Debug)]
pub struct ToolState {
    /// The active tool.
    pub tool: Tool,
    /// The group goals and spawns apply to.
    pub group: GroupId,
    press: Option<Vec2>,
    last: Option<Vec2>,
}

impl Default for ToolState {
    fn default() -> Self {
        Self {
            tool: Tool::Goal,
            group: GroupId(0),
            press: None,
            last: None,
        }
    }
}

impl ToolState {
    /// The button went down at `world`: forces drop here, walls start painting here.
    pub fn press(&mut self, map: &Map, world: Vec2) -> Vec<Action> {
        self.press = Some(world);
        self.last = Some(world);
        match self.tool {
            Tool::Goal => Vec::new(),
            Tool::Explosion | Tool::Attractor | Tool::Vortex => self
                .tool
                .force_at(world, map.grid().cell_size())
                .filter(|_| map.grid().contains_point(world))
                .map(|f| Action::Command(Command::AddForce(f)))
                .into_iter()
                .collect(),
            Tool::Wall | Tool::Erase => self.paint(map, world, world),
        }
    }

    /// The mouse moved to `world` with the button down: walls paint along the way.
    pub fn drag(&mut self, map: &Map, world: Vec2) -> Vec<Action> {
        let Some(last) = self.last else {
            return Vec::new();
        };
        self.last = Some(world);
        match self.tool {
            Tool::Wall | Tool::Erase => self.paint(map, last, world),
            _ => Vec::new(),
        }
    }

    /// The button came up at `world`: the goal tool sets the goal (a cell or a box).
    ///
    /// # Errors
    /// A message for a goal off the map or a box with no open cell.
    pub fn release(&mut self, map: &Map, world: Vec2) -> Result<Vec<Action>, String> {
        self.last = None;
        let Some(from) = self.press.take() else {
            return Ok(Vec::new());
        };
        match self.tool {
            Tool::Goal => Ok(vec![Action::Command(Command::SetGoal {
                group: self.group,
                goal: goal_between(map, from, world)?,
            })]),
            _ => Ok(Vec::new()),
        }
    }

    /// Whether the button is down (a press this state saw and no release yet).
    #[must_use]
    pub fn is_pressed(&self) -> bool {
        self.press.is_some()
    }

    /// The box a goal drag in progress covers (press point, current point), for drawing.
    #[must_use]
    pub fn goal_drag(&self) -> Option<(Vec2, Vec2)> {
        match (self.tool, self.press, self.last) {
            (Tool::Goal, Some(a), Some(b)) => Some((a, b)),
            _ => None,
        }
    }

    fn paint(&self, map: &Map, a: Vec2, b: Vec2) -> Vec<Action> {
        let terrain = if self.tool == Tool::Wall {
            Terrain::BrickWall
        } else {
            Terrain::Empty
        };
        let cells: Vec<Cell> = cells_on_stroke(map, a, b)
            .into_iter()
            .filter(|&c| map.terrain_at(c) != terrain)
            .collect();
        if cells.is_empty() {
            Vec::new()
        } else {
            vec![Action::Command(Command::SetTerrain { cells, terrain })]
        }
    }
}

/// Carries out `action` on `sim` through its public API; returns a line for the status bar.
///
/// # Errors
/// The simulation's refusal as a message (a goal in a wall, a group that does not exist, ...).
pub fn apply(sim: &mut Simulation, action: &Action) -> Result<String, String> {
    match action {
        Action::Command(command) => {
            let line = describe(command);
            sim.apply(command.clone()).map_err(|e| e.to_string())?;
            Ok(line)
        }
        Action::Spawn {
            group,
            count,
            centre,
        } => {
            if usize::from(group.0) >= sim.horde().groups().len() {
                return Err(format!("group {} does not exist", group.0));
            }
            let cells = open_cells_near(sim, *centre, *count as usize, |_| true);
            let mut spawned = 0u32;
            for c in cells {
                let pos = sim.map().grid().cell_centre(c);
                let spec = UnitSpec::at(pos)
                    .with_radius(0.4 * sim.map().grid().cell_size())
                    .with_group(*group);
                sim.apply(Command::Spawn(spec)).map_err(|e| e.to_string())?;
                spawned += 1;
            }
            Ok(format!(
                "spawned {spawned} unit(s) of group {} near {:.1}",
                group.0, centre
            ))
        }
    }
}

/// The status-bar line for `command`.
fn describe(command: &Command) -> String {
    match command {
        Command::SetGoal { group, goal } => format!(
            "group {} heads for {} cell(s) around {}",
            group.0,
            goal.cells().len(),
            goal.cells()[0]
        ),
        Command::AddForce(field) => format!("{:?} at {:.1}", field.kind(), field.position()),
        Command::SetTerrain { cells, terrain } => {
            format!("{} cell(s) -> {}", cells.len(), terrain.name())
        }
        Command::SetFormation { group, order } => match order {
            Some(order) => format!("group {} moves in formation: {:?}", group.0, order.shape),
            None => format!("group {} moves as a blob", group.0),
        },
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::camera::Camera;
    use eframe::egui::{Rect, pos2};
    use horde::Grid;
    use horde::SimConfig;
    use horde::fields::CostTable;

    /// A 40x30 map with a brick wall across row 10 (x 5..=20) and one group heading for
    /// (35, 25).
    fn sim() -> Simulation {
        let grid = Grid::new(40, 30).expect("grid");
        let mut terrain = vec![Terrain::Empty; grid.len()];
        for x in 5..=20 {
            terrain[10 * 40 + x] = Terrain::BrickWall;
        }
        let map = Map::from_terrain(grid, terrain, CostTable::default()).expect("map");
        let mut sim = Simulation::new(map, SimConfig::default().with_threads(1)).expect("sim");
        sim.add_group(GoalSet::single(Cell::new(35, 25)))
            .expect("group");
        sim
    }

    fn view() -> Rect {
        Rect::from_min_max(pos2(250.0, 0.0), pos2(1050.0, 600.0))
    }

    /// The screen point at the centre of `cell` for a camera fitted to the map.
    fn screen_of(sim: &Simulation, cam: &Camera, cell: Cell) -> eframe::egui::Pos2 {
        cam.world_to_screen(sim.map().grid().cell_centre(cell), view())
    }

    fn camera(sim: &Simulation) -> Camera {
        Camera::fit(Vec2::ZERO, sim.map().grid().world_size(), view())
    }

    fn run(sim: &mut Simulation, actions: &[Action]) {
        for a in actions {
            apply(sim, a).expect("action applies");
        }
    }

    #[test]
    fn picking_a_screen_point_finds_its_cell() {
        let sim = sim();
        let cam = camera(&sim);
        for cell in [Cell::new(0, 0), Cell::new(39, 29), Cell::new(17, 4)] {
            let p = screen_of(&sim, &cam, cell);
            let world = cam.screen_to_world(p, view());
            assert_eq!(sim.map().grid().cell_at(world), Some(cell));
        }
        // Left of the map: no cell.
        let off = cam.screen_to_world(pos2(view().min.x + 1.0, view().center().y), view());
        assert_eq!(sim.map().grid().cell_at(off), None);
    }

    #[test]
    fn a_click_sets_the_selected_groups_goal_to_the_cell_under_the_mouse() {
        let mut sim = sim();
        let cam = camera(&sim);
        let mut tools = ToolState::default();
        let target = Cell::new(3, 22);
        let world = cam.screen_to_world(screen_of(&sim, &cam, target), view());
        let map = sim.map().clone();
        assert!(tools.press(&map, world).is_empty());
        let actions = tools.release(&map, world).expect("goal");
        run(&mut sim, &actions);
        let groups = sim.horde().groups();
        assert_eq!(groups.get(0).expect("group 0").goal.cells(), &[target]);
    }

    #[test]
    fn a_drag_sets_an_area_goal_without_walls() {
        let mut sim = sim();
        let cam = camera(&sim);
        let mut tools = ToolState::default();
        let map = sim.map().clone();
        let a = cam.screen_to_world(screen_of(&sim, &cam, Cell::new(18, 9)), view());
        let b = cam.screen_to_world(screen_of(&sim, &cam, Cell::new(22, 11)), view());
        tools.press(&map, a);
        tools.drag(&map, b);
        assert_eq!(tools.goal_drag(), Some((a, b)));
        let actions = tools.release(&map, b).expect("goal");
        assert_eq!(tools.goal_drag(), None);
        run(&mut sim, &actions);
        let groups = sim.horde().groups();
        let cells = groups.get(0).expect("group 0").goal.cells().to_vec();
        // 5x3 box minus the wall cells (18..=20, 10).
        assert_eq!(cells.len(), 15 - 3);
        assert!(cells.contains(&Cell::new(18, 9)) && cells.contains(&Cell::new(22, 11)));
        assert!(!cells.contains(&Cell::new(19, 10)));
        assert!(cells.contains(&Cell::new(21, 10)));
    }

    #[test]
    fn goals_in_walls_or_off_the_map_are_refused_not_panics() {
        let mut sim = sim();
        let map = sim.map().clone();
        let wall = map.grid().cell_centre(Cell::new(7, 10));
        let mut tools = ToolState::default();
        tools.press(&map, wall);
        let actions = tools.release(&map, wall).expect("a one-cell goal");
        let err = apply(&mut sim, &actions[0]).expect_err("a wall cell");
        assert!(err.contains("wall"), "{err}");
        tools.press(&map, Vec2::new(-5.0, 3.0));
        let err = tools
            .release(&map, Vec2::new(-5.0, 3.0))
            .expect_err("off map");
        assert!(err.contains("on the map"), "{err}");
        // A box entirely inside the wall row has no open cell.
        let (a, b) = (Cell::new(6, 10), Cell::new(9, 10));
        let err = goal_between(&map, map.grid().cell_centre(a), map.grid().cell_centre(b))
            .expect_err("no open cell");
        assert!(err.contains("no open cell"), "{err}");
        // The group's goal is unchanged.
        let groups = sim.horde().groups();
        assert_eq!(groups.get(0).expect("g").goal.cells(), &[Cell::new(35, 25)]);
    }

    #[test]
    fn force_tools_drop_their_field_where_clicked() {
        let mut sim = sim();
        let cam = camera(&sim);
        let map = sim.map().clone();
        let p = cam.screen_to_world(screen_of(&sim, &cam, Cell::new(12, 20)), view());
        let mut tools = ToolState::default();
        for (tool, kind) in [
            (Tool::Explosion, ForceKind::Explosion),
            (Tool::Attractor, ForceKind::Attractor),
            (Tool::Vortex, ForceKind::Vortex { clockwise: true }),
        ] {
            tools.tool = tool;
            let actions = tools.press(&map, p);
            assert_eq!(actions.len(), 1, "{tool:?}");
            assert!(tools.release(&map, p).expect("no error").is_empty());
            run(&mut sim, &actions);
            let forces = sim.horde().forces();
            let (_, f) = forces.iter().last().expect("a force");
            assert_eq!(f.kind(), kind);
            assert_eq!(map.grid().cell_at(f.position()), Some(Cell::new(12, 20)));
        }
        assert_eq!(sim.horde().forces().len(), 3);
        // Off the map nothing is dropped.
        tools.tool = Tool::Explosion;
        assert!(tools.press(&map, Vec2::new(-10.0, -10.0)).is_empty());
    }

    #[test]
    fn painting_walls_along_a_stroke_closes_the_line_and_erasing_opens_it() {
        let mut sim = sim();
        let cam = camera(&sim);
        let mut tools = ToolState {
            tool: Tool::Wall,
            ..ToolState::default()
        };
        let map = sim.map().clone();
        let grid = *sim.map().grid();
        let at =
            |c: Cell| cam.screen_to_world(cam.world_to_screen(grid.cell_centre(c), view()), view());
        let (a, b, c) = (
            at(Cell::new(2, 2)),
            at(Cell::new(12, 2)),
            at(Cell::new(16, 6)),
        );
        let mut actions = tools.press(&map, a);
        actions.extend(tools.drag(&map, b));
        actions.extend(tools.drag(&map, c));
        tools.release(&map, c).expect("no error");
        run(&mut sim, &actions);
        for x in 2..=12 {
            assert_eq!(
                sim.map().terrain_at(Cell::new(x, 2)),
                Terrain::BrickWall,
                "{x}"
            );
        }
        // The diagonal part is 4-connected: every step shares a side with the last.
        let stroke = cells_on_stroke(&map, b, c);
        for w in stroke.windows(2) {
            let d = w[0].x.abs_diff(w[1].x) + w[0].y.abs_diff(w[1].y);
            assert_eq!(d, 1, "{} -> {}", w[0], w[1]);
        }
        assert_eq!(sim.map().terrain_at(Cell::new(16, 6)), Terrain::BrickWall);
        assert_eq!(sim.map().terrain_at(Cell::new(2, 3)), Terrain::Empty);
        // Erasing over the existing wall row opens it; cells already open are not touched.
        tools.tool = Tool::Erase;
        let map = sim.map().clone();
        let actions = tools.press(&map, at(Cell::new(7, 10)));
        tools.release(&map, at(Cell::new(7, 10))).expect("no error");
        match actions.as_slice() {
            [Action::Command(Command::SetTerrain { cells, terrain })] => {
                assert_eq!(cells, &[Cell::new(7, 10)]);
                assert_eq!(*terrain, Terrain::Empty);
            }
            other => panic!("unexpected {other:?}"),
        }
        run(&mut sim, &actions);
        assert_eq!(sim.map().terrain_at(Cell::new(7, 10)), Terrain::Empty);
        let map = sim.map().clone();
        assert!(tools.press(&map, at(Cell::new(30, 28))).is_empty());
    }

    #[test]
    fn spawn_adds_units_of_the_group_near_the_point() {
        let mut sim = sim();
        let centre = sim.map().grid().cell_centre(Cell::new(30, 5));
        let msg = apply(
            &mut sim,
            &Action::Spawn {
                group: GroupId(0),
                count: 50,
                centre,
            },
        )
        .expect("spawn");
        assert!(msg.contains("50"), "{msg}");
        let units = sim.units();
        assert_eq!(units.len(), 50);
        assert!(units.iter().all(|u| u.group == GroupId(0)));
        assert!(units.iter().all(|u| u.position.distance(centre) < 6.0));
        let err = apply(
            &mut sim,
            &Action::Spawn {
                group: GroupId(4),
                count: 5,
                centre,
            },
        )
        .expect_err("no group 4");
        assert!(err.contains("group 4"), "{err}");
        assert_eq!(sim.unit_count(), 50);
    }
}
