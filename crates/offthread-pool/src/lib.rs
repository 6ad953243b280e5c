//! offthread-pool (work in progress).
