//! Formula helpers the backward and forward formulas of ops share: summing
//! a broadcast gradient back to its input's shape (`sum_to`), also with a
//! leading batch dim (`sum_to_batched`).

use crate::{Result, Tensor};
use smallvec::SmallVec;

/// `g` summed down to `shape` (the gradient of a broadcast).
pub fn sum_to(g: &Tensor, shape: &[usize]) -> Result<Tensor> {
    sum_broadcast(g, 0, shape)
}

/// `g` (leading batch dim, then a shape broadcastable to `shape`) summed
/// down to `[batch] + shape`: [`sum_to`] applied to each batch row.
pub fn sum_to_batched(g: &Tensor, shape: &[usize]) -> Result<Tensor> {
    sum_broadcast(g, 1, shape)
}

/// Sums `g` down to its first `keep` dims followed by `shape`, reducing the
/// dims that broadcasting added or expanded (right-aligned to `shape`).
fn sum_broadcast(g: &Tensor, keep: usize, shape: &[usize]) -> Result<Tensor> {
    let target: SmallVec<[usize; 5]> = g.shape()[..keep].iter().chain(shape).copied().collect();
    if g.shape() == target.as_slice() {
        return Ok(g.clone());
    }
    let lead = g.ndim() - target.len();
    let dims: Vec<isize> = (keep..g.ndim())
        .filter(|&d| d < keep + lead || (shape[d - keep - lead] == 1 && g.shape()[d] != 1))
        .map(|d| d as isize)
        .collect();
    let s = if dims.is_empty() {
        g.clone()
    } else {
        g.sum(Some(&dims), true, None)?
    };
    if s.shape() == target.as_slice() {
        return Ok(s);
    }
    let target: Vec<isize> = target.iter().map(|&n| n as isize).collect();
    s.reshape(&target)
}
