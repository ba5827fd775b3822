//! How long operations report what they are doing, without knowing how it is shown: the CLI
//! draws bars on a terminal and prints notices on stderr; tests and other callers pass
//! [`Silent`]. Lower layers take a `&dyn Progress`, so none of them writes to a terminal.

/// Reports long work and notices (e.g. waiting for another process's lock).
pub trait Progress: Sync {
    /// Starts a task of `len` steps, named by `what` ("hashing", "fetching").
    fn start(&self, what: &'static str, len: u64) -> Box<dyn Task + '_>;

    /// A one-line notice that is not the command's result.
    fn notice(&self, message: &str);
}

/// One task in flight; dropping it ends it.
pub trait Task: Send + Sync {
    /// `n` more steps are done.
    fn advance(&self, n: u64);
}

/// Shows nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Progress for Silent {
    fn start(&self, _what: &'static str, _len: u64) -> Box<dyn Task + '_> {
        Box::new(Silent)
    }

    fn notice(&self, _message: &str) {}
}

impl Task for Silent {
    fn advance(&self, _n: u64) {}
}
