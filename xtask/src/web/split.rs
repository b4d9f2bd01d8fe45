//! Code splitting: cuts the app's wasm at its lazy routes (`#[lazy_route]`,
//! built with `--emit-relocs`) into a main module and chunks that the
//! generated `__wasm_split.js` fetches when a route first needs them.

use std::fs;
use std::path::Path;

/// Splits `input` (the linker's output): writes the main module to
/// `main_out` (for wasm-bindgen) and the chunks and loader into `out_dir`.
/// Returns the number of chunks.
pub fn split(input: &Path, main_out: &Path, out_dir: &Path) -> Result<usize, String> {
    let wasm = fs::read(input).map_err(|e| format!("{}: {e}", input.display()))?;
    fs::create_dir_all(out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    let mut opts = wasm_split_cli_support::Options::new(&wasm);
    opts.output_dir = out_dir;
    opts.main_out_path = main_out;
    // Both paths are relative to the loader, which sits beside the glue.
    opts.main_module = "./kandev_web.js";
    opts.link_name = "./__wasm_split.js";
    let out = wasm_split_cli_support::transform(opts).map_err(|e| format!("wasm-split: {e:#}"))?;
    Ok(out.split_modules.len())
}
