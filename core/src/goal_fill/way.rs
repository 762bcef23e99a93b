//! Where a unit of the army walks to rest next ([`GoalFill::way`]), and the questions
//! steering asks about a position (in the goal, near the frontier, the way round a jam).

use super::*;

impl GoalFill {
    /// Steps from the cell of `pos` to the nearest target (see the module docs).
    #[must_use]
    pub fn to_target(&self, grid: &Grid, pos: Vec2) -> Option<u32> {
        let i = self.index_of(grid, pos)?;
        (self.to_target[i] != u32::MAX).then_some(self.to_target[i])
    }

    /// The rank of the cell of `pos` in the rest order (lower: nearer the goal; the goal's
    /// cells first), or `None` outside the fill's box or on a cell not in the order.
    #[must_use]
    pub fn rank_at(&self, grid: &Grid, pos: Vec2) -> Option<u32> {
        let i = self.index_of(grid, pos)?;
        (self.rank[i] != UNRANKED).then_some(self.rank[i])
    }

    /// Whether `pos` stands on a cell of the goal (open on the fill's costs).
    #[must_use]
    pub fn in_goal(&self, grid: &Grid, pos: Vec2) -> bool {
        self.index_of(grid, pos)
            .is_some_and(|i| self.rank[i] < self.goal_ranks)
    }

    /// Whether a disc of `radius` at `pos` stands on the goal: its centre's cell is a goal
    /// cell, or (a body wider than a cell) it takes a goal cell: one whose centre lies
    /// within half a cell of the disc, as [`Self::update`] counts it.
    #[must_use]
    pub fn covers_goal(&self, grid: &Grid, pos: Vec2, radius: f32) -> bool {
        if self.in_goal(grid, pos) {
            return true;
        }
        let size = grid.cell_size();
        if !(radius > 0.5 * size && radius.is_finite()) {
            return false;
        }
        let Some(i) = self.index_of(grid, pos) else {
            return false;
        };
        self.cells_under(grid, i, pos, radius)
            .any(|j| self.rank[j] < self.goal_ranks)
    }

    /// Whether the cell of `pos` comes at most `rings` ranks after the lowest target of the
    /// free piece it stands in (of all pieces, on a taken cell): the blob's edge where it
    /// fills now (a unit held there may rest; farther out, or outside a goal area that
    /// still has room, it may not). A hole left inside the blob, too small for a body, is a
    /// piece of its own and does not hold the front back.
    #[must_use]
    pub fn near_frontier(&self, grid: &Grid, pos: Vec2, rings: u32) -> bool {
        self.index_of(grid, pos)
            .is_some_and(|i| match self.piece_low.get(self.piece[i] as usize) {
                Some(&low) => self.rank[i] != UNRANKED && self.rank[i] <= low.saturating_add(rings),
                None => self.at_frontier(i, rings),
            })
    }

    /// Whether no free cell nearer the goal (of a lower rank) than the cell of `pos` lies
    /// within `reach` moves of it (8 neighbours through cells in the order, no corner
    /// cutting) in the free piece it stands in (any piece, from a taken cell): nowhere
    /// nearer to go within its reach.
    #[must_use]
    pub fn nothing_nearer(&self, grid: &Grid, pos: Vec2, reach: u32) -> bool {
        let Some(start) = self.index_of(grid, pos) else {
            return false;
        };
        let mine = self.rank[start];
        // A small search: at most (2 reach + 1)^2 cells, so a list, not a map.
        let mut seen = vec![(start, 0u32)];
        let mut head = 0;
        while head < seen.len() {
            let (i, d) = seen[head];
            head += 1;
            let own_piece = self.piece[start] == u32::MAX || self.piece[i] == self.piece[start];
            if i != start && self.rank[i] < mine && self.covered[i] < TAKEN && own_piece {
                return false;
            }
            if d == reach {
                continue;
            }
            for j in self.neighbours(i) {
                if self.rank[j] == UNRANKED
                    || !self.legal_step(i, j)
                    || seen.iter().any(|&(k, _)| k == j)
                {
                    continue;
                }
                seen.push((j, d + 1));
            }
        }
        true
    }

    pub(super) fn at_frontier(&self, i: usize, rings: u32) -> bool {
        let low = self.low_target.unwrap_or(0);
        self.rank[i] != UNRANKED && self.rank[i] <= low.saturating_add(rings)
    }

    pub(super) fn in_area(&self, i: usize) -> bool {
        let rank = self.rank[i];
        rank != UNRANKED && (rank < self.goal_ranks || rank <= self.active())
    }

    /// The centre of the supported cell beside the cell of `pos` (8 neighbours) that comes
    /// first in the order, if one is: where a unit that reached free room walks to close
    /// the gap to the resting blob.
    #[must_use]
    pub fn toward_support(&self, grid: &Grid, pos: Vec2) -> Option<Vec2> {
        let i = self.index_of(grid, pos)?;
        self.neighbours(i)
            .filter(|&j| self.supported[j])
            .min_by_key(|&j| (self.rank[j], j))
            .map(|j| grid.cell_centre(self.cell(j)))
    }

    /// Where a unit resting on box cell `i` walks on to instead of staying: a free cell
    /// beside it (4 neighbours) in a room (see `search`), or a target two ranks
    /// or more before its own cell (the blob closes holes in it, nearest the goal first),
    /// or, once the army has stopped arriving, for a unit settled outside the goal beyond
    /// the blob the army needs ([`FIT_SLACK`]), a free cell on the way to free room
    /// [`MOVE_IN_SLACK`] ranks or more before its own cell (the far rim of a lopsided blob
    /// walks round to the near side), or, while the army is stranded outside a goal that
    /// holds it, a free goal cell farther from its units outside (the blob flows on into
    /// the goal's free part, and its holes pass back to them: `find_flow`). A body bigger
    /// than a cell covers the cells beside its own, so in the flow it looks past them: it
    /// steps toward the free room its rim's front would enter, when the cells up to it are
    /// under it alone and that room is more than a gap between resting bodies.
    pub(super) fn drawn_to(&self, i: usize) -> Option<usize> {
        let move_in = self.settling
            && self.rank[i] >= self.goal_ranks
            && self.rank[i] > self.fit_rank.saturating_add(FIT_SLACK);
        // Steps from the units stranded outside (`find_flow`), where the blob flows.
        let flowing = !self.flow_from_outside.is_empty();
        let from_outside =
            |k: usize| (self.flow_from_outside.get(k).copied()).filter(|&steps| steps != u32::MAX);
        let (w, h) = (i64::from(self.width), i64::from(self.height));
        let (x, y) = ((i as i64) % w, (i as i64) / w);
        // The box cell at `(cx, cy)`, if that lies in the box.
        let at = |cx: i64, cy: i64| {
            ((0..w).contains(&cx) && (0..h).contains(&cy)).then(|| (cy * w + cx) as usize)
        };
        // Past the cells its own rim covers, for a body bigger than a cell ([`Self::rim`]):
        // the cell its rim's front enters on a step along `(dx, dy)`, if every cell up to it
        // is under one body only (its own) and that cell is free; else `None`.
        let past_rim = |(dx, dy): (i64, i64)| {
            let step = |t: i64| at(x + dx * t, y + dy * t);
            let rim = i64::from(self.rim);
            let own = (1..=rim).all(|t| {
                step(t).is_some_and(|k| self.rank[k] != UNRANKED && self.covered[k] < 1.5)
            });
            // (A body bigger than a cell adds 1 to every cell under it.) The front it enters:
            // the cell ahead, free, and the two beside that one, across, free or outside the
            // order (a wall its class keeps clear of).
            let front = |k: usize| {
                let (kx, ky) = ((k as i64) % w, (k as i64) / w);
                let open = |fx: i64, fy: i64| {
                    at(fx, fy).is_none_or(|f| self.rank[f] == UNRANKED || self.covered[f] < TAKEN)
                };
                self.rank[k] != UNRANKED
                    && self.covered[k] < TAKEN
                    && open(kx + dy, ky + dx)
                    && open(kx - dy, ky - dx)
            };
            // ...in a piece of free cells that holds a body of its size, not a gap between
            // resting bodies.
            let holds = |k: usize| {
                let body = ((2 * rim + 1) * (2 * rim + 1)) as u32;
                (self
                    .piece
                    .get(k)
                    .and_then(|&p| self.piece_cells.get(p as usize)))
                .is_some_and(|&cells| cells >= body)
            };
            step(rim + 1).filter(|&k| own && front(k) && holds(k))
        };
        // A free goal cell farther than its own cell from the units stranded outside.
        let flows_to = |k: usize| {
            self.rank[k] < self.goal_ranks
                && matches!((from_outside(i), from_outside(k)), (Some(mine), Some(its)) if its > mine)
        };
        let mut best: Option<(u32, usize)> = None;
        for &(dx, dy) in &NEIGHBOURS[..4] {
            let Some(j) = at(x + dx, y + dy) else {
                continue;
            };
            if self.covered[j] >= TAKEN {
                // A body bigger than a cell covers the cells beside its own: the blob flows
                // on past its rim.
                if let Some(k) = (flowing && self.rim > 0)
                    .then(|| past_rim((dx, dy)))
                    .flatten()
                {
                    if flows_to(k) && best.is_none_or(|(r, _)| self.rank[k] < r) {
                        best = Some((self.rank[k], j));
                    }
                }
                continue;
            }
            // A cell freed since the last search is in no piece yet: only the flow takes it.
            if self.piece[j] == u32::MAX && !flowing {
                continue;
            }
            let room = self.rooms.binary_search(&self.piece[j]).is_ok();
            let flows = flows_to(j);
            let lower = self.to_target[j] == 0 && self.rank[j].saturating_add(2) <= self.rank[i];
            let nearer = move_in
                && self.to_target[j] != u32::MAX
                && (self.piece_low[self.piece[j] as usize]).saturating_add(MOVE_IN_SLACK)
                    <= self.rank[i];
            if (room || lower || nearer || flows) && best.is_none_or(|(r, _)| self.rank[j] < r) {
                best = Some((self.rank[j], j));
            }
        }
        best.map(|(_, j)| j)
    }

    /// Whether a step from box cell `i` to its neighbour `j` is legal: a diagonal step needs
    /// both cells beside it in the order (no corner cutting).
    pub(super) fn legal_step(&self, i: usize, j: usize) -> bool {
        let w = self.width as usize;
        let (xi, yi, xj, yj) = (i % w, i / w, j % w, j / w);
        xi == xj
            || yi == yj
            || (self.rank[yi * w + xj] != UNRANKED && self.rank[yj * w + xi] != UNRANKED)
    }

    /// The box cells around box cell `i` (8 neighbours, inside the box).
    pub(super) fn neighbours(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        let (w, h) = (i64::from(self.width), i64::from(self.height));
        let (x, y) = ((i as i64) % w, (i as i64) / w);
        NEIGHBOURS.into_iter().filter_map(move |(dx, dy)| {
            let (nx, ny) = (x + dx, y + dy);
            ((0..w).contains(&nx) && (0..h).contains(&ny)).then(|| (ny * w + nx) as usize)
        })
    }

    /// Whether `pos` lies in the fill's box.
    #[must_use]
    pub fn in_box(&self, grid: &Grid, pos: Vec2) -> bool {
        self.index_of(grid, pos).is_some()
    }

    /// For a unit at `pos` outside the rest area but in the fill's box: the centre of the
    /// free cell beside it nearest a target through free cells, if one is (`None`: no way
    /// to a target from there within the box). A blocked unit takes this way round instead
    /// of its field's way into the back of the jam.
    #[must_use]
    pub fn way_round(&self, grid: &Grid, pos: Vec2) -> Option<Vec2> {
        let i = self.index_of(grid, pos)?;
        let own = self.to_target[i];
        self.neighbours(i)
            .filter(|&j| self.legal_step(i, j))
            .filter(|&j| self.covered[j] < TAKEN && self.to_target[j] != u32::MAX)
            .filter(|&j| own == u32::MAX || self.to_target[j] < own)
            .min_by_key(|&j| (self.to_target[j], j))
            .map(|j| grid.cell_centre(self.cell(j)))
    }

    /// What a unit at `pos` does (see the module docs); `resting`: it rested as the frame
    /// began. It rests on a target; a resting unit on a supported cell stays (it is one of
    /// those who hold it), and a walking unit that reached a supported cell beside a target
    /// (the blob's edge where it fills now) rests there. In an army that has stood whole on
    /// its goal since it was sent ([`Self::whole_on_goal`]) it rests on any free goal cell.
    #[must_use]
    pub fn way(&self, grid: &Grid, pos: Vec2, resting: bool) -> FillWay {
        // Once the army has stopped arriving, a unit on its way anywhere in a piece with a
        // way to a target takes that way: one walking round the blob to the near side
        // passes outside the rest area, and its field would lead it back into the blob.
        // It does not rest out there: at rest it would be outside the area, and get up
        // again the next frame (for ever, on a target cut off beyond another army's blob).
        let Some(i) = self.index_of(grid, pos) else {
            return FillWay::Outside;
        };
        let in_area = self.in_area(i);
        let walks_round = self.settling && !resting && self.to_target[i] != u32::MAX;
        if !in_area && !walks_round {
            return FillWay::Outside;
        }
        match self.way_from(grid, i, resting) {
            FillWay::Rest { .. } if !in_area => FillWay::Outside,
            way => way,
        }
    }

    /// [`Self::way`] from box cell `i`, in the rest area or walking round to it.
    fn way_from(&self, grid: &Grid, i: usize, resting: bool) -> FillWay {
        let in_goal = self.rank[i] < self.goal_ranks;
        let free = |j: usize| self.covered[j] < TAKEN && self.rank[j] != UNRANKED;
        // A resting unit of an army whole on its goal stays where it is: nobody is coming
        // whom a room or a hole would make way for.
        if resting && self.supported[i] {
            return match (!self.whole).then(|| self.drawn_to(i)).flatten() {
                Some(j) => FillWay::Toward(grid.cell_centre(self.cell(j))),
                None => FillWay::Rest { in_goal },
            };
        }
        // A resting unit whose cell lost its support (the unit that joined it to the blob
        // walked on: the one in a door, drawn into a room) gets up only once free room
        // nearer the goal lies beside it, while the blob still stands on its goal. The part
        // cut off so drains from its front, one unit after the other, instead of the whole
        // of it getting up in one frame and jamming the way in. A blob that lost its goal
        // (the unit on a goal of one cell pushed off it) gets up whole: drained from the
        // goal's cell outward it stood in a ring pressing on the cell, and an army that had
        // to pass it did not get through.
        if resting
            && self.far_supported.is_some()
            && !self
                .neighbours(i)
                .any(|j| free(j) && self.rank[j] < self.rank[i] && self.legal_step(i, j))
        {
            return FillWay::Rest { in_goal };
        }
        if self.to_target[i] == 0 && free(i) {
            return FillWay::Rest { in_goal };
        }
        // The army has stood whole on its goal since it was sent: nobody needs to pass, so a
        // unit on a free goal cell rests where it stands rather than walking deeper (a
        // garrison spawned inside its goal).
        if self.whole && in_goal && free(i) {
            return FillWay::Rest { in_goal };
        }
        // The free neighbour (8-connected, inside the box) with the fewest steps; ties go to
        // the first in a fixed order. A target taken since the last search is no target.
        let (w, h) = (i64::from(self.width), i64::from(self.height));
        let (x, y) = ((i as i64) % w, (i as i64) / w);
        let mut best: Option<(u32, usize)> = None;
        for (dx, dy) in NEIGHBOURS {
            let (nx, ny) = (x + dx, y + dy);
            if !((0..w).contains(&nx) && (0..h).contains(&ny)) {
                continue;
            }
            let j = (ny * w + nx) as usize;
            // A diagonal step needs both cells beside it in the order.
            if dx != 0 && dy != 0 {
                let (a, b) = ((y * w + nx) as usize, (ny * w + x) as usize);
                if self.rank[a] == UNRANKED || self.rank[b] == UNRANKED {
                    continue;
                }
            }
            let steps = self.to_target[j];
            if steps != u32::MAX && free(j) && best.is_none_or(|(s, _)| steps < s) {
                best = Some((steps, j));
            }
        }
        let stale = self.to_target[i] == 0;
        match best {
            Some((0, _)) if self.supported[i] && self.at_frontier(i, 1) => {
                FillWay::Rest { in_goal }
            }
            Some((steps, j)) if steps < self.to_target[i] || (stale && steps == 0) => {
                FillWay::Toward(grid.cell_centre(self.cell(j)))
            }
            // No free cell nearer a target beside it. At the blob's edge where it fills now,
            // touching the blob (or in the goal), it rests.
            _ if self.at_frontier(i, 1)
                && (in_goal
                    || self.supported[i]
                    || self.neighbours(i).any(|j| self.supported[j])) =>
            {
                FillWay::Rest { in_goal }
            }
            // Farther out the steps are stale (cells on its way were taken since the last
            // search): on to the free cell beside it nearest a target, if that comes before
            // its own cell in (steps, rank): a strict order, so two units never send each
            // other back and forth between two cells.
            Some((steps, j)) if (steps, self.rank[j]) < (self.to_target[i], self.rank[i]) => {
                FillWay::Toward(grid.cell_centre(self.cell(j)))
            }
            // Hemmed in by resting units, or nowhere better beside it: in the goal, or on a
            // cell of the blob (supported), it rests; outside the blob it follows its field.
            _ if in_goal || self.supported[i] => FillWay::Rest { in_goal },
            _ => FillWay::Outside,
        }
    }
}
