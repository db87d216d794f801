//! The IO behind the capabilities warden offers an agent: reading and writing
//! text files and running terminals on its behalf.
//!
//! These are primitives only: no policy and no UI. The protocol layer asks
//! the gate first and calls in here once a request was allowed. Paths go
//! through [`fs::resolve`] (absolute, inside the chat's roots after `..` and
//! symlinks) before [`fs::read_text`] or [`fs::write_text`] touch them;
//! terminals live in a [`terminal::Terminals`] manager owned by the runtime.

pub(crate) mod beneath;
pub mod fs;
pub(crate) mod terminal;

pub use fs::{
    FsError, Protected, Roots, current_text, lenient_readings, read_text, resolve, resolve_lenient,
    write_text,
};
pub use terminal::{
    ExitStatus, OutputBuffer, TerminalError, TerminalEvent, TerminalOutput, TerminalSpec,
    Terminals, Utf8Decoder,
};
