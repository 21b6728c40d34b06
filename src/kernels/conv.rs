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
use std::hint::select_unpredictable;

/// Outputs with at least this many elements are computed in parallel.
const PARALLEL_ELEMS: usize = 1 << 15;

/// The geometry of a 2-D sliding window: kernel size, dilation, padding
/// and stride (each as (height, width)), for images of `size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Kernel size.
    pub kernel: [usize; 2],
    /// Spacing between kernel taps.
    pub dilation: [usize; 2],
    /// Implicit zeros added on each side.
    pub padding: [usize; 2],
    /// Step between window positions.
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

    /// For kernel offset `k` along `axis` of an input of length `len`, the
    /// window positions `lo..hi` (of `n`) that read inside the input, and the
    /// input coordinate position `lo` reads (position `o` reads `start + (o
    /// - lo) * stride`).
    fn span(&self, axis: usize, k: usize, n: usize, len: usize) -> (usize, usize, usize) {
        let (s, p) = (self.stride[axis] as isize, self.padding[axis] as isize);
        let off = (k * self.dilation[axis]) as isize - p;
        // o * s + off in [0, len): o >= ceil(-off / s), o <= (len - 1 - off) / s.
        let lo = if off >= 0 {
            0
        } else {
            ((-off + s - 1) / s) as usize
        };
        let last = len as isize - 1 - off;
        let hi = if last < 0 {
            0
        } else {
            ((last / s) as usize + 1).min(n)
        };
        let lo = lo.min(hi);
        (lo, hi, (lo as isize * s + off).max(0) as usize)
    }
}

/// `x` (contiguous, `[planes, h, w]` with `planes = n * c`) to columns:
/// a `[n, c * kh * kw, bh * bw]` tensor, zero where a window covers
/// padding. Its memory is laid out `[c * kh * kw, n, bh * bw]` (the
/// returned tensor is a permuted view of that), so that the columns of all
/// images form one `[c * kh * kw, n * bh * bw]` matrix and a convolution is
/// one matrix product.
pub(crate) fn im2col(x: &Tensor, n: usize, c: usize, win: &Window) -> Result<Tensor> {
    let nd = x.ndim();
    let size = [x.shape()[nd - 2], x.shape()[nd - 1]];
    let [bh, bw] = win.blocks(size)?;
    let [kh, kw] = win.kernel;
    let k_rows = c * kh * kw;
    let mem = Tensor::try_empty(&[k_rows, n, bh * bw], x.dtype())?;
    let out = mem.permute(&[1, 0, 2])?;
    let row_len = bh * bw;
    if mem.numel() == 0 {
        return Ok(out);
    }
    let spans_y: Vec<_> = (0..kh).map(|i| win.span(0, i, bh, size[0])).collect();
    let spans_x: Vec<_> = (0..kw).map(|j| win.span(1, j, bw, size[1])).collect();
    let (sy, sx) = (win.stride[0], win.stride[1]);
    let guard = lock(&[x], Some(&mem));
    crate::dispatch_float!(x.dtype(), T => {
        // SAFETY: `x` is read-locked and contiguous, `mem` is fresh and
        // contiguous; both of dtype T.
        let (src, dst) = unsafe { (slice::<T>(x), slice_mut::<T>(&mem)) };
        let plane = size[0] * size[1];
        // Memory row r is kernel row k = r / n (channel k / (kh kw) at
        // offset (k / kw % kh, k % kw)) of image r % n.
        let fill = |(r, row): (usize, &mut [T])| {
            let (k, img) = (r / n, r % n);
            let (ch, i, j) = (k / (kh * kw), k / kw % kh, k % kw);
            let p = &src[(img * c + ch) * plane..][..plane];
            let (ylo, yhi, y0) = spans_y[i];
            let (xlo, xhi, x0) = spans_x[j];
            for (oy, dst_row) in row.chunks_mut(bw).enumerate() {
                if oy < ylo || oy >= yhi {
                    dst_row.fill(T::zero());
                    continue;
                }
                let line = &p[(y0 + (oy - ylo) * sy) * size[1]..][..size[1]];
                dst_row[..xlo].fill(T::zero());
                dst_row[xhi..].fill(T::zero());
                if sx == 1 {
                    dst_row[xlo..xhi].copy_from_slice(&line[x0..x0 + (xhi - xlo)]);
                } else {
                    for (d, v) in dst_row[xlo..xhi].iter_mut().zip(line[x0..].iter().step_by(sx)) {
                        *d = *v;
                    }
                }
            }
        };
        if mem.numel() >= PARALLEL_ELEMS && crate::pool::kernel_threads() > 1 {
            crate::pool::install(|| dst.par_chunks_mut(row_len).enumerate().for_each(fill));
        } else {
            dst.chunks_mut(row_len).enumerate().for_each(fill);
        }
        Ok(())
    }, else Err(Error::not_implemented("im2col_out_cpu", x.dtype())))?;
    drop(guard);
    Ok(out)
}

/// Columns `cols` (`[n, c * kh * kw, bh * bw]`, any strides for the first
/// two dims) summed back into images `[n, c, h, w]` of `size`: every
/// column entry adds into the input pixel it was copied from (entries over
/// padding are dropped).
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
    let row_len = bh * bw;
    let cols = if cols.strides()[2] == 1 || row_len == 1 {
        cols.clone()
    } else {
        cols.contiguous()
    };
    let (sn, sk) = (cols.strides()[0], cols.strides()[1]);
    // The highest element a row reads, plus one.
    let span = (n - 1) * sn + (c * kh * kw - 1) * sk + row_len;
    let plane = size[0] * size[1];
    let spans_y: Vec<_> = (0..kh).map(|i| win.span(0, i, bh, size[0])).collect();
    let spans_x: Vec<_> = (0..kw).map(|j| win.span(1, j, bw, size[1])).collect();
    let (sy, sx) = (win.stride[0], win.stride[1]);
    let guard = lock(&[&cols], Some(&out));
    crate::dispatch_float!(cols.dtype(), T => {
        // SAFETY: `cols` is read-locked, of dtype T, and every element of
        // its layout lies below `span` from its first; `out` is fresh and
        // contiguous.
        let (src, dst) = unsafe {
            (
                std::slice::from_raw_parts(super::access::elem_ptr::<T>(&cols), span),
                slice_mut::<T>(&out),
            )
        };
        // Plane q (image q / c, channel q % c) gathers its kh kw rows.
        let gather = |(q, p): (usize, &mut [T])| {
            let (img, ch) = (q / c, q % c);
            for (i, &(ylo, yhi, y0)) in spans_y.iter().enumerate() {
                for (j, &(xlo, xhi, x0)) in spans_x.iter().enumerate() {
                    let k = (ch * kh + i) * kw + j;
                    let row = &src[img * sn + k * sk..][..row_len];
                    for oy in ylo..yhi {
                        let y = y0 + (oy - ylo) * sy;
                        let line = &mut p[y * size[1]..][..size[1]];
                        let vals = &row[oy * bw + xlo..oy * bw + xhi];
                        // (Float has Add but not AddAssign.)
                        #[allow(clippy::assign_op_pattern)]
                        if sx == 1 {
                            for (d, v) in line[x0..x0 + vals.len()].iter_mut().zip(vals) {
                                *d = *d + *v;
                            }
                        } else {
                            for (d, v) in line[x0..].iter_mut().step_by(sx).zip(vals) {
                                *d = *d + *v;
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

/// For each window of each plane of `x` (contiguous, `[planes, h, w]`),
/// the flat index (`y * w + x`) of its maximum: the first NaN if there is
/// one, else the first of the largest values; positions over the padding
/// never win. An int64 tensor `[planes, bh, bw]`.
pub(crate) fn max_pool_indices(x: &Tensor, win: &Window) -> Result<Tensor> {
    let nd = x.ndim();
    let size = [x.shape()[nd - 2], x.shape()[nd - 1]];
    let planes = x.numel() / (size[0] * size[1]).max(1);
    let [bh, bw] = win.blocks(size)?;
    let [kh, kw] = win.kernel;
    let out = Tensor::try_empty(&[planes, bh, bw], crate::DType::Int64)?;
    if out.numel() == 0 {
        return Ok(out);
    }
    let plane = size[0] * size[1];
    let guard = lock(&[x], Some(&out));
    crate::dispatch_float!(x.dtype(), T => {
        // SAFETY: `x` is read-locked and contiguous of dtype T; `out` is
        // fresh, contiguous int64.
        let (src, dst) = unsafe { (slice::<T>(x), slice_mut::<i64>(&out)) };
        // Per axis and window position: the kernel offsets that read inside
        // the image and the coordinate offset 0 would read.
        let reach = |axis: usize, n_out: usize| -> Vec<(usize, usize, isize)> {
            let (s, d, p) = (win.stride[axis], win.dilation[axis], win.padding[axis]);
            let (k, len) = (win.kernel[axis], size[axis] as isize);
            (0..n_out)
                .map(|o| {
                    let base = (o * s) as isize - p as isize;
                    let inside = |t: &usize| (0..len).contains(&(base + (t * d) as isize));
                    let lo = (0..k).find(inside).unwrap_or(k);
                    let hi = (lo..k).rfind(inside).map_or(lo, |t| t + 1);
                    (lo, hi, base)
                })
                .collect()
        };
        let (rows, cols) = (reach(0, bh), reach(1, bw));
        let (dy, dx) = (win.dilation[0] as isize, win.dilation[1] as isize);
        // Each kernel element's offset from the window's first, in row-major
        // order.
        let offsets: Vec<usize> = (0..kh * kw)
            .map(|k| (k / kw) * win.dilation[0] * size[1] + (k % kw) * win.dilation[1])
            .collect();
        // Each window starts from its first element inside the image and
        // takes a later one that is larger, or that is a NaN while the best
        // so far is not: the first NaN, else the first of the largest. The
        // updates are selects, as compares of data are unpredictable
        // branches.
        let pick = |(q, idx): (usize, &mut [i64])| {
            let p = &src[q * plane..][..plane];
            for (oy, &(ilo, ihi, ybase)) in rows.iter().enumerate() {
                let out_row = &mut idx[oy * bw..][..bw];
                for (slot, &(jlo, jhi, xbase)) in out_row.iter_mut().zip(cols.iter()) {
                    if ilo == ihi || jlo == jhi {
                        *slot = -1;
                        continue;
                    }
                    let at = |i: usize, j: usize| {
                        (ybase + i as isize * dy) as usize * size[1] + (xbase + j as isize * dx) as usize
                    };
                    let mut bf = at(ilo, jlo);
                    let mut bv = p[bf];
                    let mut visit = |f: usize| {
                        let v = p[f];
                        #[allow(clippy::eq_op)]
                        let take = (v > bv) | ((v != v) & (bv == bv));
                        // A select of the index only (a select of the float
                        // value compiles to a branch), and the value read back.
                        bf = select_unpredictable(take, f, bf);
                        bv = p[bf];
                    };
                    if ihi - ilo == kh && jhi - jlo == kw {
                        // Inside the image: fixed offsets from the corner.
                        let corner = at(0, 0);
                        offsets[1..].iter().for_each(|&o| visit(corner + o));
                    } else {
                        for i in ilo..ihi {
                            for j in jlo..jhi {
                                visit(at(i, j));
                            }
                        }
                    }
                    *slot = bf as i64;
                }
            }
        };
        if out.numel() * kh * kw >= PARALLEL_ELEMS && crate::pool::kernel_threads() > 1 {
            crate::pool::install(|| dst.par_chunks_mut(bh * bw).enumerate().for_each(pick));
        } else {
            dst.chunks_mut(bh * bw).enumerate().for_each(pick);
        }
        Ok(())
    }, else Err(Error::not_implemented("max_pool2d", x.dtype())))?;
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
    fn max_pool_picks_the_first_largest_or_nan_and_never_padding() {
        // 3x3 plane, 2x2 windows, stride 2, padding 1: windows cover
        // rows/cols {-1, 0}, {1, 2}. Values: all -5 except a tie of 7s at
        // flat 4 and 5 and a NaN at flat 8.
        let mut v = vec![-5.0f64; 9];
        v[4] = 7.0;
        v[5] = 7.0;
        v[8] = f64::NAN;
        let x = Tensor::from_slice(&v, &[1, 3, 3]).unwrap();
        let idx = max_pool_indices(&x, &win(2, 1, 1, 2)).unwrap();
        assert_eq!(idx.shape(), &[1, 2, 2]);
        // Window (0,0) sees only flat 0; (0,1) sees 1, 2; (1,0) sees 3, 6;
        // (1,1) sees 4, 5, 7, 8: the NaN wins.
        assert_eq!(idx.to_vec::<i64>(), vec![0, 1, 3, 8]);
        let x = Tensor::from_slice(&[1.0f32, 7.0, 7.0, 2.0], &[1, 2, 2]).unwrap();
        let idx = max_pool_indices(&x, &win(2, 1, 0, 1)).unwrap();
        assert_eq!(idx.to_vec::<i64>(), vec![1]);
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
