//! Vector and matrix norms.
//!
//! Vector norms accumulate in f64. Matrix norms built from sums (`fro`,
//! `1`, `-1`, `inf`, `-inf`) are compositions of reductions; the spectral
//! ones (`2`, `-2`, `nuc`) use singular values from a one-sided Jacobi
//! iteration in f64 (Hestenes' method: plane rotations of the columns until
//! they are mutually orthogonal; this diagonalises `AᵀA` without forming it,
//! so small singular values keep their relative accuracy).

use super::{
    dim_mask, float_input, mask_dims, reduced_count, saved_input_and_result, sum_tangent,
    unsqueeze_reduced, Bounds,
};
use crate::autograd::derivatives;
use crate::kernels::access::{lock, slice};
use crate::kernels::reduce::{out_shape, output, reduce, Fold};
use crate::tensor::wrap_dim;
use crate::{dispatch_float, DType, Element, Error, Result, Tensor};

/// Which norm `matrix_norm` computes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MatrixOrd {
    /// Frobenius: square root of the sum of squares.
    Fro,
    /// Nuclear: sum of singular values.
    Nuc,
    /// `1`, `-1`, `2`, `-2`, `inf` or `-inf`.
    P(f64),
}

/// The f64 accumulators of vector norms, one instantiation per kind so the
/// inner loops carry no dispatch.
const POW: u8 = 0; // sum |x|^p (p not 0, 1, 2 or ±inf)
const ABS: u8 = 1; // sum |x|
const SQ: u8 = 2; // sum x²
const MAX_ABS: u8 = 3; // max |x| (NaN propagates)
const MIN_ABS: u8 = 4; // min |x| (NaN propagates)
const COUNT: u8 = 5; // number of nonzeros

struct NormF<const K: u8>(f64);
impl<T: Element, const K: u8> Fold<T> for NormF<K> {
    type Acc = f64;
    #[inline(always)]
    fn init(&self) -> f64 {
        if K == MIN_ABS {
            f64::INFINITY
        } else {
            0.0
        }
    }
    #[inline(always)]
    fn step(&self, acc: f64, x: T, _: usize) -> f64 {
        let a = x.to_f64().abs();
        match K {
            POW => acc + a.powf(self.0),
            ABS => acc + a,
            SQ => acc + a * a,
            MAX_ABS => {
                if (a > acc) | a.is_nan() {
                    a
                } else {
                    acc
                }
            }
            MIN_ABS => {
                if (a < acc) | a.is_nan() {
                    a
                } else {
                    acc
                }
            }
            _ => acc + (a != 0.0) as u8 as f64,
        }
    }
    #[inline(always)]
    fn merge(&self, a: f64, b: f64) -> f64 {
        match K {
            MAX_ABS | MIN_ABS => <Self as Fold<f64>>::step(self, a, b, 0),
            _ => a + b,
        }
    }
}

/// Reduces with `NormF<K>` and writes `finish(acc)` as `T`.
fn norm_kind<T: Element, const K: u8>(
    x: &Tensor,
    mask: &[bool],
    ord: f64,
    keepdim: bool,
) -> Result<Tensor> {
    let shape = out_shape(x.shape(), mask, keepdim);
    let (out, p) = output::<T>(&shape);
    let finish = move |a: f64| -> f64 {
        match K {
            SQ => a.sqrt(),
            POW => a.powf(1.0 / ord),
            _ => a,
        }
    };
    // SAFETY: each output index is written exactly once; `out` is fresh.
    reduce::<T, _>(x, mask, &NormF::<K>(ord), |i, a| unsafe {
        p.write(i, T::from_f64(finish(a)))
    })?;
    Ok(out)
}

/// Vector norm of order `ord` over an already-masked float tensor.
fn vector_norm_masked<T: Element + Bounds>(
    x: &Tensor,
    mask: &[bool],
    ord: f64,
    keepdim: bool,
) -> Result<Tensor> {
    if ord == 2.0 {
        norm_kind::<T, SQ>(x, mask, ord, keepdim)
    } else if ord == 1.0 {
        norm_kind::<T, ABS>(x, mask, ord, keepdim)
    } else if ord == 0.0 {
        norm_kind::<T, COUNT>(x, mask, ord, keepdim)
    } else if ord == f64::INFINITY {
        norm_kind::<T, MAX_ABS>(x, mask, ord, keepdim)
    } else if ord == f64::NEG_INFINITY {
        norm_kind::<T, MIN_ABS>(x, mask, ord, keepdim)
    } else {
        norm_kind::<T, POW>(x, mask, ord, keepdim)
    }
}

derivatives! {
    table FORMULAS("norms: vector_norm") for Tensor;

    /// `linalg.vector_norm(x, ord=2, dim=None, keepdim=False, dtype=None)`.
    pub fn vector_norm(
        &self,
        ord: f64,
        dims: Option<&[isize]>,
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Tensor {
        before {
            if ord.is_nan() {
                return Err(Error::runtime("linalg.vector_norm: ord must not be NaN"));
            };
            let x = float_input("linalg.vector_norm", self, dtype)?;
            let mask = dim_mask(x.ndim(), dims)?;
            if x.numel() == 0 && (ord < 0.0 || ord == f64::INFINITY) {
                let empty_reduction = reduced_count(x.shape(), &mask) == 0;
                if empty_reduction {
                    return Err(Error::runtime(format!(
                        "linalg.vector_norm cannot compute the {ord} norm on an empty tensor because the operation does not have an identity"
                    )));
                }
            };
        }
        record "LinalgVectorNormBackward0", [self];
        compute {
            let (fmask, shape) = (mask.clone(), x.shape().to_vec());
        } => out = dispatch_float!(x.dtype(), T => vector_norm_masked::<T>(&x, &mask, ord, keepdim),
            else unreachable_float(x.dtype()))?;
        save |s| {
            s.save("self", self);
            s.save_output("result", &out, 0);
        }
        backward |ctx, g| {
            let (x, out) = saved_input_and_result(ctx)?;
            let gu = unsqueeze_reduced(&g[0], &shape, &mask, keepdim)?;
            let nu = unsqueeze_reduced(&out, &shape, &mask, keepdim)?;
            Ok(vec![Some(norm_backward(&gu, &x, &nu, ord, &mask)?)])
        };
        // sum(w t), `w` the backward's weights for g = 1.
        forward formula(|t| {
            if ord == 0.0 {
                return Ok(vec![None]);
            }
            t.map1(|tx| {
                let nu = unsqueeze_reduced(&out, x.shape(), &fmask, keepdim)?;
                let ones = Tensor::ones(nu.shape(), nu.dtype());
                let w = norm_backward(&ones, &x, &nu, ord, &fmask)?;
                sum_tangent(t, &tx.mul(&w)?, &fmask, keepdim)
            })
        });
        batched rows because
            "the gradient is reshaped to the input's rank, which has no room for a batch dim";
    }
}

impl Tensor {
    /// `norm(p=2, dim=None, keepdim=False, dtype=None)`: a vector norm over
    /// `dims` (torch's `Tensor.norm` with a numeric `p` or `"fro"`).
    pub fn norm(
        &self,
        p: f64,
        dims: Option<&[isize]>,
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        if !self.dtype().is_floating_point() && dtype.is_none() {
            return Err(Error::runtime(format!(
                "norm(): input dtype should be either floating point or complex. Got {} instead.",
                self.dtype().scalar_type_name()
            )));
        }
        self.vector_norm(p, dims, keepdim, dtype)
    }

    /// `linalg.matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False,
    /// dtype=None)`.
    pub fn matrix_norm(
        &self,
        ord: MatrixOrd,
        dims: (isize, isize),
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        let a = float_input("linalg.matrix_norm", self, dtype)?;
        if a.ndim() < 2 {
            return Err(Error::runtime(format!(
                "linalg.matrix_norm: The input tensor A must have at least 2 dimensions. (got shape {:?})",
                a.shape()
            )));
        }
        let (r, c) = (wrap_dim(dims.0, a.ndim())?, wrap_dim(dims.1, a.ndim())?);
        if r == c {
            return Err(Error::runtime(format!(
                "linalg.matrix_norm: dims must be different. Got ({}, {})",
                dims.0, dims.1
            )));
        }
        let (ri, ci) = (r as isize, c as isize);
        match ord {
            MatrixOrd::Fro => a.vector_norm(2.0, Some(&[ri, ci]), keepdim, None),
            MatrixOrd::P(p) if p.abs() == 1.0 || p.is_infinite() => {
                // 1 / -1: max / min over columns of the column sums of |a|;
                // inf / -inf: the same over rows.
                let (sum_dim, pick_dim) = if p.abs() == 1.0 { (ri, ci) } else { (ci, ri) };
                if a.shape()[r] == 0 || a.shape()[c] == 0 {
                    return Err(Error::runtime(format!(
                        "linalg.matrix_norm: the {p} norm of an empty matrix (shape {:?}) is not defined",
                        a.shape()
                    )));
                }
                let sums = a.vector_norm(1.0, Some(&[sum_dim]), keepdim, None)?;
                let pick_dim = if keepdim || pick_dim < sum_dim {
                    pick_dim
                } else {
                    pick_dim - 1
                };
                if p > 0.0 {
                    sums.amax(Some(&[pick_dim]), keepdim)
                } else {
                    sums.amin(Some(&[pick_dim]), keepdim)
                }
            }
            MatrixOrd::P(p) if p.abs() == 2.0 => spectral(&a, r, c, keepdim, |s| {
                if p > 0.0 {
                    s.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
                } else {
                    s.iter().cloned().fold(f64::INFINITY, f64::min)
                }
            }),
            MatrixOrd::Nuc => spectral(&a, r, c, keepdim, |s| s.iter().sum()),
            MatrixOrd::P(p) => Err(Error::runtime(format!(
                "linalg.matrix_norm: Order {p} not supported."
            ))),
        }
    }

    /// `linalg.svdvals` restricted to what the norms need: the singular
    /// values (descending, f64) of each matrix over the last two dims.
    pub fn singular_values(&self) -> Result<Tensor> {
        let a = float_input("singular_values", self, None)?;
        if a.ndim() < 2 {
            return Err(Error::runtime(format!(
                "singular_values: expected a tensor with at least 2 dims, got shape {:?}",
                a.shape()
            )));
        }
        let nd = a.ndim();
        let (m, n) = (a.shape()[nd - 2], a.shape()[nd - 1]);
        let k = m.min(n);
        let a64 = a.to_dtype(DType::Float64).contiguous();
        let batch: usize = a.shape()[..nd - 2].iter().product();
        let mut shape = a.shape()[..nd - 2].to_vec();
        shape.push(k);
        let mut vals = Vec::with_capacity(batch * k);
        {
            let _g = lock(&[&a64], None);
            // SAFETY: contiguous f64 tensor, read-locked.
            let data = unsafe { slice::<f64>(&a64) };
            for b in 0..batch {
                let mut s = jacobi_singular_values(&data[b * m * n..(b + 1) * m * n], m, n);
                s.sort_by(|x, y| y.total_cmp(x));
                vals.extend(s);
            }
        }
        Tensor::from_slice(&vals, &shape)
    }
}

fn unreachable_float(d: DType) -> Result<Tensor> {
    Err(Error::runtime(format!(
        "expected a floating dtype, got {d}"
    )))
}

/// A spectral norm: `pick` maps each matrix's singular values to a number.
fn spectral(
    a: &Tensor,
    r: usize,
    c: usize,
    keepdim: bool,
    pick: impl Fn(&[f64]) -> f64,
) -> Result<Tensor> {
    let moved = a.movedim(&[r as isize, c as isize], &[-2, -1])?;
    let s = moved.singular_values()?;
    let nd = s.ndim();
    let k = s.shape()[nd - 1];
    let batch: usize = s.shape()[..nd - 1].iter().product();
    let vals = s.to_vec::<f64>();
    if k == 0 && pick(&[]).is_infinite() {
        return Err(Error::runtime(format!(
            "linalg.matrix_norm: the spectral norm of an empty matrix (shape {:?}) is not defined",
            a.shape()
        )));
    }
    let out: Vec<f64> = (0..batch)
        .map(|b| pick(&vals[b * k..(b + 1) * k]))
        .collect();
    let mut t = Tensor::from_slice(&out, &s.shape()[..nd - 1])?.to_dtype(a.dtype());
    if keepdim {
        for d in [r.min(c), r.max(c)] {
            t = t.unsqueeze(d as isize)?;
        }
        t = t.contiguous();
    }
    Ok(t)
}

/// Singular values of the row-major `m × n` matrix `a` by one-sided Jacobi
/// rotations on the columns of `a` (or of `aᵀ` when wider than tall).
fn jacobi_singular_values(a: &[f64], m: usize, n: usize) -> Vec<f64> {
    // Columns of the tall orientation, each stored contiguously.
    let (rows, cols) = if m >= n { (m, n) } else { (n, m) };
    let mut col: Vec<Vec<f64>> = (0..cols)
        .map(|j| {
            (0..rows)
                .map(|i| if m >= n { a[i * n + j] } else { a[j * n + i] })
                .collect()
        })
        .collect();
    let dot = |x: &[f64], y: &[f64]| x.iter().zip(y).map(|(p, q)| p * q).sum::<f64>();
    for _sweep in 0..80 {
        let mut rotated = false;
        for p in 0..cols {
            for q in p + 1..cols {
                let (alpha, beta, gamma) = (
                    dot(&col[p], &col[p]),
                    dot(&col[q], &col[q]),
                    dot(&col[p], &col[q]),
                );
                if gamma == 0.0 || gamma.abs() <= f64::EPSILON * (alpha * beta).sqrt() {
                    continue;
                }
                rotated = true;
                // The rotation that zeroes the (p, q) entry of the 2×2 Gram
                // block [[alpha, gamma], [gamma, beta]].
                let zeta = (beta - alpha) / (2.0 * gamma);
                let t = zeta.signum() / (zeta.abs() + (1.0 + zeta * zeta).sqrt());
                let cs = 1.0 / (1.0 + t * t).sqrt();
                let sn = cs * t;
                let (lo, hi) = col.split_at_mut(q);
                for (x, y) in lo[p].iter_mut().zip(hi[0].iter_mut()) {
                    let (u, v) = (*x, *y);
                    *x = cs * u - sn * v;
                    *y = sn * u + cs * v;
                }
            }
        }
        if !rotated {
            break;
        }
    }
    col.iter().map(|c| dot(c, c).sqrt()).collect()
}

/// Gradient of the vector `ord`-norm `n` of `x` (`g` and `n` with the
/// reduced dims kept as size 1), with torch's subgradients:
/// `0`: none; `1`: `g sign(x)`; `2`: `g x / n` (0 where `n = 0`); `±inf`:
/// `g sign(x)` shared evenly among the elements with `|x| = n`; otherwise
/// `g x |x|^(p-2) / n^(p-1)` (0 where `n = 0`).
fn norm_backward(g: &Tensor, x: &Tensor, n: &Tensor, ord: f64, mask: &[bool]) -> Result<Tensor> {
    let zero = Tensor::scalar(0.0);
    if ord == 0.0 {
        return x.zeros_like();
    }
    if ord == 1.0 {
        return g.mul(&x.sign()?);
    }
    if ord.is_infinite() {
        let hit = x.abs()?.eq(n)?;
        let count = hit.sum(Some(&mask_dims(mask)), true, None)?;
        return x.sign()?.mul(&hit)?.mul(&g.div(&count)?);
    }
    let at_zero = n.eq(&zero)?;
    if ord == 2.0 {
        return x.mul(&zero.r#where(&at_zero, &g.div(n)?)?);
    }
    let scale = zero.r#where(&at_zero, &g.div(&n.pow(&Tensor::scalar(ord - 1.0))?)?)?;
    x.mul(&x.abs()?.pow(&Tensor::scalar(ord - 2.0))?)?
        .mul(&scale)
}
