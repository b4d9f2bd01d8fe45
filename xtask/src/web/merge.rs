//! One module from a route's split modules. A page opened at the editor
//! instantiated fifty-one modules (its own and its chunks), and on a phone
//! each instantiation's fixed cost added up to about a tenth of a second
//! after the bytes had arrived. wasm-split's modules all import the same
//! three things (the main module's memory, function table and one shared
//! global), define functions, fill table slots and memory, and export
//! nothing; so the union of their sections, with function and type indices
//! shifted, is one module that does what they did together.
//!
//! A module that does not use one of the three does not import it, so each
//! import is kept once and each module's uses are pointed at it. Anything
//! outside that shape (a function import, an export, a start function, a
//! global or memory of its own, one name imported with two types) fails the
//! build rather than being merged into something that behaves differently.

use wasm_encoder::reencode::{Error, Reencode, RoundtripReencoder};
use wasm_encoder::{
    CodeSection, DataCountSection, DataSection, ElementSection, EntityType, FunctionSection, ImportSection, Module,
    TypeSection,
};
use wasmparser::{Parser, Payload, TypeRef};

/// Where one input module's indices land in the merged module: its own
/// definitions shifted past the earlier modules', its imports wherever the
/// merged module imports the same name.
#[derive(Default)]
struct Shift {
    types: u32,
    functions: u32,
    data: u32,
    elements: u32,
    memories: Vec<u32>,
    tables: Vec<u32>,
    globals: Vec<u32>,
}

fn mapped(map: &[u32], index: u32, what: &str) -> Result<u32, Error<String>> {
    map.get(index as usize)
        .copied()
        .ok_or_else(|| Error::UserError(format!("{what} {index} is not imported")))
}

impl Reencode for Shift {
    type Error = String;

    fn type_index(&mut self, ty: u32) -> Result<u32, Error<String>> {
        Ok(self.types + ty)
    }

    fn function_index(&mut self, func: u32) -> Result<u32, Error<String>> {
        Ok(self.functions + func)
    }

    fn data_index(&mut self, data: u32) -> Result<u32, Error<String>> {
        Ok(self.data + data)
    }

    fn element_index(&mut self, element: u32) -> Result<u32, Error<String>> {
        Ok(self.elements + element)
    }

    fn memory_index(&mut self, memory: u32) -> Result<u32, Error<String>> {
        mapped(&self.memories, memory, "memory")
    }

    fn table_index(&mut self, table: u32) -> Result<u32, Error<String>> {
        mapped(&self.tables, table, "table")
    }

    fn global_index(&mut self, global: u32) -> Result<u32, Error<String>> {
        mapped(&self.globals, global, "global")
    }
}

/// The sections being built.
#[derive(Default)]
struct Merged {
    types: TypeSection,
    /// Each imported name once, with its type.
    imports: Vec<(String, String, EntityType)>,
    functions: FunctionSection,
    elements: ElementSection,
    code: CodeSection,
    data: DataSection,
    /// Counts so far: where the next module's definitions start.
    types_n: u32,
    functions_n: u32,
    data_n: u32,
    elements_n: u32,
}

impl Merged {
    /// The merged index (among imports of its kind) of `module.name`, added
    /// when new.
    fn import(&mut self, module: &str, name: &str, ty: EntityType) -> Result<u32, String> {
        let kind = std::mem::discriminant(&ty);
        let same_kind = |t: &EntityType| std::mem::discriminant(t) == kind;
        if let Some((_, _, known)) = self.imports.iter().find(|(m, n, _)| m == module && n == name) {
            if *known != ty {
                return Err(format!("{module}.{name} is imported with two types"));
            }
        } else {
            self.imports.push((module.to_string(), name.to_string(), ty));
        }
        let at = self
            .imports
            .iter()
            .filter(|(_, _, t)| same_kind(t))
            .position(|(m, n, _)| m == module && n == name)
            .ok_or_else(|| format!("{module}.{name} was not kept"))?;
        Ok(at as u32)
    }
}

fn err(name: &str, e: impl std::fmt::Display) -> String {
    format!("merging {name}: {e}")
}

/// Merges `modules` (`(file name, bytes)`, in the order their table slots
/// and data should be written) into one module.
pub fn merge(modules: &[(String, Vec<u8>)]) -> Result<Vec<u8>, String> {
    let mut out = Merged::default();
    for (name, bytes) in modules {
        add(&mut out, name, bytes)?;
    }
    let mut module = Module::new();
    module.section(&out.types);
    let mut imports = ImportSection::new();
    for (m, field, ty) in &out.imports {
        imports.import(m, field, *ty);
    }
    module.section(&imports);
    module.section(&out.functions);
    module.section(&out.elements);
    if out.data_n > 0 {
        module.section(&DataCountSection { count: out.data_n });
    }
    module.section(&out.code);
    module.section(&out.data);
    let bytes = module.finish();
    wasmparser::Validator::new()
        .validate_all(&bytes)
        .map_err(|e| err("the merged module", e))?;
    Ok(bytes)
}

fn add(out: &mut Merged, name: &str, bytes: &[u8]) -> Result<(), String> {
    let mut s = Shift {
        types: out.types_n,
        functions: out.functions_n,
        data: out.data_n,
        elements: out.elements_n,
        ..Shift::default()
    };
    for payload in Parser::new(0).parse_all(bytes) {
        match payload.map_err(|e| err(name, e))? {
            Payload::Version { .. }
            | Payload::End(_)
            | Payload::CustomSection(_)
            | Payload::CodeSectionStart { .. } => {}
            Payload::DataCountSection { .. } => {}
            // wasm-split writes an export section even when it is empty.
            Payload::ExportSection(r) if r.count() == 0 => {}
            Payload::TypeSection(r) => {
                out.types_n += r.count();
                RoundtripReencoder
                    .parse_type_section(&mut out.types, r)
                    .map_err(|e| err(name, e))?;
            }
            Payload::ImportSection(r) => {
                for import in r.into_imports() {
                    let import = import.map_err(|e| err(name, e))?;
                    let ty = RoundtripReencoder.entity_type(import.ty).map_err(|e| err(name, e))?;
                    let at = out.import(import.module, import.name, ty).map_err(|e| err(name, e))?;
                    match import.ty {
                        TypeRef::Memory(_) => s.memories.push(at),
                        TypeRef::Table(_) => s.tables.push(at),
                        TypeRef::Global(_) => s.globals.push(at),
                        TypeRef::Func(_) | TypeRef::FuncExact(_) | TypeRef::Tag(_) => {
                            return Err(err(
                                name,
                                format!("imports {}.{} (a function or tag)", import.module, import.name),
                            ));
                        }
                    }
                }
            }
            Payload::FunctionSection(r) => {
                out.functions_n += r.count();
                for ty in r {
                    out.functions.function(s.types + ty.map_err(|e| err(name, e))?);
                }
            }
            Payload::ElementSection(r) => {
                out.elements_n += r.count();
                s.parse_element_section(&mut out.elements, r)
                    .map_err(|e| err(name, e))?;
            }
            Payload::CodeSectionEntry(body) => {
                s.parse_function_body(&mut out.code, body).map_err(|e| err(name, e))?;
            }
            Payload::DataSection(r) => {
                out.data_n += r.count();
                s.parse_data_section(&mut out.data, r).map_err(|e| err(name, e))?;
            }
            other => {
                return Err(err(
                    name,
                    format!("a section a split module does not have: {:?}", other.as_section()),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_encoder::{
        ConstExpr, Elements, ExportKind, ExportSection, Function, GlobalType, Instruction, MemoryType, RefType,
        TableType, ValType,
    };

    /// A module of wasm-split's shape: the shared memory and table (and the
    /// shared global when `global`), `bodies` (each `(type, instructions)`),
    /// every function placed in the table at `slot`, and a byte written at `at`.
    fn split_module(
        types: &[(&[ValType], &[ValType])],
        global: bool,
        bodies: &[(u32, Vec<Instruction>)],
        slot: i32,
        at: i32,
    ) -> Vec<u8> {
        let mut m = Module::new();
        let mut t = TypeSection::new();
        for (params, results) in types {
            t.ty().function(params.iter().copied(), results.iter().copied());
        }
        m.section(&t);
        let mut i = ImportSection::new();
        i.import(
            "__wasm_split",
            "memory",
            MemoryType {
                minimum: 1,
                maximum: None,
                memory64: false,
                shared: false,
                page_size_log2: None,
            },
        );
        i.import(
            "__wasm_split",
            "__indirect_function_table",
            TableType {
                element_type: RefType::FUNCREF,
                table64: false,
                minimum: 8,
                maximum: None,
                shared: false,
            },
        );
        if global {
            i.import(
                "__wasm_split",
                "__wasm_split_shared0",
                GlobalType {
                    val_type: ValType::I32,
                    mutable: true,
                    shared: false,
                },
            );
        }
        m.section(&i);
        let mut f = FunctionSection::new();
        for (ty, _) in bodies {
            f.function(*ty);
        }
        m.section(&f);
        let mut e = ElementSection::new();
        let all: Vec<u32> = (0..bodies.len() as u32).collect();
        e.active(None, &ConstExpr::i32_const(slot), Elements::Functions(all.into()));
        m.section(&e);
        let mut c = CodeSection::new();
        for (_, body) in bodies {
            let mut func = Function::new([]);
            for ins in body {
                func.instruction(ins);
            }
            func.instruction(&Instruction::End);
            c.function(&func);
        }
        m.section(&c);
        let mut d = DataSection::new();
        d.active(0, &ConstExpr::i32_const(at), [7u8]);
        m.section(&d);
        m.finish()
    }

    fn first() -> Vec<u8> {
        // f0 calls f1; both take an i32. No use of the shared global.
        split_module(
            &[(&[ValType::I32], &[])],
            false,
            &[(0, vec![Instruction::I32Const(1), Instruction::Call(1)]), (0, vec![])],
            2,
            100,
        )
    }

    fn second() -> Vec<u8> {
        // g0 calls itself and, through the table, a function of its second
        // type, and moves the shared global.
        split_module(
            &[(&[], &[]), (&[ValType::I32], &[ValType::I32])],
            true,
            &[(
                0,
                vec![
                    Instruction::GlobalGet(0),
                    Instruction::GlobalSet(0),
                    Instruction::Call(0),
                    Instruction::I32Const(5),
                    Instruction::I32Const(3),
                    Instruction::CallIndirect {
                        type_index: 1,
                        table_index: 0,
                    },
                    Instruction::Drop,
                ],
            )],
            6,
            200,
        )
    }

    #[test]
    fn merged_split_modules_keep_their_calls_table_slots_and_data() {
        let merged = merge(&[("a.wasm".into(), first()), ("b.wasm".into(), second())]).expect("the two modules merge");
        let mut imports = 0;
        let mut function_types = vec![];
        let mut slots = vec![];
        let mut data_at = vec![];
        let mut bodies = vec![];
        for payload in Parser::new(0).parse_all(&merged) {
            match payload.expect("payload") {
                Payload::ImportSection(r) => imports = r.into_imports().count(),
                Payload::FunctionSection(r) => function_types = r.into_iter().map(|t| t.expect("type")).collect(),
                Payload::ElementSection(r) => {
                    for e in r {
                        let e = e.expect("element");
                        let wasmparser::ElementKind::Active { offset_expr, .. } = e.kind else {
                            panic!("a passive element")
                        };
                        let wasmparser::ElementItems::Functions(f) = e.items else {
                            panic!("expressions")
                        };
                        let funcs: Vec<u32> = f.into_iter().map(|x| x.expect("index")).collect();
                        slots.push((
                            format!("{:?}", offset_expr.get_operators_reader().read().expect("op")),
                            funcs,
                        ));
                    }
                }
                Payload::DataSection(r) => {
                    for d in r {
                        let wasmparser::DataKind::Active { offset_expr, .. } = d.expect("data").kind else {
                            panic!("passive data")
                        };
                        data_at.push(format!("{:?}", offset_expr.get_operators_reader().read().expect("op")));
                    }
                }
                Payload::CodeSectionEntry(body) => {
                    let ops: Vec<String> = body
                        .get_operators_reader()
                        .expect("ops")
                        .into_iter()
                        .map(|o| format!("{:?}", o.expect("op")))
                        .collect();
                    bodies.push(ops.join(" "));
                }
                _ => {}
            }
        }
        // The three shared imports once, not once per module.
        assert_eq!(imports, 3);
        assert!(bodies[2].contains("GlobalGet { global_index: 0 }"), "{}", bodies[2]);
        // b's types come after a's one type.
        assert_eq!(function_types, vec![0, 0, 1]);
        assert_eq!(
            slots,
            vec![
                ("I32Const { value: 2 }".to_string(), vec![0, 1]),
                ("I32Const { value: 6 }".to_string(), vec![2])
            ]
        );
        assert_eq!(data_at, vec!["I32Const { value: 100 }", "I32Const { value: 200 }"]);
        assert!(bodies[0].contains("Call { function_index: 1 }"), "{}", bodies[0]);
        assert!(bodies[2].contains("Call { function_index: 2 }"), "{}", bodies[2]);
        assert!(
            bodies[2].contains("CallIndirect { type_index: 2, table_index: 0 }"),
            "{}",
            bodies[2]
        );
    }

    #[test]
    fn a_module_outside_wasm_splits_shape_is_refused() {
        let mut exported = Module::new();
        let mut t = TypeSection::new();
        t.ty().function([], []);
        exported.section(&t);
        let mut f = FunctionSection::new();
        f.function(0);
        exported.section(&f);
        let mut x = ExportSection::new();
        x.export("run", ExportKind::Func, 0);
        exported.section(&x);
        let mut c = CodeSection::new();
        let mut body = Function::new([]);
        body.instruction(&Instruction::End);
        c.function(&body);
        exported.section(&c);
        let e = merge(&[("a.wasm".into(), first()), ("x.wasm".into(), exported.finish())]).expect_err("an export");
        assert!(e.contains("x.wasm"), "{e}");

        // One name with two types: the modules were not cut from one program.
        let mut other = ImportSection::new();
        other.import(
            "__wasm_split",
            "memory",
            MemoryType {
                minimum: 2,
                maximum: None,
                memory64: false,
                shared: false,
                page_size_log2: None,
            },
        );
        let mut bigger = Module::new();
        bigger.section(&other);
        let e = merge(&[("a.wasm".into(), first()), ("big.wasm".into(), bigger.finish())]).expect_err("two types");
        assert!(e.contains("big.wasm") && e.contains("two types"), "{e}");
    }
}
