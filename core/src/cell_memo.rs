//! [`CellMemo`]: what a unit last read about its cell from the per-cell arrays (a flow or
//! sector field's byte, the clearance), so the stages read them again only when the unit
//! enters another cell or the array changes.

/// What a unit read about the cell it stands in, as of the last time: its flow field's byte
/// (or, with hierarchical navigation, its sector field's byte and path distance) and the
/// clearance, each with the content stamp of what it was read from
/// ([`crate::NavField::stamp`], [`crate::HierarchicalField::sector_stamp`],
/// [`crate::Clearance::stamp`]). A unit stays in one cell for many frames, so the stages
/// read those per-cell arrays again only when the unit enters another cell or the array
/// changes. Each group follows its own field, so where groups mix
/// each flow read missed the cache (8 groups made the 100k frame 1.7x slower); on a big map
/// every unit is far from the last, and every read missed.
///
/// A cache, not state: horde's stages keep one per unit in a component of their own (not
/// part of any public component), never save it in snapshots nor hash it, and a default memo
/// (a restored unit's) matches nothing, so results never depend on it. A caller of
/// [`crate::HierarchicalField::guide`] passes its own, or `&mut CellMemo::default()`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CellMemo {
    /// Row-major index of the cell.
    cell: u32,
    /// Stamp of the flow field or sector field the byte came from; 0 = nothing remembered.
    /// No two fields share a stamp, so the slot holds whichever the unit read last.
    flow_stamp: u32,
    /// Stamp of the clearance the value came from; 0 = nothing remembered.
    clearance_stamp: u32,
    /// The sector field's path distance, with `flow` when a sector field gave it.
    distance: u32,
    flow: u8,
    clearance: u8,
}

impl CellMemo {
    /// The flow byte of cell index `cell` (row-major) in the field with stamp `stamp`:
    /// the remembered one, or `read()` (then remembered).
    #[inline]
    pub fn flow(&mut self, cell: u32, stamp: u32, read: impl FnOnce() -> u8) -> u8 {
        let memo = self.at(cell);
        remember(&mut memo.flow_stamp, &mut memo.flow, stamp, read)
    }

    /// The direction byte and path distance of cell index `cell` in the sector field with
    /// stamp `stamp`: the remembered ones, or `read()` (then remembered).
    #[inline]
    pub fn sector(&mut self, cell: u32, stamp: u32, read: impl FnOnce() -> (u8, u32)) -> (u8, u32) {
        let memo = self.at(cell);
        if stamp == 0 || memo.flow_stamp != stamp {
            (memo.flow, memo.distance) = read();
            memo.flow_stamp = stamp;
        }
        (memo.flow, memo.distance)
    }

    /// The clearance of cell index `cell` in the clearance with stamp `stamp`: the
    /// remembered one, or `read()` (then remembered).
    #[inline]
    pub fn clearance(&mut self, cell: u32, stamp: u32, read: impl FnOnce() -> u8) -> u8 {
        let memo = self.at(cell);
        remember(&mut memo.clearance_stamp, &mut memo.clearance, stamp, read)
    }

    /// The remembered clearance of cell index `cell` in the clearance with stamp `stamp`,
    /// if there is one (for a stage that only reads the memo).
    #[must_use]
    #[inline]
    pub fn clearance_if_known(&self, cell: u32, stamp: u32) -> Option<u8> {
        (stamp != 0 && self.cell == cell && self.clearance_stamp == stamp).then_some(self.clearance)
    }

    /// The memo for cell index `cell`: this one, or a blank one if it was for another cell.
    fn at(&mut self, cell: u32) -> &mut Self {
        if self.cell != cell {
            *self = Self {
                cell,
                ..Self::default()
            };
        }
        self
    }
}

/// The value in `slot` if it was read from data with stamp `stamp` (per `remembered`),
/// else `read()`, kept in `slot` with the stamp. Stamp 0 matches nothing.
#[inline]
fn remember(remembered: &mut u32, slot: &mut u8, stamp: u32, read: impl FnOnce() -> u8) -> u8 {
    if stamp == 0 || *remembered != stamp {
        *slot = read();
        *remembered = stamp;
    }
    *slot
}
