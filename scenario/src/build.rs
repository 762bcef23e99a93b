//! [`build`]: a checked scenario turned into a [`Plan`]: the simulation and its settings, the
//! groups and their units, the timed force fields, terrain edits and goal changes.

use std::ops::Range;
use std::path::Path;

use horde::fields::Regions;
use horde::glam::Vec2;
use horde::prelude::Shape;
use horde::{
    Cell, FormationOrder, GoalSet, Grid, GroupId, Layer, Map, Terrain, UnitId, UnitSpec, UnitTarget,
};
use horde::{Command, SimConfig, Simulation};
use toml::Spanned;

use crate::config;
use crate::ctx::{
    Ctx, cell_in, cells_near, check_number, event_frame, integer_in, number, open, parse_layer,
    parse_terrain, rect_cells,
};
use crate::error::{ScenarioError, ScenarioErrorKind};
use crate::force::build_force;
use crate::plan::{Plan, TimedEvent};
use crate::raw::{
    OneOrMany, RawForce, RawForces, RawGroup, RawGroupRef, RawScenario, RawTerrainEdit,
};
use crate::world::{World, build_map};
use crate::{DEFAULT_DT, DEFAULT_FRAMES, MAX_THREADS, Overrides};

/// Per-unit values: one number, or a list cycled through the units.
fn per_unit(
    ctx: &Ctx<'_>,
    v: Option<&Spanned<OneOrMany>>,
    key: &str,
    default: f32,
) -> Result<Vec<f32>, ScenarioError> {
    let Some(v) = v else {
        return Ok(vec![default]);
    };
    let values: Vec<f64> = match v.get_ref() {
        OneOrMany::One(x) => vec![*x],
        OneOrMany::Many(xs) => xs.clone(),
    };
    if values.is_empty() {
        return Err(ctx.bad(v.span(), key, "expected at least one number"));
    }
    values
        .into_iter()
        .map(|x| check_number(ctx, x, v.span(), key, false))
        .collect()
}

struct GroupInfo {
    name: Option<String>,
    layer: Layer,
    /// The cells its units spawned in.
    cells: Vec<Cell>,
}

/// A terrain edit of the file: its frame, its cells and the new terrain.
type Edit = (u32, Vec<Cell>, Terrain);

/// The groups of the file placed on the map, before the simulation exists: each group's goal
/// and what the scenario needs of it, and every unit checked against the map where it stands
/// (with the index of its group).
struct Placed {
    goals: Vec<GoalSet>,
    units: Vec<(usize, UnitSpec)>,
    groups: Vec<GroupInfo>,
}

/// The run's own settings: the seed, the time step, the frames and the threads.
struct RunSettings {
    seed: u64,
    dt: f64,
    frames: u32,
    threads: usize,
}

/// The checked scenario as a [`Plan`]: settings, map, groups and units, then the timed
/// events (forces, terrain edits, goal changes), then the simulation itself.
pub(crate) fn build(
    ctx: &Ctx<'_>,
    raw: RawScenario,
    base_dir: &Path,
    overrides: &Overrides,
    force_batches: &[Range<usize>],
) -> Result<Plan, ScenarioError> {
    let run = run_settings(ctx, &raw, overrides)?;
    let world = build_map(ctx, &raw.map, base_dir, run.seed)?;
    if raw.group.is_empty() {
        return Err(ctx.error(
            Some(0..0),
            Some("group".into()),
            ScenarioErrorKind::MissingKey,
            "expected at least one [[group]]".into(),
        ));
    }
    let config = sim_config(ctx, &raw, run.seed, run.threads)?;
    // The simulation is made last, from the map itself: a copy of a big map (and the
    // scenario's own regions of it) held beside the simulation's would double what loading
    // costs. Until then the groups and the units are collected, each unit checked against
    // the map where it is placed.
    let placed = place_groups(ctx, &raw, &world)?;
    let require_reachable = raw.require_reachable.as_ref().is_some_and(|r| *r.get_ref());

    let mut events = force_events(ctx, &raw, force_batches, run.dt)?;
    // Terrain edits, in time order, so that goal changes can be checked against the map as it
    // will be when they happen.
    let edits = terrain_edits(ctx, &raw, &world.map, run.dt)?;
    let goal_events = goal_changes(
        ctx,
        &raw,
        &world,
        &placed.groups,
        &edits,
        require_reachable,
        run.dt,
    )?;
    events.extend(edits.into_iter().map(|(frame, cells, terrain)| TimedEvent {
        frame,
        command: Command::SetTerrain { cells, terrain },
    }));
    events.extend(goal_events);
    events.extend(formation_orders(ctx, &raw)?);
    events.extend(follow_orders(ctx, &raw, &placed.groups, &placed.units)?);
    events.sort_by_key(|e| e.frame);

    let grid = *world.map.grid();
    let sim = make_simulation(ctx, &raw, world.map, config, placed.goals, placed.units)?;
    if require_reachable {
        check_reachable(ctx, &raw, &sim, &grid)?;
    }
    let name = raw.name.unwrap_or_else(|| {
        Path::new(ctx.source).file_stem().map_or_else(
            || ctx.source.to_string(),
            |s| s.to_string_lossy().into_owned(),
        )
    });
    let group_names = (placed.groups.iter().enumerate())
        .map(|(i, g)| g.name.clone().unwrap_or_else(|| format!("group {i}")))
        .collect();
    Ok(Plan {
        name,
        sim,
        frames: run.frames,
        dt: run.dt as f32,
        events,
        group_names,
    })
}

/// `seed`, `dt`, `frames` and `threads`, the command line's overrides first.
fn run_settings(
    ctx: &Ctx<'_>,
    raw: &RawScenario,
    overrides: &Overrides,
) -> Result<RunSettings, ScenarioError> {
    let seed = match (overrides.seed, &raw.seed) {
        (Some(s), _) => s,
        (None, Some(s)) => integer_in(ctx, s, "seed", "a seed", 0, i64::MAX)? as u64,
        (None, None) => 0,
    };
    let dt = match &raw.dt {
        Some(d) => {
            let v = *d.get_ref();
            if !(v.is_finite() && (v as f32) > 0.0 && v <= 1.0) {
                return Err(ctx.bad(
                    d.span(),
                    "dt",
                    format!("expected seconds per frame in (0, 1], found {v}"),
                ));
            }
            v
        }
        None => DEFAULT_DT,
    };
    let frames = match (overrides.frames, &raw.frames) {
        (Some(f), _) => f,
        (None, Some(f)) => {
            integer_in(ctx, f, "frames", "a frame count", 1, i64::from(u32::MAX))? as u32
        }
        (None, None) => DEFAULT_FRAMES,
    };
    let threads = match (overrides.threads, &raw.threads) {
        (Some(t), _) => t,
        (None, Some(t)) => {
            integer_in(ctx, t, "threads", "a thread count", 1, MAX_THREADS as i64)? as usize
        }
        (None, None) => crate::plan::default_threads(),
    };
    if !(1..=MAX_THREADS).contains(&threads) {
        return Err(ctx.error(
            None,
            Some("threads".into()),
            ScenarioErrorKind::BadValue,
            format!("expected a thread count in 1..={MAX_THREADS}, found {threads}"),
        ));
    }
    Ok(RunSettings {
        seed,
        dt,
        frames,
        threads,
    })
}

/// The simulation's settings: the defaults with the seed and threads, then `[config]`.
fn sim_config(
    ctx: &Ctx<'_>,
    raw: &RawScenario,
    seed: u64,
    threads: usize,
) -> Result<SimConfig, ScenarioError> {
    let mut config = SimConfig::default().with_seed(seed).with_threads(threads);
    if let Some(table) = &raw.config {
        config = config::apply(ctx, table, config)?;
    }
    config
        .validate()
        .map_err(|e| ctx.error(None, None, ScenarioErrorKind::Setup, e.to_string()))?;
    Ok(config)
}

/// Every `[[group]]`: its goal, and its units on free open cells of its spawn area (no two
/// in one cell; on a level generated with `guarantee_reachable`, only cells connected to
/// the goal).
fn place_groups(ctx: &Ctx<'_>, raw: &RawScenario, world: &World) -> Result<Placed, ScenarioError> {
    let map = &world.map;
    let mut placed = Placed {
        goals: Vec::with_capacity(raw.group.len()),
        units: Vec::new(),
        groups: Vec::with_capacity(raw.group.len()),
    };
    let mut occupied = vec![false; map.grid().len()];
    let mut regions: [Option<Regions>; Layer::COUNT] = Default::default();
    for (gi, group) in raw.group.iter().enumerate() {
        let p = format!("group[{gi}]");
        let span = group.span();
        let g = group.get_ref();
        let layer = match &g.layer {
            Some(l) => parse_layer(ctx, l, &format!("{p}.layer"))?,
            None => Layer::Ground,
        };
        let goal = world.goal(ctx, map, &g.goal_keys(), layer, &p, span.clone())?;
        let id = GroupId(u16::try_from(gi).unwrap_or(u16::MAX));
        let count = integer_in(
            ctx,
            &g.count,
            &format!("{p}.count"),
            "a count",
            1,
            i64::try_from(map.grid().len()).unwrap_or(i64::MAX),
        )? as usize;
        let radii = per_unit(ctx, g.radius.as_ref(), &format!("{p}.radius"), 0.5)?;
        let masses = per_unit(ctx, g.mass.as_ref(), &format!("{p}.mass"), 1.0)?;
        let speed = match &g.speed {
            Some(s) => number(ctx, s, &format!("{p}.speed"), true)?,
            None => 4.0,
        };
        let goal_regions = match world.guaranteed {
            true => regions[layer as usize]
                .get_or_insert_with(|| Regions::of(map.cost_field(layer)))
                .regions_of(goal.cells()),
            false => Vec::new(),
        };
        let layer_regions = regions[layer as usize].as_ref();
        let free = |c: Cell| {
            open(map, layer, c)
                && !occupied[map.grid().index(c)]
                && (!world.guaranteed || layer_regions.is_some_and(|r| r.in_any(c, &goal_regions)))
        };
        let cells = spawn_cells(ctx, world, group, &p, layer, count, free)?;
        for (i, &c) in cells.iter().enumerate() {
            occupied[map.grid().index(c)] = true;
            let spec = UnitSpec::at(map.grid().cell_centre(c))
                .with_radius(radii[i % radii.len()])
                .with_mass(masses[i % masses.len()])
                .with_max_speed(speed)
                .with_layer(layer)
                .with_group(id)
                .with_controllable(g.controllable.unwrap_or(true));
            spec.validate(map)
                .map_err(|e| ctx.bad(span.clone(), &p, e.to_string()))?;
            placed.units.push((gi, spec));
        }
        placed.goals.push(goal);
        placed.groups.push(GroupInfo {
            name: g.name.clone(),
            layer,
            cells,
        });
    }
    Ok(placed)
}

/// The `count` cells group `p`'s units spawn in: spread evenly over the free cells of its
/// `spawn` area, or the free cells nearest its `spawn_near` place.
fn spawn_cells(
    ctx: &Ctx<'_>,
    world: &World,
    group: &Spanned<RawGroup>,
    p: &str,
    layer: Layer,
    count: usize,
    free: impl Fn(Cell) -> bool,
) -> Result<Vec<Cell>, ScenarioError> {
    let map = &world.map;
    let g = group.get_ref();
    match (&g.spawn, &g.spawn_near) {
        (Some(rect), None) => {
            let key = format!("{p}.spawn");
            let open_cells: Vec<Cell> = rect_cells(ctx, map, rect, &key)?
                .into_iter()
                .filter(|&c| free(c))
                .collect();
            if open_cells.len() < count {
                return Err(ctx.bad(
                    rect.span(),
                    &key,
                    format!(
                        "the spawn area has {} free open cells for {} units, fewer than \
                         count = {count}",
                        open_cells.len(),
                        layer.name()
                    ),
                ));
            }
            // Spread the units evenly over the open cells.
            let n = open_cells.len();
            Ok((0..count)
                .filter_map(|k| open_cells.get(k * n / count).copied())
                .collect())
        }
        (None, Some(near)) => {
            let key = format!("{p}.spawn_near");
            let centre = world.place(ctx, near, &key)?;
            let cells = cells_near(map, centre, count, |c| open(map, layer, c), free);
            if cells.len() < count {
                return Err(ctx.bad(
                    near.span(),
                    &key,
                    format!(
                        "the map has only {} free open cells for {} units, fewer than \
                         count = {count}",
                        cells.len(),
                        layer.name()
                    ),
                ));
            }
            Ok(cells)
        }
        _ => Err(ctx.missing(
            group.span(),
            p,
            "give exactly one of `spawn` (an area) and `spawn_near` (a cell or site)",
        )),
    }
}

/// The `[[force]]` tables as events: those serde read with the file, then the batches
/// parsed on their own (a file gives one or the other).
fn force_events(
    ctx: &Ctx<'_>,
    raw: &RawScenario,
    force_batches: &[Range<usize>],
    dt: f64,
) -> Result<Vec<TimedEvent>, ScenarioError> {
    let mut events: Vec<TimedEvent> = Vec::new();
    let mut force_event = |ctx: &Ctx<'_>, fi: usize, f: &Spanned<RawForce>| {
        let p = format!("force[{fi}]");
        let frame = event_frame(
            ctx,
            &p,
            "at",
            f.get_ref().at.as_ref(),
            f.get_ref().frame.as_ref(),
            f.span(),
            dt,
        )?;
        let field = build_force(ctx, f, &p)?;
        events.push(TimedEvent {
            frame,
            command: Command::AddForce(field),
        });
        Ok::<(), ScenarioError>(())
    };
    for (fi, f) in raw.force.iter().enumerate() {
        force_event(ctx, fi, f)?;
    }
    let mut fi = raw.force.len();
    for batch in force_batches {
        let batch_ctx = Ctx {
            base: batch.start,
            holes: &[],
            ..*ctx
        };
        if !raw.force.is_empty() {
            return Err(batch_ctx.missing(
                0..0,
                "force",
                "force fields are given both as an array `force = [...]` and as [[force]] tables: use one",
            ));
        }
        let parsed: RawForces =
            toml::from_str(&ctx.text[batch.clone()]).map_err(|e| batch_ctx.toml_error(&e))?;
        for f in &parsed.force {
            force_event(&batch_ctx, fi, f)?;
            fi += 1;
        }
    }
    Ok(events)
}

/// Every `[[terrain_edit]]`, in file order.
fn terrain_edits(
    ctx: &Ctx<'_>,
    raw: &RawScenario,
    map: &Map,
    dt: f64,
) -> Result<Vec<Edit>, ScenarioError> {
    let mut edits: Vec<Edit> = Vec::new();
    for (ti, t) in raw.terrain_edit.iter().enumerate() {
        let p = format!("terrain_edit[{ti}]");
        let e = t.get_ref();
        let frame = event_frame(
            ctx,
            &p,
            "time",
            e.time.as_ref(),
            e.frame.as_ref(),
            t.span(),
            dt,
        )?;
        let terrain = parse_terrain(ctx, &e.terrain, &format!("{p}.terrain"))?;
        let cells = edit_cells(ctx, map, t, &p)?;
        edits.push((frame, cells, terrain));
    }
    Ok(edits)
}

/// The cells of terrain edit `p`: its `cells`, its `rect`, or the first cell of the
/// terrain `first_of` names.
fn edit_cells(
    ctx: &Ctx<'_>,
    map: &Map,
    t: &Spanned<RawTerrainEdit>,
    p: &str,
) -> Result<Vec<Cell>, ScenarioError> {
    let e = t.get_ref();
    match (&e.cells, &e.rect, &e.first_of) {
        (Some(list), None, None) => {
            let key = format!("{p}.cells");
            if list.get_ref().is_empty() {
                return Err(ctx.bad(list.span(), &key, "expected at least one cell"));
            }
            list.get_ref()
                .iter()
                .map(|c| cell_in(ctx, map, *c.get_ref(), c.span(), &key))
                .collect::<Result<Vec<_>, _>>()
        }
        (None, Some(rect), None) => rect_cells(ctx, map, rect, &format!("{p}.rect")),
        (None, None, Some(kind)) => {
            let key = format!("{p}.first_of");
            let kind_t = parse_terrain(ctx, kind, &key)?;
            let found = (0..map.grid().len())
                .map(|i| map.grid().cell(i))
                .find(|&c| map.terrain_at(c) == kind_t);
            match found {
                Some(c) => Ok(vec![c]),
                None => Err(ctx.bad(
                    kind.span(),
                    &key,
                    format!("the map has no {} cell", kind_t.name()),
                )),
            }
        }
        _ => Err(ctx.missing(
            t.span(),
            p,
            "give exactly one of `cells`, `rect` and `first_of`",
        )),
    }
}

/// Every `[[goal_change]]` as an event, its goal checked against the map as the terrain
/// edits will have made it by then (and, with `require_reachable`, reachable from where the
/// group's units spawned).
fn goal_changes(
    ctx: &Ctx<'_>,
    raw: &RawScenario,
    world: &World,
    groups: &[GroupInfo],
    edits: &[Edit],
    require_reachable: bool,
    dt: f64,
) -> Result<Vec<TimedEvent>, ScenarioError> {
    let map = &world.map;
    let mut goal_events: Vec<TimedEvent> = Vec::new();
    for (ci, c) in raw.goal_change.iter().enumerate() {
        let p = format!("goal_change[{ci}]");
        let change = c.get_ref();
        let frame = event_frame(
            ctx,
            &p,
            "time",
            change.time.as_ref(),
            change.frame.as_ref(),
            c.span(),
            dt,
        )?;
        let gkey = format!("{p}.group");
        let index = group_index(change.group.get_ref(), groups)
            .map_err(|message| ctx.bad(change.group.span(), &gkey, message))?;
        // The map as it will be at `frame`: edits of earlier or the same frame applied (events
        // of a frame run in file order, terrain edits after forces and before goal changes).
        let mut later_map = map.clone();
        let mut edited: Vec<&Edit> = edits.iter().filter(|e| e.0 <= frame).collect();
        edited.sort_by_key(|e| e.0);
        for (_, cells, terrain) in edited {
            for &cell in cells {
                later_map.set_terrain(cell, *terrain);
            }
        }
        let layer = groups[index].layer;
        let goal = world.goal(ctx, &later_map, &change.goal_keys(), layer, &p, c.span())?;
        // Checked from where the units spawned: they cannot leave their region unless an
        // edit opens it, and the run reports the exact count when the change happens.
        if require_reachable {
            let later = Regions::of(later_map.cost_field(layer));
            let goal_regions = later.regions_of(goal.cells());
            let cut = (groups[index].cells.iter())
                .filter(|&&cell| !later.in_any(cell, &goal_regions))
                .count();
            if cut > 0 {
                return Err(ctx.bad(
                    c.span(),
                    &p,
                    format!(
                        "{cut} of {} units of the group spawned where they cannot reach this \
                         goal, and require_reachable = true",
                        groups[index].cells.len()
                    ),
                ));
            }
        }
        goal_events.push(TimedEvent {
            frame,
            command: Command::SetGoal {
                group: GroupId(index as u16),
                goal,
            },
        });
    }
    Ok(goal_events)
}

/// The group a reference names (its index, or its name), or the message for one that names
/// none.
fn group_index(r: &RawGroupRef, groups: &[GroupInfo]) -> Result<usize, String> {
    match r {
        RawGroupRef::Index(i) => usize::try_from(*i).ok().filter(|&i| i < groups.len()),
        RawGroupRef::Name(n) => groups.iter().position(|g| g.name.as_deref() == Some(n)),
    }
    .ok_or_else(|| {
        format!(
            "no such group: expected an index from 0 to {} or the name of a group",
            groups.len() - 1
        )
    })
}

/// Every group's `formation` as an order at frame 0 (docs/scenario.md, "`formation`").
fn formation_orders(ctx: &Ctx<'_>, raw: &RawScenario) -> Result<Vec<TimedEvent>, ScenarioError> {
    let mut out = Vec::new();
    for (gi, g) in raw.group.iter().enumerate() {
        let Some(f) = g.get_ref().formation.as_ref() else {
            continue;
        };
        let key = format!("group[{gi}].formation");
        let bad = |message: String| ctx.bad(f.span(), &key, message);
        let r = f.get_ref();
        let shape = match (r.shape.as_str(), r.width, &r.slots) {
            ("line", Some(w), None) => Shape::Line {
                width: u32::try_from(w)
                    .ok()
                    .filter(|&w| w >= 1)
                    .ok_or_else(|| bad(format!("width {w}: expected an integer >= 1")))?,
            },
            ("line", None, _) => return Err(bad("a line needs a width (units a rank)".into())),
            ("box", None, None) => Shape::Box,
            ("wedge", None, None) => Shape::Wedge,
            ("custom", None, Some(slots)) => Shape::Custom(
                slots
                    .iter()
                    .map(|&[x, y]| Vec2::new(x as f32, y as f32))
                    .collect(),
            ),
            ("custom", _, None) => {
                return Err(bad("a custom formation needs slots = [[x, y], ...]".into()));
            }
            ("line" | "box" | "wedge" | "custom", _, _) => {
                return Err(bad(format!(
                    "shape {:?} takes {}",
                    r.shape,
                    match r.shape.as_str() {
                        "line" => "width, not slots",
                        "custom" => "slots, not width",
                        _ => "neither width nor slots",
                    }
                )));
            }
            (other, _, _) => {
                return Err(bad(format!(
                    "shape {other:?}: expected \"line\", \"box\", \"wedge\" or \"custom\""
                )));
            }
        };
        let order = FormationOrder {
            shape,
            spacing: r.spacing.map(|s| s as f32),
            facing: r.facing.map(|[x, y]| Vec2::new(x as f32, y as f32)),
        };
        order.validate().map_err(|e| bad(e.to_string()))?;
        out.push(TimedEvent {
            frame: 0,
            command: Command::SetFormation {
                group: GroupId(gi as u16),
                order: Some(order),
            },
        });
    }
    Ok(out)
}

/// Every group's `follow` as an order at frame 0 (docs/scenario.md, "`follow`"). Units get
/// their ids in spawn order (group by group, in file order), from 0.
fn follow_orders(
    ctx: &Ctx<'_>,
    raw: &RawScenario,
    groups: &[GroupInfo],
    units: &[(usize, UnitSpec)],
) -> Result<Vec<TimedEvent>, ScenarioError> {
    let mut out = Vec::new();
    for (gi, g) in raw.group.iter().enumerate() {
        let Some(f) = g.get_ref().follow.as_ref() else {
            continue;
        };
        let key = format!("group[{gi}].follow");
        let bad = |message: String| ctx.bad(f.span(), &key, message);
        let r = f.get_ref();
        let leader = group_index(&r.group, groups).map_err(bad)?;
        if leader == gi {
            return Err(bad("a group cannot follow one of its own units".into()));
        }
        let k = r.unit.unwrap_or(0);
        let id = usize::try_from(k)
            .ok()
            .and_then(|k| {
                (units.iter().enumerate())
                    .filter(|(_, (g, _))| *g == leader)
                    .nth(k)
                    .map(|(id, _)| id)
            })
            .ok_or_else(|| {
                bad(format!(
                    "unit {k}: group {leader} has {} units",
                    units.iter().filter(|(g, _)| *g == leader).count()
                ))
            })?;
        let target = UnitTarget {
            unit: UnitId(id as u32),
            distance: r.distance as f32,
        };
        target.validate().map_err(|e| bad(e.to_string()))?;
        out.push(TimedEvent {
            frame: 0,
            command: Command::SetTarget {
                group: GroupId(gi as u16),
                target: Some(target),
            },
        });
    }
    Ok(out)
}

/// The simulation on `map`, with the groups and units placed before.
fn make_simulation(
    ctx: &Ctx<'_>,
    raw: &RawScenario,
    map: Map,
    config: SimConfig,
    goals: Vec<GoalSet>,
    units: Vec<(usize, UnitSpec)>,
) -> Result<Simulation, ScenarioError> {
    let mut sim = Simulation::new(map, config)
        .map_err(|e| ctx.error(None, None, ScenarioErrorKind::Setup, e.to_string()))?;
    for (gi, goal) in goals.into_iter().enumerate() {
        sim.add_group(goal)
            .map_err(|e| ctx.bad(raw.group[gi].span(), &format!("group[{gi}]"), e.to_string()))?;
    }
    for (gi, spec) in units {
        sim.spawn(spec)
            .map_err(|e| ctx.bad(raw.group[gi].span(), &format!("group[{gi}]"), e.to_string()))?;
    }
    Ok(sim)
}

/// `require_reachable = true`: the first group with a unit cut off from its goal is an
/// error naming the group and the first such unit's cell.
fn check_reachable(
    ctx: &Ctx<'_>,
    raw: &RawScenario,
    sim: &Simulation,
    grid: &Grid,
) -> Result<(), ScenarioError> {
    for reach in sim.reachability() {
        let Some(&first) = reach.unreachable.first() else {
            continue;
        };
        let gi = usize::from(reach.group.0);
        let units = sim.units();
        let at = units
            .iter()
            .find(|u| u.id == first)
            .map_or(Vec2::ZERO, |u| u.position);
        let cell = grid.clamped_cell_at(at);
        return Err(ctx.bad(
            raw.group[gi].span(),
            &format!("group[{gi}]"),
            format!(
                "{} of {} units spawn where they cannot reach the goal (the first at cell \
                 [{}, {}]), and require_reachable = true",
                reach.unreachable.len(),
                reach.unreachable.len() + reach.reachable,
                cell.x,
                cell.y
            ),
        ));
    }
    Ok(())
}
