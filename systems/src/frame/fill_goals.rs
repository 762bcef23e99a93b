//! Stage `fill_goals` (docs/behaviour.md, "Coming to rest"): for every army (the groups sharing a
//! goal, [`crate::Groups::army`]), where its units come to rest: the rest order around its goal,
//! which cells its resting units hold, and the targets to fill next (the rules:
//! `horde_core::GoalFill`). An army has a fill per layer and size class of its units, made on
//! that class's costs of the layer (docs/behaviour.md, "Unit sizes"), so a big unit is sent only
//! to cells its body can centre on; every fill counts the army's resting units of all sizes.

use horde_core::{Cell, CostField, GoalFill, GoalSet, Job, Layer, MAX_SIZE_CLASSES, Map};

use crate::frame::{FrameData, Neighbours};
use crate::groups::Groups;
use crate::job_graph::StageContext;

/// Fills per army: `(layer, size class)` slots.
pub(crate) const SLOTS: usize = Layer::COUNT * MAX_SIZE_CLASSES as usize;

pub(crate) fn slot(layer: Layer, class: u8) -> usize {
    usize::from(class) * Layer::COUNT + layer as usize
}

/// One army's fills.
#[derive(Clone, Debug)]
struct ArmyFills {
    /// The goal change of the army's first group they were built for (`u64::MAX`: none).
    built_for: u64,
    /// Per `(layer, class)` slot ([`slot`]): the fill, while the army has units there.
    fills: [Option<GoalFill>; SLOTS],
}

impl Default for ArmyFills {
    fn default() -> Self {
        Self {
            built_for: u64::MAX,
            fills: std::array::from_fn(|_| None),
        }
    }
}

/// Per army (by the index of its first group), layer and size class, the rest order of its
/// goal (`None`: no unit of the army there, or no goal cell open for the class).
#[derive(Clone, Debug, Default)]
pub struct GoalFills {
    per_army: Vec<ArmyFills>,
}

/// What a snapshot saves of one fill.
#[derive(Clone, Debug)]
pub(crate) struct SavedFill {
    /// The army (its first group).
    pub army: u16,
    pub layer: Layer,
    /// The size class.
    pub class: u8,
    /// How far its box reaches ([`GoalFill::reach`]).
    pub reach: u32,
    /// The taken cells of its last search ([`GoalFill::searched`]).
    pub taken: Vec<u32>,
    /// [`GoalFill::whole_on_goal`].
    pub whole: bool,
}

/// The costs a fill of `class` on `layer` is made on, once the map has them.
fn fill_cost(map: &Map, layer: Layer, class: u8) -> Option<&CostField> {
    map.prepared_class_cost_field(layer, class)
}

/// The bounding box of some cells (a goal's, for steering and the crowd fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CellBox {
    min: Cell,
    max: Cell,
}

impl CellBox {
    /// The smallest box holding `cells` (`None`: no cell).
    pub(crate) fn of(cells: impl IntoIterator<Item = Cell>) -> Option<Self> {
        cells.into_iter().fold(None, |b: Option<Self>, c| {
            Some(b.map_or(Self { min: c, max: c }, |b| Self {
                min: Cell::new(b.min.x.min(c.x), b.min.y.min(c.y)),
                max: Cell::new(b.max.x.max(c.x), b.max.y.max(c.y)),
            }))
        })
    }

    /// Chebyshev distance in cells from `cell` to the box (0 inside it): for a goal's box, a
    /// lower bound of the path distance to any goal cell (a step, straight or diagonal,
    /// costs at least one cell).
    pub(crate) fn chebyshev(&self, cell: Cell) -> u32 {
        let dx = (self.min.x.saturating_sub(cell.x)).max(cell.x.saturating_sub(self.max.x));
        let dy = (self.min.y.saturating_sub(cell.y)).max(cell.y.saturating_sub(self.max.y));
        dx.max(dy)
    }

    /// Its first and last corner.
    pub(crate) fn corners(&self) -> (Cell, Cell) {
        (self.min, self.max)
    }
}

/// Whether army `army` (its first group) has units of `(layer, class)`: some group of it
/// has a field there.
pub(crate) fn army_has(groups: &Groups, army: u16, layer: Layer, class: u8) -> bool {
    (0..groups.len() as u16)
        .filter(|&g| groups.army(g) == army)
        .filter_map(|g| groups.get(g))
        .any(|g| g.field(layer, class).is_some())
}

impl GoalFills {
    /// What a snapshot saves: every fill still built for its army's goal and the map's
    /// terrain, with its searched taken cells (a fill not current is rebuilt by the next
    /// frame, in the saved run as in the restored one).
    pub(crate) fn saved(&self, groups: &Groups, map: &Map) -> Vec<SavedFill> {
        let mut out = Vec::new();
        for (a, army) in self.per_army.iter().enumerate() {
            let Some(group) = groups
                .get(a as u16)
                .filter(|_| groups.army(a as u16) == a as u16)
            else {
                continue;
            };
            if army.built_for != group.goal_changes {
                continue;
            }
            for class in 0..MAX_SIZE_CLASSES {
                for layer in Layer::ALL {
                    let Some(fill) = &army.fills[slot(layer, class)] else {
                        continue;
                    };
                    let current = fill_cost(map, layer, class).is_some_and(|c| fill.is_current(c));
                    if let (true, Some(taken)) = (current, fill.searched()) {
                        out.push(SavedFill {
                            army: a as u16,
                            layer,
                            class,
                            reach: fill.reach(),
                            taken: taken.to_vec(),
                            whole: fill.whole_on_goal(),
                        });
                    }
                }
            }
        }
        out
    }

    /// Sets a fill as a snapshot saved it: built for `goal` over `map` with the saved reach,
    /// searched with its taken cells ([`GoalFill::search_with`]), whole on its goal or not.
    pub(crate) fn restore(
        &mut self,
        SavedFill {
            army,
            layer,
            class,
            reach,
            taken,
            whole,
        }: SavedFill,
        goal: &GoalSet,
        map: &Map,
    ) -> Result<(), String> {
        let cost = fill_cost(map, layer, class)
            .ok_or_else(|| format!("a fill is saved for size class {class}, which has no units"))?;
        let mut fill = GoalFill::with_reach(goal, cost, reach)
            .ok_or("a fill is saved for a goal with no cell open to its units")?;
        fill.search_with(taken)?;
        fill.keep_whole_from(whole);
        let a = usize::from(army);
        if self.per_army.len() <= a {
            self.per_army.resize_with(a + 1, ArmyFills::default);
        }
        let entry = &mut self.per_army[a];
        // Restored groups start with no goal changes.
        entry.built_for = 0;
        entry.fills[slot(layer, class)] = Some(fill);
        Ok(())
    }

    /// The fill army `army` (its first group's index) has for its units of size class
    /// `class` on `layer`.
    #[must_use]
    pub fn get(&self, army: u16, layer: Layer, class: u8) -> Option<&GoalFill> {
        self.per_army
            .get(usize::from(army))
            .and_then(|a| a.fills.get(slot(layer, class)))
            .and_then(Option::as_ref)
    }
}

/// Resting units from which an army's count is split into bands of the fill's rows, one per
/// thread (fewer are counted on one thread: a band reads every unit of the army, and the
/// jobs cost more than they save).
const BANDS_FROM: usize = 4096;

/// Brings every army's fills up to date with its goal, the terrain and the resting units:
/// the armies on the pool, and a big army's count in bands of rows (the result does not
/// depend on the threads: each cell adds its units' shares in storage order).
pub(crate) fn fill_goals(data: &FrameData, ctx: &StageContext<'_>) {
    let groups = data.groups.read();
    let map = data.map.read();
    let neighbours = data.neighbours.read();
    let mut fills = data.goal_fills.write();
    fills.per_army.resize_with(groups.len(), ArmyFills::default);
    ctx.for_each_chunk_mut(&mut fills.per_army, 1, |a, _, army| {
        fill_army(a as u16, &mut army[0], &groups, &map, &neighbours, ctx);
    });
}

/// [`fill_goals`] for army `a` (the index of its first group; any other group's slot is
/// emptied).
fn fill_army(
    a: u16,
    army: &mut ArmyFills,
    groups: &Groups,
    map: &Map,
    neighbours: &Neighbours,
    ctx: &StageContext<'_>,
) {
    let grid = map.grid();
    let Some(group) = groups.get(a).filter(|_| groups.army(a) == a) else {
        // Not the first group of an army: its army's fills are kept elsewhere.
        *army = ArmyFills::default();
        return;
    };
    if army.built_for != group.goal_changes {
        army.fills = std::array::from_fn(|_| None);
        army.built_for = group.goal_changes;
    }
    let resting = || {
        (neighbours.resting.iter())
            .filter(move |&&(army, ..)| army == a)
            .map(|&(_, pos, radius)| (pos, radius))
    };
    let bands = if resting().nth(BANDS_FROM).is_some() {
        ctx.threads()
    } else {
        1
    };
    let run = |jobs: usize, job: &Job<'_>| ctx.for_each_batch(jobs, 1, |i, _| job(i));
    // The army's units still coming, wherever they stand.
    let coming_total = neighbours.coming.get(usize::from(a)).copied().unwrap_or(0);
    // Only units in a fill's box count: the buckets meeting it hold them all.
    let in_box = |fill: &GoalFill| {
        let (lo, hi) = fill.world_box(grid);
        let large = neighbours.large.as_ref().map_or(&[][..], |l| &l.units[..]);
        let near = neighbours.grid.spans_in(lo, hi);
        near.flat_map(|span| &neighbours.units[span]).chain(large)
    };
    let coming = |fill: &GoalFill| {
        (in_box(fill))
            .filter(move |u| u.army == a && !u.at_rest)
            .map(|u| u.pos)
    };
    // Other armies' units at rest there: the cells they fill are no free room. (With one
    // army there are none, and its fills do not walk the box for them.)
    let alone = (0..groups.len() as u16).all(|g| groups.army(g) == a);
    let foreign = |fill: &GoalFill| {
        ((!alone).then(|| in_box(fill)).into_iter().flatten())
            .filter(move |u| u.army != a && u.at_rest)
            .map(|u| (u.pos, u.radius))
    };
    for class in 0..MAX_SIZE_CLASSES {
        for layer in Layer::ALL {
            let fill = &mut army.fills[slot(layer, class)];
            let cost = fill_cost(map, layer, class).filter(|_| army_has(groups, a, layer, class));
            let Some(cost) = cost else {
                *fill = None;
                continue;
            };
            if fill.as_ref().is_none_or(|f| !f.is_current(cost)) {
                let before = fill.as_ref().map(|f| (f.reach(), f.whole_on_goal()));
                let reach = before.map_or(horde_core::FIRST_REACH, |(reach, _)| reach);
                *fill = GoalFill::with_reach(&group.goal, cost, reach);
                if let (Some(f), Some((_, whole))) = (fill.as_mut(), before) {
                    f.keep_whole_from(whole);
                }
            }
            if let Some(f) = fill.as_mut() {
                f.update_in(
                    grid,
                    resting,
                    foreign(f),
                    coming(f),
                    coming_total,
                    bands,
                    run,
                );
                if f.wants_more_reach() {
                    let grown = GoalFill::with_reach(&group.goal, cost, f.grown_reach());
                    if let Some(mut grown) = grown {
                        grown.keep_whole_from(f.whole_on_goal());
                        let (others, units) = (foreign(&grown), coming(&grown));
                        grown.update_in(grid, resting, others, units, coming_total, bands, run);
                        *f = grown;
                    }
                }
            }
        }
    }
}
