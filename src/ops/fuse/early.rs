//! Derivatives in the forward loop.
//!
//! The gradient of a summed group (a fused row that ends in a full `sum`
//! or `mean`) is its inputs' derivatives scaled by one value, the gradient
//! of the sum. When a compiled program replays as one graph node
//! (`ops::compiled`), such a group's forward loop also sweeps each block
//! back with the gradient 1 and writes the derivatives, and the node's
//! backward scales them: the inputs are read once for forward and backward
//! together, and the group is computed once. With a gradient of exactly 1
//! (`loss.backward()`) and the node's saved values freed after it runs,
//! the derivatives are the gradients, handed on without a copy, bit for bit
//! what the backward loop would have computed.
//!
//! The derivatives take the fused row's result slots that nothing reads
//! (the group's intermediate results, which the fused loop never writes),
//! so no value of the program moves. A replay whose operands do not fit
//! the loops runs the original operations and computes the derivatives
//! with tensor operations.

use super::group::{same_source, FusedRow};
use super::FusedPlan;
use crate::compile::{Program, Row, Source};
use crate::{DType, Result, Scalar, Tensor};
use std::sync::Arc;

/// The arguments of a recorded `fused_elementwise_backward` row.
type BackwardArgs = (Vec<Source>, Source, FusedPlan, Vec<bool>);

/// For a program `fwd` that replays as one node, whose backward program
/// `bwd` takes `n_grads` gradients, then `fwd`'s `n_vals` values, then its
/// constants: makes each backward row of a summed group that `fwd` computes
/// scale derivatives that group's forward loop writes, and gives the
/// forward program the node replays then (`None` when nothing changed).
pub(crate) fn derivatives_in_forward(
    fwd: &Program,
    bwd: &mut Program,
    n_grads: usize,
    n_vals: usize,
) -> Option<Program> {
    // Where each forward row's results start.
    let mut first = Vec::with_capacity(fwd.rows.len());
    let mut id = fwd.inputs;
    for r in &fwd.rows {
        first.push(id);
        id += r.outputs;
    }
    let mut changed: Option<Program> = None;
    for row in &mut bwd.rows {
        let Some((ins, g, plan, needs)) = row
            .args
            .as_ref()
            .and_then(|a| a.downcast_ref::<BackwardArgs>())
        else {
            continue;
        };
        let wanted = needs.iter().filter(|&&n| n).count();
        if row.name != "fused_elementwise_backward" || !plan.0.sum || wanted != row.outputs {
            continue;
        }
        let reads = ins.clone();
        let Some(ins) = ins
            .iter()
            .map(|s| forward_source(s, fwd, n_grads, n_vals))
            .collect::<Option<Vec<Source>>>()
        else {
            continue;
        };
        let found = fwd.rows.iter().enumerate().find_map(|(k, r)| {
            let f = r.args.as_ref()?.downcast_ref::<FusedRow>()?;
            let same = Arc::ptr_eq(&f.plan.0, &plan.0)
                && f.externals.len() == ins.len()
                && f.externals.iter().zip(&ins).all(|(a, b)| same_source(a, b));
            same.then_some(k)
        });
        // The derivatives need result slots besides the sum's (the last).
        let Some(k) = found.filter(|&k| wanted > 0 && wanted < fwd.rows[k].outputs) else {
            continue;
        };
        let prog = changed.get_or_insert_with(|| fwd.rows_copy());
        let Some(fused) = prog.rows[k]
            .args
            .clone()
            .and_then(|a| a.downcast::<FusedRow>().ok())
        else {
            continue; // already rewritten for another backward row
        };
        prog.rows[k] = with_derivatives(&prog.rows[k], fused, needs.clone());
        let slots = (0..wanted)
            .map(|i| Source::Value(n_grads + first[k] + i))
            .collect();
        *row = scaling(row, g.clone(), slots, reads);
    }
    changed
}

/// Where the backward program's input `s` lies in the forward program: a
/// forward value or constant (`None` for a gradient or a backward result).
fn forward_source(s: &Source, fwd: &Program, n_grads: usize, n_vals: usize) -> Option<Source> {
    match s {
        Source::Value(i) => {
            let v = i.checked_sub(n_grads)?;
            if v < n_vals {
                Some(Source::Value(v))
            } else {
                fwd.constants.get(v - n_vals).cloned().map(Source::Constant)
            }
        }
        Source::Constant(t) => Some(Source::Constant(t.clone())),
    }
}

/// The fused row `row` (made from `fused`) writing the derivatives of its
/// sum with respect to the inputs `needs` marks into its first results.
fn with_derivatives(row: &Row, fused: Arc<FusedRow>, needs: Vec<bool>) -> Row {
    let count = fused.originals.len();
    Row {
        name: "fused_elementwise_with_derivatives",
        run: Arc::new(move |vals: &[Tensor]| {
            let ins = fused.inputs(vals);
            let (y, ds) = if fused.fits(&ins) {
                derivatives(&fused.plan, &ins, &needs)?
            } else {
                let y = fused.unfused(vals)?.pop().expect("a summed group's rows");
                (y, derivatives_composed(&fused.plan, &ins, &needs)?)
            };
            let mut outs: Vec<Tensor> = ds.into_iter().flatten().collect();
            outs.resize(count, y);
            Ok(outs)
        }),
        args: None,
        ..row.clone()
    }
}

/// The group's summed result over `ins` and the derivatives of it with
/// respect to the inputs `needs` marks, from one loop.
fn derivatives(
    plan: &FusedPlan,
    ins: &[Tensor],
    needs: &[bool],
) -> Result<(Tensor, Vec<Option<Tensor>>)> {
    let (_, dt) =
        super::fused_shape(ins).ok_or_else(|| crate::Error::runtime("fused operands changed"))?;
    let one = Tensor::full_of(&[], Scalar::Float(1.0), dt)?;
    let (y, ds) = match dt {
        DType::Float32 => super::sweep_typed::<f32>(plan, ins, &[], &one, needs, true)?,
        _ => super::sweep_typed::<f64>(plan, ins, &[], &one, needs, true)?,
    };
    Ok((y.expect("a summed sweep gives the sum"), ds))
}

/// [`derivatives`]' derivatives with tensor operations (zeros for an
/// input no step reads).
fn derivatives_composed(
    plan: &FusedPlan,
    ins: &[Tensor],
    needs: &[bool],
) -> Result<Vec<Option<Tensor>>> {
    let dt = ins
        .iter()
        .find(|t| !t.is_wrapped_number())
        .map_or(DType::Float32, Tensor::dtype);
    let one = Tensor::full_of(&[], Scalar::Float(1.0), dt)?;
    let gs = plan.backward_tensors(ins, &one)?;
    gs.into_iter()
        .zip(ins)
        .zip(needs)
        .map(|((g, x), &need)| match (need, g) {
            (false, _) => Ok(None),
            (true, Some(g)) => Ok(Some(g)),
            (true, None) => Tensor::try_zeros(x.shape(), x.dtype()).map(Some),
        })
        .collect()
}

/// The backward row `row` of a summed group as the product of the
/// derivatives in `slots` and the sum's gradient `g`. It still lists the
/// group's inputs `ins` among what it reads, so the node saves them and a
/// backward after one of them was written in place fails as eagerly.
fn scaling(row: &Row, g: Source, slots: Vec<Source>, ins: Vec<Source>) -> Row {
    let mut inputs = vec![g.clone()];
    inputs.extend(slots.iter().cloned());
    inputs.extend(ins);
    Row {
        name: "fused_elementwise_scale",
        run: Arc::new(move |vals: &[Tensor]| {
            let g = g.get(vals);
            let ds = slots.iter().map(|s| s.get(vals));
            // The saved derivatives are read only here: with a gradient of
            // 1 they are handed on (see the module docs).
            if crate::autograd::frees_saved() && g.numel() == 1 && g.item()?.to_f64() == 1.0 {
                return Ok(ds.collect());
            }
            ds.map(|d| d.mul(&g)).collect()
        }),
        inputs,
        args: None,
        ..row.clone()
    }
}
