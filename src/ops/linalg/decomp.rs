//! LU decomposition with partial pivoting (in f64 whatever the input's
//! float dtype) and what it gives: `linalg.inv`, `linalg.det` and
//! `linalg.solve`, batched with broadcasting.

use super::matmul::{batch_offsets, lift, xshape};
use crate::autograd::derivatives;
use crate::kernels::access::{elem_ptr, lock};
use crate::tensor::broadcast_shapes;
use crate::tensor::Float;
use crate::{Element, Error, Result, Tensor};
use rayon::prelude::*;

/// Batches with at least this many flops (n^3 per matrix) run in parallel.
const PARALLEL_WORK: usize = 1 << 16;

/// An n x n matrix factored in place as `P A = L U` (row-major, unit
/// lower L below the diagonal, U on and above it).
struct Lu {
    n: usize,
    a: Vec<f64>,
    /// `perm[i]`: the original row now at row i.
    perm: Vec<usize>,
    /// +1 or -1: the permutation's parity.
    sign: f64,
    /// First column (0-based) whose pivot was exactly zero.
    zero_pivot: Option<usize>,
}

impl Lu {
    /// Factors `a` (row-major n x n); like LAPACK's getrf it continues past
    /// a zero pivot and records the first one.
    fn new(mut a: Vec<f64>, n: usize) -> Lu {
        let mut perm: Vec<usize> = (0..n).collect();
        let mut sign = 1.0;
        let mut zero_pivot = None;
        for j in 0..n {
            let mut p = j;
            let mut best = a[j * n + j].abs();
            for i in j + 1..n {
                let v = a[i * n + j].abs();
                if v > best {
                    best = v;
                    p = i;
                }
            }
            if p != j {
                for c in 0..n {
                    a.swap(j * n + c, p * n + c);
                }
                perm.swap(j, p);
                sign = -sign;
            }
            let pivot = a[j * n + j];
            if pivot == 0.0 {
                zero_pivot.get_or_insert(j);
                continue;
            }
            for i in j + 1..n {
                let l = a[i * n + j] / pivot;
                a[i * n + j] = l;
                if l != 0.0 {
                    let (top, bottom) = a.split_at_mut(i * n);
                    let urow = &top[j * n + j + 1..j * n + n];
                    for (x, &u) in bottom[j + 1..n].iter_mut().zip(urow) {
                        *x -= l * u;
                    }
                }
            }
        }
        Lu {
            n,
            a,
            perm,
            sign,
            zero_pivot,
        }
    }

    fn det(&self) -> f64 {
        (0..self.n).fold(self.sign, |d, i| d * self.a[i * self.n + i])
    }

    /// Solves `A X = B` for row-major `b` (n x k) in place; U must be
    /// nonsingular.
    fn solve(&self, b: &[f64], k: usize) -> Vec<f64> {
        let n = self.n;
        let mut x = vec![0.0; n * k];
        for i in 0..n {
            x[i * k..(i + 1) * k].copy_from_slice(&b[self.perm[i] * k..(self.perm[i] + 1) * k]);
        }
        // Forward: L y = P b (unit diagonal).
        for i in 0..n {
            for j in 0..i {
                let l = self.a[i * n + j];
                if l != 0.0 {
                    let (top, rest) = x.split_at_mut(i * k);
                    for (xi, &xj) in rest[..k].iter_mut().zip(&top[j * k..(j + 1) * k]) {
                        *xi -= l * xj;
                    }
                }
            }
        }
        // Backward: U x = y.
        for i in (0..n).rev() {
            for j in i + 1..n {
                let u = self.a[i * n + j];
                if u != 0.0 {
                    let (head, tail) = x.split_at_mut(j * k);
                    for (xi, &xj) in head[i * k..(i + 1) * k].iter_mut().zip(&tail[..k]) {
                        *xi -= u * xj;
                    }
                }
            }
            let d = self.a[i * n + i];
            for v in &mut x[i * k..(i + 1) * k] {
                *v /= d;
            }
        }
        x
    }
}

/// Reads the `rows x cols` matrix at element offset `off` of `t` (last two
/// dims' strides) into a row-major f64 buffer.
///
/// # Safety
/// `t` is read-locked, of dtype `T`, and `off` is a batch offset of its
/// layout.
unsafe fn gather<T: Element>(t: &Tensor, off: usize, rows: usize, cols: usize) -> Vec<f64> {
    let nd = t.ndim();
    let (rs, cs) = (t.strides()[nd - 2], t.strides()[nd - 1]);
    let p = elem_ptr::<T>(t).add(off);
    let mut v = Vec::with_capacity(rows * cols);
    for i in 0..rows {
        for j in 0..cols {
            v.push((*p.add(i * rs + j * cs)).to_f64());
        }
    }
    v
}

/// Runs `f(i)` for each batch entry, in parallel when the work is large;
/// returns the results in order, or the error of the first failing entry.
fn per_batch<R: Send>(
    nb: usize,
    work: usize,
    f: impl Fn(usize) -> Result<R> + Sync + Send,
) -> Result<Vec<R>> {
    if nb > 1 && nb * work >= PARALLEL_WORK && crate::pool::kernel_threads() > 1 {
        crate::pool::install(|| (0..nb).into_par_iter().map(&f).collect())
    } else {
        (0..nb).map(f).collect()
    }
}

/// Writes row-major f64 blocks, one per batch entry, into a new contiguous
/// tensor of `shape` and dtype `T`.
fn assemble<T: Element>(blocks: Vec<Vec<f64>>, shape: &[usize]) -> Result<Tensor> {
    let data: Vec<T> = blocks.into_iter().flatten().map(T::from_f64).collect();
    Tensor::from_slice(&data, shape)
}

/// Checks that `a` is a float batch of square matrices, for `op`.
fn check_square(a: &Tensor, op: &str) -> Result<usize> {
    if !a.dtype().is_floating_point() {
        return Err(Error::runtime(format!(
            "{op}: Expected a floating point or complex tensor as input. Got {}",
            a.dtype().scalar_type_name()
        )));
    }
    let nd = a.ndim();
    if nd < 2 {
        return Err(Error::runtime(format!(
            "{op}: The input tensor A must have at least 2 dimensions."
        )));
    }
    let (r, c) = (a.shape()[nd - 2], a.shape()[nd - 1]);
    if r != c {
        return Err(Error::runtime(format!(
            "{op}: A must be batches of square matrices, but they are {r} by {c} matrices"
        )));
    }
    Ok(r)
}

/// "(Batch element i): " for batched inputs, as torch prefixes errors.
fn batch_prefix(batched: bool, i: usize) -> String {
    if batched {
        format!("(Batch element {i}): ")
    } else {
        String::new()
    }
}

fn inv_kernel<T: Float>(a: &Tensor, n: usize) -> Result<Tensor> {
    let nd = a.ndim();
    let batch = &a.shape()[..nd - 2];
    let offs = batch_offsets(batch, a.strides());
    let _g = lock(&[a], None);
    let eye: Vec<f64> = (0..n * n)
        .map(|i| if i / n == i % n { 1.0 } else { 0.0 })
        .collect();
    let blocks = per_batch(offs.len(), n * n * n, |i| {
        // SAFETY: `a` is read-locked and of dtype T; offs come from its layout.
        let lu = Lu::new(unsafe { gather::<T>(a, offs[i], n, n) }, n);
        if let Some(j) = lu.zero_pivot {
            return Err(Error::runtime(format!(
                "linalg.inv: {}The diagonal element {} is zero, the inversion could not be completed because the input matrix is singular.",
                batch_prefix(nd > 2, i),
                j + 1
            )));
        }
        Ok(lu.solve(&eye, n))
    })?;
    assemble::<T>(blocks, a.shape())
}

fn det_kernel<T: Float>(a: &Tensor, n: usize) -> Result<Tensor> {
    let nd = a.ndim();
    let batch = &a.shape()[..nd - 2];
    let offs = batch_offsets(batch, a.strides());
    let _g = lock(&[a], None);
    let dets = per_batch(offs.len(), n * n * n, |i| {
        // SAFETY: `a` is read-locked and of dtype T; offs come from its layout.
        let lu = Lu::new(unsafe { gather::<T>(a, offs[i], n, n) }, n);
        Ok(vec![lu.det()])
    })?;
    assemble::<T>(dets, batch)
}

fn solve_kernel<T: Float>(a: &Tensor, b: &Tensor, n: usize, k: usize) -> Result<Tensor> {
    let nd = a.ndim();
    let batch = &a.shape()[..nd - 2];
    let (oa, ob) = (
        batch_offsets(batch, a.strides()),
        batch_offsets(batch, b.strides()),
    );
    let batched = nd > 2;
    let _g = lock(&[a, b], None);
    let blocks = per_batch(oa.len(), n * n * (n + k), |i| {
        // SAFETY: `a` and `b` are read-locked and of dtype T; the offsets
        // come from their (broadcast) layouts.
        let (am, bm) = unsafe { (gather::<T>(a, oa[i], n, n), gather::<T>(b, ob[i], n, k)) };
        let lu = Lu::new(am, n);
        if lu.zero_pivot.is_some() {
            return Err(Error::runtime(format!(
                "torch.linalg.solve: {}The solver failed because the input matrix is singular.",
                batch_prefix(batched, i)
            )));
        }
        Ok(lu.solve(&bm, k))
    })?;
    let mut shape = batch.to_vec();
    shape.extend([n, k]);
    assemble::<T>(blocks, &shape)
}

derivatives! {
    table FORMULAS("linear algebra: inv, det, solve") for Tensor;

    /// `linalg.inv(A)`: inverse of each square matrix (RuntimeError if one
    /// is singular).
    pub fn inverse(&self) -> Tensor {
        before {
            let n = check_square(self, "linalg.inv")?;
        }
        record "LinalgInvExBackward0", [self];
        compute => out = crate::dispatch_float!(self.dtype(), T => inv_kernel::<T>(self, n), else unreachable_dtype(self))?;
        save |s| {
            s.save_output("inverse", &out, 0);
        }
        backward |ctx, g| {
            // -A^{-T} g A^{-T}
            let inv_t = ctx.saved(0)?.transpose(-2, -1)?;
            let ga = inv_t.matmul(&g[0])?.matmul(&inv_t)?;
            Ok(vec![Some(ga.mul(&Tensor::scalar(-1.0))?)])
        };
        // -A^{-1} t A^{-1}
        forward formula(|t| t.map1(|ta| out.matmul(ta)?.matmul(&out)?.neg()));
        batched rows because "not declared batched (its products would broadcast over a batch of g)";
    }

    /// `linalg.det(A)`: determinant of each square matrix (0 if singular).
    pub fn det(&self) -> Tensor {
        before {
            let n = check_square(self, "linalg.det")?;
        }
        record "LinalgDetBackward0", [self];
        compute => out = crate::dispatch_float!(self.dtype(), T => det_kernel::<T>(self, n), else unreachable_dtype(self))?;
        save |s| {
            s.save("A", self);
            s.save_output("result", &out, 0);
        }
        backward |ctx, g| {
            // g det(A) A^{-T}; a singular A has no inverse to use here and
            // raises.
            let (a, det) = (ctx.saved(0)?, ctx.saved(1)?);
            let mut shape: Vec<isize> = det.shape().iter().map(|&n| n as isize).collect();
            shape.extend([1, 1]);
            let scale = g[0].mul(&det)?.reshape(&shape)?;
            let inv_t = a.inverse()?.transpose(-2, -1)?;
            Ok(vec![Some(scale.mul(&inv_t)?)])
        };
        // det(A) trace(A^{-1} t) = det(A) sum(A^{-T} * t); a singular A
        // raises, as in backward.
        forward formula(|t| {
            t.map1(|ta| {
                let inv_t = self.inverse()?.transpose(-2, -1)?;
                out.mul(&ta.mul(&inv_t)?.sum(Some(&[-2, -1]), false, None)?)
            })
        });
        batched rows because "g det(A) is reshaped to det's shape with two unit dims, which has no batch dim";
    }

    /// `linalg.solve(A, B)`: X with `A X = B`, batched with broadcasting; B
    /// may be a (batch of) vector(s).
    pub fn linalg_solve(&self, b: &Tensor) -> Tensor {
        before {
            let a = self;
            let n = check_square(a, "linalg.solve")?;
            if b.dtype() != a.dtype() {
                return Err(Error::runtime(format!(
                    "linalg.solve: Expected A and B to have the same dtype, but found A of type {} and B of type {} instead",
                    a.dtype().scalar_type_name(),
                    b.dtype().scalar_type_name()
                )));
            };
            if b.ndim() == 0 {
                return Err(Error::runtime(
                    "linalg.solve: The input tensor B must have at least 1 dimensions.",
                ));
            };
            let vector =
                b.ndim() == 1 || (b.ndim() + 1 == a.ndim() && b.shape() == &a.shape()[..a.ndim() - 1]);
        }
        record "LinalgSolveExBackward0", [a, b];
        compute {
            let b2 = if vector { b.unsqueeze(-1)? } else { b.clone() };
            let nb = b2.ndim();
            if b2.shape()[nb - 2] != n {
                return Err(Error::runtime(format!(
                    "linalg.solve: Incompatible shapes of A and B for the equation AX = B ({} and {})",
                    xshape(&a.shape()[a.ndim() - 2..]),
                    xshape(&b2.shape()[nb - 2..])
                )));
            };
            let k = b2.shape()[nb - 1];
            let batch = broadcast_shapes(&a.shape()[..a.ndim() - 2], &b2.shape()[..nb - 2])?;
            let mut sa = batch.to_vec();
            sa.extend([n, n]);
            let mut sb = batch.to_vec();
            sb.extend([n, k]);
            let (ae, be) = (a.broadcast_to(&sa)?, b2.broadcast_to(&sb)?);
            let x = crate::dispatch_float!(a.dtype(), T => solve_kernel::<T>(&ae, &be, n, k), else unreachable_dtype(a))?;
        } => x = if vector {
            let mut shape = x.shape().to_vec();
            shape.pop();
            Tensor::from_parts(
                x.storage().clone(),
                crate::Layout::contiguous(&shape),
                x.dtype(),
            )?
        } else {
            x
        };
        save |s, needs| {
            s.save("A", a);
            if needs[0] {
                s.save_output("result", &x, 0);
            } else {
                s.save_opt("result", None);
            }
        }
        backward |ctx, g| {
            // gB = A^{-T} g, gA = -gB X^T
            let a = ctx.saved(0)?;
            let gb = a.transpose(-2, -1)?.linalg_solve(&g[0])?;
            let ga = if ctx.needs(0) {
                let x = ctx.saved(1)?;
                let (gb2, x2) = if vector {
                    (column(&gb)?, column(&x)?)
                } else {
                    (gb.clone(), x)
                };
                let ga = gb2.matmul(&x2.transpose(-2, -1)?)?;
                Some(ga.mul(&Tensor::scalar(-1.0))?)
            } else {
                None
            };
            Ok(vec![ga, ctx.needs(1).then_some(gb)])
        };
        // dX = A^{-1} (tB - tA X), in columns.
        forward formula(|t| {
            let xc = if vector { column(&x)? } else { x.clone() };
            let full: Vec<isize> = t.shape(xc.shape()).iter().map(|&n| n as isize).collect();
            // A batched tangent's batch dim goes in front of all of X's.
            let lifted = |ti: Tensor| match t.batch() {
                Some(_) => lift(&ti, full.len()),
                None => Ok(ti),
            };
            let rhs = t.combine(|i, ti| match i {
                0 => lifted(ti.clone())?.matmul(&xc)?.neg(),
                _ if vector => lifted(column(ti)?)?.expand(&full),
                _ => lifted(ti.clone())?.expand(&full),
            })?;
            let Some(rhs) = rhs else {
                return Ok(vec![None]);
            };
            let dx = solve_rows(a, &rhs.expand(&full)?, t.batch().is_some())?;
            Ok(vec![Some(if vector {
                dx.squeeze(Some(&[-1]))?
            } else {
                dx
            })])
        });
        batched rows because "a batch of g for a vector B would be read as a matrix of columns";
    }
}

/// The error for a dtype that `check_square` already rejected (kept as an
/// error, not a panic).
fn unreachable_dtype(t: &Tensor) -> Result<Tensor> {
    Err(Error::runtime(format!(
        "linalg: unsupported dtype {}",
        t.dtype()
    )))
}

/// `A^{-1} rhs` for `rhs` of a solution's shape in columns, with an extra
/// leading batch dim when `batched`: its rows become more columns, so each
/// matrix of `a` is factored once.
fn solve_rows(a: &Tensor, rhs: &Tensor, batched: bool) -> Result<Tensor> {
    if !batched {
        return a.linalg_solve(rhs);
    }
    let shape: Vec<isize> = rhs.shape().iter().map(|&n| n as isize).collect();
    let nd = shape.len();
    let mut wide = shape[1..].to_vec();
    wide[nd - 2] = -1;
    let x = a.linalg_solve(&rhs.movedim(&[0], &[-1])?.reshape(&wide)?)?;
    let mut split = shape[1..].to_vec();
    split.push(shape[0]);
    x.reshape(&split)?.movedim(&[-1], &[0])
}

/// `t` with a trailing unit dim (a batch of vectors as column matrices).
fn column(t: &Tensor) -> Result<Tensor> {
    let mut shape: Vec<isize> = t.shape().iter().map(|&n| n as isize).collect();
    shape.push(1);
    t.reshape(&shape)
}
