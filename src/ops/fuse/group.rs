//! Which rows of a captured program fuse: runs of consecutive elementwise
//! rows whose intermediate results nothing else reads, and a full `sum`
//! or `mean` of such a run's result, become one `fused_elementwise` row.

use super::{fused_shape, operands, step_of, FusedPlan, PlanSteps, Sweep};
use crate::compile::{Program, Row, Source};
use crate::{DType, Tensor};
use std::sync::Arc;

impl Program {
    /// Fuses this program's runs of consecutive elementwise operations
    /// (see the module docs); results do not change.
    pub fn fuse(&mut self) {
        let rows = std::mem::take(&mut self.rows);
        let mut readers = vec![0usize; self.inputs + rows.iter().map(|r| r.outputs).sum::<usize>()];
        for s in rows.iter().flat_map(|r| &r.inputs).chain(&self.outputs) {
            if let Source::Value(i) = s {
                readers[*i] += 1;
            }
        }
        let mut next_id = self.inputs;
        let mut out: Vec<Row> = Vec::with_capacity(rows.len());
        let mut group: Vec<(Row, usize)> = Vec::new();
        for row in rows {
            let id = next_id;
            next_id += row.outputs;
            if sums_group(&row, &group, &readers) {
                flush(&mut group, &mut out, &readers, Some(row));
                continue;
            }
            let fusable = row.outputs == 1
                && row.inputs.len() <= 2
                && step_of(row.name, &[0, 0][..row.inputs.len()]).is_some();
            if !fusable
                || group
                    .last()
                    .is_some_and(|(last, _)| last.grad_mode != row.grad_mode)
            {
                flush(&mut group, &mut out, &readers, None);
            }
            if fusable {
                group.push((row, id));
            } else {
                out.push(row);
            }
        }
        flush(&mut group, &mut out, &readers, None);
        self.rows = out;
        self.lifetimes.take();
    }
}

/// Whether every result of `rows` but the last is read only by later rows
/// of `rows` (so the fused loop need not write it).
fn closed(rows: &[(Row, usize)], readers: &[usize]) -> bool {
    rows[..rows.len() - 1].iter().all(|(_, id)| {
        let inside = rows
            .iter()
            .flat_map(|(r, _)| &r.inputs)
            .filter(|s| matches!(s, Source::Value(i) if i == id))
            .count();
        inside == readers[*id]
    })
}

/// Whether `row` is a `sum` or `mean` of everything the last row of
/// `group` gave (a result nothing else reads) to one value.
fn sums_group(row: &Row, group: &[(Row, usize)], readers: &[usize]) -> bool {
    let Some((last, id)) = group.last() else {
        return false;
    };
    matches!(row.name, "sum" | "mean")
        && row.inputs.len() == 1
        && matches!(row.inputs[0], Source::Value(i) if i == *id)
        && readers[*id] == 1
        && row.grad_mode == last.grad_mode
        && row.metas.first().is_some_and(|(shape, _)| shape.is_empty())
}

/// Ends a run of fusable rows: its longest closed prefixes (of two rows or
/// more) become fused rows, the other rows stay as they are. `sum`, a
/// row summing (or averaging) the run's result, joins the run's last fused row (which
/// may then be a single row).
fn flush(
    group: &mut Vec<(Row, usize)>,
    out: &mut Vec<Row>,
    readers: &[usize],
    mut sum: Option<Row>,
) {
    while !group.is_empty() {
        let mut k = group.len();
        while k >= 2 && !closed(&group[..k], readers) {
            k -= 1;
        }
        let tail = k == group.len();
        if k < 2 && !(tail && sum.is_some()) {
            out.push(group.remove(0).0);
            continue;
        }
        let rest = group.split_off(k);
        emit(
            std::mem::replace(group, rest),
            if tail { sum.take() } else { None },
            out,
        );
    }
    out.extend(sum);
}

/// One fused row for `rows` (closed), summed by `sum` when given.
fn emit(rows: Vec<(Row, usize)>, sum: Option<Row>, out: &mut Vec<Row>) {
    // The plan's registers: external sources first, then each row's result.
    let ids: Vec<usize> = rows.iter().map(|(_, id)| *id).collect();
    let mut externals: Vec<Source> = Vec::new();
    let mut steps = Vec::with_capacity(rows.len());
    let mut seen = std::collections::HashSet::new();
    let mut args_per_row = Vec::with_capacity(rows.len());
    for (row, _) in &rows {
        let mut args = Vec::new();
        for s in &row.inputs {
            match s {
                Source::Value(i) if seen.contains(i) => args.push(Err(*i)),
                _ => {
                    let pos = externals
                        .iter()
                        .position(|e| same_source(e, s))
                        .unwrap_or_else(|| {
                            externals.push(s.clone());
                            externals.len() - 1
                        });
                    args.push(Ok(pos));
                }
            }
        }
        args_per_row.push(args);
        seen.insert(ids[args_per_row.len() - 1]);
    }
    let n_in = externals.len();
    for ((row, _), args) in rows.iter().zip(&args_per_row) {
        let regs: Vec<usize> = args
            .iter()
            .map(|a| match a {
                Ok(p) => *p,
                Err(id) => {
                    n_in + ids
                        .iter()
                        .position(|x| x == id)
                        .expect("a row of the group")
                }
            })
            .collect();
        steps.push(step_of(row.name, &regs).expect("a fusable row"));
    }
    let plan = FusedPlan(Arc::new(PlanSteps {
        sweep: Sweep::of(n_in, &steps),
        inputs: n_in,
        steps,
        sum: sum.is_some(),
        mean: sum.as_ref().is_some_and(|r| r.name == "mean"),
    }));
    let grad_mode = rows[0].0.grad_mode;
    // The sum's dtype: a summed group runs fused only when it is the
    // operands' own (no `dtype=` conversion).
    let sum_dtype = sum.as_ref().map(|r| r.metas[0].1);
    let mut originals: Vec<Row> = rows.into_iter().map(|(r, _)| r).collect();
    originals.extend(sum);
    let args = Arc::new(FusedRow {
        plan,
        externals,
        originals,
        sum_dtype,
    });
    let inputs = args.externals.clone();
    let outputs = args.originals.len();
    let fused = args.clone();
    out.push(Row {
        name: "fused_elementwise",
        run: Arc::new(move |vals: &[Tensor]| {
            let ins = fused.inputs(vals);
            if fused.fits(&ins) {
                let y = Tensor::fused_elementwise(&ins, &fused.plan)?;
                return Ok(vec![y; fused.originals.len()]);
            }
            fused.unfused(vals)
        }),
        grad_mode,
        pure: true,
        inputs,
        outputs,
        metas: Vec::new(),
        args: Some(args),
    });
}

/// What a fused row was made from (its `Row::args`).
pub(super) struct FusedRow {
    pub(super) plan: FusedPlan,
    /// The group's inputs.
    pub(super) externals: Vec<Source>,
    /// The rows it stands for (the group's, then the sum's).
    pub(super) originals: Vec<Row>,
    /// The dtype of the sum's result, for a summed group.
    sum_dtype: Option<DType>,
}

impl FusedRow {
    /// The group's inputs among the program's values `vals`.
    pub(super) fn inputs(&self, vals: &[Tensor]) -> Vec<Tensor> {
        self.externals.iter().map(|s| s.get(vals)).collect()
    }

    /// Whether the fused loops take `ins`: no tangents, operands the loops
    /// read (one shape, contiguous, or single values), a summed result in
    /// their dtype, and at least one operand that is not a single value.
    pub(super) fn fits(&self, ins: &[Tensor]) -> bool {
        ins.iter().all(|t| crate::autograd::fw_grad(t).is_none())
            && fused_shape(ins).is_some_and(|(shape, dt)| {
                self.sum_dtype.is_none_or(|s| s == dt)
                    && match dt {
                        DType::Float32 => operands::<f32>(ins, &shape).is_some(),
                        _ => operands::<f64>(ins, &shape).is_some(),
                    }
            })
            && ins.iter().any(|t| t.numel() > 1)
    }

    /// The original operations' results over `vals`, in order (grad mode
    /// as recorded, unless the replay turned it off for the whole program).
    pub(super) fn unfused(&self, vals: &[Tensor]) -> crate::Result<Vec<Tensor>> {
        let outer = crate::tensor::is_grad_enabled();
        let mut local = vals.to_vec();
        let base = local.len();
        for r in &self.originals {
            crate::tensor::set_grad_enabled(r.grad_mode && outer);
            let o = (r.run)(&local)?;
            local.extend(o);
        }
        crate::tensor::set_grad_enabled(outer);
        Ok(local.split_off(base))
    }
}

/// Whether two sources name the same value or the same constant tensor.
pub(super) fn same_source(a: &Source, b: &Source) -> bool {
    match (a, b) {
        (Source::Value(x), Source::Value(y)) => x == y,
        (Source::Constant(x), Source::Constant(y)) => x.same(y),
        _ => false,
    }
}
