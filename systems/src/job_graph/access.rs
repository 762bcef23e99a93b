//! What a stage reads and writes, declared up front so the graph can prove that stages which may
//! run at the same time never touch the same data mutably.

use std::any::TypeId;
use std::borrow::Cow;
use std::fmt;
use std::hash::{Hash, Hasher};

/// One thing a stage can read or write: a Rust type (a component, a resource struct) or a name for
/// something that is not its own type (`"cost_fields"`, `"spatial_grid"`).
#[derive(Clone)]
pub struct Resource(Key);

#[derive(Clone)]
enum Key {
    Type { id: TypeId, name: &'static str },
    Named(Cow<'static, str>),
}

impl Resource {
    /// The resource that stands for the Rust type `T`.
    #[must_use]
    pub fn of<T: ?Sized + 'static>() -> Self {
        Self(Key::Type {
            id: TypeId::of::<T>(),
            name: std::any::type_name::<T>(),
        })
    }

    /// The resource called `name`. Two named resources are the same when their names are equal; a
    /// named resource is never the same as a type, even one with that name.
    #[must_use]
    pub fn named(name: impl Into<Cow<'static, str>>) -> Self {
        Self(Key::Named(name.into()))
    }

    /// The name used in messages: the type's [`std::any::type_name`], or the given name.
    #[must_use]
    pub fn name(&self) -> &str {
        match &self.0 {
            Key::Type { name, .. } => name,
            Key::Named(name) => name,
        }
    }
}

impl PartialEq for Resource {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Key::Type { id: a, .. }, Key::Type { id: b, .. }) => a == b,
            (Key::Named(a), Key::Named(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Resource {}

impl Hash for Resource {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match &self.0 {
            Key::Type { id, .. } => {
                0u8.hash(state);
                id.hash(state);
            }
            Key::Named(name) => {
                1u8.hash(state);
                name.hash(state);
            }
        }
    }
}

impl fmt::Debug for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Key::Type { name, .. } => write!(f, "type {name}"),
            Key::Named(name) => write!(f, "named {name:?}"),
        }
    }
}

impl fmt::Display for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The resources a stage reads and writes.
///
/// ```
/// use horde_systems::Access;
/// struct Position;
/// struct Velocity;
///
/// let integrate = Access::new().read::<Velocity>().write::<Position>();
/// let steer = Access::new().read::<Position>().write::<Velocity>().read_named("flow_fields");
/// assert!(!integrate.is_compatible(&steer));
/// assert!(Access::new().read::<Position>().is_compatible(&Access::new().read::<Position>()));
/// ```
///
/// Writing a resource includes reading it. The graph checks these declarations against each
/// other when it is built; in debug builds, what a running stage's code really touches is
/// checked against its own declaration (`declared.rs`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Access {
    reads: Vec<Resource>,
    writes: Vec<Resource>,
}

impl Access {
    /// Touches nothing (the default).
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Also reads the type `T`.
    #[must_use]
    pub fn read<T: ?Sized + 'static>(self) -> Self {
        self.reading(Resource::of::<T>())
    }

    /// Also writes the type `T`.
    #[must_use]
    pub fn write<T: ?Sized + 'static>(self) -> Self {
        self.writing(Resource::of::<T>())
    }

    /// Also reads the resource called `name`.
    #[must_use]
    pub fn read_named(self, name: impl Into<Cow<'static, str>>) -> Self {
        self.reading(Resource::named(name))
    }

    /// Also writes the resource called `name`.
    #[must_use]
    pub fn write_named(self, name: impl Into<Cow<'static, str>>) -> Self {
        self.writing(Resource::named(name))
    }

    /// Also reads `resource`.
    #[must_use]
    pub fn reading(mut self, resource: Resource) -> Self {
        if !self.reads.contains(&resource) && !self.writes.contains(&resource) {
            self.reads.push(resource);
        }
        self
    }

    /// Also writes `resource`.
    #[must_use]
    pub fn writing(mut self, resource: Resource) -> Self {
        self.reads.retain(|read| *read != resource);
        if !self.writes.contains(&resource) {
            self.writes.push(resource);
        }
        self
    }

    /// The resources read but not written, in declaration order.
    pub fn reads(&self) -> impl Iterator<Item = &Resource> {
        self.reads.iter()
    }

    /// The resources written (and maybe read), in declaration order.
    pub fn writes(&self) -> impl Iterator<Item = &Resource> {
        self.writes.iter()
    }

    /// Whether this access lets a stage read `resource` (it reads or writes it), or write it
    /// when `write`.
    #[must_use]
    pub fn allows(&self, resource: &Resource, write: bool) -> bool {
        self.writes.contains(resource) || (!write && self.reads.contains(resource))
    }

    /// [`Self::allows`] for the resource of the type with id `id`.
    #[must_use]
    pub fn allows_type(&self, id: TypeId, write: bool) -> bool {
        let is = |r: &Resource| matches!(r.0, Key::Type { id: other, .. } if other == id);
        self.writes.iter().any(is) || (!write && self.reads.iter().any(is))
    }

    /// Whether two stages with these accesses may run at the same time: neither writes anything the
    /// other reads or writes.
    #[must_use]
    pub fn is_compatible(&self, other: &Access) -> bool {
        self.conflict(other).is_none()
    }

    /// The first resource (in `self`'s declaration order, writes first) that `self` writes and
    /// `other` touches, or that `self` reads and `other` writes.
    #[must_use]
    pub fn conflict<'a>(&'a self, other: &Access) -> Option<&'a Resource> {
        let touched_by_other = |r: &Resource| other.reads.contains(r) || other.writes.contains(r);
        self.writes
            .iter()
            .find(|r| touched_by_other(r))
            .or_else(|| self.reads.iter().find(|r| other.writes.contains(r)))
    }
}
