//! The crate's layer order, checked over its source: a module may name
//! modules of lower layers only (docs/design.md, "Layers"). The order,
//! from the bottom:
//!
//! 0. `pool`, `binding`, `error`: no other module of the crate;
//! 1. `tensor`: storage, layout, dtype, the autograd slot;
//! 2. `trace`: the event recorder ops and the engine report to;
//! 3. `kernels`: loops over memory;
//! 4. `autograd`: the graph, the engine, forward mode, the tables' macro;
//! 5. `ops`: differentiable operations, each a table row;
//! 6. `random`, `profiler`, `optim`: users of everything below.
//!
//! Modules of one layer do not name each other. A reference is any path
//! that starts at the crate root, `crate::x`, `$crate::x`, `super::...`
//! climbing out of the module, or a `crate::{...}` group; a name the crate
//! root re-exports (`crate::Tensor`) counts as the module it comes from.
//! Comments are not code and are skipped.

use std::collections::HashMap;
mod common;

use common::rust_files;
use std::path::{Path, PathBuf};

const LAYERS: &[&[&str]] = &[
    &["pool", "binding", "error"],
    &["tensor"],
    &["trace"],
    &["kernels"],
    &["autograd"],
    &["ops"],
    &["random", "profiler", "optim"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The text with every `//` comment blanked (string literals that hold
/// `//` are rare enough in this crate not to matter).
fn code_of(text: &str) -> String {
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The first segments of the paths written after a `crate::` at the
/// start of `rest`: one name, or each item of a `{...}` group.
fn first_segments(rest: &str) -> Vec<String> {
    let Some(group) = rest.strip_prefix('{') else {
        return vec![ident_at(rest).to_string()];
    };
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, true);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => start = true,
            c if start && (c.is_alphanumeric() || c == '_') => {
                out.push(ident_at(&group[i..]).to_string());
                start = false;
            }
            _ => {}
        }
    }
    out
}

/// The module path of a source file: `src/a/b.rs` is `[a, b]`,
/// `src/a/mod.rs` is `[a]`.
fn module_path(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src()).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The top-level modules `code` (of the module at `path`) refers to.
fn references(code: &str, path: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let boundary =
        |i: usize| i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
    for (i, _) in code.match_indices("crate::") {
        if boundary(i) || (i > 0 && bytes[i - 1] == b'$') {
            out.extend(first_segments(&code[i + "crate::".len()..]));
        }
    }
    let mut i = 0;
    while let Some(at) = code[i..].find("super::") {
        let start = i + at;
        i = start + 1;
        if !boundary(start) || (start >= 2 && bytes[start - 2..start] == *b"::") {
            continue;
        }
        let mut rest = &code[start..];
        let mut depth = path.len();
        while let Some(r) = rest.strip_prefix("super::") {
            rest = r;
            depth = depth.saturating_sub(1);
        }
        if depth == 0 {
            out.extend(first_segments(rest));
        }
        i = start + ("super::".len());
    }
    out
}

/// Names the crate root re-exports, by the module they come from
/// (`pub use tensor::{DType, Tensor}` in lib.rs makes `crate::Tensor` a
/// reference to `tensor`).
fn root_reexports() -> HashMap<String, String> {
    let lib = code_of(&std::fs::read_to_string(src().join("lib.rs")).unwrap());
    let mut map = HashMap::new();
    for stmt in lib.split(';') {
        let Some(at) = stmt.find("pub use ") else {
            continue;
        };
        let path = stmt[at + "pub use ".len()..].trim();
        let module = ident_at(path).to_string();
        let names = path
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|n| !n.is_empty() && *n != "self" && *n != "as");
        for name in names {
            map.entry(name.to_string())
                .or_insert_with(|| module.clone());
        }
    }
    map
}

#[test]
fn no_module_names_a_module_above_or_beside_it() {
    let reexports = root_reexports();
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut wrong = Vec::new();
    for file in files {
        let path = module_path(&file);
        let Some(top) = path.first().cloned() else {
            continue;
        };
        if top == "lib" {
            continue;
        }
        let layer = layer_of(&top)
            .unwrap_or_else(|| panic!("module `{top}` has no layer; add it to LAYERS"));
        let code = code_of(&std::fs::read_to_string(&file).unwrap());
        for name in references(&code, &path) {
            let target = if layer_of(&name).is_some() {
                name.clone()
            } else if let Some(m) = reexports.get(&name) {
                m.clone()
            } else {
                continue;
            };
            let Some(target_layer) = layer_of(&target) else {
                continue;
            };
            if target != top && target_layer >= layer {
                wrong.push(format!(
                    "{}: `{top}` (layer {layer}) names `{target}` (layer {target_layer}) through `{name}`",
                    file.strip_prefix(src()).unwrap().display()
                ));
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(
        wrong.is_empty(),
        "references up or across the layer order:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_checker_sees_every_kind_of_reference() {
    let path = ["kernels".to_string(), "fused".to_string()];
    let code = "use crate::autograd::Edge;\nuse crate::{ops::x, tensor::{A, B}, Error};\n\
                let s = $crate::trace::op_span();\nuse super::super::ops::y;\nuse super::iter;";
    assert_eq!(
        references(&code_of(code), &path),
        ["autograd", "ops", "tensor", "Error", "trace", "ops"]
    );
    assert!(references(&code_of("// crate::autograd in a comment"), &path).is_empty());
    let map = root_reexports();
    assert_eq!(map.get("Tensor").map(String::as_str), Some("tensor"));
    assert_eq!(map.get("Error").map(String::as_str), Some("error"));
}
