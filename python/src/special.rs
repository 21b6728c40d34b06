//! The methods behind `ferrograd.special` that torch has no `Tensor` method
//! for (`Tensor._special_*`), and `polygamma(n)`.

use crate::convert::tensor_arg as arg;
use crate::errors::IntoPyResult;
use crate::tensor::{nogil, PyTensor, TensorOut};
use pyo3::prelude::*;

/// Methods `$py()` calling the core's unary `$f`.
macro_rules! unary {
    ($($py:ident => $f:ident;)*) => {
        #[pymethods]
        impl PyTensor {
            $(
                fn $py(&self, py: Python<'_>) -> PyResult<TensorOut> {
                    let t = self.tensor();
                    Ok(nogil(py, t.numel(), || t.$f()).py()?.into())
                }
            )*
        }
    };
}

unary! {
    _special_entr => special_entr;
    _special_ndtr => special_ndtr;
    _special_ndtri => special_ndtri;
    _special_log_ndtr => special_log_ndtr;
    _special_erfcx => special_erfcx;
    _special_i0e => special_i0e;
    _special_i1 => special_i1;
    _special_i1e => special_i1e;
    _special_bessel_j0 => special_bessel_j0;
    _special_bessel_j1 => special_bessel_j1;
    _special_bessel_y0 => special_bessel_y0;
    _special_bessel_y1 => special_bessel_y1;
    _special_modified_bessel_i0 => special_modified_bessel_i0;
    _special_modified_bessel_i1 => special_modified_bessel_i1;
    _special_modified_bessel_k0 => special_modified_bessel_k0;
    _special_modified_bessel_k1 => special_modified_bessel_k1;
    _special_scaled_modified_bessel_k0 => special_scaled_modified_bessel_k0;
    _special_scaled_modified_bessel_k1 => special_scaled_modified_bessel_k1;
    _special_airy_ai => special_airy_ai;
    _special_spherical_bessel_j0 => special_spherical_bessel_j0;
}

/// Methods `$py(other)` calling the core's binary `$f` (`other` a tensor
/// or a number).
macro_rules! binary {
    ($($py:ident => $f:ident;)*) => {
        #[pymethods]
        impl PyTensor {
            $(
                fn $py(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
                    let b = arg(other, "other")?;
                    let a = self.tensor();
                    Ok(nogil(py, a.numel().max(b.numel()), || a.$f(&b)).py()?.into())
                }
            )*
        }
    };
}

binary! {
    _special_zeta => special_zeta;
    _special_chebyshev_polynomial_t => special_chebyshev_polynomial_t;
    _special_chebyshev_polynomial_u => special_chebyshev_polynomial_u;
    _special_chebyshev_polynomial_v => special_chebyshev_polynomial_v;
    _special_chebyshev_polynomial_w => special_chebyshev_polynomial_w;
    _special_shifted_chebyshev_polynomial_t => special_shifted_chebyshev_polynomial_t;
    _special_shifted_chebyshev_polynomial_u => special_shifted_chebyshev_polynomial_u;
    _special_shifted_chebyshev_polynomial_v => special_shifted_chebyshev_polynomial_v;
    _special_shifted_chebyshev_polynomial_w => special_shifted_chebyshev_polynomial_w;
    _special_hermite_polynomial_h => special_hermite_polynomial_h;
    _special_hermite_polynomial_he => special_hermite_polynomial_he;
    _special_laguerre_polynomial_l => special_laguerre_polynomial_l;
    _special_legendre_polynomial_p => special_legendre_polynomial_p;
}

#[pymethods]
impl PyTensor {
    /// The ``n``-th derivative of the digamma function of each element.
    ///
    /// See :func:`ferrograd.polygamma`.
    fn polygamma(&self, py: Python<'_>, n: i64) -> PyResult<TensorOut> {
        let t = self.tensor();
        Ok(nogil(py, t.numel(), || t.polygamma(n)).py()?.into())
    }

    /// In-place version of :meth:`Tensor.polygamma`.
    fn polygamma_<'py>(slf: &Bound<'py, Self>, n: i64) -> PyResult<Bound<'py, Self>> {
        let t = slf.get().tensor();
        nogil(slf.py(), t.numel(), || t.polygamma_(n)).py()?;
        Ok(slf.clone())
    }
}
