//! Stage `update_hierarchy` (with `Navigation::Hierarchical` only): the portal graphs, the
//! groups' path requests and the sector fields where units stand, kept in
//! [`HierarchyNav`](crate::hierarchy_nav::HierarchyNav).

use horde_core::Job;
use horde_core::{Agent, Position};

use crate::frame::{FrameData, map_batches_of};
use crate::job_graph::StageContext;
use horde_core::Navigation;

/// Stage `update_hierarchy`: nothing with [`Navigation::Flat`]; otherwise updates the
/// portal graphs and path requests and builds the sector fields units stand in.
pub(crate) fn update_hierarchy(data: &FrameData, ctx: &StageContext<'_>) {
    if data.config.navigation != Navigation::Hierarchical {
        return;
    }
    let map = data.map.read();
    let groups = data.groups.read();
    let edits = data.edits.read();
    let mut nav = data.hierarchy.write();
    // One job per batch of the pool's: a route's batch of sectors, an estimate, a field.
    let run = |jobs: usize, job: &Job<'_>| {
        ctx.for_each_batch(jobs, 1, |i, _| job(i));
    };
    let mut errors = nav.update_requests(&map, &groups, &edits, run, ctx.threads());
    // Which sectors units stand in, batch by batch on the pool; then the new sector fields,
    // built on the pool too.
    let asks = {
        let nav = &*nav;
        map_batches_of::<(&Position, &Agent), _, _>(
            &data.world,
            ctx,
            data.config.batch_size,
            |batch| {
                let class = |a: &Agent| data.config.size_class(a.radius, map.grid().cell_size());
                nav.asks_of(&map, batch.map(|(p, a)| (p.0, a, class(a))))
            },
        )
    };
    errors.extend(nav.build_sectors(&map, asks, run));
    for error in errors {
        data.errors.report(ctx, error);
    }
}
