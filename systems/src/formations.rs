//! [`Formations`]: each group's formation order, its slots and who holds them, and its
//! anchor (docs/behaviour.md, "Formations"). The stage `lead_formations` moves the anchors;
//! `steer_units` steers each member to its slot.

use glam::Vec2;
use horde_core::{FormationOrder, Layer, Shape};

/// One group's formation.
#[derive(Clone, Debug, PartialEq)]
pub struct Formation {
    /// The order as given.
    pub order: FormationOrder,
    /// World distance between neighbouring slots (the order's, or from the members' radii
    /// when they took their slots).
    pub spacing: f32,
    /// Units a rank while the formation walks narrower than ordered to pass a gap (0: as
    /// ordered). Lines and boxes narrow; wedges and custom shapes only squeeze.
    pub width: u32,
    /// The slots in the formation's frame (`x` right, `y` ahead; see
    /// [`horde_core::to_world`]).
    pub offsets: Vec<Vec2>,
    /// Which unit holds which slot: `(unit id, slot)`, sorted by id.
    pub slots: Vec<(u32, u32)>,
    /// The ids of the members the slots were handed to, sorted: when the group's members
    /// change (a unit spawned into it, one despawned) they are handed out again.
    pub(crate) members: Vec<u32>,
    /// The point the slots are laid about; it walks the group's field to its goal.
    pub anchor: Vec2,
    /// The way the formation faces (a unit vector).
    pub heading: Vec2,
    /// How fast the anchor moved in the last frame (world units a second).
    pub speed: f32,
    /// The slowest member's top speed: the formation's pace.
    pub pace: f32,
    /// The largest member's radius; the anchor walks where that body fits.
    pub radius: f32,
    /// The largest member's layer, whose field the anchor follows.
    pub layer: Layer,
    /// The anchor stands on the goal, facing as ordered: members at their slots rest.
    pub arrived: bool,
    /// The group's goal changes when the anchor last set off (a new goal sets it off again).
    pub(crate) goal_changes: u64,
    /// Where each slot lies this frame (world), squeezed in from behind walls
    /// ([`horde_core::squeeze`]); empty until the slots are handed out.
    pub targets: Vec<Vec2>,
    /// What [`Self::targets`] were last laid out for on the goal point; while it stays the
    /// same they are kept, not laid out again (a formation at rest where walls squeeze and
    /// spread its slots would lay them out the same every frame). Not saved: laying them
    /// out again gives the same places.
    pub(crate) laid_for: Option<LaidFor>,
}

/// The inputs the slots' places on the goal point depend on ([`Formation::laid_for`]):
/// the anchor, the heading, the width, the number of slots, the spacing, the largest radius
/// and the version of the cost field the slots were squeezed on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct LaidFor {
    pub(crate) anchor: Vec2,
    pub(crate) heading: Vec2,
    pub(crate) width: u32,
    pub(crate) slots: usize,
    pub(crate) spacing: f32,
    pub(crate) radius: f32,
    pub(crate) cost_version: u64,
}

impl Formation {
    /// A formation for `order`, not yet laid out: the next frame hands the slots out to the
    /// group's members where they stand.
    #[must_use]
    pub(crate) fn new(order: FormationOrder) -> Self {
        Self {
            order,
            spacing: 0.0,
            width: 0,
            offsets: Vec::new(),
            slots: Vec::new(),
            members: Vec::new(),
            anchor: Vec2::ZERO,
            heading: Vec2::X,
            speed: 0.0,
            pace: 0.0,
            radius: 0.0,
            layer: Layer::Ground,
            arrived: false,
            goal_changes: u64::MAX,
            targets: Vec::new(),
            laid_for: None,
        }
    }

    /// The ranks' width as ordered, for `units` units (`None` for the shapes that do not
    /// narrow).
    #[must_use]
    pub fn ordered_width(&self, units: usize) -> Option<u32> {
        let units = u32::try_from(units).unwrap_or(u32::MAX).max(1);
        match self.order.shape {
            Shape::Line { width } => Some(width.min(units)),
            Shape::Box => Some((f64::from(units)).sqrt().ceil() as u32),
            Shape::Wedge | Shape::Custom(_) => None,
        }
    }

    /// The shape the slots have now: the order's, or a line of [`Self::width`] while it
    /// walks narrower.
    #[must_use]
    pub fn shape_now(&self) -> Shape {
        match self.order.shape {
            Shape::Line { .. } | Shape::Box if self.width > 0 => Shape::Line { width: self.width },
            ref shape => shape.clone(),
        }
    }

    /// Whether the anchor stands on its goal point (its slots were laid out there this
    /// frame: [`Self::laid_for`] is set exactly then).
    #[must_use]
    pub(crate) fn on_goal_point(&self) -> bool {
        self.laid_for.is_some()
    }

    /// Whether the slots have been handed out.
    #[must_use]
    pub fn is_laid_out(&self) -> bool {
        !self.members.is_empty()
    }

    /// Where unit `id`'s slot lies this frame, if it holds one.
    #[must_use]
    pub fn target_of(&self, id: u32) -> Option<Vec2> {
        horde_core::slot_of(&self.slots, id).and_then(|s| self.targets.get(s as usize).copied())
    }
}

/// Every group's formation, indexed by group (`None`: the group moves as a blob).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Formations {
    pub(crate) list: Vec<Option<Formation>>,
}

impl Formations {
    /// Group `group`'s formation, if it has one.
    #[must_use]
    pub fn get(&self, group: u16) -> Option<&Formation> {
        self.list.get(usize::from(group)).and_then(Option::as_ref)
    }

    /// Whether no group has a formation.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.list.iter().all(Option::is_none)
    }

    /// Gives group `group` a formation (or, with `None`, takes it away).
    pub(crate) fn set(&mut self, group: u16, order: Option<FormationOrder>) {
        let i = usize::from(group);
        if self.list.len() <= i {
            self.list.resize(i + 1, None);
        }
        self.list[i] = order.map(Formation::new);
        while self.list.last().is_some_and(Option::is_none) {
            self.list.pop();
        }
    }

    /// The groups with formations, with their formations.
    pub fn iter(&self) -> impl Iterator<Item = (u16, &Formation)> {
        (self.list.iter().enumerate()).filter_map(|(g, f)| f.as_ref().map(|f| (g as u16, f)))
    }
}
