//! The sliding-window copies convolutions are built from: `im2col` lays
//! every window of a batch of images out as a column (torch's `unfold`),
//! and `col2im` sums columns back into images (torch's `fold`, the
//! adjoint of `im2col`). A convolution is then one matrix product per
//! image (`ops::conv`).
//!
//! Both kernels take contiguous tensors and write a fresh contiguous one;
//! each task owns whole output rows (im2col) or whole image planes
//! (col2im), so the results do not depend on the thread count.

use super::access::{lock, slice, slice_mut};
use crate::Element;
use crate::{Error, Result, Tensor};
use rayon::prelude::*;

/// Outputs with at least this many elements are computed in parallel.
const PARALLEL_ELEMS: usize = 1 << 15;

/// The geometry of a 2-D sliding window: kernel size, dilation, padding
/// and stride (each as (height, width)), for images of `size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub kernel: [usize; 2],
    pub dilation: [usize; 2],
    pub padding: [usize; 2],
    pub stride: [usize; 2],
}

impl Window {
    /// Windows along one axis of length `len`: `(len + 2p - d(k - 1) - 1) /
    /// s + 1` (negative when not even one fits).
    fn count(&self, axis: usize, len: usize) -> isize {
        let span = (self.dilation[axis] * (self.kernel[axis] - 1) + 1) as isize;
        let padded = (len + 2 * self.padding[axis]) as isize;
        (padded - span).div_euclid(self.stride[axis] as isize) + 1
    }

    /// The number of window positions (rows, columns) over an image of
    /// `size`, or torch's error when the window does not fit.
    pub fn blocks(&self, size: [usize; 2]) -> Result<[usize; 2]> {
        for (what, v) in [
            ("kernel size", self.kernel),
            ("dilation", self.dilation),
            ("stride", self.stride),
        ] {
            if v.contains(&0) {
                let name = what.split(' ').next().unwrap_or(what);
                return Err(Error::runtime(format!(
                    "{what} should be greater than zero, but got {name}_height: {} {name}_width: {}",
                    v[0], v[1]
                )));
            }
        }
        let (h, w) = (self.count(0, size[0]), self.count(1, size[1]));
        if h < 1 || w < 1 {
            return Err(Error::runtime(format!(
                "Given input with spatial size ({}, {}), kernel_size=({}, {}), dilation=({}, {}), padding=({}, {}), calculated shape of the array of sliding blocks as ({h}, {w}), but its components must be at least one.",
                size[0],
                size[1],
                self.kernel[0],
                self.kernel[1],
                self.dilation[0],
                self.dilation[1],
                self.padding[0],
                self.padding[1]
            )));
        }
        Ok([h as usize, w as usize])
    }

    /// For kernel offset `k` along `axis`, the input coordinate of each of
    /// `n` window positions (None where it falls in the padding).
    fn sources(&self, axis: usize, k: usize, n: usize, len: usize) -> Vec<Option<usize>> {
        (0..n)
            .map(|o| {
                let at = (o * self.stride[axis] + k * self.dilation[axis]) as isize
                    - self.padding[axis] as isize;
                (at >= 0 && (at as usize) < len).then_some(at as usize)
            })
            .collect()
    }
}

/// `x` (contiguous, `[planes, h, w]` with `planes = n * c`) to columns
/// `[n, c * kh * kw, bh * bw]`, zero where a window covers padding.
pub(crate) fn im2col(x: &Tensor, n: usize, c: usize, win: &Window) -> Result<Tensor> {
    let nd = x.ndim();
    let size = [x.shape()[nd - 2], x.shape()[nd - 1]];
    let [bh, bw] = win.blocks(size)?;
    let [kh, kw] = win.kernel;
    let out = Tensor::try_empty(&[n, c * kh * kw, bh * bw], x.dtype())?;
    let row_len = bh * bw;
    if out.numel() == 0 {
        return Ok(out);
    }
    let rows_y: Vec<Vec<Option<usize>>> = (0..kh).map(|i| win.sources(0, i, bh, size[0])).collect();
    let cols_x: Vec<Vec<Option<usize>>> = (0..kw).map(|j| win.sources(1, j, bw, size[1])).collect();
    let guard = lock(&[x], Some(&out));
    crate::dispatch_float!(x.dtype(), T => {
        // SAFETY: `x` is read-locked and contiguous, `out` is fresh and
        // contiguous; both of dtype T.
        let (src, dst) = unsafe { (slice::<T>(x), slice_mut::<T>(&out)) };
        let plane = size[0] * size[1];
        // Output row r of image b is channel r / (kh kw) at kernel offset
        // (r / kw % kh, r % kw).
        let fill = |(r, row): (usize, &mut [T])| {
            let (img, k) = (r / (c * kh * kw), r % (c * kh * kw));
            let (ch, i, j) = (k / (kh * kw), k / kw % kh, k % kw);
            let p = &src[(img * c + ch) * plane..][..plane];
            for (oy, y) in rows_y[i].iter().enumerate() {
                let dst_row = &mut row[oy * bw..(oy + 1) * bw];
                match y {
                    None => dst_row.fill(T::zero()),
                    Some(y) => {
                        let line = &p[y * size[1]..(y + 1) * size[1]];
                        for (d, x) in dst_row.iter_mut().zip(&cols_x[j]) {
                            *d = match x {
                                Some(x) => line[*x],
                                None => T::zero(),
                            };
                        }
                    }
                }
            }
        };
        if out.numel() >= PARALLEL_ELEMS && crate::pool::kernel_threads() > 1 {
            crate::pool::install(|| dst.par_chunks_mut(row_len).enumerate().for_each(fill));
        } else {
            dst.chunks_mut(row_len).enumerate().for_each(fill);
        }
        Ok(())
    }, else Err(Error::not_implemented("im2col_out_cpu", x.dtype())))?;
    drop(guard);
    Ok(out)
}

/// Columns `cols` (contiguous, `[n, c * kh * kw, bh * bw]`) summed back
/// into images `[n, c, h, w]` of `size`: every column entry adds into the
/// input pixel it was copied from (entries over padding are dropped).
pub(crate) fn col2im(
    cols: &Tensor,
    n: usize,
    c: usize,
    size: [usize; 2],
    win: &Window,
) -> Result<Tensor> {
    let [bh, bw] = win.blocks(size)?;
    let [kh, kw] = win.kernel;
    let out = Tensor::try_zeros(&[n, c, size[0], size[1]], cols.dtype())?;
    if out.numel() == 0 {
        return Ok(out);
    }
    let plane = size[0] * size[1];
    let rows_y: Vec<Vec<Option<usize>>> = (0..kh).map(|i| win.sources(0, i, bh, size[0])).collect();
    let cols_x: Vec<Vec<Option<usize>>> = (0..kw).map(|j| win.sources(1, j, bw, size[1])).collect();
    let guard = lock(&[cols], Some(&out));
    crate::dispatch_float!(cols.dtype(), T => {
        // SAFETY: `cols` is read-locked and contiguous, `out` is fresh and
        // contiguous; both of dtype T.
        let (src, dst) = unsafe { (slice::<T>(cols), slice_mut::<T>(&out)) };
        let row_len = bh * bw;
        // Plane q (image q / c, channel q % c) gathers its kh kw rows.
        let gather = |(q, p): (usize, &mut [T])| {
            for i in 0..kh {
                for j in 0..kw {
                    let row = &src[(q * kh * kw + i * kw + j) * row_len..][..row_len];
                    for (oy, y) in rows_y[i].iter().enumerate() {
                        let Some(y) = y else { continue };
                        let line = &mut p[y * size[1]..(y + 1) * size[1]];
                        for (v, x) in row[oy * bw..(oy + 1) * bw].iter().zip(&cols_x[j]) {
                            if let Some(x) = x {
                                // (Float has Add but not AddAssign.)
                                #[allow(clippy::assign_op_pattern)]
                                {
                                    line[*x] = line[*x] + *v;
                                }
                            }
                        }
                    }
                }
            }
        };
        if out.numel() >= PARALLEL_ELEMS && crate::pool::kernel_threads() > 1 {
            crate::pool::install(|| dst.par_chunks_mut(plane).enumerate().for_each(gather));
        } else {
            dst.chunks_mut(plane).enumerate().for_each(gather);
        }
        Ok(())
    }, else Err(Error::not_implemented("col2im_out_cpu", cols.dtype())))?;
    drop(guard);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn win(k: usize, d: usize, p: usize, s: usize) -> Window {
        Window {
            kernel: [k, k],
            dilation: [d, d],
            padding: [p, p],
            stride: [s, s],
        }
    }

    #[test]
    fn columns_hold_each_window_with_zero_padding() {
        // One 3x3 image 1..9, 2x2 windows, padding 1, stride 2: window
        // positions (rows, cols) -1 and 1, so four windows.
        let x =
            Tensor::from_slice(&(1..=9).map(f64::from).collect::<Vec<_>>(), &[1, 3, 3]).unwrap();
        let cols = im2col(&x, 1, 1, &win(2, 1, 1, 2)).unwrap();
        assert_eq!(cols.shape(), &[1, 4, 4]);
        // Row (i, j) lists x[2 oy - 1 + i, 2 ox - 1 + j] over the 4 windows.
        let want = [
            [0.0, 0.0, 0.0, 5.0],
            [0.0, 0.0, 4.0, 6.0],
            [0.0, 2.0, 0.0, 8.0],
            [1.0, 3.0, 7.0, 9.0],
        ];
        assert_eq!(cols.to_vec::<f64>(), want.concat());
    }

    #[test]
    fn col2im_is_the_adjoint_of_im2col() {
        // <im2col(x), y> == <x, col2im(y)> for any x, y.
        let w = win(3, 2, 1, 1);
        let x: Vec<f64> = (0..2 * 3 * 5 * 6)
            .map(|i| ((i * 7) % 11) as f64 - 5.0)
            .collect();
        let xt = Tensor::from_slice(&x, &[6, 5, 6]).unwrap();
        let cols = im2col(&xt, 2, 3, &w).unwrap();
        let y: Vec<f64> = (0..cols.numel())
            .map(|i| ((i * 5) % 13) as f64 - 6.0)
            .collect();
        let yt = Tensor::from_slice(&y, cols.shape()).unwrap();
        let back = col2im(&yt, 2, 3, [5, 6], &w).unwrap();
        let lhs: f64 = cols
            .to_vec::<f64>()
            .iter()
            .zip(&y)
            .map(|(a, b)| a * b)
            .sum();
        let rhs: f64 = back
            .to_vec::<f64>()
            .iter()
            .zip(&x)
            .map(|(a, b)| a * b)
            .sum();
        assert_eq!(lhs, rhs);
    }

    #[test]
    fn a_window_larger_than_the_image_is_refused() {
        let x = Tensor::zeros(&[1, 2, 2], crate::DType::Float32);
        let e = im2col(&x, 1, 1, &win(3, 1, 0, 1)).unwrap_err().to_string();
        assert!(
            e.contains("sliding blocks as (0, 0), but its components must be at least one"),
            "{e}"
        );
    }
}
