//! `patchbay-wasm-split INPUT.wasm OUTPUT_DIR [OUTER]`: splits a bundle linked with
//! `--emit-relocs` at its `#[lazy]` functions (the same library and the same
//! file names cargo-leptos uses with `--split`, so Leptos finds them):
//! `OUTPUT_DIR/app.wasm` (for wasm-bindgen), one `.wasm` per chunk,
//! `__wasm_split.______________________.js` (loads a chunk into the main
//! module's memory and table) and `__wasm_split_manifest.json` (for each lazy
//! function, the chunks it needs: the server preloads them for a page that
//! calls it while rendering).
//!
//! OUTER names the split (by the start of its name, `page_`) that every
//! other split is loaded after: a page's part, whose own lazily loaded parts
//! are its panels and dialogs. Each `--apart` prefix names one that is never
//! loaded with the others (`home_part_`, the home page's part): what it
//! shares with any other split stays in the main module, as it did before it
//! was a split, so neither page fetches a chunk for the other's sake. The
//! `--late` ones are fetched by every page once it is interactive (the
//! graph's room and check) or as soon as a person points at it (a module's
//! panel, the popups): what they share with any other part is one late
//! chunk, fetched with the first of them, so a part shown later fetches
//! little more than its own code. The `--first` ones come with a page's
//! first load (the editor's palette, a recorded run's page): code they share
//! stays out of the late chunk, which would make that load bigger.
//!
//! The library alone puts the code two splits share into a chunk for each
//! combination of splits that use it — some fifty fetches for a graph's
//! page, and a tenth more bytes than one piece; with nesting
//! (nested-splits.patch) what the outer split shares with the others is one
//! chunk, and a chunk of a few hundred bytes goes into that one (or the main
//! module) when all it needs is there.

use std::path::{Path, PathBuf};

/// A chunk with at most this much code (before wasm-opt) goes into the chunk
/// every part loads with the page (the main module, without OUTER) when
/// all it needs is there: each chunk is a request of its own
/// for every part that needs it, and a part's time to show was mostly its
/// requests (about thirty for the run dialog, six at a time).
const SMALL_CHUNK_BYTES: u64 = 1024;
use std::process::ExitCode;

fn main() -> ExitCode {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let (input, output) = match arguments.as_slice() {
        [input, output] => (input, output),
        [input, output, outer, rest @ ..] => {
            let Some(groups) = groups(rest) else {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            };
            wasm_split_cli_support::nest_inside(outer);
            wasm_split_cli_support::merge_small_chunks(SMALL_CHUNK_BYTES);
            wasm_split_cli_support::keep_apart(groups.apart);
            wasm_split_cli_support::first_load(groups.first);
            wasm_split_cli_support::late(groups.late);
            (input, output)
        }
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match split(Path::new(input), Path::new(output)) {
        Ok(chunks) => {
            println!("{chunks} chunks");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("patchbay-wasm-split: {error:#}");
            ExitCode::FAILURE
        }
    }
}

const USAGE: &str = "usage: patchbay-wasm-split INPUT.wasm OUTPUT_DIR [OUTER [--apart PREFIX...] [--first PREFIX...] [--late PREFIX...]]";

/// The prefixes after OUTER, by the option before them.
#[derive(Default)]
struct Groups {
    apart: Vec<String>,
    first: Vec<String>,
    late: Vec<String>,
}

fn groups(arguments: &[String]) -> Option<Groups> {
    let mut groups = Groups::default();
    let mut into: Option<&mut Vec<String>> = None;
    for argument in arguments {
        match argument.as_str() {
            "--apart" => into = Some(&mut groups.apart),
            "--first" => into = Some(&mut groups.first),
            "--late" => into = Some(&mut groups.late),
            prefix if !prefix.starts_with("--") => into.as_mut()?.push(prefix.to_owned()),
            _ => return None,
        }
    }
    Some(groups)
}

fn split(input: &Path, output: &Path) -> Result<usize, Box<dyn std::error::Error>> {
    let input_wasm =
        std::fs::read(input).map_err(|error| format!("{}: {error}", input.display()))?;
    std::fs::create_dir_all(output)?;
    let main_out_path: PathBuf = output.join("app.wasm");
    let split = wasm_split_cli_support::transform({
        let mut options = wasm_split_cli_support::Options::new(&input_wasm);
        options.output_dir = output;
        options.main_out_path = &main_out_path;
        options.main_module = "./app.js";
        options.link_name = "./__wasm_split.______________________.js";
        options.target.web();
        options
    })
    .map_err(|error| format!("{error:#}"))?;
    // In name order, so that the same input makes the same files.
    let manifest: std::collections::BTreeMap<_, _> = split.prefetch_map.into_iter().collect();
    let manifest = serde_json::to_string_pretty(&manifest)?;
    std::fs::write(output.join("__wasm_split_manifest.json"), manifest)?;
    Ok(split.split_modules.len())
}
