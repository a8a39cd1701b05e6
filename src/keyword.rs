//! Keyword enums: closed sets of words (config values, metric labels, CLI arguments), each
//! written once as `Variant = "word"` and given the same `ALL`, `as_str`, `Display` and
//! `FromStr` (ASCII case-insensitive, the error quoting the input and listing every word).
//! Pure, imports nothing of the crate: every room may use it.

use std::fmt;

/// A word that names no member of a keyword enum.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownKeyword {
    /// What the enum names, e.g. `"category"`.
    pub kind: &'static str,
    /// The word as given.
    pub word: String,
    /// Every valid word, in declaration order.
    pub expected: &'static [&'static str],
}

impl fmt::Display for UnknownKeyword {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown {} {:?}; expected one of: {}",
            self.kind,
            self.word,
            self.expected.join(", ")
        )
    }
}

impl std::error::Error for UnknownKeyword {}

/// Declares a keyword enum: `keyword_enum! { /// docs  pub enum Mode("mode") { /// docs
/// Enforce = "enforce", ... } }`. Adds `Clone, Copy, Debug, PartialEq, Eq, Hash`; further
/// attributes (serde, more derives) go before `pub enum`.
macro_rules! keyword_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $ty:ident($kind:literal) {
            $($(#[$variant_meta:meta])* $variant:ident = $word:literal),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        $vis enum $ty {
            $($(#[$variant_meta])* $variant),+
        }

        impl $ty {
            /// Every member, in declaration order.
            pub const ALL: [$ty; [$($word),+].len()] = [$($ty::$variant),+];
            /// Every member's word, in declaration order.
            pub const WORDS: &'static [&'static str] = &[$($word),+];

            /// The member's word.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $word,)+
                }
            }
        }

        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $ty {
            type Err = $crate::keyword::UnknownKeyword;

            /// The member whose word this is (ASCII case-insensitive).
            fn from_str(word: &str) -> Result<Self, Self::Err> {
                Self::ALL
                    .into_iter()
                    .find(|member| member.as_str().eq_ignore_ascii_case(word))
                    .ok_or_else(|| $crate::keyword::UnknownKeyword {
                        kind: $kind,
                        word: word.to_owned(),
                        expected: Self::WORDS,
                    })
            }
        }
    };
}

pub(crate) use keyword_enum;

#[cfg(test)]
mod tests {
    keyword_enum! {
        /// A test enum.
        enum Colour("colour") {
            /// Red.
            Red = "red",
            LightBlue = "light-blue",
        }
    }

    #[test]
    fn words_round_trip_case_insensitively() {
        for colour in Colour::ALL {
            assert_eq!(colour.to_string().parse::<Colour>(), Ok(colour));
        }
        assert_eq!("LIGHT-blue".parse::<Colour>(), Ok(Colour::LightBlue));
        assert_eq!(Colour::ALL.len(), 2);
    }

    #[test]
    fn an_unknown_word_is_quoted_with_every_valid_one() {
        let e = "green".parse::<Colour>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown colour \"green\"; expected one of: red, light-blue"
        );
    }
}
