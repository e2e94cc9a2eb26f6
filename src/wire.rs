//! The fieldless enums whose numbers cross the language boundary (C constants, JNI ints) and
//! whose names Python shows. One table, `src/tables/wire_enums.in`, defines them for the core
//! and for `build.rs`, which writes the C constants: no binding keeps a numbering of its own.

use crate::error::{Error, ErrorCode, Result};

macro_rules! wire_enums {
    ($(
        $(#[doc = $doc:literal])*
        $name:ident $prefix:literal $ctype:ident {
            $( $(#[doc = $vdoc:literal])* $variant:ident = $value:literal, $text:literal, )*
        }
    )*) => {$(
        $(#[doc = $doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u32)]
        pub enum $name {
            $( $(#[doc = $vdoc])* $variant = $value, )*
        }

        impl $name {
            /// Every value, in the order of the table.
            pub const ALL: &'static [$name] = &[ $( $name::$variant, )* ];

            /// The value with this number.
            pub fn from_u32(value: u32) -> Option<Self> {
                match value { $( $value => Some($name::$variant), )* _ => None }
            }

            /// The value with this number, or an `INVALID_ARGUMENT` error naming the type.
            pub fn try_from_u32(value: u32) -> Result<Self> {
                Self::from_u32(value).ok_or_else(|| unknown(stringify!($name), &value.to_string()))
            }

            /// The stable name (`snake_case`, or the conventional spelling such as `franz-go`).
            pub fn name(self) -> &'static str {
                match self { $( $name::$variant => $text, )* }
            }

            /// The value with this name, or an `INVALID_ARGUMENT` error listing the names.
            pub fn from_name(name: &str) -> Result<Self> {
                match name {
                    $( $text => Ok($name::$variant), )*
                    _ => Err(unknown(stringify!($name), name)),
                }
            }

            /// The number.
            pub fn as_u32(self) -> u32 {
                self as u32
            }
        }
    )*

        /// Every wire enum by its Rust name, as `(number, name)` pairs: what a binding reads once
        /// to translate numbers into its own enum constants.
        pub fn table(enum_name: &str) -> Option<&'static [(u32, &'static str)]> {
            $( if enum_name == stringify!($name) {
                return Some(&[ $( ($value, $text), )* ]);
            } )*
            None
        }
    };
}

fn unknown(what: &str, value: &str) -> Error {
    Error::new(
        ErrorCode::InvalidArgument,
        format!("{value:?} is not a {what}"),
    )
}

include!("tables/wire_enums.in");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_names_round_trip() {
        for e in [
            "CredentialAnswerKind",
            "ServerStepKind",
            "ClientEventKind",
            "ServerActionKind",
            "Gate",
            "ReauthTiming",
        ] {
            let t = table(e).unwrap();
            let mut seen = std::collections::HashSet::new();
            for (n, name) in t.iter() {
                assert!(seen.insert(*n), "{e}: {n} twice");
                assert!(!name.is_empty());
            }
        }
        assert_eq!(
            Gate::from_name("close_expired").unwrap(),
            Gate::CloseExpired
        );
        assert_eq!(ReauthTiming::from_u32(2), Some(ReauthTiming::FranzGo));
        assert_eq!(ReauthTiming::from_name("franz-go").unwrap().as_u32(), 2);
        let e = CredentialAnswerKind::try_from_u32(9).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert!(table("Nope").is_none());
    }
}
