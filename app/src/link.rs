//! Self-contained links (`/#graph=<compressed>`, PRODUCT §5): the whole
//! document, deflated and in URL-safe base64, in the fragment, so a graph
//! opens without the server having it. The fragment never reaches a server.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use graph::{Graph, Limits};

/// The longest link this makes, in characters of its fragment. Browsers
/// take far longer addresses, but chat apps, mail and proxies cut them.
pub const MAX_LINK_CHARS: usize = 32 * 1024;

/// The fragment key.
pub const FRAGMENT_KEY: &str = "graph=";

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkError {
    /// The compressed document is longer than [`MAX_LINK_CHARS`].
    TooLarge { chars: usize },
    /// The fragment is not a compressed document (cut short, mistyped).
    Damaged(String),
    /// It decompresses, but not to a graph this build reads.
    Document(graph::LoadError),
}

impl std::fmt::Display for LinkError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LinkError::TooLarge { chars } => write!(
                formatter,
                "This graph is too large for a self-contained link ({} KB compressed; the limit is {} KB). Share its view link or export it as a file instead.",
                chars.div_ceil(1024),
                MAX_LINK_CHARS / 1024
            ),
            LinkError::Damaged(reason) => write!(
                formatter,
                "This link does not hold a readable graph ({reason}). It may have been cut short when it was copied."
            ),
            LinkError::Document(error) => write!(
                formatter,
                "The graph in this link could not be read: {error}"
            ),
        }
    }
}

/// The fragment value for a graph (without `#graph=`). The id and revision
/// stay behind: the graph in a link belongs to no one yet.
pub fn encode(graph: &Graph) -> Result<String, LinkError> {
    let mut document = graph.clone();
    document.id = None;
    document.revision = 0;
    let json = document
        .to_json()
        .map_err(|error| LinkError::Damaged(error.to_string()))?;
    let compressed = miniz_oxide::deflate::compress_to_vec(json.as_bytes(), 9);
    let text = URL_SAFE_NO_PAD.encode(compressed);
    if text.len() > MAX_LINK_CHARS {
        return Err(LinkError::TooLarge { chars: text.len() });
    }
    Ok(text)
}

/// Reads a fragment value back (migrating an R3.1 document as any load does).
pub fn decode(text: &str) -> Result<Graph, LinkError> {
    let text = text.trim().trim_end_matches('=');
    if text.is_empty() {
        return Err(LinkError::Damaged("it is empty".to_owned()));
    }
    if text.len() > MAX_LINK_CHARS {
        return Err(LinkError::TooLarge { chars: text.len() });
    }
    // Standard base64 too: a hand-edited or re-encoded link.
    let normalised: String = text
        .chars()
        .map(|char| match char {
            '+' => '-',
            '/' => '_',
            other => other,
        })
        .collect();
    let compressed = URL_SAFE_NO_PAD
        .decode(normalised.as_bytes())
        .map_err(|error| LinkError::Damaged(format!("not base64: {error}")))?;
    let limit = Limits::default().max_document_bytes;
    let json = miniz_oxide::inflate::decompress_to_vec_with_limit(&compressed, limit).map_err(
        |error| {
            LinkError::Damaged(match error.status {
                miniz_oxide::inflate::TINFLStatus::HasMoreOutput => {
                    format!("the document is over {} KB", limit / 1024)
                }
                _ => "the compressed data is incomplete".to_owned(),
            })
        },
    )?;
    let json =
        String::from_utf8(json).map_err(|_| LinkError::Damaged("not UTF-8 text".to_owned()))?;
    Graph::load(&json).map_err(LinkError::Document)
}

/// The fragment value of an address's `#graph=…`, if it has one.
pub fn from_fragment(hash: &str) -> Option<&str> {
    hash.trim_start_matches('#').strip_prefix(FRAGMENT_KEY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_graph_round_trips_through_a_link_without_its_identity() {
        let mut graph = graph::starter::starter_graph();
        graph.id = Some("g_abc".to_owned());
        graph.revision = 7;
        let text = encode(&graph).unwrap();
        assert!(
            text.chars()
                .all(|char| char.is_ascii_alphanumeric() || char == '-' || char == '_'),
            "{text}"
        );
        let back = decode(&text).unwrap();
        assert_eq!(back.id, None);
        assert_eq!(back.revision, 0);
        assert_eq!(back.modules, graph.modules);
        assert_eq!(back.cables, graph.cables);
        assert_eq!(
            from_fragment(&format!("#graph={text}")),
            Some(text.as_str())
        );
        assert_eq!(from_fragment("#edit=abc"), None);
    }

    #[test]
    fn a_cut_link_says_so() {
        let text = encode(&graph::starter::starter_graph()).unwrap();
        let cut = &text[..text.len() / 2];
        let error = decode(cut).unwrap_err();
        assert!(matches!(error, LinkError::Damaged(_)), "{error:?}");
        assert!(error.to_string().contains("cut short"), "{error}");
        assert!(matches!(decode("!!!"), Err(LinkError::Damaged(_))));
        assert!(matches!(decode(""), Err(LinkError::Damaged(_))));
    }

    #[test]
    fn a_link_that_is_not_a_graph_names_the_problem() {
        let compressed = miniz_oxide::deflate::compress_to_vec(
            br#"{"format": "patchbay.graph/v1", "modules": 3}"#,
            9,
        );
        let error = decode(&URL_SAFE_NO_PAD.encode(compressed)).unwrap_err();
        assert!(matches!(error, LinkError::Document(_)), "{error:?}");
    }

    #[test]
    fn a_graph_too_large_for_a_link_is_refused_with_its_size() {
        let mut graph = graph::starter::starter_graph();
        // Incompressible text: every module gets a distinct pseudo-random label.
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for index in 0..400 {
            let mut module = graph.modules[0].clone();
            module.id = format!("x{index}");
            module.label = (0..120)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    char::from(b'!' + (seed % 90) as u8)
                })
                .collect();
            graph.modules.push(module);
        }
        let error = encode(&graph).unwrap_err();
        let LinkError::TooLarge { chars } = error else {
            panic!("{error:?}")
        };
        assert!(chars > MAX_LINK_CHARS);
        assert!(
            error
                .to_string()
                .contains("too large for a self-contained link")
        );
    }
}
