//! Indexing: NumPy/torch-style `index` / `index_put_` (what Python's
//! `t[...]` and `t[...] = v` do), and the index-driven ops: index_select,
//! gather, scatter, index_add/copy/fill, masked_fill/select, take, put_,
//! nonzero.
//!
//! Basic indices (ints, slices with positive steps, new axes, an ellipsis)
//! only change the layout, so `index` returns a view. Integer tensors and
//! boolean masks are advanced indices: they are broadcast together and
//! gather into a copy. As in torch, ints are applied as `select` first, and
//! the advanced dims of the result go in place of the indexed dims when
//! those are adjacent, else first.
//!
//! The module is split by concern: `plan` (reading an index expression
//! into a view and the gathered offsets), `advanced` (`index` /
//! `index_put`), `scatter` (index_select, gather, scatter*), `slices`
//! (index_add/copy/fill) and `masked` (masked_*, take, put, nonzero);
//! each of those holds its ops' derivative table (`FORMULAS`), and this
//! file the helpers they share.

mod advanced;
mod masked;
mod plan;
mod scatter;
mod slices;

/// The family's derivative tables, for [`crate::ops::derivative_tables`].
pub(crate) const FORMULA_TABLES: &[&[crate::autograd::FormulaRow]] = &[
    advanced::FORMULAS,
    scatter::FORMULAS,
    slices::FORMULAS,
    masked::FORMULAS,
];

use plan::Plan;
pub use plan::TensorIndex;

use crate::autograd::{check_write, derivatives, sum_to, Tangents};
use crate::kernels::access::{elem_ptr, lock};
use crate::kernels::index::nonzero_coords;
use crate::kernels::iter::{apply2, check_writable, for_ranges, map2};
use crate::ops::binary::Arith;
use crate::ops::shape::{drop_dim, fmt_shape, signed, walk};
use crate::pool::SyncPtr;
use crate::tensor::{broadcast_shapes, contiguous_strides, wrap_dim, Layout};
use crate::{dispatch, DType, Element, Error, Result, Scalar, Tensor};

/// `g` summed down to `shape` when `g` was broadcast from it (`shape` may
/// have extra leading ones that indexing dropped).
pub(crate) fn sum_to_indexed(g: &Tensor, shape: &[usize]) -> Result<Tensor> {
    if g.shape() == shape {
        return Ok(g.clone());
    }
    let mut g = g.clone();
    if g.ndim() < shape.len() {
        let mut s = vec![1isize; shape.len() - g.ndim()];
        s.extend(g.shape().iter().map(|&n| n as isize));
        g = g.reshape(&s)?;
    }
    sum_to(&g, shape)
}

/// A kernel's addition (logical or for bool), statically dispatched so
/// the index loops inline it.
pub(super) trait IndexAdd: Copy {
    fn index_add(a: Self, b: Self) -> Self;
}

impl IndexAdd for bool {
    #[inline(always)]
    fn index_add(a: bool, b: bool) -> bool {
        a | b
    }
}

macro_rules! index_add_arith {
    ($($t:ty),*) => {$(
        impl IndexAdd for $t {
            #[inline(always)]
            fn index_add(a: Self, b: Self) -> Self {
                <$t as Arith>::add(a, b)
            }
        }
    )*};
}
index_add_arith!(
    u8,
    i8,
    i16,
    i32,
    i64,
    f32,
    f64,
    crate::f16,
    crate::bf16,
    crate::ComplexFloat,
    crate::ComplexDouble
);

/// Splits `0..n` items of `weight` elements each so that parallel chunks
/// carry enough work.
pub(super) fn for_ranges_weighted(
    n: usize,
    weight: usize,
    body: impl Fn(usize, usize) + Sync + Send,
) {
    let w = weight.max(1);
    for_ranges(n * w, |s, e| {
        let (a, b) = (s.div_ceil(w), e.div_ceil(w));
        if a < b {
            body(a, b)
        }
    });
}

/// Offsets of every row-major position of `shape` through `strides`.
pub(crate) fn positions(shape: &[usize], strides: &[isize]) -> Vec<isize> {
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n);
    walk(shape, [strides], 0, n, |[o]| out.push(o));
    out
}

/// Drops leading size-1 dims of `v` until it has at most `ndim` dims (torch
/// allows `t[0] = ones(1, 3)` for a (3,) target).
pub(super) fn strip_leading_ones(v: &Tensor, ndim: usize) -> Tensor {
    let mut l = v.layout().clone();
    while l.ndim() > ndim && l.shape()[0] == 1 {
        l = l.select(0, 0).expect("dim 0 has size 1");
    }
    if l == *v.layout() {
        v.clone()
    } else {
        v.view_with_layout(l)
    }
}

/// torch's setitem error when values do not broadcast to the target.
pub(super) fn check_value_shape(values: &Tensor, v: &Tensor, shape: &[usize]) -> Result<()> {
    if v.layout().broadcast_strides(shape).is_err() {
        return Err(Error::runtime(format!(
            "shape mismatch: value tensor of shape {} cannot be broadcast to indexing result of shape {}",
            fmt_shape(values.shape()),
            fmt_shape(shape)
        )));
    }
    Ok(())
}

pub(super) fn check_long(op: &str, index: &Tensor) -> Result<()> {
    if index.dtype() != DType::Int64 {
        return Err(Error::runtime(format!(
            "{op}(): Expected dtype int64 for index"
        )));
    }
    Ok(())
}

pub(super) fn check_int_index(op: &str, index: &Tensor) -> Result<Vec<i64>> {
    if !matches!(index.dtype(), DType::Int64 | DType::Int32) {
        return Err(Error::runtime(format!(
            "{op}(): Expected dtype int32/int64 for index"
        )));
    }
    if index.ndim() > 1 {
        return Err(Error::index(format!(
            "{op}(): Index is supposed to be a vector, got a {}-D tensor",
            index.ndim()
        )));
    }
    Ok(index.to_vec::<i64>())
}

/// `t` with a 0-dim tensor seen as shape (1,).
pub(super) fn as_1d(t: &Tensor) -> Tensor {
    if t.ndim() == 0 {
        t.view_with_layout(Layout::new(&[1], &[1], t.offset()))
    } else {
        t.clone()
    }
}

/// Checks `0 <= v < size` (no wrapping, as gather/scatter/index_add do).
pub(super) fn check_range(v: i64, dim: usize, size: usize, runtime: bool) -> Result<usize> {
    if v < 0 || v >= size as i64 {
        let msg = format!("index {v} is out of bounds for dimension {dim} with size {size}");
        return Err(if runtime {
            Error::runtime(msg)
        } else {
            Error::index(msg)
        });
    }
    Ok(v as usize)
}

/// Shape checks shared by gather and scatter.
pub(super) fn check_gather_shapes(
    op: &str,
    this: &Tensor,
    dim: usize,
    index: &Tensor,
    src: Option<&Tensor>,
) -> Result<()> {
    if index.ndim() != this.ndim() {
        return Err(Error::runtime(format!(
            "{op}(): Index tensor must have the same number of dimensions as {} tensor",
            if src.is_some() { "self" } else { "input" }
        )));
    }
    if let Some(s) = src {
        if s.ndim() != this.ndim() {
            return Err(Error::runtime(format!(
                "{op}(): Index tensor must have the same number of dimensions as src tensor"
            )));
        }
    }
    for k in 0..this.ndim() {
        let bad_self = k != dim && index.shape()[k] > this.shape()[k];
        let bad_src = src.is_some_and(|s| index.shape()[k] > s.shape()[k]);
        if bad_self || bad_src {
            return Err(Error::runtime(match src {
                None => format!(
                    "Size does not match at dimension {k} expected index {} to be smaller than self {} apart from dimension {dim}",
                    fmt_shape(index.shape()),
                    fmt_shape(this.shape())
                ),
                Some(s) => format!(
                    "Expected index {} to be smaller than self {} apart from dimension {dim} and to be smaller size than src {}",
                    fmt_shape(index.shape()),
                    fmt_shape(this.shape()),
                    fmt_shape(s.shape())
                ),
            }));
        }
    }
    Ok(())
}

/// The source of a scatter: a tensor or one value.
pub(super) enum ScatterSrc<'a> {
    Tensor(&'a Tensor),
    Value(Scalar),
}

/// `index` for a tangent: repeated along a leading batch dim, if any.
pub(super) fn batch_index(t: &Tangents, index: &Tensor) -> Result<Tensor> {
    match t.batch() {
        Some(_) => index.expand(&crate::ops::view::isizes(&t.shape(index.shape()))),
        None => Ok(index.clone()),
    }
}

/// The gradient of a scatter's `src`: `g` gathered at `index`, padded with
/// zeros where `src` is larger than `index`.
pub(super) fn gather_for_src(
    g: &Tensor,
    dim: isize,
    index: &Tensor,
    src_shape: &[usize],
) -> Result<Tensor> {
    let picked = g.gather(dim, index)?;
    if picked.shape() == src_shape {
        return Ok(picked);
    }
    let ishape = index.shape().to_vec();
    let view: crate::ops::view::ViewFn = std::sync::Arc::new(move |t: &Tensor| {
        let mut t = t.clone();
        for (k, &n) in ishape.iter().enumerate() {
            t = t.narrow(k as isize, 0, n)?;
        }
        Ok(t)
    });
    crate::ops::view::view_scatter(&picked, src_shape, "ScatterSrcBackward0", view)
}

/// The gradient of index_add/index_copy's `source`: `g`'s slices at
/// `index`, in `source`'s rank (a 0-dim source gets a 0-dim gradient).
pub(super) fn select_for_source(
    g: &Tensor,
    dim: isize,
    index: &Tensor,
    source_ndim: usize,
) -> Result<Tensor> {
    let g1 = if g.ndim() == 0 {
        g.reshape(&[1])?
    } else {
        g.clone()
    };
    let s = g1.index_select(dim, index)?;
    if source_ndim == 0 {
        return s.reshape(&[]);
    }
    Ok(s)
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum SliceMode {
    Add,
    Copy,
    Fill,
}

/// `x * alpha` for index_add (alpha 1 is the identity; bool ignores it).
pub(super) fn scale_fn<T: Element>() -> fn(T, T) -> T {
    fn mul<T: Element, U: Arith>(x: T, a: T) -> T {
        T::cast_from(U::mul(U::cast_from(x), U::cast_from(a)))
    }
    match T::DTYPE {
        DType::Bool => |x: T, _a: T| x,
        DType::UInt8 => mul::<T, u8>,
        DType::Int8 => mul::<T, i8>,
        DType::Int16 => mul::<T, i16>,
        DType::Int32 => mul::<T, i32>,
        DType::Int64 => mul::<T, i64>,
        DType::Float32 => mul::<T, f32>,
        DType::Float64 => mul::<T, f64>,
        DType::Float16 => mul::<T, crate::f16>,
        DType::BFloat16 => mul::<T, crate::bf16>,
        DType::Complex64 => mul::<T, crate::ComplexFloat>,
        DType::Complex128 => mul::<T, crate::ComplexDouble>,
    }
}

pub(super) fn check_mask(op: &str, mask: &Tensor) -> Result<()> {
    if mask.dtype() != DType::Bool {
        return Err(Error::runtime(format!(
            "{op} only supports boolean masks, but got mask with dtype {}",
            mask.dtype()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::autograd::{enter_batched_dual_level, exit_dual_level, make_dual, unpack_dual};
    use crate::{Scalar, Tensor};

    fn f64s(v: &[f64], shape: &[usize]) -> Tensor {
        Tensor::from_slice(v, shape).unwrap()
    }

    fn tangent(t: &Tensor) -> Vec<f64> {
        unpack_dual(t, None).unwrap().1.unwrap().to_vec::<f64>()
    }

    /// Forward formulas that handle a batch only for some inputs: in a
    /// batched level, the others are taken row by row and stacked.
    #[test]
    fn batched_tangents_with_and_without_a_batch_formula() {
        assert_eq!(enter_batched_dual_level(3).unwrap(), 0);
        let r = std::panic::catch_unwind(|| {
            let i = |v: &[i64]| Tensor::from_vec(v.to_vec());
            // 0-dim input: no dim to move past the batch dim, so by rows.
            let x0 = make_dual(&f64s(&[2.0], &[]), &f64s(&[1.0, 2.0, 3.0], &[3]), None).unwrap();
            let y = x0.index_select(0, &i(&[0])).unwrap();
            assert_eq!(tangent(&y), [1.0, 2.0, 3.0]);
            let y = x0.gather(0, &Tensor::scalar(0i64)).unwrap();
            assert_eq!(tangent(&y), [1.0, 2.0, 3.0]);
            let y = x0.index_fill(0, &i(&[0]), Scalar::Int(5)).unwrap();
            assert_eq!(tangent(&y), [0.0, 0.0, 0.0]);

            // A 1-D input: the batch formula.
            let tx = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0];
            let x1 = make_dual(&f64s(&[0.0; 3], &[3]), &f64s(&tx, &[3, 3]), None).unwrap();
            let y = x1.index_select(0, &i(&[2, 0])).unwrap();
            assert_eq!(tangent(&y), [3.0, 1.0, 6.0, 4.0, 9.0, 7.0]);

            // A 0-dim source: rows, with zeros for self's missing tangent.
            let s0 = make_dual(&f64s(&[1.0], &[]), &f64s(&[1.0, 2.0, 3.0], &[3]), None).unwrap();
            let base = f64s(&[0.0; 3], &[3]);
            let y = base.index_add(0, &i(&[1]), &s0, Scalar::Int(2)).unwrap();
            assert_eq!(tangent(&y), [0.0, 2.0, 0.0, 0.0, 4.0, 0.0, 0.0, 6.0, 0.0]);

            // A mask of more dims than self: rows, each broadcast to (2, 2).
            let x = make_dual(
                &f64s(&[0.0; 2], &[2]),
                &f64s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2]),
                None,
            )
            .unwrap();
            let mask = Tensor::from_slice(&[true, false, false, true], &[2, 2]).unwrap();
            let y = x.masked_fill(&mask, Scalar::Int(0)).unwrap();
            assert_eq!(
                tangent(&y),
                [0.0, 2.0, 1.0, 0.0, 0.0, 4.0, 3.0, 0.0, 0.0, 6.0, 5.0, 0.0]
            );
        });
        exit_dual_level(None).unwrap();
        r.unwrap();
    }
}
