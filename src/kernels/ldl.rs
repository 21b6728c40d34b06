//! The Bunch-Kaufman `L D L^T` (or, Hermitian, `L D L^H`) factorization of
//! symmetric indefinite matrices and its solves, in LAPACK's `sytrf` /
//! `hetrf` form (lower triangle): `D` has 1x1 and 2x2 diagonal blocks,
//! `pivots[k] > 0` marks a 1x1 block at `k` after swapping rows and
//! columns `k` and `pivots[k] - 1`, and `pivots[k] = pivots[k + 1] < 0` a
//! 2x2 block at `k, k + 1` after swapping `k + 1` and `-pivots[k] - 1`.
//! The pivots are chosen as LAPACK's unblocked `sytf2` chooses them.

use super::access::{elem_ptr, lock};
use super::decomp::{par_for, read_mat, run, with_matrix, write, Faer};
use super::matmul::batch_offsets;
use crate::{Complex, Result, Tensor};
use faer::{Mat, Par};

/// The arithmetic the factorization needs, for the four dtypes it runs in.
pub(crate) trait LdlScalar: super::FieldOps {
    /// The complex conjugate, with `conj` (the identity otherwise).
    fn conj_if(self, conj: bool) -> Self;
    /// `|re| + |im|`, LAPACK's cheap modulus for pivot choice.
    fn abs1(self) -> f64;
    /// The real part.
    fn real(self) -> f64;
    /// The modulus.
    fn modulus(self) -> f64;
    /// A real value of this type.
    fn from_real(x: f64) -> Self;
}

macro_rules! ldl_scalar {
    ($real:ty) => {
        impl LdlScalar for $real {
            fn conj_if(self, _conj: bool) -> Self {
                self
            }
            fn abs1(self) -> f64 {
                f64::from(self.abs())
            }
            fn real(self) -> f64 {
                f64::from(self)
            }
            fn modulus(self) -> f64 {
                f64::from(self.abs())
            }
            fn from_real(x: f64) -> Self {
                x as $real
            }
        }
        impl LdlScalar for Complex<$real> {
            fn conj_if(self, conj: bool) -> Self {
                if conj {
                    self.conj()
                } else {
                    self
                }
            }
            fn abs1(self) -> f64 {
                f64::from(self.re.abs() + self.im.abs())
            }
            fn real(self) -> f64 {
                f64::from(self.re)
            }
            fn modulus(self) -> f64 {
                f64::from(self.norm())
            }
            fn from_real(x: f64) -> Self {
                Complex::new(x as $real, 0.0)
            }
        }
    };
}
ldl_scalar!(f32);
ldl_scalar!(f64);

/// Bunch-Kaufman's growth bound `(1 + √17) / 8`.
const ALPHA: f64 = 0.640_388_203_202_208_4;

/// Factors the `n x n` matrix `a` (lower triangle read) in place; returns
/// LAPACK's 1-based pivots and `info` (0, or the first zero diagonal
/// block's 1-based index).
fn factor<T: LdlScalar>(a: &mut Mat<T>, herm: bool) -> (Vec<i32>, i32) {
    let n = a.nrows();
    let mut ipiv = vec![0i32; n];
    let mut info = 0;
    // The diagonal's size for the pivot test: the real part when Hermitian.
    let diag = |x: T| if herm { x.real().abs() } else { x.abs1() };
    let mut k = 0;
    while k < n {
        let mut kstep = 1;
        let absakk = diag(a[(k, k)]);
        let (imax, colmax) = (k + 1..n).fold((k, 0.0), |(bi, bv), i| {
            let v = a[(i, k)].abs1();
            if v > bv {
                (i, v)
            } else {
                (bi, bv)
            }
        });
        let kp;
        if absakk.max(colmax) == 0.0 || absakk.is_nan() {
            if info == 0 {
                info = k as i32 + 1;
            }
            kp = k;
            if herm {
                a[(k, k)] = T::from_real(a[(k, k)].real());
            }
        } else {
            if absakk >= ALPHA * colmax {
                kp = k;
            } else {
                let mut rowmax = (k..imax).map(|j| a[(imax, j)].abs1()).fold(0.0, f64::max);
                rowmax = (imax + 1..n)
                    .map(|j| a[(j, imax)].abs1())
                    .fold(rowmax, f64::max);
                if absakk >= ALPHA * colmax * (colmax / rowmax) {
                    kp = k;
                } else if diag(a[(imax, imax)]) >= ALPHA * rowmax {
                    kp = imax;
                } else {
                    kp = imax;
                    kstep = 2;
                }
            }
            let kk = k + kstep - 1;
            if kp != kk {
                interchange(a, kk, kp, herm);
                if kstep == 2 {
                    if herm {
                        a[(k, k)] = T::from_real(a[(k, k)].real());
                    }
                    let t = a[(k + 1, k)];
                    a[(k + 1, k)] = a[(kp, k)];
                    a[(kp, k)] = t;
                }
            } else if herm {
                a[(k, k)] = T::from_real(a[(k, k)].real());
                if kstep == 2 {
                    a[(k + 1, k + 1)] = T::from_real(a[(k + 1, k + 1)].real());
                }
            }
            if kstep == 1 {
                update_1x1(a, k, herm);
            } else {
                update_2x2(a, k, herm);
            }
        }
        if kstep == 1 {
            ipiv[k] = kp as i32 + 1;
        } else {
            ipiv[k] = -(kp as i32 + 1);
            ipiv[k + 1] = ipiv[k];
        }
        k += kstep;
    }
    (ipiv, info)
}

/// Swaps rows and columns `kk < kp` of the trailing lower triangle.
fn interchange<T: LdlScalar>(a: &mut Mat<T>, kk: usize, kp: usize, herm: bool) {
    let n = a.nrows();
    for i in kp + 1..n {
        let t = a[(i, kk)];
        a[(i, kk)] = a[(i, kp)];
        a[(i, kp)] = t;
    }
    for j in kk + 1..kp {
        let t = a[(j, kk)].conj_if(herm);
        a[(j, kk)] = a[(kp, j)].conj_if(herm);
        a[(kp, j)] = t;
    }
    if herm {
        a[(kp, kk)] = a[(kp, kk)].conj_if(true);
    }
    let (r1, r2) = (a[(kk, kk)], a[(kp, kp)]);
    a[(kk, kk)] = if herm { T::from_real(r2.real()) } else { r2 };
    a[(kp, kp)] = if herm { T::from_real(r1.real()) } else { r1 };
}

/// The 1x1 step at `k`: `A22 -= x x^T / d` (`x^H` when Hermitian), then
/// `x /= d`.
fn update_1x1<T: LdlScalar>(a: &mut Mat<T>, k: usize, herm: bool) {
    let n = a.nrows();
    let r = if herm {
        T::from_real(1.0 / a[(k, k)].real())
    } else {
        T::from_real(1.0) / a[(k, k)]
    };
    for j in k + 1..n {
        let w = r * a[(j, k)].conj_if(herm);
        for i in j..n {
            let v = a[(i, k)];
            a[(i, j)] = a[(i, j)] - v * w;
        }
        if herm {
            a[(j, j)] = T::from_real(a[(j, j)].real());
        }
    }
    for i in k + 1..n {
        a[(i, k)] = a[(i, k)] * r;
    }
}

/// The 2x2 step at `k, k + 1`: the trailing block loses `X D^{-1} X^T`
/// (`X^H`), where `X` is columns `k, k + 1` below the block, which become
/// `X D^{-1}`.
fn update_2x2<T: LdlScalar>(a: &mut Mat<T>, k: usize, herm: bool) {
    let n = a.nrows();
    if k + 2 >= n {
        return;
    }
    let d21 = a[(k + 1, k)];
    let (d11, d22, d21, scale) = if herm {
        let m = d21.modulus();
        let d11 = T::from_real(a[(k + 1, k + 1)].real() / m);
        let d22 = T::from_real(a[(k, k)].real() / m);
        let tt = 1.0 / (a[(k + 1, k + 1)].real() / m * (a[(k, k)].real() / m) - 1.0);
        (d11, d22, d21 / T::from_real(m), T::from_real(tt / m))
    } else {
        let d11 = a[(k + 1, k + 1)] / d21;
        let d22 = a[(k, k)] / d21;
        let t = T::from_real(1.0) / (d11 * d22 - T::from_real(1.0));
        (d11, d22, T::from_real(1.0), t / d21)
    };
    for j in k + 2..n {
        let (x0, x1) = (a[(j, k)], a[(j, k + 1)]);
        let wk = scale * (d11 * x0 - d21 * x1);
        let wkp1 = scale * (d22 * x1 - d21.conj_if(herm) * x0);
        for i in j..n {
            let (y0, y1) = (a[(i, k)], a[(i, k + 1)]);
            a[(i, j)] = a[(i, j)] - y0 * wk.conj_if(herm) - y1 * wkp1.conj_if(herm);
        }
        a[(j, k)] = wk;
        a[(j, k + 1)] = wkp1;
        if herm {
            a[(j, j)] = T::from_real(a[(j, j)].real());
        }
    }
}

/// Solves `A X = B` in place in `b` from the factors `f` and pivots of
/// [`factor`] (LAPACK's `sytrs` / `hetrs`, lower).
fn solve_factored<T: LdlScalar>(f: &Mat<T>, ipiv: &[i32], b: &mut Mat<T>, herm: bool) {
    let (n, cols) = (f.nrows(), b.ncols());
    let swap = |b: &mut Mat<T>, r1: usize, r2: usize| {
        if r1 != r2 {
            for c in 0..cols {
                let t = b[(r1, c)];
                b[(r1, c)] = b[(r2, c)];
                b[(r2, c)] = t;
            }
        }
    };
    // L D Y = P^T B.
    let mut k = 0;
    while k < n {
        if ipiv[k] > 0 {
            swap(b, k, ipiv[k] as usize - 1);
            for c in 0..cols {
                let bk = b[(k, c)];
                for i in k + 1..n {
                    b[(i, c)] = b[(i, c)] - f[(i, k)] * bk;
                }
                b[(k, c)] = if herm {
                    bk * T::from_real(1.0 / f[(k, k)].real())
                } else {
                    bk / f[(k, k)]
                };
            }
            k += 1;
        } else {
            swap(b, k + 1, (-ipiv[k]) as usize - 1);
            let akm1k = f[(k + 1, k)];
            let akm1 = f[(k, k)] / akm1k.conj_if(herm);
            let ak = f[(k + 1, k + 1)] / akm1k;
            let denom = akm1 * ak - T::from_real(1.0);
            for c in 0..cols {
                let (b0, b1) = (b[(k, c)], b[(k + 1, c)]);
                for i in k + 2..n {
                    b[(i, c)] = b[(i, c)] - f[(i, k)] * b0 - f[(i, k + 1)] * b1;
                }
                let bkm1 = b0 / akm1k.conj_if(herm);
                let bk = b1 / akm1k;
                b[(k, c)] = (ak * bkm1 - bk) / denom;
                b[(k + 1, c)] = (akm1 * bk - bkm1) / denom;
            }
            k += 2;
        }
    }
    // L^T X = Y (L^H when Hermitian), then the row swaps undone.
    let mut k = n;
    while k > 0 {
        let last = k - 1;
        let first = if ipiv[last] > 0 { last } else { last - 1 };
        for c in 0..cols {
            for j in first..=last {
                let mut s = b[(j, c)];
                for i in k..n {
                    s = s - f[(i, j)].conj_if(herm) * b[(i, c)];
                }
                b[(j, c)] = s;
            }
        }
        let kp = ipiv[last].unsigned_abs() as usize - 1;
        swap(b, last, kp);
        k = first;
    }
}

/// The `(LD, pivots, info)` of each `n x n` matrix of `a`: `LD` column-major
/// with its strict upper triangle zero, int32 pivots and info.
pub(crate) fn ldl_factor<T: Faer + LdlScalar>(
    a: &Tensor,
    hermitian: bool,
) -> Result<(Tensor, Tensor, Tensor)> {
    let nd = a.ndim();
    let n = a.shape()[nd - 1];
    let offs = batch_offsets(&a.shape()[..nd - 2], a.strides());
    let _g = lock(&[a], None);
    let results = run(offs.len(), n * n * n, Par::Seq, |i| {
        // SAFETY: `a` is read-locked and of dtype T; offs come from its layout.
        let mut m = unsafe { read_mat::<T>(a, offs[i], n, n) };
        let (ipiv, info) = factor(&mut m, hermitian);
        for j in 1..n {
            for r in 0..j {
                m[(r, j)] = T::from_real(0.0);
            }
        }
        Ok((m, ipiv, info))
    })?;
    let mut mats = Vec::with_capacity(results.len());
    let (mut pivs, mut infos) = (Vec::new(), Vec::new());
    for (m, p, i) in results {
        mats.push(m);
        pivs.extend(p);
        infos.push(i);
    }
    let batch = &a.shape()[..nd - 2];
    let ld = write(mats, a.shape(), true)?;
    let piv = Tensor::from_slice(&pivs, &with_matrix(a.shape(), n, 1)[..nd - 1])?;
    let info = Tensor::from_slice(&infos, batch)?;
    Ok((ld, piv, info))
}

/// `X` with `A X = B` for the factors of [`ldl_factor`], batch dims
/// already broadcast; column-major.
pub(crate) fn ldl_solve<T: Faer + LdlScalar>(
    ld: &Tensor,
    pivots: &Tensor,
    b: &Tensor,
    hermitian: bool,
) -> Result<Tensor> {
    let nd = ld.ndim();
    let n = ld.shape()[nd - 1];
    let k = b.shape()[nd - 1];
    let batch = &ld.shape()[..nd - 2];
    let (ol, ob) = (
        batch_offsets(batch, ld.strides()),
        batch_offsets(batch, b.strides()),
    );
    let pstrides = pivots.strides();
    let op = batch_offsets(batch, &[&pstrides[..pstrides.len() - 1], &[0, 0]].concat());
    let pstep = pstrides[pstrides.len() - 1];
    let _g = lock(&[ld, pivots, b], None);
    let mats = run(ol.len(), n * n * k, par_for(ol.len(), 0), |i| {
        // SAFETY: the three are read-locked and of the dtypes read; the
        // offsets come from their (broadcast) layouts.
        let (f, mut x, ipiv) = unsafe {
            let p = elem_ptr::<i32>(pivots).add(op[i]);
            let ipiv = (0..n).map(|j| *p.add(j * pstep)).collect::<Vec<i32>>();
            (
                read_mat::<T>(ld, ol[i], n, n),
                read_mat::<T>(b, ob[i], n, k),
                ipiv,
            )
        };
        solve_factored(&f, &ipiv, &mut x, hermitian);
        Ok(x)
    })?;
    write(mats, &with_matrix(ld.shape(), n, k), true)
}
