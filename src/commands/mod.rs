//! One module per subcommand. Each asks a backend and hands the result to
//! the output; none builds SQL or formats tables itself.

pub mod bench;
pub mod blocked;
pub mod claim;
pub mod completions;
pub mod demo;
pub mod doctor;
pub mod enqueue;
pub mod explain;
pub mod finish;
pub mod init;
pub mod layouts;
pub mod list;
pub mod locks;
pub mod man;
pub mod purge;
pub mod reap;
pub mod retry;
pub mod serve;
pub mod show;
pub mod stats;
