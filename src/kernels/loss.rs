//! The negative log likelihood loss over rows of class scores: the
//! forward (picked scores, weighted, summed or kept per row) and its
//! backward (the weighted output gradient scattered to each row's target
//! class), each one pass over the targets.

use super::access::{lock, slice, slice_mut};
use crate::tensor::Float;
use crate::{Error, Result, Tensor};

/// Per-row terms of the loss over `x` (`rows × classes`, contiguous) and
/// the int64 `target` (`rows`, contiguous): `-w[t] x[r, t]` and `w[t]`,
/// or zeros where the target is `ignore_index`.
pub(crate) struct Nll {
    /// `-w[t] x[r, t]` per row.
    pub losses: Vec<f64>,
    /// The sum of the weights of the rows not ignored.
    pub total_weight: f64,
}

/// The weight of class `t` (1 without class weights).
#[inline]
fn class_weight<T: Float>(w: Option<&[T]>, t: usize) -> f64 {
    w.map_or(1.0, |w| w[t].to_f64())
}

/// The targets as class numbers (`None` where ignored), checking each is a
/// class.
fn classes(target: &[i64], classes: usize, ignore_index: i64) -> Result<Vec<Option<usize>>> {
    target
        .iter()
        .map(|&t| {
            if t == ignore_index {
                Ok(None)
            } else if t < 0 || t as usize >= classes {
                Err(Error::index(format!("Target {t} is out of bounds.")))
            } else {
                Ok(Some(t as usize))
            }
        })
        .collect()
}

/// The forward of the loss; see [`Nll`].
pub(crate) fn nll_forward<T: Float>(
    x: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    ignore_index: i64,
    n_classes: usize,
) -> Result<Nll> {
    let reads: Vec<&Tensor> = [Some(x), Some(target), weight]
        .into_iter()
        .flatten()
        .collect();
    let _g = lock(&reads, None);
    // SAFETY: all three are read-locked, contiguous and of the types named.
    let (xs, ts, w) = unsafe {
        (
            slice::<T>(x),
            slice::<i64>(target),
            weight.map(|w| slice::<T>(w)),
        )
    };
    let picked = classes(ts, n_classes, ignore_index)?;
    let mut losses = Vec::with_capacity(ts.len());
    let mut total_weight = 0.0;
    for (r, t) in picked.into_iter().enumerate() {
        match t {
            Some(t) => {
                let wt = class_weight(w, t);
                total_weight += wt;
                losses.push(-(wt * xs[r * n_classes + t].to_f64()));
            }
            None => losses.push(0.0),
        }
    }
    Ok(Nll {
        losses,
        total_weight,
    })
}

/// [`Nll::total_weight`] alone: the sum, in row order, of the weights of
/// the targets not ignored.
pub(crate) fn nll_total_weight<T: Float>(
    target: &Tensor,
    weight: Option<&Tensor>,
    ignore_index: i64,
    n_classes: usize,
) -> Result<f64> {
    let reads: Vec<&Tensor> = [Some(target), weight].into_iter().flatten().collect();
    let _g = lock(&reads, None);
    // SAFETY: both are read-locked, contiguous and of the types named.
    let (ts, w) = unsafe { (slice::<i64>(target), weight.map(|w| slice::<T>(w))) };
    let picked = classes(ts, n_classes, ignore_index)?;
    let mut total_weight = 0.0;
    for t in picked.into_iter().flatten() {
        total_weight += class_weight(w, t);
    }
    Ok(total_weight)
}

/// The gradient of the loss in `x`: zeros of `rows × classes` with
/// `-w[t] coef[r]` at each row's target class, `coef` being the output
/// gradient per row (`per_row`) or one value for all rows.
pub(crate) fn nll_backward<T: Float>(
    coef: &Tensor,
    per_row: bool,
    target: &Tensor,
    weight: Option<&Tensor>,
    ignore_index: i64,
    n_classes: usize,
) -> Result<Tensor> {
    let rows = target.numel();
    let out = Tensor::try_zeros(&[rows, n_classes], T::DTYPE)?;
    let reads: Vec<&Tensor> = [Some(coef), Some(target), weight]
        .into_iter()
        .flatten()
        .collect();
    {
        let _g = lock(&reads, Some(&out));
        // SAFETY: the inputs are read-locked, contiguous and of the types
        // named; `out` is fresh, contiguous and write-locked.
        let (cs, ts, w, os) = unsafe {
            (
                slice::<T>(coef),
                slice::<i64>(target),
                weight.map(|w| slice::<T>(w)),
                slice_mut::<T>(&out),
            )
        };
        for (r, t) in classes(ts, n_classes, ignore_index)?
            .into_iter()
            .enumerate()
        {
            if let Some(t) = t {
                let c = if per_row { cs[r] } else { cs[0] };
                let wt = w.map_or(T::one(), |w| w[t]);
                os[r * n_classes + t] = -(wt * c);
            }
        }
    }
    Ok(out)
}
