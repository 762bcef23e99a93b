//! What a stage could not do in a frame. The frame still runs to its end (the stage leaves
//! its part as it was: a field unrepaired, the neighbour snapshot empty, a hierarchical
//! request unanswered), and [`crate::Simulation::step`] then returns the first of them as
//! [`crate::SimError::Stage`]. None of them is expected on a valid map; each names the stage's
//! own error.

use horde_core::{FieldError, HierarchyError, SpatialGridError};

/// A stage's failure in one frame (see the module docs).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StageError {
    /// `rebuild_fields`: a flow field could not be rebuilt or repaired.
    #[error("field update failed: {0}")]
    Field(FieldError),
    /// `bucket_units`: the large units' buckets could not be built.
    #[error("bucketing large units failed: {0}")]
    LargeBuckets(SpatialGridError),
    /// `bucket_units`: the units could not be sorted into buckets.
    #[error("bucketing failed: {0}")]
    Buckets(SpatialGridError),
    /// `update_hierarchy`: a layer's portal graph could not be built or updated.
    #[error("portal graph update failed: {0}")]
    PortalGraph(HierarchyError),
    /// `update_hierarchy`: a group's path request could not be opened or moved to its goal.
    #[error("path request failed: {0}")]
    PathRequest(HierarchyError),
    /// `update_hierarchy`: sector fields saved in a snapshot could not be restored.
    #[error("restoring sector fields failed: {0}")]
    RestoreSectors(HierarchyError),
    /// `update_hierarchy`: a sector field could not be built or marked in use.
    #[error("sector field failed: {0}")]
    SectorField(HierarchyError),
}
