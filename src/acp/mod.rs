//! acp
