//! offthread-schema (work in progress).
