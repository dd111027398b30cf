//! One module per subcommand.

pub(crate) mod canonicalize;
pub(crate) mod extract;
pub(crate) mod measure;
pub(crate) mod schema;
pub(crate) mod score;
