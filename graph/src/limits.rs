//! Size limits of a graph document (PRODUCT §1). The server enforces them on
//! every write; the editor uses the same numbers to warn early.

use crate::Graph;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub max_modules: usize,
    pub max_cables: usize,
    pub max_document_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_modules: 2_000,
            max_cables: 10_000,
            max_document_bytes: 1024 * 1024,
        }
    }
}

/// Which limit a document is over, with a sentence saying so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitExceeded {
    pub limit: &'static str,
    pub message: String,
}

impl Limits {
    /// Checks the counts of a loaded graph (the byte size is checked on the
    /// raw body, before parsing).
    pub fn check(&self, graph: &Graph) -> Result<(), LimitExceeded> {
        if graph.modules.len() > self.max_modules {
            return Err(LimitExceeded {
                limit: "max_modules",
                message: format!(
                    "the graph has {} modules; the limit is {}",
                    graph.modules.len(),
                    self.max_modules
                ),
            });
        }
        if graph.cables.len() > self.max_cables {
            return Err(LimitExceeded {
                limit: "max_cables",
                message: format!(
                    "the graph has {} cables; the limit is {}",
                    graph.cables.len(),
                    self.max_cables
                ),
            });
        }
        Ok(())
    }

    pub fn check_size(&self, bytes: usize) -> Result<(), LimitExceeded> {
        if bytes > self.max_document_bytes {
            return Err(LimitExceeded {
                limit: "max_document_bytes",
                message: format!(
                    "the document is {bytes} bytes; the limit is {} bytes",
                    self.max_document_bytes
                ),
            });
        }
        Ok(())
    }
}
