//! Scalar float64 kernels behind torch.special: pure functions of one or two
//! `f64` arguments, written from the mathematics (series, asymptotic
//! expansions, continued fractions, recurrences and quadrature) with only
//! `std`. They never panic; NaN, infinities, zeros and poles give what
//! torch 2.13 gives for float64, and each function's doc says where that
//! differs from the mathematical limit.
//!
//! This module knows nothing of tensors: the elementwise ops map these over
//! storage. Tables of numbers that are not exact fractions come from
//! `scripts/special_coeffs.py` (mpmath), which documents how to regenerate
//! them.
//!
//! * `airy`: `airy_ai`;
//! * `gamma`: `lgamma`, `digamma` (and exact `sin(pi x)`, `cos(pi x)`);
//! * `zeta`: Hurwitz `zeta(s, q)` and `polygamma(n, x)`;
//! * `erf`: `erf`, `erfc`, `erfcx`, `ndtr`, `log_ndtr`;
//! * `erf_inv`: `erfinv`, `ndtri`;
//! * `bessel`: `j0`, `j1`, `y0`, `y1`, `spherical_bessel_j0`;
//! * `modified_bessel`: `i0`, `i0e`, `i1`, `i1e`, `k0`, `k0e`, `k1`, `k1e`;
//! * `incomplete_gamma`: `gammainc`, `gammaincc`;
//! * `poly`: Chebyshev (plain and shifted), Hermite, Laguerre and Legendre
//!   polynomials.

pub mod airy;
pub mod bessel;
pub mod erf;
pub mod erf_inv;
pub mod gamma;
pub mod incomplete_gamma;
pub mod modified_bessel;
pub mod poly;
pub mod zeta;

pub use airy::airy_ai;
pub use bessel::{j0, j1, spherical_bessel_j0, y0, y1};
pub use erf::{erfcx, log_ndtr, ndtr};
pub use erf_inv::{erfinv, ndtri};
pub use gamma::{digamma, lgamma};
pub use incomplete_gamma::{gammainc, gammaincc};
pub use modified_bessel::{i0, i0e, i1, i1e, k0, k0e, k1, k1e};
pub use poly::{
    chebyshev_t, chebyshev_u, chebyshev_v, chebyshev_w, hermite_h, hermite_he, laguerre_l,
    legendre_p, shifted_chebyshev_t, shifted_chebyshev_u, shifted_chebyshev_v, shifted_chebyshev_w,
};
pub use zeta::{polygamma, zeta};

/// Asserts `got` is within `rel` relative error of `want` (both NaN, or
/// equal infinities, also pass); `at` names the argument in the message.
#[cfg(test)]
pub fn assert_close(got: f64, want: f64, rel: f64, at: impl std::fmt::Debug) {
    if want.is_nan() {
        assert!(got.is_nan(), "at {at:?}: got {got:e}, want NaN");
        return;
    }
    if want.is_infinite() || want == 0.0 {
        assert_eq!(got, want, "at {at:?}");
        return;
    }
    let err = ((got - want) / want).abs();
    assert!(
        err <= rel,
        "at {at:?}: got {got:e}, want {want:e}, relative error {err:e} > {rel:e}"
    );
}
