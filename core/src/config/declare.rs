//! The `settings!` macro: the config structs, their defaults and [`super::SETTINGS`] from one
//! list (`settings.rs`).
//!
//! The list is [`SimConfig`](super::SimConfig)'s own settings, then one block per group of
//! settings it holds (`pub struct SteeringConfig in steering { .. }`, a field `steering` of
//! `SimConfig`). Each setting is
//!
//! ```text
//! /// What it does.
//! field: Type = default, range, [places];
//! ```
//!
//! A setting is named outside Rust (the C field, error messages) by its field, or by the name
//! after `as` when the field alone would not say enough (`passes as contact_passes: u32`).

macro_rules! settings {
    (
        $(#[doc = $top_doc:literal])*
        pub struct $Top:ident {
            $(
                $(#[doc = $doc:literal])*
                $field:ident: $ty:ty = $default:expr, $range:expr, [$($place:ident),*];
            )*
        }
        $(
            $(#[doc = $group_doc:literal])*
            pub struct $Group:ident in $seg:ident {
                $(
                    $(#[doc = $gdoc:literal])*
                    $gfield:ident $(as $flat:ident)?: $gty:ty = $gdefault:expr, $grange:expr, [$($gplace:ident),*];
                )*
            }
        )*
    ) => {
        use $crate::config::declare::first;

        $(#[doc = $top_doc])*
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $Top {
            $( $(#[doc = $doc])* pub $field: $ty, )*
            $( $(#[doc = $group_doc])* pub $seg: $Group, )*
        }

        impl Default for $Top {
            fn default() -> Self {
                Self {
                    $( $field: $default, )*
                    $( $seg: $Group::default(), )*
                }
            }
        }

        $(
            $(#[doc = $group_doc])*
            #[derive(Clone, Copy, Debug, PartialEq)]
            pub struct $Group {
                $( $(#[doc = $gdoc])* pub $gfield: $gty, )*
            }

            impl Default for $Group {
                fn default() -> Self {
                    Self { $( $gfield: $gdefault, )* }
                }
            }
        )*

        /// Every setting, in the order of the C struct, of validation and of the docs' tables.
        pub static SETTINGS: &[$crate::config::Setting] = &[
            $(
                $crate::config::Setting {
                    name: stringify!($field),
                    key: stringify!($field),
                    doc: concat!($($doc, "\n"),*),
                    rust_type: stringify!($ty),
                    kind: <$ty as $crate::config::SettingType>::KIND,
                    range: $range,
                    places: &[$($crate::config::Place::$place),*],
                    get: |c| $crate::config::SettingType::to_value(c.$field),
                    set: |c, v| c.$field = $crate::config::SettingType::from_value(v),
                },
            )*
            $($(
                $crate::config::Setting {
                    name: first!($(stringify!($flat),)? stringify!($gfield)),
                    key: concat!(stringify!($seg), ".", stringify!($gfield)),
                    doc: concat!($($gdoc, "\n"),*),
                    rust_type: stringify!($gty),
                    kind: <$gty as $crate::config::SettingType>::KIND,
                    range: $grange,
                    places: &[$($crate::config::Place::$gplace),*],
                    get: |c| $crate::config::SettingType::to_value(c.$seg.$gfield),
                    set: |c, v| c.$seg.$gfield = $crate::config::SettingType::from_value(v),
                },
            )*)*
        ];
    };
}

/// The first of its arguments.
macro_rules! first {
    ($first:expr $(, $rest:expr)*) => {
        $first
    };
}

pub(super) use {first, settings};
