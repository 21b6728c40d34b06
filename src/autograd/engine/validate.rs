//! Validation of what reaches the engine: gradients a node returns (count,
//! shape, reducing broadcast ones, dtype) and the root gradients a caller
//! gives.

use super::super::node::{Grads, Node, TensorMeta};
use super::super::sum_to::{sum_to, sum_to_batched};
use crate::{Error, Result, Tensor};

fn expandable_to(from: &[usize], to: &[usize]) -> bool {
    from.len() <= to.len()
        && from
            .iter()
            .rev()
            .zip(to.iter().rev())
            .all(|(&f, &t)| f == t || f == 1)
}

/// Checks a node's outputs against its inputs' metadata: the count, the
/// shape (reducing broadcast gradients) and the dtype (casting).
pub(crate) fn validate_for(node: &dyn Node, outs: Grads) -> Result<Grads> {
    validate(node, outs)
}

pub(super) fn validate(node: &dyn Node, mut outs: Grads) -> Result<Grads> {
    let core = node.core();
    let n = core.next_edges().len();
    if outs.len() != n {
        return Err(Error::runtime(format!(
            "function {} returned an incorrect number of gradients (expected {n}, got {})",
            node.name(),
            outs.len()
        )));
    }
    for (i, g) in outs.iter_mut().enumerate() {
        if core.next_edges()[i].is_none() {
            *g = None;
            continue;
        }
        let (Some(t), Some(meta)) = (g.as_ref(), core.input_meta()[i].as_ref()) else {
            continue;
        };
        let mut t = t.clone();
        if let Some(b) = crate::autograd::current_batch() {
            t = batched_sum_to(node, i, t, b, &meta.shape)?;
        } else if t.shape() != meta.shape.as_slice() {
            if !expandable_to(&meta.shape, t.shape()) {
                return Err(Error::runtime(format!(
                    "Function {} returned an invalid gradient at index {i} - got {:?} but expected shape compatible with {:?}",
                    node.name(),
                    t.shape(),
                    meta.shape.as_slice()
                )));
            }
            t = sum_to(&t, &meta.shape)?;
        }
        if t.dtype() != meta.dtype {
            // A complex gradient of a real input keeps its real part, the
            // derivative along the real axis (torch's convention).
            if !t.dtype().is_differentiable() {
                return Err(Error::runtime(format!(
                    "Function {} returned an invalid gradient at index {i} - expected dtype {} but got {}",
                    node.name(),
                    meta.dtype,
                    t.dtype()
                )));
            }
            t = t.to_dtype(meta.dtype);
        }
        *g = Some(t);
    }
    Ok(outs)
}

/// A batched gradient `t` (leading dim `b`, then a shape broadcastable to
/// `shape`) reduced to `[b] + shape`, or torch's error naming the node.
fn batched_sum_to(
    node: &dyn Node,
    i: usize,
    t: Tensor,
    b: usize,
    shape: &[usize],
) -> Result<Tensor> {
    if t.ndim() == 0 || t.shape()[0] != b || !expandable_to(shape, &t.shape()[1..]) {
        let full: Vec<usize> = std::iter::once(b).chain(shape.iter().copied()).collect();
        return Err(Error::runtime(format!(
            "Function {} returned an invalid gradient at index {i} - got {:?} but expected shape compatible with {full:?} (batch of {b})",
            node.name(),
            t.shape(),
        )));
    }
    sum_to_batched(&t, shape)
}

/// The root gradient for `out`: the given one (checked) or ones for a
/// scalar.
pub(super) fn root_grad(i: usize, out: &TensorMeta, given: Option<&Tensor>) -> Result<Tensor> {
    match given {
        Some(g) => {
            if g.shape() != &out.shape[..] {
                return Err(Error::runtime(format!(
                    "Mismatch in shape: grad_output[{i}] has a shape of {:?} and output[{i}] has a shape of {:?}.",
                    g.shape(),
                    &out.shape[..]
                )));
            }
            if g.dtype().is_complex() != out.dtype.is_complex() {
                return Err(Error::runtime(format!(
                    "For complex Tensors, both grad_output and output are required to have the same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {} and output[{i}] has a dtype of {}.",
                    g.dtype(),
                    out.dtype
                )));
            }
            Ok(g.clone())
        }
        None => {
            if out.shape.iter().product::<usize>() != 1 {
                return Err(Error::runtime(format!(
                    "grad can be implicitly created only for scalar outputs (got shape {:?})",
                    &out.shape[..]
                )));
            }
            if out.dtype.is_complex() {
                return Err(Error::runtime(format!(
                    "grad can be implicitly created only for real scalar outputs but got ferrograd.{}",
                    out.dtype
                )));
            }
            Tensor::try_ones(&out.shape, out.dtype)
        }
    }
}
