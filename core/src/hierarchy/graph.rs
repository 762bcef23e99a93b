//! [`PortalGraph`]: portals on sector borders and the exact walking costs between them.

use std::ops::Range;

use crate::cost_field::CostField;
use crate::direction::ORTHO_STEP;
use crate::flow::NO_DIRECTION;
use crate::grid::Cell;
use crate::integration::UNREACHABLE;
use crate::terrain::WALL;

use super::local::LocalSearch;
use super::{HierarchyError, SectorGrid};

/// The nodes of one sector and the costs between them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct SectorNodes {
    /// Node cells, sorted by row then column, no duplicates.
    cells: Vec<Cell>,
    /// `(node, partner)`: the node is one side of a portal whose other side is `partner`, a
    /// node cell of the neighbouring sector one orthogonal step away. Sorted.
    links: Vec<(u16, Cell)>,
    /// `intra[i * k + j]`: cost of walking from node `i` to node `j` without leaving the
    /// sector ([`UNREACHABLE`] when the sector's walls separate them).
    intra: Vec<u32>,
    /// Cost of entering each node cell (what crossing a portal into it costs, per step).
    entry: Vec<u8>,
}

/// A contracted node as [`PortalGraph::complete_sectors`] reads it: its id, its sector's
/// first node and node count, and where its row of the sector's intra matrix starts in
/// `intra_all` (looked up once per graph, not once per request).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ContractedRow {
    node: u32,
    first: u32,
    len: u32,
    at: u32,
}

/// Portals on sector borders and the walking costs between them, for one cost field.
///
/// A *portal* is a maximal run of border cells where the cells on both sides of a border
/// between two edge-adjacent sectors are passable; it has one node on each side, at the middle
/// of the run (a corner cell that is the middle of two runs is one node with two links).
/// Edges: the two nodes of a portal (one orthogonal step, the entered cell's cost times
/// [`ORTHO_STEP`]) and every ordered pair of nodes in one sector (the cost of the cheapest
/// path between them that stays inside the sector, as [`crate::IntegrationField`] counts it).
/// Two graphs are equal when they have the same nodes and costs, whether built from scratch
/// or kept up to date with [`Self::update`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortalGraph {
    sectors: SectorGrid,
    width: u32,
    height: u32,
    /// Cost-field version the graph reflects.
    version: u64,
    per_sector: Vec<SectorNodes>,
    /// Global node ids: sector `s` owns `first[s]..first[s + 1]`, in its cell order.
    first: Vec<u32>,
    node_cell: Vec<Cell>,
    node_sector: Vec<u32>,
    /// Node `n`'s portal partners are `link_to[link_first[n]..link_first[n + 1]]`.
    link_first: Vec<u32>,
    link_to: Vec<u32>,
    /// Cost of stepping into node `n`'s cell from a neighbour ([`ORTHO_STEP`] times its cost).
    node_enter: Vec<u32>,
    /// Every sector's `intra` matrix, one after the other (sector `s`'s starts at
    /// `intra_at[s]`): what [`Self::complete_sectors`] reads for every request, in memory
    /// order rather than one allocation per sector.
    intra_at: Vec<u32>,
    intra_all: Vec<u32>,
    /// What the coarse search walks: the graph with half its nodes contracted away (see
    /// [`Self::search_nodes`]). `search_id[n]` is node `n`'s index in it, or [`CONTRACTED`].
    search_id: Vec<u32>,
    /// The node of every search index, in node order.
    search_node: Vec<u32>,
    /// The nodes the search does not visit, in node order, each with what
    /// [`Self::complete_sectors`] reads for it.
    contracted: Vec<ContractedRow>,
    /// `[c, search id of p, enter cost of p]` for every contracted node `c` (in node order)
    /// and each of its portal partners `p` (all kept).
    crossings: Vec<[u32; 3]>,
    /// Incoming edges of search node `m`: `(p, cost of p -> m)` for `into[into_first[m]..
    /// into_first[m + 1]]`, both search indices, sorted by `p`, in one flat array.
    into_first: Vec<u32>,
    into: Vec<(u32, u32)>,
    /// The largest cost in `into` (0 without edges): sizes the coarse search's bucket ring.
    max_edge: u32,
}

/// `search_id` of a node the coarse search does not visit.
pub(crate) const CONTRACTED: u32 = u32::MAX;

/// The search graph before an [`PortalGraph::update`], and the sectors it redid.
struct PreviousSearch {
    /// Sorted.
    redone: Vec<usize>,
    first: Vec<u32>,
    search_id: Vec<u32>,
    into_first: Vec<u32>,
    into: Vec<(u32, u32)>,
}

impl PortalGraph {
    /// Builds the graph of `cost` cut into sectors of `sector_size` cells.
    pub fn build(cost: &CostField, sector_size: u32) -> Result<Self, HierarchyError> {
        let sectors = SectorGrid::new(cost.width(), cost.height(), sector_size)?;
        let mut graph = Self {
            sectors,
            width: cost.width(),
            height: cost.height(),
            version: cost.version(),
            per_sector: vec![SectorNodes::default(); sectors.len()],
            first: Vec::new(),
            node_cell: Vec::new(),
            node_sector: Vec::new(),
            link_first: Vec::new(),
            link_to: Vec::new(),
            node_enter: Vec::new(),
            intra_at: Vec::new(),
            intra_all: Vec::new(),
            search_id: Vec::new(),
            search_node: Vec::new(),
            contracted: Vec::new(),
            crossings: Vec::new(),
            into_first: Vec::new(),
            into: Vec::new(),
            max_edge: 0,
        };
        let mut search = LocalSearch::default();
        for s in 0..sectors.len() {
            graph.per_sector[s] = sector_nodes(cost, &sectors, s, &mut search);
        }
        graph.index(None);
        Ok(graph)
    }

    /// Brings the graph up to date after the costs of `edited` cells changed (`cost` is the
    /// field after the edits). Redoes only the sectors holding an edited cell and, for an
    /// edited cell on a sector border, the sector across that border (whose portals it
    /// changes). Returns how many sectors were redone. The result equals [`Self::build`].
    pub fn update(&mut self, cost: &CostField, edited: &[Cell]) -> Result<usize, HierarchyError> {
        self.check(cost)?;
        for &cell in edited {
            if cell.x >= self.width || cell.y >= self.height {
                return Err(HierarchyError::CellOutside {
                    cell,
                    width: self.width,
                    height: self.height,
                });
            }
        }
        let mut redo: Vec<usize> = Vec::new();
        for &cell in edited {
            let s = self.sectors.sector_of(cell);
            redo.push(s);
            let b = self.sectors.bounds(s);
            for n in self.sectors.edge_neighbours(s) {
                let nb = self.sectors.bounds(n);
                let across = (nb.y1 == b.y0 && cell.y == b.y0)
                    || (nb.y0 == b.y1 && cell.y + 1 == b.y1)
                    || (nb.x1 == b.x0 && cell.x == b.x0)
                    || (nb.x0 == b.x1 && cell.x + 1 == b.x1);
                if across {
                    redo.push(n);
                }
            }
        }
        redo.sort_unstable();
        redo.dedup();
        let mut search = LocalSearch::default();
        for &s in &redo {
            self.per_sector[s] = sector_nodes(cost, &self.sectors, s, &mut search);
        }
        if !redo.is_empty() {
            self.index(Some(&redo));
        }
        self.version = cost.version();
        Ok(redo.len())
    }

    /// Fails unless `cost` has the graph's size.
    pub(crate) fn check(&self, cost: &CostField) -> Result<(), HierarchyError> {
        if (cost.width(), cost.height()) != (self.width, self.height) {
            return Err(HierarchyError::SizeMismatch {
                graph: (self.width, self.height),
                cost: (cost.width(), cost.height()),
            });
        }
        Ok(())
    }

    /// Whether the graph reflects `cost`'s current version.
    #[must_use]
    pub fn is_current(&self, cost: &CostField) -> bool {
        self.version == cost.version()
    }

    /// The cost-field version the graph reflects.
    #[must_use]
    pub fn version(&self) -> u64 {
        self.version
    }

    /// How the map is cut into sectors.
    #[must_use]
    pub fn sectors(&self) -> &SectorGrid {
        &self.sectors
    }

    /// Number of nodes (two per portal, fewer where a corner cell serves two portals).
    #[must_use]
    pub fn node_count(&self) -> usize {
        self.node_cell.len()
    }

    /// Number of directed edges with a finite cost (portal crossings and intra-sector paths).
    #[must_use]
    pub fn edge_count(&self) -> usize {
        let intra: usize = self
            .per_sector
            .iter()
            .map(|s| {
                s.intra
                    .iter()
                    .enumerate()
                    .filter(|&(i, &d)| d != UNREACHABLE && i % (s.cells.len() + 1) != 0)
                    .count()
            })
            .sum();
        intra + self.link_to.len()
    }

    /// Bytes of memory held by the graph's arrays.
    #[must_use]
    pub fn bytes(&self) -> usize {
        let per: usize = self
            .per_sector
            .iter()
            .map(|s| {
                std::mem::size_of::<SectorNodes>()
                    + s.cells.capacity() * 8
                    + s.links.capacity() * 12
                    + s.intra.capacity() * 4
                    + s.entry.capacity()
            })
            .sum();
        per + (self.first.capacity()
            + self.node_sector.capacity()
            + self.link_first.capacity()
            + self.link_to.capacity()
            + self.node_enter.capacity()
            + self.intra_at.capacity()
            + self.intra_all.capacity()
            + self.search_id.capacity()
            + self.search_node.capacity()
            + self.into_first.capacity())
            * 4
            + self.contracted.capacity() * std::mem::size_of::<ContractedRow>()
            + self.crossings.capacity() * std::mem::size_of::<[u32; 3]>()
            + self.into.capacity() * 8
            + self.node_cell.capacity() * 8
    }

    /// The global ids of sector `sector`'s nodes.
    #[must_use]
    pub fn sector_nodes(&self, sector: usize) -> Range<u32> {
        self.first[sector]..self.first[sector + 1]
    }

    /// The cell of node `node`.
    #[must_use]
    pub fn node_cell(&self, node: u32) -> Cell {
        self.node_cell[node as usize]
    }

    /// The sector of node `node`.
    #[must_use]
    pub fn node_sector(&self, node: u32) -> usize {
        self.node_sector[node as usize] as usize
    }

    /// The nodes across the portals of node `node`.
    #[must_use]
    pub fn portal_partners(&self, node: u32) -> &[u32] {
        let n = node as usize;
        &self.link_to[self.link_first[n] as usize..self.link_first[n + 1] as usize]
    }

    /// Cost of walking from node `from` to node `to` of the same sector inside that sector
    /// ([`UNREACHABLE`] when they are not in one sector or walls separate them).
    #[must_use]
    pub fn intra_cost(&self, from: u32, to: u32) -> u32 {
        let s = self.node_sector(from);
        if self.node_sector(to) != s {
            return UNREACHABLE;
        }
        let k = self.per_sector[s].cells.len();
        let (i, j) = (
            (from - self.first[s]) as usize,
            (to - self.first[s]) as usize,
        );
        self.per_sector[s].intra[i * k + j]
    }

    /// Rebuilds the global node ids and the portal links from the per-sector lists; after
    /// [`Self::update`], `redone` lists the sectors it redid (the others' lists are as
    /// before), so the search graph is redone only around them.
    fn index(&mut self, redone: Option<&[usize]>) {
        let previous = redone.map(|redone| PreviousSearch {
            redone: redone.to_vec(),
            first: std::mem::take(&mut self.first),
            search_id: std::mem::take(&mut self.search_id),
            into_first: std::mem::take(&mut self.into_first),
            into: std::mem::take(&mut self.into),
        });
        self.first.clear();
        self.node_cell.clear();
        self.node_sector.clear();
        let mut total = 0u32;
        for (s, nodes) in self.per_sector.iter().enumerate() {
            self.first.push(total);
            total += nodes.cells.len() as u32;
            self.node_cell.extend_from_slice(&nodes.cells);
            self.node_sector
                .extend(std::iter::repeat_n(s as u32, nodes.cells.len()));
        }
        self.first.push(total);
        self.link_first.clear();
        self.link_to.clear();
        for nodes in &self.per_sector {
            let mut links = nodes.links.iter().peekable();
            for i in 0..nodes.cells.len() as u16 {
                self.link_first.push(self.link_to.len() as u32);
                while let Some(&(_, partner)) = links.next_if(|&&(n, _)| n == i) {
                    let ps = self.sectors.sector_of(partner);
                    let pn = &self.per_sector[ps];
                    // Portals are symmetric, so the partner is always a node of its sector.
                    if let Ok(k) = pn
                        .cells
                        .binary_search_by_key(&(partner.y, partner.x), |c| (c.y, c.x))
                    {
                        self.link_to.push(self.first[ps] + k as u32);
                    }
                }
            }
        }
        self.link_first.push(self.link_to.len() as u32);
        self.node_enter.clear();
        self.intra_at.clear();
        self.intra_all.clear();
        for nodes in &self.per_sector {
            self.node_enter
                .extend(nodes.entry.iter().map(|&e| u32::from(e) * ORTHO_STEP));
            self.intra_at.push(self.intra_all.len() as u32);
            self.intra_all.extend_from_slice(&nodes.intra);
        }
        self.index_search(previous);
    }

    /// Builds the graph the coarse search walks: every node that is the side of some portal
    /// in the lower-numbered of its two sectors (*kept*), about half of them. A path of the
    /// full graph between two kept nodes passes only through *contracted* nodes of one sector
    /// (a crossing always has a kept end, and two steps inside one sector are never cheaper
    /// than one, intra costs being exact), so the edges into a kept node `m` are the cheapest
    /// of, with `c`, `c1`, `c2` contracted:
    /// - `p -> m` inside `m`'s sector, and `p -> c -> m`: crossing into `c` of `m`'s sector,
    ///   then inside it;
    /// - `p -> m` crossing, `p -> c -> m` inside `c`'s sector then crossing, and
    ///   `p -> c1 -> c2 -> m`: crossing into `c1`, inside its sector to `c2` (maybe `c1`
    ///   itself), crossing into `m`.
    ///
    /// So the search settles about half as many nodes, with the same distances; the others'
    /// follow from their neighbours ([`Self::complete_sectors`]).
    ///
    /// Those edges read only `m`'s sector and the eight around it: a contracted node's
    /// partners lie in the sectors north and west of it, and `m`'s contracted partners in
    /// the sector south or east of `m`'s, whose own north and west neighbours are `m`'s
    /// sector or one of its diagonal neighbours. So after an update (`previous`), a kept
    /// node whose sector does not touch a redone one keeps its edges, renumbered; the
    /// others are redone. The result equals a search graph built from scratch (tested).
    fn index_search(&mut self, previous: Option<PreviousSearch>) {
        let n = self.node_cell.len();
        self.search_id.clear();
        self.search_node.clear();
        self.contracted.clear();
        self.crossings.clear();
        for node in 0..n {
            let s = self.node_sector[node];
            let links =
                &self.link_to[self.link_first[node] as usize..self.link_first[node + 1] as usize];
            if links.iter().any(|&p| self.node_sector[p as usize] > s) {
                self.search_id.push(self.search_node.len() as u32);
                self.search_node.push(node as u32);
            } else {
                self.search_id.push(CONTRACTED);
                let first = self.first[s as usize];
                let len = self.first[s as usize + 1] - first;
                self.contracted.push(ContractedRow {
                    node: node as u32,
                    first,
                    len,
                    at: self.intra_at[s as usize] + (node as u32 - first) * len,
                });
                for &p in links {
                    self.crossings
                        .push([node as u32, p, self.node_enter[p as usize]]);
                }
            }
        }
        // Partners by search id: a partner later in node order had none yet above.
        for crossing in &mut self.crossings {
            crossing[1] = self.search_id[crossing[1] as usize];
        }
        let kept = |node: u32| self.search_id(node) != CONTRACTED;
        // `(p, w)` for the paths into `to`, a node of sector `s`, that walk inside `s` from
        // one of its nodes `q`: from `q` itself when it is kept, else from each of `q`'s
        // partners but `skip`, crossing into `q` first; `w` includes `extra`, the cost of a
        // last step after `to`.
        let through_sector =
            |s: usize, to: u32, extra: u32, skip: u32, out: &mut Vec<(u32, u32)>| {
                let first = self.first[s];
                let nodes = &self.per_sector[s];
                let k = nodes.cells.len();
                let j = (to - first) as usize;
                for i in 0..k {
                    let q = first + i as u32;
                    let w = nodes.intra[i * k + j];
                    if w == UNREACHABLE || (q == to && kept(q)) {
                        continue;
                    }
                    let w = w.saturating_add(extra);
                    if kept(q) {
                        out.push((q, w));
                    } else {
                        for &p in self.portal_partners(q) {
                            if p != skip {
                                out.push((p, self.enter_cost(q).saturating_add(w)));
                            }
                        }
                    }
                }
            };
        // Sectors whose kept nodes need new edges (all of them without `previous`), and the
        // new search id of every old one elsewhere.
        let sectors = self.sectors;
        let (near_redone, renumber) = match &previous {
            None => (vec![true; sectors.len()], Vec::new()),
            Some(old) => {
                let mut near = vec![false; sectors.len()];
                let (cols, rows) = (sectors.columns() as i64, sectors.rows() as i64);
                for &r in &old.redone {
                    let (rx, ry) = ((r as i64) % cols, (r as i64) / cols);
                    for y in (ry - 1).max(0)..=(ry + 1).min(rows - 1) {
                        for x in (rx - 1).max(0)..=(rx + 1).min(cols - 1) {
                            near[(y * cols + x) as usize] = true;
                        }
                    }
                }
                let mut renumber = vec![CONTRACTED; old.into_first.len().saturating_sub(1)];
                for s in 0..sectors.len() {
                    if old.redone.binary_search(&s).is_ok() {
                        continue;
                    }
                    // Not redone: the same nodes, in the same order.
                    let (old_first, new_first) = (old.first[s], self.first[s]);
                    let k = self.first[s + 1] - new_first;
                    for i in 0..k {
                        let id = old.search_id[(old_first + i) as usize];
                        if id != CONTRACTED {
                            renumber[id as usize] = self.search_id[(new_first + i) as usize];
                        }
                    }
                }
                (near, renumber)
            }
        };
        let mut into_first = Vec::with_capacity(self.search_node.len() + 1);
        let mut into = Vec::with_capacity(previous.as_ref().map_or(0, |old| old.into.len()));
        let mut candidates: Vec<(u32, u32)> = Vec::new();
        for &m in &self.search_node {
            let s = self.node_sector[m as usize] as usize;
            if let (Some(old), false) = (&previous, near_redone[s]) {
                let node = old.first[s] + (m - self.first[s]);
                let id = old.search_id[node as usize] as usize;
                let edges = &old.into[old.into_first[id] as usize..old.into_first[id + 1] as usize];
                into_first.push(into.len() as u32);
                into.extend(edges.iter().map(|&(p, w)| (renumber[p as usize], w)));
                continue;
            }
            candidates.clear();
            through_sector(
                self.node_sector[m as usize] as usize,
                m,
                0,
                m,
                &mut candidates,
            );
            for &c in self.portal_partners(m) {
                if kept(c) {
                    candidates.push((c, self.enter_cost(m)));
                } else {
                    through_sector(
                        self.node_sector[c as usize] as usize,
                        c,
                        self.enter_cost(m),
                        m,
                        &mut candidates,
                    );
                }
            }
            candidates.sort_unstable();
            candidates.dedup_by_key(|&mut (p, _)| p);
            into_first.push(into.len() as u32);
            into.extend(
                candidates
                    .iter()
                    .map(|&(p, w)| (self.search_id[p as usize], w)),
            );
        }
        into_first.push(into.len() as u32);
        debug_assert!(into.iter().all(|&(p, _)| p != CONTRACTED));
        self.max_edge = into.iter().map(|&(_, w)| w).max().unwrap_or(0);
        self.into_first = into_first;
        self.into = into;
    }

    /// Nodes and edges of the graph the coarse search walks (about half the nodes; see
    /// [`CoarseRoute`](super::CoarseRoute)).
    #[must_use]
    pub fn search_size(&self) -> (usize, usize) {
        (self.search_node.len(), self.into.len())
    }

    /// The nodes the coarse search visits, in node order (see [`Self::index_search`]).
    pub(crate) fn search_nodes(&self) -> &[u32] {
        &self.search_node
    }

    /// Node `node`'s index among [`Self::search_nodes`], or [`CONTRACTED`].
    pub(crate) fn search_id(&self, node: u32) -> u32 {
        self.search_id[node as usize]
    }

    /// Cost of stepping into node `node`'s cell from its portal partner.
    pub(crate) fn enter_cost(&self, node: u32) -> u32 {
        self.node_enter[node as usize]
    }

    /// The distances of the nodes of `sectors` (`dist[i]` is node `first + i`'s, `first`
    /// the sectors' first node; on entry each contracted node's own seed or
    /// [`UNREACHABLE`]), from the exact distances of the kept nodes (`kept`, by search id):
    /// a kept node's is its own, and a contracted node's cheapest way out of its sector is
    /// inside it to some node, then either that node's distance (kept) or a crossing to
    /// one of its partners (contracted; partners are kept). Exact, and each range of
    /// sectors is independent of the others, so they can be done on any threads.
    pub(crate) fn complete_sectors(&self, sectors: Range<usize>, kept: &[u32], dist: &mut [u32]) {
        let first = self.first[sectors.start];
        let nodes = first..self.first[sectors.end];
        debug_assert_eq!(dist.len(), nodes.len());
        for (d, &id) in dist
            .iter_mut()
            .zip(&self.search_id[nodes.start as usize..nodes.end as usize])
        {
            if id != CONTRACTED {
                *d = kept[id as usize];
            }
        }
        // The crossings first: partners are kept, so final.
        let from = self.crossings.partition_point(|c| c[0] < nodes.start);
        let to = self.crossings.partition_point(|c| c[0] < nodes.end);
        for &[c, p, enter] in &self.crossings[from..to] {
            let via = enter.saturating_add(kept[p as usize]);
            let c = (c - first) as usize;
            dist[c] = dist[c].min(via);
        }
        // Then a walk inside the sector to any of its nodes. Every candidate is the cost of a
        // real path, and the cheapest path is among them, whichever order the nodes of one
        // sector are done in.
        let from = self.contracted.partition_point(|r| r.node < nodes.start);
        let to = self.contracted.partition_point(|r| r.node < nodes.end);
        for row in &self.contracted[from..to] {
            let (at, len) = (row.at as usize, row.len as usize);
            let local = (row.first - first) as usize;
            let best = self.intra_all[at..at + len]
                .iter()
                .zip(&dist[local..local + len])
                .map(|(&w, &d)| w.saturating_add(d))
                .min()
                .unwrap_or(UNREACHABLE);
            let c = (row.node - first) as usize;
            dist[c] = dist[c].min(best);
        }
    }

    /// A neighbour of `node` in the full graph that a cheapest path from it to the goals
    /// (distances `dist`, exact) goes through: its first portal partner, else the first node
    /// of its sector, whose edge from `node` is tight. `None` when there is none (`node`
    /// only walks to a goal of its own sector, or cannot reach any).
    pub(crate) fn next_hop(&self, dist: &[u32], node: u32) -> Option<u32> {
        let d = dist[node as usize];
        if d == UNREACHABLE {
            return None;
        }
        let crossing = self
            .portal_partners(node)
            .iter()
            .copied()
            .find(|&p| self.enter_cost(p).saturating_add(dist[p as usize]) == d);
        crossing.or_else(|| {
            self.sector_nodes(self.node_sector(node)).find(|&q| {
                q != node && self.intra_cost(node, q).saturating_add(dist[q as usize]) == d
            })
        })
    }

    /// The largest cost of one edge.
    pub(crate) fn max_edge(&self) -> u32 {
        self.max_edge
    }

    /// The edges into search node `m`: `(p, cost of walking p -> m)`, search indices.
    pub(crate) fn edges_into(&self, m: u32) -> &[(u32, u32)] {
        let m = m as usize;
        &self.into[self.into_first[m] as usize..self.into_first[m + 1] as usize]
    }
}

/// The nodes of sector `s` (middles of the passable runs on its borders) and the exact
/// costs between them inside the sector.
fn sector_nodes(
    cost: &CostField,
    sectors: &SectorGrid,
    s: usize,
    search: &mut LocalSearch,
) -> SectorNodes {
    let b = sectors.bounds(s);
    let open = |x: u32, y: u32| cost.get(Cell::new(x, y)) != WALL;
    let mut pairs: Vec<(Cell, Cell)> = Vec::new();
    // Runs along one border: `at(i)` gives (own cell, partner cell) for position i.
    let mut runs = |len: u32, at: &dyn Fn(u32) -> (Cell, Cell)| {
        let mut start = None;
        for i in 0..=len {
            let passable = i < len && {
                let (a, p) = at(i);
                open(a.x, a.y) && open(p.x, p.y)
            };
            match (passable, start) {
                (true, None) => start = Some(i),
                (false, Some(s0)) => {
                    pairs.push(at((s0 + i - 1) / 2));
                    start = None;
                }
                _ => {}
            }
        }
    };
    if b.y0 > 0 {
        runs(b.width(), &|i| {
            (Cell::new(b.x0 + i, b.y0), Cell::new(b.x0 + i, b.y0 - 1))
        });
    }
    if b.y1 < cost.height() {
        runs(b.width(), &|i| {
            (Cell::new(b.x0 + i, b.y1 - 1), Cell::new(b.x0 + i, b.y1))
        });
    }
    if b.x0 > 0 {
        runs(b.height(), &|i| {
            (Cell::new(b.x0, b.y0 + i), Cell::new(b.x0 - 1, b.y0 + i))
        });
    }
    if b.x1 < cost.width() {
        runs(b.height(), &|i| {
            (Cell::new(b.x1 - 1, b.y0 + i), Cell::new(b.x1, b.y0 + i))
        });
    }
    let key = |c: &Cell| (c.y, c.x);
    let mut cells: Vec<Cell> = pairs.iter().map(|&(a, _)| a).collect();
    cells.sort_unstable_by_key(key);
    cells.dedup();
    let mut links: Vec<(u16, Cell)> = pairs
        .iter()
        .map(|&(a, p)| {
            let i = cells.binary_search_by_key(&key(&a), key).unwrap_or(0);
            (i as u16, p)
        })
        .collect();
    links.sort_unstable_by_key(|&(i, p)| (i, p.y, p.x));
    links.dedup();
    let k = cells.len();
    let mut intra = vec![UNREACHABLE; k * k];
    for (j, &target) in cells.iter().enumerate() {
        search.run(cost, b, &[(b.local(target), 0, NO_DIRECTION)]);
        for (i, &from) in cells.iter().enumerate() {
            intra[i * k + j] = search.values[b.local(from)];
        }
    }
    let entry = cells.iter().map(|&c| cost.get(c)).collect();
    SectorNodes {
        cells,
        links,
        intra,
        entry,
    }
}
