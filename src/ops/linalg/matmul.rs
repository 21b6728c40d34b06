//! Matrix products: torch's `matmul`, `mm`, `bmm`, `mv`, `dot`, `outer`,
//! `addmm` and `trace` on the strided, batched GEMM driver of
//! `kernels::matmul` (which takes the operands' own strides, so nothing is
//! copied before the kernel), and the choice of its floating-point backend.

use crate::autograd::{derivatives, BackwardCtx, Grads, Saver, Tangents};
use crate::kernels::copy::cast;
use crate::kernels::linalg;
pub use crate::kernels::matmul::GemmBackend;
use crate::kernels::matmul::{self, gemm_batched};
use crate::tensor::broadcast_shapes;
use crate::{DType, Error, Layout, Result, Scalar, Tensor};
use std::sync::atomic::{AtomicU8, Ordering};

/// 0: not chosen yet (read `FERROGRAD_GEMM`), 1: gemm, 2: matrixmultiply.
static BACKEND: AtomicU8 = AtomicU8::new(0);

/// The backend used for floating-point products (from `FERROGRAD_GEMM` on
/// first use unless set with [`set_gemm_backend`]).
pub fn gemm_backend() -> GemmBackend {
    match BACKEND.load(Ordering::Relaxed) {
        1 => GemmBackend::Gemm,
        2 => GemmBackend::MatrixMultiply,
        _ => {
            let b = std::env::var("FERROGRAD_GEMM")
                .ok()
                .and_then(|v| GemmBackend::from_name(v.trim()))
                .unwrap_or(GemmBackend::Gemm);
            set_gemm_backend(b);
            b
        }
    }
}

/// Selects the backend for floating-point products process-wide.
pub fn set_gemm_backend(backend: GemmBackend) {
    let code = match backend {
        GemmBackend::Gemm => 1,
        GemmBackend::MatrixMultiply => 2,
    };
    BACKEND.store(code, Ordering::Relaxed);
}

/// `matmul` computed with an explicit backend (for benchmarks).
pub fn matmul_with_backend(a: &Tensor, b: &Tensor, backend: GemmBackend) -> Result<Tensor> {
    matmul_impl(a, b, backend)
}

/// Shape as torch prints it in product errors: `2x3`.
pub(crate) fn xshape(s: &[usize]) -> String {
    s.iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

/// Runs `$body` with `$T` bound to a numeric element type; bool raises
/// torch's "not implemented for 'Bool'" error naming `$op`.
macro_rules! dispatch_mat {
    ($dtype:expr, $op:expr, $T:ident => $body:expr) => {
        match $dtype {
            // Widened to float32 by the callers before they get here.
            DType::Float16 | DType::BFloat16 => Err(Error::runtime(format!(
                "\"{}\": 16-bit operands must be widened first",
                $op
            ))),
            DType::Bool => Err(Error::runtime(format!(
                "\"{}\" not implemented for 'Bool'",
                $op
            ))),
            dt => $crate::dispatch_int!(dt, $T => $body,
                else $crate::dispatch_wide_float!(dt, $T => $body,
                else $crate::dispatch_complex!(dt, $T => $body, else unreachable!()))),
        }
    };
}

/// Checks that both product operands share a dtype (torch never promotes
/// here) and that it is not bool.
fn check_same_dtype(a: &Tensor, b: &Tensor, op: &str) -> Result<()> {
    if a.dtype() != b.dtype() {
        return Err(Error::runtime(format!(
            "expected m1 and m2 to have the same dtype, but got: {} != {}",
            a.dtype().c_type_name(),
            b.dtype().c_type_name()
        )));
    }
    if a.dtype() == DType::Bool {
        return Err(Error::runtime(format!(
            "\"{op}\" not implemented for 'Bool'"
        )));
    }
    Ok(())
}

/// A fresh contiguous tensor's data under another shape, as a new base
/// (results of products are never views).
fn reshape_fresh(t: Tensor, shape: &[usize]) -> Result<Tensor> {
    debug_assert!(t.is_contiguous() && t.offset() == 0);
    Tensor::from_parts(t.storage().clone(), Layout::contiguous(shape), t.dtype())
}

/// Batched product of `a: batch+[m,k]` and `b: batch+[k,n]` (batch dims
/// broadcast here) with optional `beta * c0` added, `c0` broadcastable.
pub(crate) fn bmm_broadcast(
    a: &Tensor,
    b: &Tensor,
    alpha: Scalar,
    beta_c: Option<(Scalar, &Tensor)>,
    backend: GemmBackend,
) -> Result<Tensor> {
    if a.dtype().is_reduced_float() {
        // The 16-bit floats multiply in float32 and round each result once.
        let c = beta_c.map(|(s, c0)| (s, widen(c0)));
        let c = c.as_ref().map(|(s, c0)| (*s, c0));
        return Ok(cast(
            &bmm_broadcast(&widen(a), &widen(b), alpha, c, backend)?,
            a.dtype(),
        ));
    }
    let (na, nbd) = (a.ndim(), b.ndim());
    let batch = broadcast_shapes(&a.shape()[..na - 2], &b.shape()[..nbd - 2])?;
    let (m, k, n) = (a.shape()[na - 2], a.shape()[na - 1], b.shape()[nbd - 1]);
    let mut sa = batch.to_vec();
    sa.extend([m, k]);
    let mut sb = batch.to_vec();
    sb.extend([k, n]);
    let mut so = batch.to_vec();
    so.extend([m, n]);
    let (ae, be) = (a.broadcast_to(&sa)?, b.broadcast_to(&sb)?);
    let out = match beta_c {
        Some((_, c0)) => c0.broadcast_to(&so)?.copy(),
        None => Tensor::empty(&so, a.dtype()),
    };
    dispatch_mat!(a.dtype(), "addmm_impl_cpu_", T => {
        let alpha: T = alpha.to_elem();
        let beta: Option<T> = beta_c.map(|(s, _)| s.to_elem());
        // SAFETY: `out` was created above, contiguous and unshared, of
        // dtype T like the operands.
        unsafe { gemm_batched::<T>(&ae, &be, &out, alpha, beta, backend) };
        Ok(())
    })?;
    Ok(out)
}

fn mm_impl(a: &Tensor, b: &Tensor, backend: GemmBackend) -> Result<Tensor> {
    if a.ndim() != 2 {
        return Err(Error::runtime("self must be a matrix"));
    }
    if b.ndim() != 2 {
        return Err(Error::runtime("mat2 must be a matrix"));
    }
    check_same_dtype(a, b, "addmm_impl_cpu_")?;
    if a.shape()[1] != b.shape()[0] {
        return Err(Error::runtime(format!(
            "mat1 and mat2 shapes cannot be multiplied ({} and {})",
            xshape(a.shape()),
            xshape(b.shape())
        )));
    }
    bmm_broadcast(a, b, Scalar::Int(1), None, backend)
}

fn mv_impl(a: &Tensor, v: &Tensor, backend: GemmBackend) -> Result<Tensor> {
    if a.ndim() != 2 || v.ndim() != 1 {
        return Err(Error::runtime(format!(
            "vector + matrix @ vector expected, got 1, {}, {}",
            a.ndim(),
            v.ndim()
        )));
    }
    check_same_dtype(a, v, "addmv_impl_cpu")?;
    if a.shape()[1] != v.shape()[0] {
        return Err(Error::runtime(format!(
            "size mismatch, got input ({}), mat ({}), vec ({})",
            a.shape()[0],
            xshape(a.shape()),
            v.shape()[0]
        )));
    }
    let out = bmm_broadcast(a, &v.unsqueeze(-1)?, Scalar::Int(1), None, backend)?;
    reshape_fresh(out, &[a.shape()[0]])
}

fn dot_impl(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if a.ndim() != 1 || b.ndim() != 1 {
        return Err(Error::runtime(format!(
            "1D tensors expected, but got {}D and {}D tensors",
            a.ndim(),
            b.ndim()
        )));
    }
    if a.dtype() != b.dtype() {
        return Err(Error::runtime(format!(
            "dot : expected both vectors to have same dtype, but found {} and {}",
            (a.dtype()).scalar_type_name(),
            (b.dtype()).scalar_type_name()
        )));
    }
    let (n, nb) = (a.shape()[0], b.shape()[0]);
    if n != nb {
        return Err(Error::runtime(format!(
            "inconsistent tensor size, expected tensor [{n}] and src [{nb}] to have the same number of elements, but got {n} and {nb} elements respectively"
        )));
    }
    if a.dtype().is_reduced_float() {
        return Ok(cast(&dot_impl(&widen(a), &widen(b))?, a.dtype()));
    }
    dispatch_mat!(a.dtype(), "dot", T => matmul::dot::<T>(a, b))
}

/// A 16-bit float operand in float32 (exact), for products that compute
/// there.
fn widen(t: &Tensor) -> Tensor {
    cast(t, DType::Float32)
}

fn matmul_impl(a: &Tensor, b: &Tensor, backend: GemmBackend) -> Result<Tensor> {
    let (d1, d2) = (a.ndim(), b.ndim());
    if d1 == 0 || d2 == 0 {
        return Err(Error::runtime(format!(
            "both arguments to matmul need to be at least 1D, but they are {d1}D and {d2}D"
        )));
    }
    match (d1, d2) {
        (1, 1) => dot_impl(a, b),
        (2, 1) => mv_impl(a, b, backend),
        (1, 2) => {
            let out = mm_impl(&a.unsqueeze(0)?, b, backend)?;
            reshape_fresh(out, &[b.shape()[1]])
        }
        (2, 2) => mm_impl(a, b, backend),
        _ => {
            check_same_dtype(a, b, "addmm_impl_cpu_")?;
            let a2 = if d1 == 1 { a.unsqueeze(0)? } else { a.clone() };
            let b2 = if d2 == 1 { b.unsqueeze(-1)? } else { b.clone() };
            let (ka, kb) = (a2.shape()[a2.ndim() - 1], b2.shape()[b2.ndim() - 2]);
            if ka != kb {
                return Err(Error::runtime(format!(
                    "matmul: shapes cannot be multiplied ({} and {}): {ka} != {kb}",
                    xshape(a.shape()),
                    xshape(b.shape())
                )));
            }
            let out = bmm_broadcast(&a2, &b2, Scalar::Int(1), None, backend)?;
            let mut shape = out.shape()[..out.ndim() - 2].to_vec();
            if d1 > 1 {
                shape.push(a2.shape()[a2.ndim() - 2]);
            }
            if d2 > 1 {
                shape.push(b2.shape()[b2.ndim() - 1]);
            }
            reshape_fresh(out, &shape)
        }
    }
}

/// torch's check on `alpha`/`beta` for integer products.
fn check_coeff(dtype: DType, s: Scalar, name: &str) -> Result<()> {
    if !dtype.is_floating_point() && s.is_floating_point() {
        return Err(Error::runtime(format!(
            "For integral input tensors, argument {name} must not be a floating point number."
        )));
    }
    Ok(())
}

impl Tensor {
    /// `matmul(other)`: torch's matrix product (dot, mv, mm, batched with
    /// broadcasting, 1-D operands promoted and squeezed).
    pub fn matmul(&self, other: &Tensor) -> Result<Tensor> {
        // Each case records the node of its product (`DotBackward0`,
        // `MvBackward0`, `MmBackward0`, `BmmBackward0`).
        match (self.ndim(), other.ndim()) {
            (1, 1) => self.dot(other),
            (2, 1) => self.mv(other),
            (1, 2) => self.matmul_vm(other),
            (2, 2) => self.mm(other),
            _ => self.matmul_nd(other),
        }
    }

    /// `outer(vec2)` (alias `ger`): outer product of two 1-D tensors, with
    /// type promotion.
    pub fn outer(&self, vec2: &Tensor) -> Result<Tensor> {
        for (t, name) in [(self, "self"), (vec2, "vec2")] {
            if t.ndim() != 1 {
                return Err(Error::runtime(format!(
                    "outer: Expected 1-D argument {name}, but got {}-D",
                    t.ndim()
                )));
            }
        }
        self.reshape(&[-1, 1])?.mul(vec2)
    }
}

// Every product `a @ b` of the matmul family has the same formulas
// (`product_tangent`, `product_grads`): the rows differ in their node, their
// kernel and whether the backward takes a batch of gradients (it does for
// operands of at most 2 dims).
derivatives! {
    table FORMULAS("matrix products: matmul, mm, bmm, mv, dot, addmm, trace") for Tensor;

    /// `dot(other)`: inner product of two 1-D tensors of one dtype.
    pub fn dot(&self, other: &Tensor) -> Result<Tensor> {
        record "DotBackward0", [self, other];
        compute => out = dot_impl(self, other)?;
        save |s, needs| { save_operands(s, &needs, self, other); }
        backward |ctx, g| product_grads(ctx, g);
        forward formula(|t| product_tangent(t, self, other));
        batched formula;
    }

    /// `mv(vec)`: matrix times vector.
    pub fn mv(&self, vec: &Tensor) -> Result<Tensor> {
        record "MvBackward0", [self, vec];
        compute => out = mv_impl(self, vec, gemm_backend())?;
        save |s, needs| { save_operands(s, &needs, self, vec); }
        backward |ctx, g| product_grads(ctx, g);
        forward formula(|t| product_tangent(t, self, vec));
        batched formula;
    }

    /// `mm(mat2)`: product of two matrices.
    pub fn mm(&self, mat2: &Tensor) -> Result<Tensor> {
        before {
            let mat2_cols = column_major(mat2);
        }
        record "MmBackward0", [self, mat2];
        compute => out = mm_impl(self, mat2, gemm_backend())?;
        save |s, needs| { save_operands(s, &needs, self, mat2); }
        backward |ctx, g| product_grads_laid_out(ctx, g, mat2_cols);
        forward formula(|t| product_tangent(t, self, mat2));
        batched formula;
    }

    /// `matmul` of a vector and a matrix (see [`Tensor::matmul`]).
    fn matmul_vm(&self, other: &Tensor) -> Result<Tensor> {
        record "MmBackward0", [self, other];
        compute => out = matmul_impl(self, other, gemm_backend())?;
        save |s, needs| { save_operands(s, &needs, self, other); }
        backward |ctx, g| product_grads(ctx, g);
        forward formula(|t| product_tangent(t, self, other));
        batched formula;
    }

    /// `bmm(batch2)`: products of two batches of matrices of equal length.
    pub fn bmm(&self, batch2: &Tensor) -> Result<Tensor> {
        before {
            if self.ndim() != 3 {
                return Err(Error::runtime("batch1 must be a 3D tensor"));
            };
            if batch2.ndim() != 3 {
                return Err(Error::runtime("batch2 must be a 3D tensor"));
            };
            check_same_dtype(self, batch2, "bmm")?;
            let (b, k) = (self.shape()[0], self.shape()[2]);
            if batch2.shape()[0] != b || batch2.shape()[1] != k {
                return Err(Error::runtime(format!(
                    "Expected size for first two dimensions of batch2 tensor to be: [{b}, {k}] but got: [{}, {}].",
                    batch2.shape()[0],
                    batch2.shape()[1]
                )));
            };
        }
        record "BmmBackward0", [self, batch2];
        compute => out = bmm_broadcast(self, batch2, Scalar::Int(1), None, gemm_backend())?;
        save |s, needs| { save_operands(s, &needs, self, batch2); }
        backward |ctx, g| product_grads(ctx, g);
        forward formula(|t| product_tangent(t, self, batch2));
        batched rows because "the gradients of batched operands sum broadcast batch dims back to each operand's shape, which a batch of g would be mixed into";
    }

    /// `matmul` with an operand of more than 2 dims (see
    /// [`Tensor::matmul`]).
    fn matmul_nd(&self, other: &Tensor) -> Result<Tensor> {
        record "BmmBackward0", [self, other];
        compute => out = matmul_impl(self, other, gemm_backend())?;
        save |s, needs| { save_operands(s, &needs, self, other); }
        backward |ctx, g| product_grads(ctx, g);
        forward formula(|t| product_tangent(t, self, other));
        batched rows because "the gradients of batched operands sum broadcast batch dims back to each operand's shape, which a batch of g would be mixed into";
    }

    /// `addmm(mat1, mat2, beta, alpha)`: `beta * self + alpha * (mat1 @
    /// mat2)`; `self` broadcasts to the product's shape and is ignored when
    /// `beta` is 0.
    pub fn addmm(&self, mat1: &Tensor, mat2: &Tensor, beta: Scalar, alpha: Scalar) -> Result<Tensor> {
        before {
            if mat1.ndim() != 2 {
                return Err(Error::runtime(format!(
                    "mat1 must be a matrix, got {}-D tensor",
                    mat1.ndim()
                )));
            };
            if mat2.ndim() != 2 {
                return Err(Error::runtime(format!(
                    "mat2 must be a matrix, got {}-D tensor",
                    mat2.ndim()
                )));
            };
            check_same_dtype(mat1, mat2, "addmm_impl_cpu_")?;
            if self.dtype() != mat1.dtype() {
                return Err(Error::runtime(format!(
                    "self and mat2 must have the same dtype, but got {} and {}",
                    (self.dtype()).scalar_type_name(),
                    (mat2.dtype()).scalar_type_name()
                )));
            };
            if mat1.shape()[1] != mat2.shape()[0] {
                return Err(Error::runtime(format!(
                    "mat1 and mat2 shapes cannot be multiplied ({} and {})",
                    xshape(mat1.shape()),
                    xshape(mat2.shape())
                )));
            };
            check_coeff(self.dtype(), beta, "beta")?;
            check_coeff(self.dtype(), alpha, "alpha")?;
            let shape = [mat1.shape()[0], mat2.shape()[1]];
            // Checked here so the error names the product's shape (on the
            // layout: no op runs on `self`).
            let _ = self
                .layout()
                .expand(&[shape[0] as isize, shape[1] as isize])?;
            // torch ignores `self` entirely (NaN included) when beta is 0.
            let beta_zero = beta.to_f64() == 0.0;
            let mat2_cols = column_major(mat2);
        }
        record "AddmmBackward0", [self, mat1, mat2];
        compute => out = bmm_broadcast(
            mat1,
            mat2,
            alpha,
            (!beta_zero).then_some((beta, self)),
            gemm_backend(),
        )?;
        save |s, needs| {
            s.save_opt("mat1", needs[2].then_some(mat1));
            s.save_opt("mat2", needs[1].then_some(mat2));
        }
        backward |ctx, g| {
            // beta g, alpha g mat2^T, alpha mat1^T g (each factor
            // conjugated for complex values)
            // (a factor of 1 is skipped: it would be a pass over the result)
            let scale = |t: Tensor, k: Scalar| -> Result<Tensor> {
                if k.to_f64() == 1.0 && !k.is_complex() {
                    Ok(t)
                } else {
                    t.mul(&Tensor::scalar(k).conj()?)
                }
            };
            let g0 = &g[0];
            let gs = ctx.needs(0).then(|| scale(g0.clone(), beta)).transpose()?;
            let g1 = match ctx.saved_opt(1)? {
                Some(m2) => Some(scale(g0.mm(&m2.conj()?.t()?)?, alpha)?),
                None => None,
            };
            let g2 = match ctx.saved_opt(0)? {
                Some(m1) => Some(scale(mat2_grad(&m1.conj()?, g0, mat2_cols)?, alpha)?),
                None => None,
            };
            Ok(vec![gs, g1, g2])
        };
        // beta t_self + alpha (t1 @ mat2 + mat1 @ t2)
        forward formula(move |t| {
            let prod = |l: &Tensor, r: &Tensor, left: bool| match t.batch() {
                None => l.mm(r),
                Some(_) => product_batched(l, r, 2, 2, left),
            };
            t.sum1(|i, ti| match i {
                0 if beta_zero => Ok(Tensor::scalar(0.0)),
                0 if t.batch().is_some() => lift(ti, 3)?.mul(&Tensor::scalar(beta)),
                0 => ti.mul(&Tensor::scalar(beta)),
                1 => prod(ti, mat2, true)?.mul(&Tensor::scalar(alpha)),
                _ => prod(mat1, ti, false)?.mul(&Tensor::scalar(alpha)),
            })
        });
        batched rows because "the gradients are 2-D products (`mm`), which take no batch dim";
    }

    /// `trace()`: sum of the main diagonal of a matrix (integers and bool
    /// sum to int64).
    pub fn trace(&self) -> Result<Tensor> {
        before {
            if self.ndim() != 2 {
                return Err(Error::runtime(format!(
                    "trace: expected a matrix, but got tensor with dim {}",
                    self.ndim()
                )));
            };
        }
        record "TraceBackward0", [self];
        compute {
            let (n, m) = (self.shape()[0] as i64, self.shape()[1] as i64);
            let dtype = self.dtype();
        } => out = linalg::trace(self)?;
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].mul(&Tensor::eye(n, Some(m), dtype)?)?)]);
        forward formula(|t| t.map1(|tx| tx.diagonal(0, -2, -1)?.sum(Some(&[-1]), false, None)));
        batched rows because "g is 0-dim, and a batch of g would broadcast against the identity's last dim";
    }
}

/// The tangent of a product `a @ b`: `ta @ b + a @ tb`.
fn product_tangent(t: &Tangents, a: &Tensor, b: &Tensor) -> Result<Vec<Option<Tensor>>> {
    let (d1, d2) = (a.ndim(), b.ndim());
    t.sum1(|i, ti| {
        let (l, r) = if i == 0 { (ti, b) } else { (a, ti) };
        match t.batch() {
            None => l.matmul(r),
            Some(_) => product_batched(l, r, d1, d2, i == 0),
        }
    })
}

/// Saves what a product's backward reads: each operand only when the
/// other one needs a gradient (`self` for `mat2`'s, `mat2` for `self`'s).
fn save_operands(s: &mut Saver, needs: &[bool], a: &Tensor, b: &Tensor) {
    s.save_opt("self", needs[1].then_some(a));
    s.save_opt("mat2", needs[0].then_some(b));
}

/// The gradients of a product `a @ b` from its saves (`self` = a when b
/// needs a gradient, `mat2` = b when a does).
fn product_grads(ctx: &BackwardCtx, g: &[Tensor]) -> Result<Grads> {
    product_grads_laid_out(ctx, g, false)
}

/// [`product_grads`], the right operand's gradient laid out column-major
/// when `b_column_major` (see [`column_major`]).
fn product_grads_laid_out(ctx: &BackwardCtx, g: &[Tensor], b_column_major: bool) -> Result<Grads> {
    // Complex operands enter conjugated: `g conj(b)^T` and `conj(a)^T g`
    // (conj is a no-op for real ones).
    let conj = |t: Option<Tensor>| t.map(|t| t.conj()).transpose();
    let (a, b) = (conj(ctx.saved_opt(0)?)?, conj(ctx.saved_opt(1)?)?);
    let (ma, mb) = (ctx.input_meta(0), ctx.input_meta(1));
    let (Some(ma), Some(mb)) = (ma, mb) else {
        return Err(Error::runtime("matmul backward: missing input metadata"));
    };
    let (ga, gb) = if ctx.batch().is_some() {
        product_backward_batched(
            &g[0],
            ma.shape.len(),
            mb.shape.len(),
            b.as_ref(),
            a.as_ref(),
        )?
    } else {
        product_backward(
            &g[0],
            &ma.shape,
            &mb.shape,
            b.as_ref(),
            a.as_ref(),
            b_column_major,
        )?
    };
    Ok(vec![ga, gb])
}

/// Whether matrix `m` is stored column-major (a transposed row-major
/// matrix, as the `weight.t()` of a linear layer): its gradient is then
/// computed in that layout too, so that the transpose's backward hands
/// the weight a row-major gradient. Otherwise it arrives transposed, and
/// storing it as `.grad` or adding it to one is a strided pass over the
/// whole weight (torch makes the same choice).
fn column_major(m: &Tensor) -> bool {
    let (sh, st) = (m.shape(), m.strides());
    m.ndim() == 2 && sh[0] > 1 && sh[1] > 1 && st[0] == 1 && st[1] == sh[0]
}

/// `a^T g` (`a` already conjugated), the gradient of the right operand of
/// `a @ b`, computed as `(g^T a)^T` when `b` is column-major (the same
/// product, its result laid out as `b` is).
fn mat2_grad(a: &Tensor, g: &Tensor, b_column_major: bool) -> Result<Tensor> {
    if b_column_major {
        g.t()?.mm(a)?.t()
    } else {
        a.t()?.mm(g)
    }
}

/// `a @ b` (matmul semantics for primals of `d1` and `d2` dims) where the
/// left operand (`left`) or the right one is a tangent with an extra
/// leading batch dim. When the other operand is a vector or a matrix this
/// is one matrix product over the rows of the batch.
fn product_batched(a: &Tensor, b: &Tensor, d1: usize, d2: usize, left: bool) -> Result<Tensor> {
    let am = if d1 == 1 { a.unsqueeze(-2)? } else { a.clone() };
    let bm = if d2 == 1 { b.unsqueeze(-1)? } else { b.clone() };
    let rank = d1.max(d2).max(2) + 1;
    let out = match (left, d1 <= 2, d2 <= 2) {
        (true, _, true) => fold_rows(&am, &bm)?,
        (true, _, false) => lift(&am, rank)?.matmul(&bm)?,
        (false, true, _) => {
            fold_rows(&bm.transpose(-1, -2)?, &am.transpose(-1, -2)?)?.transpose(-1, -2)?
        }
        (false, false, _) => am.matmul(&lift(&bm, rank)?)?,
    };
    match (d1 == 1, d2 == 1) {
        (true, true) => out.squeeze(Some(&[-2, -1])),
        (true, false) => out.squeeze(Some(&[-2])),
        (false, true) => out.squeeze(Some(&[-1])),
        (false, false) => Ok(out),
    }
}

/// `x @ w` for `x` of at least 2 dims and a matrix `w`, as one product of
/// every row of `x` with `w`.
fn fold_rows(x: &Tensor, w: &Tensor) -> Result<Tensor> {
    let nd = x.ndim();
    let rows = x.reshape(&[-1, x.shape()[nd - 1] as isize])?.mm(w)?;
    let mut shape: Vec<isize> = x.shape()[..nd - 1].iter().map(|&n| n as isize).collect();
    shape.push(w.shape()[1] as isize);
    rows.reshape(&shape)
}

/// A batched tangent with unit dims inserted after its batch dim, up to
/// `rank` dims (so its other dims line up with a product's batch dims).
pub(super) fn lift(x: &Tensor, rank: usize) -> Result<Tensor> {
    let mut x = x.clone();
    while x.ndim() < rank {
        x = x.unsqueeze(1)?;
    }
    Ok(x)
}

/// [`product_backward`] for operands of at most 2 dims in a batched
/// backward: `g` has an extra leading batch dim, and so do the results
/// (one gradient per batch row, nothing summed over the batch).
fn product_backward_batched(
    g: &Tensor,
    d1: usize,
    d2: usize,
    b: Option<&Tensor>,
    a: Option<&Tensor>,
) -> Result<(Option<Tensor>, Option<Tensor>)> {
    // `g` with a trailing unit dim: each row's output as a column.
    let col = |t: &Tensor| t.unsqueeze(-1);
    Ok(match (d1, d2) {
        // out = a . b, g: [B]
        (1, 1) => (
            b.map(|b| col(g)?.mul(b)).transpose()?,
            a.map(|a| col(g)?.mul(a)).transpose()?,
        ),
        // out = a @ b with a: [m, n], b: [n]; g: [B, m]
        (2, 1) => (
            b.map(|b| col(g)?.mul(b)).transpose()?,
            a.map(|a| g.matmul(a)).transpose()?,
        ),
        // out = a @ b with a: [k], b: [k, n]; g: [B, n]
        (1, 2) => (
            b.map(|b| g.matmul(&b.t()?)).transpose()?,
            a.map(|a| col(a)?.mul(&g.unsqueeze(-2)?)).transpose()?,
        ),
        // a: [m, k], b: [k, n]; g: [B, m, n]
        _ => (
            b.map(|b| g.matmul(&b.t()?)).transpose()?,
            a.map(|a| a.t()?.matmul(g)).transpose()?,
        ),
    })
}

/// Gradients of `a @ b` (torch's matmul semantics) for the output gradient
/// `g`: `g b^T` for `a` (when `b` is given) and `a^T g` for `b` (when `a` is
/// given), with 1-D operands treated as a row / a column and broadcast batch
/// dims summed back to each operand's shape.
fn product_backward(
    g: &Tensor,
    a_shape: &[usize],
    b_shape: &[usize],
    b: Option<&Tensor>,
    a: Option<&Tensor>,
    b_column_major: bool,
) -> Result<(Option<Tensor>, Option<Tensor>)> {
    let (d1, d2) = (a_shape.len(), b_shape.len());
    let col = |t: &Tensor| t.reshape(&[-1, 1]);
    Ok(match (d1, d2) {
        (1, 1) => (
            b.map(|b| g.mul(b)).transpose()?,
            a.map(|a| g.mul(a)).transpose()?,
        ),
        (2, 1) => (
            b.map(|b| col(g)?.mul(b)).transpose()?,
            a.map(|a| a.t()?.mv(g)).transpose()?,
        ),
        (1, 2) => (
            b.map(|b| b.mv(g)).transpose()?,
            a.map(|a| col(a)?.mul(g)).transpose()?,
        ),
        (2, 2) => (
            b.map(|b| g.mm(&b.t()?)).transpose()?,
            a.map(|a| mat2_grad(a, g, b_column_major)).transpose()?,
        ),
        _ => {
            // Promote 1-D operands to matrices and put their unit dims back
            // into `g`.
            let as_mat = |t: &Tensor, row: bool| -> Result<Tensor> {
                match (t.ndim(), row) {
                    (1, true) => t.reshape(&[1, -1]),
                    (1, false) => t.reshape(&[-1, 1]),
                    _ => Ok(t.clone()),
                }
            };
            let mut g_shape: Vec<isize> = g.shape().iter().map(|&n| n as isize).collect();
            if d2 == 1 {
                g_shape.push(1);
            }
            if d1 == 1 {
                let at = g_shape.len() - 1;
                g_shape.insert(at, 1);
            }
            let g2 = g.reshape(&g_shape)?;
            let mat_shape = |s: &[usize], row: bool| -> Vec<usize> {
                match (s.len(), row) {
                    (1, true) => vec![1, s[0]],
                    (1, false) => vec![s[0], 1],
                    _ => s.to_vec(),
                }
            };
            let back = |t: Tensor, s: &[usize], row: bool| -> Result<Tensor> {
                let t = crate::autograd::sum_to(&t, &mat_shape(s, row))?;
                t.reshape(&s.iter().map(|&n| n as isize).collect::<Vec<_>>())
            };
            let ga = match b {
                Some(b) => {
                    let bt = as_mat(b, false)?.transpose(-1, -2)?;
                    Some(back(g2.matmul(&bt)?, a_shape, true)?)
                }
                None => None,
            };
            let gb = match a {
                Some(a) => {
                    let at = as_mat(a, true)?.transpose(-1, -2)?;
                    Some(back(at.matmul(&g2)?, b_shape, false)?)
                }
                None => None,
            };
            (ga, gb)
        }
    })
}
