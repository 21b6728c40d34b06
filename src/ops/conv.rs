//! Sliding windows: `im2col` (torch's `nn.functional.unfold`) and `col2im`
//! (`fold`), and the 2-D convolution built on them.
//!
//! The two are linear and each other's adjoint, so each one's backward is
//! the other and each one's tangent is itself applied to the tangent: every
//! order of derivative of a convolution comes from these two rows and the
//! matrix product's.

use crate::autograd::{derivatives, Tangents};
pub use crate::kernels::conv::Window;
use crate::{kernels, Error, Result, Tensor};

/// `t` with its leading `lead` dims merged into one (the tangent of a
/// batched input, or a batch of gradients, as a bigger batch of images).
fn merge_lead(t: &Tensor, lead: usize) -> Result<Tensor> {
    let mut shape: Vec<isize> = vec![-1];
    shape.extend(t.shape()[lead..].iter().map(|&n| n as isize));
    t.reshape(&shape)
}

/// Applies the linear map `f` (taking a batch of images or of column
/// matrices, `per` trailing dims each) to a tangent that may carry a batch
/// dim in front of an input that may itself be a batch.
fn on_tangent(
    t: &Tangents,
    per: usize,
    f: impl Fn(&Tensor) -> Result<Tensor>,
) -> Result<Vec<Option<Tensor>>> {
    t.map1(|ti| {
        let lead = ti.ndim() - per;
        if lead <= 1 {
            return f(ti);
        }
        let out = f(&merge_lead(ti, lead)?)?;
        let mut shape: Vec<isize> = ti.shape()[..lead].iter().map(|&n| n as isize).collect();
        shape.extend(out.shape()[1..].iter().map(|&n| n as isize));
        out.reshape(&shape)
    })
}

derivatives! {
    table FORMULAS("sliding windows: im2col (unfold), col2im (fold)") for Tensor;

    /// `nn.functional.unfold(input, kernel_size, dilation, padding,
    /// stride)`: each window of each `[C, H, W]` image of `self` (`[N, C,
    /// H, W]` or `[C, H, W]`) as a column: `[N, C kh kw, L]` (or `[C kh kw,
    /// L]`), L the number of windows, rows ordered by channel then kernel
    /// row then kernel column; windows over the zero padding read zeros.
    pub fn im2col(&self, win: Window) -> Result<Tensor> {
        before {
            let nd = self.ndim();
            if nd != 3 && nd != 4 {
                return Err(Error::runtime(format!(
                    "Expected 3D or 4D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions for input, but got: {:?}",
                    self.shape()
                )));
            };
            let (n, c) = if nd == 4 { (self.shape()[0], self.shape()[1]) } else { (1, self.shape()[0]) };
            let size = [self.shape()[nd - 2], self.shape()[nd - 1]];
        }
        record "Im2ColBackward0", [self];
        compute {
            let x = self.contiguous();
            let cols = kernels::conv::im2col(&x, n, c, &win)?;
        } => out = if nd == 4 { cols } else { cols.squeeze(Some(&[0]))?.contiguous() };
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].col2im(size, win)?)]);
        forward formula(|t| on_tangent(t, 3, |ti| ti.im2col(win)));
        batched rows because "a batch of gradients would be read as columns of one more image";
    }

    /// `nn.functional.fold(input, output_size, kernel_size, dilation,
    /// padding, stride)`: columns laid out as [`Tensor::im2col`] makes them
    /// (`[N, C kh kw, L]` or `[C kh kw, L]`) summed back into images of
    /// `size` (`[N, C, H, W]` or `[C, H, W]`); each entry adds into the
    /// pixel its window position covers.
    pub fn col2im(&self, size: [usize; 2], win: Window) -> Result<Tensor> {
        before {
            let nd = self.ndim();
            if nd != 2 && nd != 3 {
                return Err(Error::runtime(format!(
                    "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions for input, but got: {:?}",
                    self.shape()
                )));
            };
            let k = win.kernel[0] * win.kernel[1];
            let (n, rows, l) = if nd == 3 {
                (self.shape()[0], self.shape()[1], self.shape()[2])
            } else {
                (1, self.shape()[0], self.shape()[1])
            };
            if k == 0 || rows % k != 0 {
                return Err(Error::runtime(format!(
                    "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got input.size(1)={rows} and kernel_size=({}, {}).",
                    win.kernel[0], win.kernel[1]
                )));
            };
            let [bh, bw] = win.blocks(size)?;
            if l != bh * bw {
                return Err(Error::runtime(format!(
                    "Given output_size=({}, {}), kernel_size=({}, {}), dilation=({}, {}), padding=({}, {}), stride=({}, {}), expected size of input's dimension 2 to match the calculated number of sliding blocks {bh} * {bw} = {}, but got input.size(2)={l}.",
                    size[0], size[1], win.kernel[0], win.kernel[1], win.dilation[0], win.dilation[1],
                    win.padding[0], win.padding[1], win.stride[0], win.stride[1], bh * bw
                )));
            };
        }
        record "Col2ImBackward0", [self];
        compute {
            // The kernel reads any strides of a batch's first two dims (the
            // input gradient of conv2d arrives as a permuted product).
            let cols = if nd == 3 {
                self.clone()
            } else {
                kernels::copy::relayout(self, self.layout().unsqueeze(0)?)?
            };
            let img = kernels::conv::col2im(&cols, n, rows / k, size, &win)?;
        } => out = if nd == 3 { img } else { img.squeeze(Some(&[0]))?.contiguous() };
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].im2col(win)?)]);
        forward formula(|t| on_tangent(t, 2, |ti| ti.col2im(size, win)));
        batched rows because "a batch of gradients would be read as one more image";
    }
}

impl Tensor {
    /// `nn.functional.conv2d(input, weight, bias, stride, padding,
    /// dilation, groups)` with numeric padding: `input` `[N, C, H, W]` (or
    /// `[C, H, W]`), `weight` `[O, C / groups, kh, kw]`, `bias` `[O]`. One
    /// matrix product of the weight with each image's columns.
    pub fn conv2d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        stride: [usize; 2],
        padding: [usize; 2],
        dilation: [usize; 2],
        groups: usize,
    ) -> Result<Tensor> {
        let unbatched = self.ndim() == 3;
        if !(self.ndim() == 3 || self.ndim() == 4) {
            return Err(Error::runtime(format!(
                "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: {:?}",
                self.shape()
            )));
        }
        let x = if unbatched {
            self.unsqueeze(0)?
        } else {
            self.clone()
        };
        if weight.ndim() != 4 {
            return Err(Error::runtime(format!(
                "weight should have 4 dimensions, but got weight of size {:?}",
                weight.shape()
            )));
        }
        let (n, c, h, w) = (x.shape()[0], x.shape()[1], x.shape()[2], x.shape()[3]);
        let (o, cg, kh, kw) = (
            weight.shape()[0],
            weight.shape()[1],
            weight.shape()[2],
            weight.shape()[3],
        );
        if groups == 0 {
            return Err(Error::runtime("non-positive groups is not supported"));
        }
        if cg * groups != c {
            return Err(Error::runtime(format!(
                "Given groups={groups}, weight of size {:?}, expected input{:?} to have {} channels, but got {c} channels instead",
                weight.shape(),
                x.shape(),
                cg * groups
            )));
        }
        if o % groups != 0 {
            return Err(Error::runtime(format!(
                "Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight of size {:?} instead",
                weight.shape()
            )));
        }
        if let Some(b) = bias {
            if b.shape() != [o] {
                return Err(Error::runtime(format!(
                    "Given weight of size {:?}, expected bias to be 1-dimensional with {o} elements, but got bias of size {:?} instead",
                    weight.shape(),
                    b.shape()
                )));
            }
        }
        let win = Window {
            kernel: [kh, kw],
            dilation,
            padding,
            stride,
        };
        let padded = [h + 2 * padding[0], w + 2 * padding[1]];
        let span = [dilation[0] * (kh - 1) + 1, dilation[1] * (kw - 1) + 1];
        if padded[0] < span[0] || padded[1] < span[1] {
            return Err(Error::runtime(format!(
                "Calculated padded input size per channel: ({} x {}). Kernel size: ({} x {}). Kernel size can't be greater than actual input size",
                padded[0], padded[1], span[0], span[1]
            )));
        }
        let [bh, bw] = win.blocks([h, w])?;
        let (og, k, l) = (o / groups, cg * kh * kw, bh * bw);
        // The columns of all images as one [G, K, N L] matrix (im2col lays
        // its memory out so), times the [G, O/G, K] weights: one product
        // per group, [G, O/G, N L], read back as [N, O, bh, bw].
        let (g, n_, k_, og_, l_) = (
            groups as isize,
            n as isize,
            k as isize,
            og as isize,
            l as isize,
        );
        let cols = x
            .im2col(win)?
            .permute(&[1, 0, 2])?
            .reshape(&[g, k_, n_ * l_])?;
        let wm = weight.reshape(&[g, og_, k_])?;
        let mut y = wm
            .matmul(&cols)?
            .reshape(&[o as isize, n_, bh as isize, bw as isize])?
            .permute(&[1, 0, 2, 3])?;
        if let Some(b) = bias {
            y = y.add(&b.view(&[o as isize, 1, 1])?)?;
        }
        if unbatched {
            y = y.squeeze(Some(&[0]))?;
        }
        Ok(y)
    }
}

impl Tensor {
    /// For max pooling over `win`: the flat index (`y * w + x`) into each
    /// `[H, W]` plane of `self` (`[N, C, H, W]` or `[C, H, W]`) of each
    /// window's maximum (the first NaN, else the first largest value;
    /// padding never wins), as int64 `[N, C, bh, bw]` (or `[C, bh, bw]`).
    /// Not differentiable: the pooled values are `self` gathered at these
    /// indices.
    pub fn max_pool2d_indices(&self, win: Window) -> Result<Tensor> {
        let nd = self.ndim();
        if nd != 3 && nd != 4 {
            return Err(Error::runtime(format!(
                "max_pool2d: Expected 3D or 4D tensor, but got input of size {:?}",
                self.shape()
            )));
        }
        let x = self.contiguous();
        let idx = kernels::conv::max_pool_indices(&x, &win)?;
        let mut shape: Vec<isize> = self.shape()[..nd - 2].iter().map(|&v| v as isize).collect();
        shape.extend(idx.shape()[1..].iter().map(|&v| v as isize));
        idx.reshape(&shape)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;

    #[test]
    fn conv2d_matches_direct_sums() {
        // A 2-channel 4x5 image, 3 filters of 2x3, stride (1, 2), padding
        // (1, 0): y[o, i, j] = sum_c,a,b w[o, c, a, b] x[c, i + a - 1, 2j + b].
        let x: Vec<f64> = (0..40).map(|v| (v % 7) as f64 - 3.0).collect();
        let w: Vec<f64> = (0..36).map(|v| (v % 5) as f64 * 0.5 - 1.0).collect();
        let xt = Tensor::from_slice(&x, &[1, 2, 4, 5]).unwrap();
        let wt = Tensor::from_slice(&w, &[3, 2, 2, 3]).unwrap();
        let y = xt.conv2d(&wt, None, [1, 2], [1, 0], [1, 1], 1).unwrap();
        assert_eq!(y.shape(), &[1, 3, 5, 2]);
        let got = y.to_vec::<f64>();
        for o in 0..3 {
            for i in 0..5 {
                for j in 0..2 {
                    let mut want = 0.0;
                    for c in 0..2 {
                        for a in 0..2 {
                            for b in 0..3 {
                                let (yy, xx) = (i as isize + a as isize - 1, 2 * j + b);
                                if (0..4).contains(&yy) {
                                    want += w[((o * 2 + c) * 2 + a) * 3 + b]
                                        * x[(c * 4 + yy as usize) * 5 + xx];
                                }
                            }
                        }
                    }
                    assert!((got[(o * 5 + i) * 2 + j] - want).abs() < 1e-12);
                }
            }
        }
        let bad = Tensor::zeros(&[1, 3, 4, 5], DType::Float64);
        let e = bad
            .conv2d(&wt, None, [1, 1], [0, 0], [1, 1], 1)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("to have 2 channels, but got 3 channels instead"),
            "{e}"
        );
    }
}
