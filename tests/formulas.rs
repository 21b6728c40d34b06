//! The derivative tables as data: every row states its forward and batched
//! rules (or why it has none), every recording op comes from a row, and
//! `docs/formulas.md` is the reference generated from the rows
//! (`scripts/formulas.sh` rewrites it).

use ferrograd::autograd::{BatchedRule, FormulaRow, ForwardRule};
use ferrograd::ops::derivative_tables;
mod common;

use common::rust_files;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Code as one line, escaped for a Markdown table cell.
fn cell(code: &str) -> String {
    let one_line = code.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.is_empty() {
        return "—".to_string();
    }
    format!("`{}`", one_line.replace('|', "\\|"))
}

fn forward_cell(rule: &ForwardRule) -> String {
    match rule {
        ForwardRule::Elementwise(f) => format!("elementwise: {}", cell(f)),
        ForwardRule::Formula(f) => format!("batched formula: {}", cell(f)),
        ForwardRule::FormulaIf(cond, f) => format!(
            "batched formula when {}, else row by row: {}",
            cell(cond),
            cell(f)
        ),
        ForwardRule::Rows(f, why) => format!("row by row ({why}): {}", cell(f)),
        ForwardRule::Missing(why) => format!("**none**: {why}"),
    }
}

fn batched_cell(rule: &BatchedRule) -> String {
    match rule {
        BatchedRule::Broadcast => "broadcasts".to_string(),
        BatchedRule::Formula => "batched formula".to_string(),
        BatchedRule::FormulaIf(cond, why) => {
            format!(
                "batched formula when {}, else row by row: {why}",
                cell(cond)
            )
        }
        BatchedRule::Rows(why) => format!("row by row: {why}"),
    }
}

fn node_cell(row: &FormulaRow) -> String {
    let node = row.node.trim();
    if node.starts_with('"') && node.ends_with('"') && node.matches('"').count() == 2 {
        format!("`{}`", node.trim_matches('"'))
    } else {
        cell(node)
    }
}

fn render() -> String {
    let tables = derivative_tables();
    let rows: usize = tables.iter().map(|t| t.len()).sum();
    let mut md = String::new();
    md.push_str("# Derivative formulas\n\n");
    md.push_str(
        "Generated from the derivative tables in `src/` by `scripts/formulas.sh`; do not \
         edit by hand (a test fails when this file is stale).\n\n",
    );
    md.push_str(&format!(
        "{rows} differentiable ops in {} tables. Each row is one op: the node it records, \
         its inputs, what it saves, its backward (`g` holds the output gradients, `ctx` \
         the saved values), its forward-mode formula (`t` holds the input tangents; \
         *elementwise* formulas broadcast, *batched* ones handle a leading batch of \
         tangents, others run once per row of a batch) and how its backward handles a \
         batch of gradients (`is_grads_batched`, vmap).\n",
        tables.len()
    ));
    for table in &tables {
        let Some(first) = table.first() else { continue };
        md.push_str(&format!("\n## {}\n\n", first.family));
        md.push_str("| op | node | inputs | saves | backward | forward | batched backward |\n");
        md.push_str("|---|---|---|---|---|---|---|\n");
        for row in table.iter() {
            let op = match row.inplace {
                Some(i) => format!("`{}` / `{}`", row.op, i),
                None => format!("`{}`", row.op),
            };
            md.push_str(&format!(
                "| {op} | {} | {} | {} | {} | {} | {} |\n",
                node_cell(row),
                cell(row.inputs),
                cell(row.saves),
                cell(row.backward),
                forward_cell(&row.forward),
                batched_cell(&row.batched),
            ));
        }
    }
    md
}

#[test]
fn formulas_doc_is_generated_from_the_tables() {
    // The crate as published ships only docs/rust.md (its readme) and no
    // Python package: the check belongs to the repository.
    if !root().join("python").is_dir() {
        return;
    }
    let path = root().join("docs/formulas.md");
    let want = render();
    if std::env::var_os("FERROGRAD_WRITE_FORMULAS").is_some() {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/formulas.md is stale: run scripts/formulas.sh to regenerate it from the tables"
    );
}

#[test]
fn every_row_has_forward_and_batched_rules_or_says_why_not() {
    let mut missing = Vec::new();
    for row in derivative_tables().iter().flat_map(|t| t.iter()) {
        let fw_ok = match row.forward {
            ForwardRule::Elementwise(f) | ForwardRule::Formula(f) => !f.trim().is_empty(),
            ForwardRule::FormulaIf(cond, f) => !cond.trim().is_empty() && !f.trim().is_empty(),
            ForwardRule::Rows(f, why) => !f.trim().is_empty() && !why.trim().is_empty(),
            ForwardRule::Missing(why) => !why.trim().is_empty(),
        };
        let bw_ok = match row.batched {
            BatchedRule::Rows(why) => !why.trim().is_empty(),
            BatchedRule::FormulaIf(cond, why) => !cond.trim().is_empty() && !why.trim().is_empty(),
            BatchedRule::Broadcast | BatchedRule::Formula => true,
        };
        if !fw_ok || !bw_ok || row.backward.trim().is_empty() || row.node.trim().is_empty() {
            missing.push(format!("{} ({})", row.op, row.family));
        }
    }
    assert!(
        missing.is_empty(),
        "rows without a rule or reason: {missing:?}"
    );
}

#[test]
fn op_names_are_unique_within_a_family() {
    for table in derivative_tables() {
        let mut names: Vec<&str> = table.iter().map(|r| r.op).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "duplicate rows in {}", table[0].family);
    }
}

#[test]
fn every_recording_op_comes_from_a_table_row() {
    // Only the recorder itself and the table macro may start a recorder,
    // and the node of a replayed compiled program (not an op: it stands
    // for operations that each are a table row).
    let allowed = [
        "src/autograd/function.rs",
        "src/autograd/table.rs",
        "src/ops/compiled.rs",
    ];
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut offenders = Vec::new();
    for file in files {
        let rel = file
            .strip_prefix(root())
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if allowed.contains(&rel.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if code.contains("Recorder::new") {
                offenders.push(format!("{rel}:{}", i + 1));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "ops recording outside a derivative table: {offenders:?}"
    );
}
