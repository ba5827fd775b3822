//! Fetchers (DESIGN.md §13): what a project pins but the Store lacks, obtained from where it
//! lives and checked against what memorix.lock recorded.

pub mod git;
