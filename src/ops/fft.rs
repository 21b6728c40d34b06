//! The three discrete Fourier transform primitives under `ferrograd.fft`,
//! with torch's names and arguments: `_fft_c2c` (complex to complex),
//! `_fft_r2c` (real to its half or full spectrum) and `_fft_c2r` (a half
//! spectrum to its real signal). Every public transform (fft, rfftn,
//! hfft, ...) is one of these after padding or trimming its input, plus a
//! conjugate where the Hermitian transforms need one.
//!
//! The transforms are linear, so the forward-mode rule sends the tangent
//! through the same transform, and the backward is the adjoint: a complex
//! transform's adjoint is the transform in the other direction with the
//! same scaling; the half-spectrum transforms' adjoints fill in or fold
//! the missing half (torch's `fft_r2c_backward` / `fft_c2r_backward`).
//! Dims are kept counted from the back, so the formulas read the same
//! with a leading batch of gradients or tangents.

use crate::autograd::derivatives;
use crate::tensor::wrap_dim;
use crate::{DType, Error, Result, Tensor};

pub use crate::kernels::fft::FftNorm;

/// `dims` of `x`, checked (in range, unique, at least one), each counted
/// from the back (`-1` the last dim).
fn back_dims(x: &Tensor, dims: &[isize], op: &str) -> Result<Vec<isize>> {
    if dims.is_empty() {
        return Err(Error::runtime(format!(
            "{op}: at least one dim is required"
        )));
    }
    let nd = x.ndim();
    let mut seen = vec![false; nd];
    let mut out = Vec::with_capacity(dims.len());
    for &d in dims {
        let p = wrap_dim(d, nd)?;
        if seen[p] {
            return Err(Error::runtime("FFT dims must be unique"));
        }
        seen[p] = true;
        out.push(p as isize - nd as isize);
    }
    Ok(out)
}

/// Dims counted from the back as positions in a tensor of `nd` dims.
fn positions(dims: &[isize], nd: usize) -> Vec<usize> {
    dims.iter().map(|&d| (nd as isize + d) as usize).collect()
}

/// The size of dim `d` (counted from the back) of `t`.
fn size_at(t: &Tensor, d: isize) -> usize {
    t.shape()[(t.ndim() as isize + d) as usize]
}

fn check_complex(x: &Tensor, op: &str) -> Result<()> {
    if !x.dtype().is_complex() {
        return Err(Error::runtime(format!(
            "{op} expects a complex input tensor, but got {}",
            x.dtype().scalar_type_name()
        )));
    }
    Ok(())
}

/// The gradient of `_fft_r2c`: the output gradient padded with zeros to
/// the full spectrum (the dropped half had no effect on the loss), sent
/// through the adjoint complex transform, real part.
fn r2c_backward(
    g: &Tensor,
    dims: &[isize],
    norm: FftNorm,
    onesided: bool,
    n: usize,
) -> Result<Tensor> {
    let last = dims[dims.len() - 1];
    let half = size_at(g, last);
    let full = if onesided && n > half {
        let mut shape = g.shape().to_vec();
        shape[(g.ndim() as isize + last) as usize] = n - half;
        Tensor::cat(&[g.clone(), Tensor::zeros(&shape, g.dtype())], last)?
    } else {
        g.clone()
    };
    Ok(full.fft_c2c(dims, norm, false)?.real()?.contiguous())
}

/// The gradient of `_fft_c2r`: the adjoint of "fill in the conjugate half,
/// then the inverse complex transform" is the real-to-complex transform
/// with every bin whose mirror image was filled in counted twice (bins
/// `1..n - (n / 2 + 1)`, all but frequency 0 and, for even `n`, `n / 2`).
fn c2r_backward(g: &Tensor, dims: &[isize], norm: FftNorm) -> Result<Tensor> {
    let last = dims[dims.len() - 1];
    let gi = g.fft_r2c(dims, norm, true)?;
    let n = size_at(g, last);
    let half = size_at(&gi, last);
    let doubled = n - half;
    if doubled == 0 {
        return Ok(gi);
    }
    let weights: Vec<f64> = (0..half)
        .map(|k| if (1..=doubled).contains(&k) { 2.0 } else { 1.0 })
        .collect();
    let mut wshape = vec![1usize; (-last) as usize];
    wshape[0] = half;
    let w = Tensor::from_slice(&weights, &wshape)?.to_dtype(gi.dtype().to_real());
    gi.mul(&w)
}

derivatives! {
    table FORMULAS("discrete Fourier transforms: complex, real-to-complex, complex-to-real") for Tensor;

    /// `_fft_c2c(dim, normalization, forward)`: the complex transform of
    /// a complex tensor over `dims`, forward (`e^{-2 pi i jk / n}`) or
    /// inverse, scaled as `norm` says.
    pub fn fft_c2c(&self, dims: &[isize], norm: FftNorm, forward: bool) -> Result<Tensor> {
        before {
            check_complex(self, "_fft_c2c")?;
            let dims = back_dims(self, dims, "_fft_c2c")?;
            let tdims = dims.clone();
        }
        record "FftC2CBackward0", [self];
        compute => out = crate::kernels::fft::c2c(self, &positions(&dims, self.ndim()), norm, forward)?;
        save nothing
        // The adjoint of a DFT matrix is its conjugate transpose: the
        // transform the other way, with the same scaling.
        backward |ctx, g| Ok(vec![Some(g[0].fft_c2c(&dims, norm, !forward)?)]);
        forward formula(move |t| t.map1(|t| t.fft_c2c(&tdims, norm, forward)));
        batched broadcast;
    }

    /// `_fft_r2c(dim, normalization, onesided)`: the transform of a real
    /// tensor over `dims`; with `onesided`, the last of `dims` keeps only
    /// its `n / 2 + 1` non-negative frequencies (the rest are their
    /// conjugates).
    pub fn fft_r2c(&self, dims: &[isize], norm: FftNorm, onesided: bool) -> Result<Tensor> {
        before {
            if !matches!(self.dtype(), DType::Float32 | DType::Float64) {
                return Err(Error::runtime(format!(
                    "_fft_r2c expects a floating point input tensor, but got {}",
                    self.dtype().scalar_type_name()
                )));
            };
            let dims = back_dims(self, dims, "_fft_r2c")?;
            let tdims = dims.clone();
            let n = size_at(self, dims[dims.len() - 1]);
        }
        record "FftR2CBackward0", [self];
        compute => out = crate::kernels::fft::r2c(self, &positions(&dims, self.ndim()), norm, onesided)?;
        save nothing
        backward |ctx, g| Ok(vec![Some(r2c_backward(&g[0], &dims, norm, onesided, n)?)]);
        forward formula(move |t| t.map1(|t| t.fft_r2c(&tdims, norm, onesided)));
        batched broadcast;
    }

    /// `_fft_c2r(dim, normalization, last_dim_size)`: the real signal of
    /// `last_dim_size` points along the last of `dims` whose half spectrum
    /// (`last_dim_size / 2 + 1` values there) `self` holds, after the
    /// inverse complex transform over the other dims. The imaginary parts
    /// at frequency 0 (and `n / 2` for even `n`) are ignored.
    pub fn fft_c2r(&self, dims: &[isize], norm: FftNorm, last_dim_size: usize) -> Result<Tensor> {
        before {
            check_complex(self, "_fft_c2r")?;
            let dims = back_dims(self, dims, "_fft_c2r")?;
            let tdims = dims.clone();
            if last_dim_size == 0 {
                return Err(Error::runtime(format!(
                    "Invalid number of data points ({last_dim_size}) specified"
                )));
            };
            let half = size_at(self, dims[dims.len() - 1]);
            if half != last_dim_size / 2 + 1 {
                return Err(Error::runtime(format!(
                    "_fft_c2r: expected {} elements along the last transformed dim for {last_dim_size} output points, got {half}",
                    last_dim_size / 2 + 1
                )));
            };
        }
        record "FftC2RBackward0", [self];
        compute => out = crate::kernels::fft::c2r(self, &positions(&dims, self.ndim()), norm, last_dim_size)?;
        save nothing
        backward |ctx, g| Ok(vec![Some(c2r_backward(&g[0], &dims, norm)?)]);
        forward formula(move |t| t.map1(|t| t.fft_c2r(&tdims, norm, last_dim_size)));
        batched broadcast;
    }
}
