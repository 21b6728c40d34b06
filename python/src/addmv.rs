//! The Tensor methods `addmv`, `addr`, `baddbmm`, `addbmm` and their
//! in-place forms: `beta * self + alpha * product`.

use crate::autocast::lower;
use crate::errors::IntoPyResult;
use crate::linalg::{coeff, tensor_only};
use crate::tensor::{nogil, PyTensor, TensorOut};
use ferrograd::{Result, Scalar, Tensor};
use pyo3::prelude::*;

type Fused = fn(&Tensor, &Tensor, &Tensor, Scalar, Scalar) -> Result<Tensor>;

/// Runs `f(self, a, b, beta, alpha)` for the method `op`.
#[allow(clippy::too_many_arguments)]
fn fused(
    py: Python<'_>,
    t: &Tensor,
    op: &str,
    (na, a): (&str, &Bound<'_, PyAny>),
    (nb, b): (&str, &Bound<'_, PyAny>),
    beta: Option<&Bound<'_, PyAny>>,
    alpha: Option<&Bound<'_, PyAny>>,
    f: Fused,
) -> PyResult<Tensor> {
    let mut a = tensor_only(a, op, na)?;
    let mut b = tensor_only(b, op, nb)?;
    let (beta, alpha) = (coeff(beta, "beta")?, coeff(alpha, "alpha")?);
    // The batched products are on autocast's lower-precision list.
    let cast;
    let t = if matches!(op, "baddbmm" | "addbmm") {
        (a, b) = (lower(a)?, lower(b)?);
        cast = lower(t.clone())?;
        &cast
    } else {
        t
    };
    let work = a.numel().max(b.numel()).max(t.numel());
    nogil(py, work, || f(t, &a, &b, beta, alpha)).py()
}

macro_rules! fused_methods {
    ($($(#[doc = $doc:literal])* $name:ident $name_:ident ($na:ident, $nb:ident);)*) => {
        #[pymethods]
        impl PyTensor {
            $(
                $(#[doc = $doc])*
                #[pyo3(signature = ($na, $nb, *, beta = None, alpha = None))]
                fn $name(
                    &self,
                    py: Python<'_>,
                    $na: &Bound<'_, PyAny>,
                    $nb: &Bound<'_, PyAny>,
                    beta: Option<&Bound<'_, PyAny>>,
                    alpha: Option<&Bound<'_, PyAny>>,
                ) -> PyResult<TensorOut> {
                    let t = self.tensor();
                    let names = ((stringify!($na), $na), (stringify!($nb), $nb));
                    Ok(fused(py, &t, stringify!($name), names.0, names.1, beta, alpha, Tensor::$name)?.into())
                }

                #[doc = concat!("In-place version of :meth:`Tensor.", stringify!($name), "`.")]
                #[pyo3(signature = ($na, $nb, *, beta = None, alpha = None))]
                fn $name_(
                    slf: &Bound<'_, Self>,
                    $na: &Bound<'_, PyAny>,
                    $nb: &Bound<'_, PyAny>,
                    beta: Option<&Bound<'_, PyAny>>,
                    alpha: Option<&Bound<'_, PyAny>>,
                ) -> PyResult<Py<PyAny>> {
                    let py = slf.py();
                    let t = slf.get().tensor();
                    let names = ((stringify!($na), $na), (stringify!($nb), $nb));
                    let r = fused(py, &t, stringify!($name_), names.0, names.1, beta, alpha, Tensor::$name)?;
                    t.copy_(&r).py()?;
                    Ok(slf.clone().into_any().unbind())
                }
            )*
        }
    };
}

fused_methods! {
    /// ``beta * self + alpha * (mat @ vec)`` for a matrix and a vector.
    ///
    /// See :func:`ferrograd.addmv`.
    addmv addmv_ (mat, vec);
    /// ``beta * self + alpha * outer(vec1, vec2)``.
    ///
    /// See :func:`ferrograd.addr`.
    addr addr_ (vec1, vec2);
    /// ``beta * self + alpha * (batch1 @ batch2)`` for batches of matrices.
    ///
    /// See :func:`ferrograd.baddbmm`.
    baddbmm baddbmm_ (batch1, batch2);
    /// ``beta * self + alpha * sum_b(batch1[b] @ batch2[b])``.
    ///
    /// See :func:`ferrograd.addbmm`.
    addbmm addbmm_ (batch1, batch2);
}
