//! Identifier newtypes.

use std::fmt;

use serde::{Deserialize, Serialize};

macro_rules! id_newtype {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl $name {
            /// The id as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                Self(s.to_owned())
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                Self(s)
            }
        }
    };
}

id_newtype!(
    /// A registry's name as given in `registries.toml` (e.g. `obra/superpowers`) or derived from
    /// its folder or file name.
    RegistryName
);

id_newtype!(
    /// A skill's id: `<registry>:<skill root relative to the registry root>` (for a tool from a
    /// catalog: `<registry>:<tool name>`). Stable across runs as long as files don't move.
    SkillId
);

id_newtype!(
    /// A document's id: `<skill id>#L0`, `<skill id>#L1`, or
    /// `<skill id>#L2:<file relative to the skill root>:<ordinal>[.<chunk>]`.
    DocId
);

impl SkillId {
    /// Builds the id of the skill rooted at `root` (relative, `/`-separated) in `registry`.
    pub fn new(registry: &RegistryName, root: &str) -> Self {
        Self(format!("{registry}:{root}"))
    }
}
