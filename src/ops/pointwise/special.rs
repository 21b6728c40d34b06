//! The special functions beyond the unary tables: `polygamma(n)` (with its
//! derivative row), and the functions torch does not differentiate: the
//! Bessel functions of `torch.special` (`bessel_j0`... `airy_ai`) and the
//! orthogonal polynomials, whose results never require grad.

use super::{float_of, promoted, unsupported};
use crate::autograd::{derivatives, inplace};
use crate::kernels::iter::{apply1, map1, map2};
use crate::kernels::pointwise::{float_map, FloatFn};
use crate::kernels::special as sp;
use crate::{dispatch_float, Element, Error, Result, Tensor};

derivatives! {
    table FORMULAS("special functions with an order: polygamma") for Tensor;

    /// `polygamma(n)`: the `n`-th derivative of digamma (`n = 0` is
    /// digamma itself), in the default float dtype for integer inputs.
    pub fn polygamma(&self, n: i64) -> Result<Tensor> {
        before {
            check_order(n)?;
            if n == 0 {
                return self.digamma();
            };
        }
        record "PolygammaBackward0", [self];
        compute {
            let dt = float_of(self.dtype());
            let x = self.to_dtype(dt);
        } => out = dispatch_float!(dt, T => map1::<T, T>(&x, move |v| T::from_f64(sp::polygamma(n as u32, v.to_f64()))),
            else return Err(unsupported("polygamma", dt)));
        save |s| { s.save("self", self); }
        backward |ctx, g| Ok(vec![Some(g[0].mul(&ctx.saved(0)?.polygamma(n + 1)?)?)]);
        forward formula(|t| t.map1(|t| t.mul(&self.polygamma(n + 1)?)));
        batched broadcast;
    }
}

fn check_order(n: i64) -> Result<()> {
    if n < 0 {
        return Err(Error::runtime(format!(
            "polygamma(n, x) does not support negative n, got n={n}."
        )));
    }
    if n > u32::MAX as i64 {
        return Err(Error::runtime(format!(
            "polygamma(n, x): n={n} is too large."
        )));
    }
    Ok(())
}

impl Tensor {
    /// In-place form of [`Tensor::polygamma`].
    pub fn polygamma_(&self, n: i64) -> Result<()> {
        crate::autograd::captured!(polygamma_ (&self, n: i64) -> () {
            check_order(n)?;
            if n == 0 {
                return self.digamma_();
            }
            let _span = crate::trace::inplace_op("aten::polygamma_", self, &[]);
            if inplace("polygamma_", self, &[], |s| s.polygamma(n))? {
                return Ok(());
            }
            dispatch_float!(self.dtype(), T => apply1::<T>(self, move |v| T::from_f64(sp::polygamma(n as u32, v.to_f64()))),
                else Err(unsupported("polygamma_", self.dtype())))
        })
    }
}

/// Defines unary functions without derivatives (torch defines none), in
/// the default float dtype for integer inputs.
macro_rules! nondiff_unary {
    ($($doc:literal $name:ident => $k:ident;)*) => {
        impl Tensor {
            $(
                #[doc = $doc]
                pub fn $name(&self) -> Result<Tensor> {
                    let _span = crate::trace::op(concat!("aten::", stringify!($name)), &[self]);
                    let dt = float_of(self.dtype());
                    float_map(FloatFn::$k, self, dt).ok_or_else(|| unsupported(stringify!($name), dt))
                }
            )*
        }
    };
}

nondiff_unary! {
    "Bessel function of the first kind of order 0." special_bessel_j0 => BesselJ0;
    "Bessel function of the first kind of order 1." special_bessel_j1 => BesselJ1;
    "Bessel function of the second kind of order 0." special_bessel_y0 => BesselY0;
    "Bessel function of the second kind of order 1." special_bessel_y1 => BesselY1;
    "Modified Bessel function of the first kind of order 0 (not differentiable)." special_modified_bessel_i0 => I0;
    "Modified Bessel function of the first kind of order 1 (not differentiable)." special_modified_bessel_i1 => I1;
    "Modified Bessel function of the second kind of order 0." special_modified_bessel_k0 => K0;
    "Modified Bessel function of the second kind of order 1." special_modified_bessel_k1 => K1;
    "``exp(x) K0(x)``." special_scaled_modified_bessel_k0 => K0e;
    "``exp(x) K1(x)``." special_scaled_modified_bessel_k1 => K1e;
    "Airy function Ai." special_airy_ai => AiryAi;
    "Spherical Bessel function of the first kind of order 0, ``sin(x) / x``." special_spherical_bessel_j0 => SphericalBesselJ0;
}

/// Defines the orthogonal polynomials `p_n(x)` of a tensor `x` and a
/// tensor of degrees `n` (broadcast together; not differentiable).
macro_rules! polynomials {
    ($($doc:literal $name:ident => $f:path;)*) => {
        impl Tensor {
            $(
                #[doc = $doc]
                pub fn $name(&self, n: &Tensor) -> Result<Tensor> {
                    let _span = crate::trace::op(concat!("aten::", stringify!($name)), &[self, n]);
                    let dt = float_of(promoted(&[self, n]));
                    let (x, n) = (self.to_dtype(dt).detach(), n.to_dtype(dt).detach());
                    dispatch_float!(dt, T => map2::<T, T, T>(&x, &n, |x, n| T::from_f64($f(x.to_f64(), n.to_f64()))),
                        else Err(unsupported(stringify!($name), dt)))
                }
            )*
        }
    };
}

polynomials! {
    "Chebyshev polynomial of the first kind `T_n(x)`." special_chebyshev_polynomial_t => sp::chebyshev_t;
    "Chebyshev polynomial of the second kind `U_n(x)`." special_chebyshev_polynomial_u => sp::chebyshev_u;
    "Chebyshev polynomial of the third kind `V_n(x)`." special_chebyshev_polynomial_v => sp::chebyshev_v;
    "Chebyshev polynomial of the fourth kind `W_n(x)`." special_chebyshev_polynomial_w => sp::chebyshev_w;
    "Shifted Chebyshev polynomial of the first kind `T_n(2x - 1)`." special_shifted_chebyshev_polynomial_t => sp::shifted_chebyshev_t;
    "Shifted Chebyshev polynomial of the second kind `U_n(2x - 1)`." special_shifted_chebyshev_polynomial_u => sp::shifted_chebyshev_u;
    "Shifted Chebyshev polynomial of the third kind `V_n(2x - 1)`." special_shifted_chebyshev_polynomial_v => sp::shifted_chebyshev_v;
    "Shifted Chebyshev polynomial of the fourth kind `W_n(2x - 1)`." special_shifted_chebyshev_polynomial_w => sp::shifted_chebyshev_w;
    "Physicists' Hermite polynomial `H_n(x)`." special_hermite_polynomial_h => sp::hermite_h;
    "Probabilists' Hermite polynomial `He_n(x)`." special_hermite_polynomial_he => sp::hermite_he;
    "Laguerre polynomial `L_n(x)`." special_laguerre_polynomial_l => sp::laguerre_l;
    "Legendre polynomial `P_n(x)`." special_legendre_polynomial_p => sp::legendre_p;
}
