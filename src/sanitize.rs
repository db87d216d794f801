//! sanitize
