//! The split modules leave the linker with custom sections (function names,
//! producers, target features): a tenth of their bytes, which every pack
//! carried to the browser and nothing there reads. The main module loses its
//! own in wasm-opt; these lose them here.

use wasm_encoder::{Module, RawSection};
use wasmparser::{Parser, Payload};

/// `wasm` without its custom sections, every other section byte for byte.
pub fn without_custom_sections(wasm: &[u8]) -> Result<Vec<u8>, String> {
    let mut module = Module::new();
    for payload in Parser::new(0).parse_all(wasm) {
        let payload = payload.map_err(|e| e.to_string())?;
        if matches!(payload, Payload::CustomSection(_)) {
            continue;
        }
        if let Some((id, range)) = payload.as_section() {
            let data = wasm
                .get(range.start as usize..range.end as usize)
                .ok_or("a section past the module's end")?;
            module.section(&RawSection { id, data });
        }
    }
    Ok(module.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_encoder::{CodeSection, CustomSection, Function, FunctionSection, Instruction, TypeSection};

    #[test]
    fn custom_sections_go_and_the_rest_stays_byte_for_byte() {
        let mut plain = Module::new();
        let mut t = TypeSection::new();
        t.ty().function([], []);
        let mut f = FunctionSection::new();
        f.function(0);
        let mut c = CodeSection::new();
        let mut body = Function::new([]);
        body.instruction(&Instruction::End);
        c.function(&body);
        plain.section(&t).section(&f).section(&c);
        let plain = plain.finish();

        let mut named = Module::new();
        let names = CustomSection {
            name: "name".into(),
            data: vec![1, 2, 3].into(),
        };
        named
            .section(&t)
            .section(&names)
            .section(&f)
            .section(&c)
            .section(&names);
        let named = named.finish();

        assert!(named.len() > plain.len());
        assert_eq!(without_custom_sections(&named).expect("strip"), plain);
        assert_eq!(without_custom_sections(&plain).expect("strip"), plain);
        assert!(without_custom_sections(b"\0asm").is_err());
    }
}
