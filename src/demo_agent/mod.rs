//! The built-in offline demo agent (being written).

use std::path::Path;

/// Run the demo agent on stdin/stdout until stdin closes.
pub async fn run(_scenario: Option<&Path>) -> anyhow::Result<()> {
    Ok(())
}
