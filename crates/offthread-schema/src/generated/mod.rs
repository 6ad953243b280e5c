//! The repo's own schemas.
