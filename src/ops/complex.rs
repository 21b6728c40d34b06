//! Complex numbers: conjugation, the real and imaginary parts and the
//! real/complex views, magnitude, phase and direction, and complex tensors
//! built from real ones.
//!
//! Gradients follow torch's convention: for a real loss `L` of a complex
//! `z = x + iy`, `z.grad` is `dL/dx + i dL/dy` (twice the derivative with
//! respect to `conj(z)`). A holomorphic `f` therefore passes back
//! `g * conj(f'(z))`; the formulas here are the non-holomorphic ones and
//! the real/complex boundaries. A complex gradient reaching a real input
//! keeps its real part (see the engine's gradient validation).

use crate::autograd::derivatives;
use crate::kernels::iter::{apply1, map1, map2};
use crate::tensor::Layout;
use crate::{dispatch_complex, Complex, DType, Element, Error, Result, Tensor};

/// `i`, as a Python-number-like scalar that never promotes precision.
fn imag_unit() -> Tensor {
    Tensor::scalar(Complex::new(0.0, 1.0))
}

/// The layout of one real part of every element of a complex tensor:
/// `part` 0 is the real part, 1 the imaginary part.
fn part_layout(t: &Tensor, part: usize) -> Layout {
    let strides: Vec<usize> = t.strides().iter().map(|s| s * 2).collect();
    Layout::new(t.shape(), &strides, t.offset() * 2 + part)
}

/// `|z|` of a complex tensor, as its real dtype. complex64 squares its
/// parts in float64, where they cannot overflow, and rounds the root once
/// (a loop the compiler vectorises); complex128 takes `hypot`.
fn complex_abs(z: &Tensor) -> Result<Tensor> {
    Ok(match z.dtype() {
        DType::Complex64 => map1::<Complex<f32>, f32>(z, |v| {
            let (re, im) = (f64::from(v.re), f64::from(v.im));
            (re * re + im * im).sqrt() as f32
        }),
        DType::Complex128 => map1::<Complex<f64>, f64>(z, |v| v.norm()),
        _ => return Err(Error::runtime("complex_abs: a complex tensor is required")),
    })
}

/// The conjugate of a complex tensor, computed into a new tensor.
fn conj_kernel(z: &Tensor) -> Result<Tensor> {
    dispatch_complex!(z.dtype(), C => Ok(map1::<C, C>(z, |v| v.conj())),
        else Err(Error::runtime("conj: a complex tensor is required")))
}

/// `z / |z|` (0 where `z` is 0) of a complex tensor.
fn sgn_kernel(z: &Tensor) -> Result<Tensor> {
    dispatch_complex!(z.dtype(), C => Ok(map1::<C, C>(z, |v| {
        let r = v.norm();
        if r == 0.0 {
            C::zero()
        } else {
            v / r
        }
    })), else Err(Error::runtime("sgn: a complex tensor is required")))
}

/// torch's check that `complex`/`polar` get two real floats of one dtype;
/// the complex dtype they build.
fn check_parts(a: &Tensor, b: &Tensor) -> Result<DType> {
    let ok = |d: DType| matches!(d, DType::Float32 | DType::Float64);
    if !ok(a.dtype()) || !ok(b.dtype()) {
        return Err(Error::runtime(format!(
            "Expected both inputs to be Float or Double tensors but got {} and {}",
            a.dtype().scalar_type_name(),
            b.dtype().scalar_type_name()
        )));
    }
    if a.dtype() != b.dtype() {
        return Err(Error::runtime(format!(
            "Expected object of scalar type {} but got scalar type {} for second argument",
            a.dtype().scalar_type_name(),
            b.dtype().scalar_type_name()
        )));
    }
    Ok(a.dtype().to_complex())
}

/// `re + i im` elementwise (broadcast), or `abs * e^(i angle)` when `polar`.
fn build_complex(a: &Tensor, b: &Tensor, polar: bool) -> Result<Tensor> {
    Ok(match a.dtype() {
        DType::Float32 => map2::<f32, f32, Complex<f32>>(a, b, move |x, y| {
            if polar {
                Complex::from_polar(x, y)
            } else {
                Complex::new(x, y)
            }
        })?,
        _ => map2::<f64, f64, Complex<f64>>(a, b, move |x, y| {
            if polar {
                Complex::from_polar(x, y)
            } else {
                Complex::new(x, y)
            }
        })?,
    })
}

impl Tensor {
    /// `adjoint()` / `mH`: the conjugate transpose of the last two dims (a
    /// transposed view of a real tensor; a new tensor for a complex one, as
    /// `conj` is eager).
    pub fn adjoint(&self) -> Result<Tensor> {
        if self.ndim() < 2 {
            return Err(Error::runtime(format!(
                "tensor.adjoint() is only supported on matrices or batches of matrices. Got {}-D tensor.",
                self.ndim()
            )));
        }
        self.transpose(-2, -1)?.conj()
    }
}

/// `e^(i angle)` for a real `angle`.
fn unit_phase(angle: &Tensor) -> Result<Tensor> {
    let one = Tensor::scalar_tensor(1.0, angle.dtype());
    Tensor::polar(&one, angle)
}

derivatives! {
    table FORMULAS("complex numbers: conj, real/imag views, abs/angle/sgn, complex/polar") for Tensor;

    /// `conj()`: the complex conjugate, computed into a new tensor (torch
    /// returns a lazily conjugated view; see docs/dtypes.md). A real tensor
    /// is returned as is.
    pub fn conj(&self) -> Result<Tensor> {
        before {
            if !self.dtype().is_complex() {
                return Ok(self.clone());
            };
        }
        record "ConjBackward0", [self];
        compute => out = conj_kernel(self)?;
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].conj()?)]);
        forward formula(|t| t.map1(|t| t.conj()));
        batched broadcast;
    }

    /// `conj_physical()`: the complex conjugate in a new tensor (a copy of
    /// a real tensor's values... the tensor itself, as torch).
    pub fn conj_physical(&self) -> Result<Tensor> {
        before {
            if !self.dtype().is_complex() {
                return Ok(self.clone());
            };
        }
        record "ConjPhysicalBackward0", [self];
        compute => out = conj_kernel(self)?;
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].conj_physical()?)]);
        forward formula(|t| t.map1(|t| t.conj_physical()));
        batched broadcast;
        inplace conj_physical_(self) |s| s.conj_physical();
            => if self.dtype().is_complex() {
                dispatch_complex!(self.dtype(), C => apply1::<C>(self, |v| v.conj()),
                    else Ok(()))
            } else {
                Ok(())
            };
    }

    /// `real`: the real parts of a complex tensor, as a view of its
    /// storage (writes go through); a real tensor is returned as is.
    pub fn real(&self) -> Result<Tensor> {
        before {
            if !self.dtype().is_complex() {
                return Ok(self.clone());
            };
        }
        record "RealBackward0", [self];
        configure |r| r.views(super::as_strided_grad);
        compute {
            let cdt = self.dtype();
        } => out = self.view_as_dtype(part_layout(self, 0), cdt.to_real());
        save nothing
        // A change of the real part moves z along the real axis.
        backward |ctx, g| Ok(vec![Some(g[0].to_dtype(cdt))]);
        forward formula(|t| t.map1(|t| t.real()));
        batched rows because "the view is taken of the forward's own tensor";
    }

    /// `imag`: the imaginary parts of a complex tensor, as a view of its
    /// storage; torch's error for real tensors.
    pub fn imag(&self) -> Result<Tensor> {
        before {
            if !self.dtype().is_complex() {
                return Err(Error::runtime(
                    "imag is not implemented for tensors with non-complex dtypes.",
                ));
            };
        }
        record "ImagBackward0", [self];
        configure |r| r.views(super::as_strided_grad);
        compute {
            let cdt = self.dtype();
        } => out = self.view_as_dtype(part_layout(self, 1), cdt.to_real());
        save nothing
        // A change of the imaginary part moves z along the imaginary axis.
        backward |ctx, g| Ok(vec![Some(g[0].to_dtype(cdt).mul(&imag_unit())?)]);
        forward formula(|t| t.map1(|t| t.imag()));
        batched rows because "the view is taken of the forward's own tensor";
    }

    /// `view_as_real(z)`: a real view of a complex tensor with a last dim
    /// of 2 holding the real and imaginary parts.
    pub fn view_as_real(&self) -> Result<Tensor> {
        before {
            if !self.dtype().is_complex() {
                return Err(Error::runtime("view_as_real is only supported for complex tensors"));
            };
        }
        record "ViewAsRealBackward0", [self];
        configure |r| r.views(super::as_strided_grad);
        compute => out = self.real_pairs();
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].contiguous().view_as_complex()?)]);
        forward formula(|t| t.map1(|t| t.view_as_real()));
        batched rows because "the view adds a trailing dim";
    }

    /// `view_as_complex(x)`: a complex view of a float32/float64 tensor
    /// whose last dim (of size 2, stride 1) holds real and imaginary parts.
    pub fn view_as_complex(&self) -> Result<Tensor> {
        before {
            if !matches!(self.dtype(), DType::Float32 | DType::Float64) {
                return Err(Error::runtime(format!(
                    "view_as_complex is only supported for float and double tensors, but got a tensor of scalar type: {}",
                    self.dtype().scalar_type_name()
                )));
            };
            let nd = self.ndim();
            if nd == 0 {
                return Err(Error::runtime("Input tensor must have one or more dimensions"));
            };
            if self.shape()[nd - 1] != 2 {
                return Err(Error::runtime("Tensor must have a last dimension of size 2"));
            };
            if self.strides()[nd - 1] != 1 {
                return Err(Error::runtime("Tensor must have a last dimension with stride 1"));
            };
            if self.strides()[..nd - 1].iter().any(|s| s % 2 != 0) {
                return Err(Error::runtime(
                    "Tensor must have a stride divisible by 2 for all but last dimension",
                ));
            };
            if !self.offset().is_multiple_of(2) {
                return Err(Error::runtime("Tensor must have a storage_offset divisible by 2"));
            };
        }
        record "ViewAsComplexBackward0", [self];
        configure |r| r.views(super::as_strided_grad);
        compute {
            let strides: Vec<usize> = self.strides()[..nd - 1].iter().map(|s| s / 2).collect();
            let layout = Layout::new(&self.shape()[..nd - 1], &strides, self.offset() / 2);
        } => out = self.view_as_dtype(layout, self.dtype().to_complex());
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].view_as_real()?)]);
        forward formula(|t| t.map1(|t| t.contiguous().view_as_complex()));
        batched rows because "the view drops the trailing dim";
    }

    /// `sgn()`: `z / |z|` for complex tensors (0 at 0), `sign()` for real
    /// ones.
    pub fn sgn(&self) -> Result<Tensor> {
        before {
            if !self.dtype().is_complex() {
                return self.sign();
            };
        }
        record "SgnBackward0", [self];
        compute => out = sgn_kernel(self)?;
        save |s| {
            s.save("self", self);
            s.save_output("result", &out, 0);
        }
        // d sgn = (dz - sgn * Re(conj(sgn) dz)) / |z|, zero at z = 0.
        backward |ctx, g| {
            let (z, s) = (ctx.saved(0)?, ctx.saved(1)?);
            let along = g[0].mul(&s.conj()?)?.real()?.mul(&s)?;
            let r = z.abs()?;
            let grad = g[0].sub(&along)?.div(&r)?;
            Ok(vec![Some(Tensor::scalar(0.0).r#where(&r.eq(&Tensor::scalar(0.0))?, &grad)?)])
        };
        forward formula(|t| t.map1(|t| {
            let s = &out;
            let along = t.mul(&s.conj()?)?.real()?.mul(s)?;
            let r = self.abs()?;
            let tan = t.sub(&along)?.div(&r)?;
            Tensor::scalar(0.0).r#where(&r.eq(&Tensor::scalar(0.0))?, &tan)
        }));
        batched broadcast;
    }

    /// `angle()`: the phase `atan2(imag, real)` of complex elements, in
    /// their real dtype; for real tensors `pi` where negative, else 0 (NaN
    /// stays NaN), in the default float dtype for integers.
    pub fn angle(&self) -> Result<Tensor> {
        record "AngleBackward0", [self];
        compute => out = if self.dtype().is_complex() {
            self.imag()?.atan2(&self.real()?)?
        } else {
            let x = self.to_dtype(self.dtype().to_float(crate::default_dtype()));
            let pi = Tensor::scalar(std::f64::consts::PI);
            let zero = Tensor::scalar(0.0);
            let phase = pi.r#where(&x.lt(&zero)?, &zero)?;
            x.r#where(&x.isnan(), &phase)?
        };
        save |s| { s.save("self", self); }
        // d angle = Im(conj(z) dz) / |z|^2: the gradient is i z / |z|^2
        // (0 at z = 0); a real input's phase is piecewise constant.
        backward |ctx, g| {
            let z = ctx.saved(0)?;
            if !z.dtype().is_complex() {
                return Ok(vec![Some(g[0].zeros_like()?.to_dtype(z.dtype()))]);
            }
            let r2 = z.abs()?.square()?;
            let grad = g[0].mul(&z)?.div(&r2)?.mul(&imag_unit())?;
            Ok(vec![Some(Tensor::scalar(0.0).r#where(&r2.eq(&Tensor::scalar(0.0))?, &grad)?)])
        };
        forward formula(|t| t.map1(|t| {
            if !self.dtype().is_complex() {
                return t.zeros_like();
            }
            let r2 = self.abs()?.square()?;
            let tan = t.mul(&self.conj()?)?.imag()?.div(&r2)?;
            Tensor::scalar(0.0).r#where(&r2.eq(&Tensor::scalar(0.0))?, &tan)
        }));
        batched broadcast;
    }

    /// `complex(real, imag)`: a complex tensor from two real float tensors
    /// of one dtype (broadcast together).
    pub fn complex(real: &Tensor, imag: &Tensor) -> Result<Tensor> {
        before {
            let cdt = check_parts(real, imag)?;
        }
        record "ComplexBackward0", [real, imag];
        compute => out = build_complex(real, imag, false)?;
        save nothing
        backward |ctx, g| Ok(vec![
            ctx.needs(0).then(|| g[0].real()).transpose()?,
            ctx.needs(1).then(|| g[0].imag()).transpose()?,
        ]);
        forward elementwise(|t| t.sum1(|i, t| {
            let t = t.to_dtype(cdt);
            if i == 0 { Ok(t) } else { t.mul(&imag_unit()) }
        }));
        batched broadcast;
    }

    /// `polar(abs, angle)`: `abs * (cos(angle) + i sin(angle))` from two
    /// real float tensors of one dtype.
    pub fn polar(abs: &Tensor, angle: &Tensor) -> Result<Tensor> {
        before {
            let _ = check_parts(abs, angle)?;
        }
        record "PolarBackward0", [abs, angle];
        compute => out = build_complex(abs, angle, true)?;
        save |s| {
            s.save("abs", abs);
            s.save("angle", angle);
        }
        // d out = e^(i angle) d abs + i out d angle.
        backward |ctx, g| {
            let (r, th) = (ctx.saved(0)?, ctx.saved(1)?);
            let e = unit_phase(&th)?;
            let d_abs = ctx.needs(0).then(|| g[0].mul(&e.conj()?)?.real()).transpose()?;
            let d_angle = ctx.needs(1).then(|| {
                let out = e.mul(&r)?;
                g[0].mul(&out.mul(&imag_unit())?.conj()?)?.real()
            }).transpose()?;
            Ok(vec![d_abs, d_angle])
        };
        forward elementwise(|t| t.sum1(|i, t| if i == 0 {
            t.mul(&unit_phase(angle)?)
        } else {
            t.mul(&out)?.mul(&imag_unit())
        }));
        batched broadcast;
    }
}

impl Tensor {
    /// A complex tensor's storage seen as real pairs (shape `[..., 2]`),
    /// recording nothing: what `view_as_real` returns and what in-place
    /// samplers write through.
    pub(crate) fn real_pairs(&self) -> Tensor {
        let mut shape = self.shape().to_vec();
        shape.push(2);
        let mut strides: Vec<usize> = self.strides().iter().map(|s| s * 2).collect();
        strides.push(1);
        let layout = Layout::new(&shape, &strides, self.offset() * 2);
        self.view_as_dtype(layout, self.dtype().to_real())
    }

    /// A fresh contiguous real tensor of shape `[..., 2]` reinterpreted as
    /// the complex tensor of its pairs (a new tensor, not a view).
    pub(crate) fn pairs_to_complex(fresh: Tensor) -> Result<Tensor> {
        let shape = &fresh.shape()[..fresh.ndim() - 1];
        Tensor::from_parts(
            fresh.storage().clone(),
            Layout::contiguous(shape),
            fresh.dtype().to_complex(),
        )
    }

    /// `resolve_conj()`: conjugation is never lazy here, so this is the
    /// tensor itself.
    pub fn resolve_conj(&self) -> Tensor {
        self.clone()
    }

    /// `is_conj()`: always false (see [`Tensor::resolve_conj`]).
    pub fn is_conj(&self) -> bool {
        false
    }

    /// `|z|` for a complex tensor (the kernel under `abs`).
    pub(crate) fn complex_magnitude(&self) -> Result<Tensor> {
        complex_abs(self)
    }
}
