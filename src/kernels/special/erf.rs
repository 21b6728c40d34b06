//! The error function family: `erf`, `erfc`, the scaled `erfcx(x) =
//! exp(x^2) erfc(x)`, and the standard normal `ndtr` and `log_ndtr`.
//!
//! Everything rests on three expansions:
//!
//! * for `|x| < 1`, `erf(x) = 2/sqrt(pi) x exp(-x^2) S(x)` with the
//!   all-positive series `S(x) = sum_k (2x^2)^k / (1 3 5 ... (2k+1))`
//!   (no cancellation);
//! * for `0 <= x < 5`, `erfcx` from its Taylor series about the nearest of
//!   the centres `0.25, 0.75, ..., 4.75` (19 terms reach `2^-57` of the
//!   value at a distance of 1/4);
//! * from 5 up, Laplace's continued fraction for `erfcx` in its even
//!   (contracted) form,
//!   `erfcx(x) = x/sqrt(pi) / (x^2 + 1/2 - a_1 / (x^2 + 5/2 - a_2 / ...))`
//!   with `a_n = n (2n - 1) / 2`, evaluated backward from a depth of
//!   `100 / x^2 + 8` (truncation below 1e-17; at most 12 levels here, where
//!   nearer 1 it took over a hundred dependent divisions).
//!
//! `exp(-x^2)` is formed from `x^2` split exactly into `hi + lo` (with a
//! fused multiply-add), so the tails keep full relative accuracy where a
//! rounded `x * x` would cost `x^2` ulps.

use std::f64::consts::FRAC_2_SQRT_PI;

/// `1 / sqrt(pi)`.
const FRAC_1_SQRT_PI: f64 = 0.5 * FRAC_2_SQRT_PI;

// Taylor coefficients of erfcx about 0.5 i + 0.25 for i = 0..10, 19 terms
// each (scripts/special_coeffs.py, erf).
#[rustfmt::skip]
const ERFCX_TAYLOR: [[f64; 19]; 10] = [
    [
        0.7703465477309968, -0.7432058932300142, 0.5845450744234932,
        -0.39804641641609395, 0.24251673515973485, -0.13496689305046408,
        0.06959167063237294, -0.03359113582639167, 0.015298471668943757,
        -0.006614781757590163, 0.002728955245909243, -0.0010786441720205186,
        0.0004098823671506856, -0.0001501805508050534, 5.3191032778488893e-05,
        -1.825103901472416e-05, 6.078534128100981e-06, -1.9684006450234016e-06,
        6.207148852050145e-07,
    ],
    [
        0.5069376502931449, -0.3679726916557954, 0.2309581315512983,
        -0.1298360619948811, 0.06679054252756873, -0.03189726203968182,
        0.014289198665935787, -0.006051532297208567, 0.0024376373607573405,
        -0.0009385120614756802, 0.0003467506629301161, -0.00012335437532328967,
        4.237248023960813e-05, -1.4088463868243626e-05, 4.543733191203631e-06,
        -1.424088529978787e-06, 4.3445834921494253e-07, -1.2920526683148003e-07,
        3.750604434348139e-08,
    ],
    [
        0.3678229164523611, -0.20882187596460985, 0.1067955714965988,
        -0.05021827439590757, 0.022011364250857163, -0.009081627632934445,
        0.003553109903229703, -0.0013257829296849475, 0.00047397031028087965,
        -0.00016296000929641064, 5.405405973207327e-05, -1.734407902387619e-05,
        5.3956601587046725e-06, -1.630692896230054e-06, 4.796134340595864e-07,
        -1.374901471540761e-07, 3.8468843764623906e-08, -1.051812852332897e-08,
        2.8134647900514105e-09,
    ],
    [
        0.2849722347374364, -0.1309763455144852, 0.05576363008708727,
        -0.022259995241388327, 0.008404319207328847, -0.0030209746514251374,
        0.0010392045224449525, -0.00034353335347042023, 0.00010950528846792923,
        -3.3755355255898685e-05, 1.0086683354021308e-05, -2.927938070247526e-06,
        8.271319551813563e-07, -2.2776263825848503e-07, 6.122104831842964e-08,
        -1.6083440493497754e-08, 4.1343784318510716e-09, -1.0409739103245152e-09,
        2.569637876425745e-10,
    ],
    [
        0.23108725873039188, -0.08848650280874916, 0.03199262741070626,
        -0.011002060756440047, 0.0036189953543580788, -0.0011437284836537476,
        0.00034853542204571556, -0.00010272108115739644, 2.9353247360393394e-05,
        -8.150283243669179e-06, 2.2030220124275485e-06, -5.806334028558536e-07,
        1.4943280933364636e-07, -3.7601474131561415e-08, 9.26135607680474e-09,
        -2.235123061166767e-09, 5.290411486474393e-10, -1.2291535020117983e-10,
        2.805351229942052e-11,
    ],
    [
        0.1936620962790687, -0.06323763756063484, 0.019758592987322864,
        -0.005934337896997976, 0.0017195818852892143, -0.0004821950849810549,
        0.0001311818005304378, -3.469860957781456e-05, 8.94015604786194e-06,
        -2.247373432487606e-06, 5.519758217042046e-07, -1.3262544050928062e-07,
        3.120931005061381e-08, -7.19997505693733e-09, 1.6299112348623071e-09,
        -3.623625548087981e-10, 7.917677614226405e-11, -1.7014872990302587e-11,
        3.598430602103548e-12,
    ],
    [
        0.16633534842682188, -0.047199402321170376, 0.012937290883018157,
        -0.003435471300907574, 0.0008860045775342717, -0.0002223825695684763,
        5.442040881224122e-05, -1.300464026534067e-05, 3.03883198747101e-06,
        -6.952080680133083e-07, 1.558811532855516e-07, -3.428987633368466e-08,
        7.406509200179412e-09, -1.572110989707934e-09, 3.2816406908980366e-10,
        -6.741036868880962e-11, 1.3635046356396555e-11, -2.717231533002448e-12,
        5.337826526820666e-13,
    ],
    [
        0.14558972127503855, -0.03645625753272353, 0.008878755527325298,
        -0.00210728287016911, 0.00048822238209556744, -0.00011057957492429284,
        2.451632537648977e-05, -5.3266727892732e-06, 1.135325604178818e-06,
        -2.3760039413391825e-07, 4.8864825235324905e-08, -9.883145363899974e-09,
        1.9671716867833343e-09, -3.85577159763457e-10, 7.446533395291007e-11,
        -1.41776209920059e-11, 2.662406904110992e-12, -4.933641295987859e-13,
        9.02546020128383e-14,
    ],
    [
        0.12934527478598792, -0.028944331414615332, 0.006331866273872749,
        -0.0013559331671040983, 0.00028457515684016577, -5.8595500213357555e-05,
        1.1848093644465379e-05, -2.354600635537056e-06, 4.6026023585822286e-07,
        -8.855436291991303e-08, 1.6780838689718502e-08, -3.1337815433835274e-09,
        5.770445217230847e-10, -1.0482189631698735e-10, 1.8793066053698345e-11,
        -3.3268487451692517e-12, 5.817448608411281e-13, -1.0052153959934787e-13,
        1.71698130604333e-14,
    ],
    [
        0.11630270721024731, -0.02350344859816315, 0.00466132636897234,
        -0.0009080988970296905, 0.000173928304040655, -3.277578113463171e-05,
        6.08111455038479e-06, -1.1115677200868462e-06, 2.002919699930675e-07,
        -3.559574724883904e-08, 6.2424341122164055e-09, -1.080760948329294e-09,
        1.8480326794204307e-10, -3.1222373169936854e-11, 5.213856483549002e-12,
        -8.608739830772124e-13, 1.4058813299153042e-13, -2.2715335454993283e-14,
        3.63225439781248e-15,
    ],
];

/// `2^k / (1 3 5 ... (2k+1))` for k = 0..20, the coefficients of
/// [`positive_series`] in `x^2` (the 21st is below `2^-63`).
const POSITIVE_SERIES: [f64; 20] = {
    let mut a = [1.0; 20];
    let mut k = 1;
    while k < a.len() {
        a[k] = a[k - 1] * 2.0 / (2 * k + 1) as f64;
        k += 1;
    }
    a
};

/// `S(x) = sum_k (2x^2)^k / (1 3 5 ... (2k+1))` for `|x| < 1`: all terms
/// positive, so no cancellation; a fixed number of them (no division and
/// no data-dependent loop per element).
fn positive_series(x: f64) -> f64 {
    super::gamma::horner(&POSITIVE_SERIES, x * x)
}

/// `x^2` as an unevaluated sum `hi + lo` (exact).
pub fn square_split(x: f64) -> (f64, f64) {
    let hi = x * x;
    (hi, x.mul_add(x, -hi))
}

/// `exp(-scale x^2)` for `scale` 1 or 1/2, with `x^2` taken exactly.
pub fn gaussian(x: f64, scale: f64) -> f64 {
    let (hi, lo) = square_split(x);
    let e = (-scale * hi).exp();
    if e == 0.0 {
        // Also x infinite, where lo is NaN.
        return 0.0;
    }
    e * (1.0 - scale * lo)
}

/// Where the Taylor pieces of [`ERFCX_TAYLOR`] end and the continued
/// fraction takes over.
const ERFCX_TAYLOR_END: f64 = 5.0;

/// `erfcx(x)` for `x >= 0`: the Taylor piece about the nearest centre
/// below [`ERFCX_TAYLOR_END`] (`x - c` is exact but for `x` under 1/8,
/// where its rounding moves the result by under an ulp), the continued
/// fraction from there up.
fn erfcx_positive(x: f64) -> f64 {
    if x < ERFCX_TAYLOR_END {
        let i = ((2.0 * x) as usize).min(ERFCX_TAYLOR.len() - 1);
        let u = x - (0.5 * i as f64 + 0.25);
        return super::gamma::horner(&ERFCX_TAYLOR[i], u);
    }
    erfcx_fraction(x)
}

/// `erfcx(x)` for `x >= 1` from the contracted continued fraction.
fn erfcx_fraction(x: f64) -> f64 {
    if x > 1e8 {
        // The fraction is 1 / (x sqrt(pi)) (1 - 1/(2x^2) + ...), and the
        // correction is below an ulp here (x^2 would overflow further on).
        return FRAC_1_SQRT_PI / x;
    }
    let y = x * x;
    let depth = (100.0 / y + 8.0).ceil();
    let mut tail = 0.0;
    let mut n = depth;
    while n >= 1.0 {
        let a = 0.5 * n * (2.0 * n - 1.0);
        tail = a / (y + 0.5 + 2.0 * n - tail);
        n -= 1.0;
    }
    FRAC_1_SQRT_PI * x / (y + 0.5 - tail)
}

/// The scaled complementary error function `erfcx(x) = exp(x^2) erfc(x)`.
///
/// Accurate for large positive `x` (where it tends to `1/(x sqrt(pi))`);
/// `+inf` once `exp(x^2)` overflows for negative `x` (below about -26.6),
/// 0 at `+inf`, NaN for NaN, as torch.special.erfcx.
pub fn erfcx(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x >= 0.0 {
        return erfcx_positive(x);
    }
    // erfc(x) = 2 - erfc(-x), so erfcx(x) = 2 exp(x^2) - erfcx(-x).
    let (hi, lo) = square_split(x);
    let e = hi.exp();
    if e.is_infinite() {
        return f64::INFINITY;
    }
    2.0 * e * (1.0 + lo) - erfcx(-x)
}

/// The error function.
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    if a < 1.0 {
        return FRAC_2_SQRT_PI * x * (-x * x).exp() * positive_series(x);
    }
    (1.0 - erfcx_positive(a) * gaussian(a, 1.0)).copysign(x)
}

/// The complementary error function `1 - erf(x)`, accurate in the upper
/// tail (down to its underflow near `x = 27.2`).
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x < 1.0 {
        if x > -1.0 {
            return 1.0 - erf(x);
        }
        return 2.0 - erfc(-x);
    }
    if x == f64::INFINITY {
        return 0.0;
    }
    erfcx_positive(x) * gaussian(x, 1.0)
}

/// The lower tail `Phi(x)` for `x <= 0`, as `erfc(-x / sqrt 2) / 2` with
/// the Gaussian factor `exp(-x^2 / 2)` taken from the exact square of `x`
/// (the rounding of `x / sqrt 2` only enters the slowly varying `erfcx`).
fn lower_tail(x: f64) -> f64 {
    let t = -x * std::f64::consts::FRAC_1_SQRT_2;
    if t < 1.0 {
        return 0.5 * (1.0 - erf(t));
    }
    0.5 * erfcx_positive(t) * gaussian(x, 0.5)
}

/// The standard normal cumulative distribution function
/// `Phi(x) = (1 + erf(x / sqrt 2)) / 2`.
///
/// 0 at `-inf`, 1 at `+inf`, NaN for NaN (torch.special.ndtr); the lower
/// tail keeps full relative accuracy down to underflow.
pub fn ndtr(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x <= 0.0 {
        if x == f64::NEG_INFINITY {
            return 0.0;
        }
        return lower_tail(x);
    }
    1.0 - lower_tail(-x)
}

/// `ln Phi(x)`, the log of the standard normal CDF, accurate in both
/// tails: `ln(erfcx(t) / 2) - x^2 / 2` with `t = -x / sqrt 2` below -1, and
/// `ln(1 - Phi(-x))` through `ln_1p` above 0.
///
/// `-inf` at `-inf` (and where `x^2` overflows), `-0.0` at `+inf`, NaN
/// for NaN, as torch.special.log_ndtr.
pub fn log_ndtr(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x > 0.0 {
        return (-lower_tail(-x)).ln_1p();
    }
    if x > -1.0 {
        return lower_tail(x).ln();
    }
    let (hi, lo) = square_split(x);
    if hi.is_infinite() {
        return f64::NEG_INFINITY;
    }
    let t = -x * std::f64::consts::FRAC_1_SQRT_2;
    ((0.5 * erfcx_positive(t)).ln() - 0.5 * lo) - 0.5 * hi
}

#[cfg(test)]
mod tests {
    use super::super::assert_close;
    use super::*;

    // mpmath at 30 digits, rounded to double: mp.erfc(x) * mp.exp(x**2)
    // (for x = 1e9 and 1e300 its asymptotic series, which mp.erfc cannot reach).
    const ERFCX_REF: [(f64, f64); 12] = [
        (0.0, 1.0),
        (1e-10, 0.999999999887162),
        (0.5, 0.6156903441929259),
        (0.999, 0.4278569426214168),
        (1.0, 0.427583576155807),
        (3.7, 0.1474349975371851),
        (30.0, 0.01879588886141675),
        (1e9, 5.641895835477563e-10),
        (1e300, 5.641895835477562e-301),
        (-0.5, 1.952360489182557),
        (-3.0, 16205.988853999586),
        (-26.0, 7.657724931490568e293),
    ];

    #[test]
    fn erfcx_matches_mpmath() {
        for &(x, want) in &ERFCX_REF {
            assert_close(erfcx(x), want, 2e-15, x);
        }
    }

    #[test]
    fn erfcx_pieces_agree_with_the_other_expansions() {
        // Against the continued fraction (accurate from 1 up) on [1, 5],
        // and against exp(x^2) - 2x/sqrt(pi) S(x) below 1, whose
        // cancellation (a factor exp(x^2) / erfcx(x), 6.4 at 1) scales the
        // bound; the points straddle every piece boundary.
        for i in 0..=4000 {
            let x = 5.0 * f64::from(i) / 4000.0 + 1e-13 * f64::from(i % 3);
            let got = erfcx(x);
            if x >= 1.0 {
                assert_close(got, erfcx_fraction(x), 1e-15, x);
            } else {
                let series = (x * x).exp() - FRAC_2_SQRT_PI * x * positive_series(x);
                assert_close(got, series, 1e-15 * (x * x).exp() / series, x);
            }
        }
    }

    // mpmath at 30 digits, rounded to double: mp.erf(x), mp.erfc(x).
    const ERF_REF: [(f64, f64, f64); 7] = [
        (1e-300, 1.1283791670955126e-300, 1.0),
        (0.3, 0.3286267594591274, 0.6713732405408726),
        (-0.99, -0.8385080695553698, 1.8385080695553697),
        (1.5, 0.9661051464753108, 0.033894853524689274),
        (5.9, 0.9999999999999999, 7.190409783550478e-17),
        (-2.2, -0.9981371537020182, 1.998137153702018),
        (26.5, 1.0, 2.2109076642637343e-307),
    ];

    #[test]
    fn erf_and_erfc_match_mpmath() {
        for &(x, want_erf, want_erfc) in &ERF_REF {
            assert_close(erf(x), want_erf, 5e-16, x);
            assert_close(erfc(x), want_erfc, 2e-15, x);
        }
    }

    // mpmath at 30 digits, rounded to double: mp.ncdf(x) and its log (as
    // mp.log1p(-mp.ncdf(-x)) for x > 0).
    const NDTR_REF: [(f64, f64, f64); 10] = [
        (0.0, 0.5, -std::f64::consts::LN_2),
        (1.0, 0.8413447460685429, -0.17275377902344988),
        (-1.0, 0.15865525393145705, -1.8410216450092636),
        (-1.4, 0.08075665923377107, -2.516314852988329),
        (2.5, 0.9937903346742238, -0.006229025485860002),
        (-7.5, 3.1908916729108963e-14, -31.075890902890002),
        (-38.0, 2.88542835e-316, -726.5572160188201),
        (-40.0, 0.0, -804.6084420137538),
        (9.0, 1.0, -1.1285884059538405e-19),
        (-1e10, 0.0, -5e19),
    ];

    #[test]
    fn ndtr_and_log_ndtr_match_mpmath() {
        for &(x, want, want_log) in &NDTR_REF {
            // Subnormal results keep fewer bits.
            let tol = if want < 1e-300 { 1e-10 } else { 2e-15 };
            assert_close(ndtr(x), want, tol, x);
            assert_close(log_ndtr(x), want_log, 2e-15, x);
        }
    }

    #[test]
    fn erf_identities_hold() {
        for i in 0..400 {
            let x = -6.0 + 0.03 * f64::from(i);
            assert!((erf(x) + erfc(x) - 1.0).abs() <= 3e-16, "{x}");
            assert!((erf(-x) + erf(x)).abs() == 0.0, "{x}");
            let phi = ndtr(x) + ndtr(-x);
            assert!((phi - 1.0).abs() <= 3e-16, "{x}");
        }
    }

    #[test]
    fn edge_cases_follow_torch() {
        let (inf, nan) = (f64::INFINITY, f64::NAN);
        assert!(erfcx(nan).is_nan() && ndtr(nan).is_nan() && log_ndtr(nan).is_nan());
        assert_eq!(erfcx(inf), 0.0);
        assert_eq!(erfcx(-inf), inf);
        assert_eq!(erfcx(-27.0), inf);
        assert_eq!(erf(inf), 1.0);
        assert_eq!(erf(-inf), -1.0);
        assert_eq!(erfc(inf), 0.0);
        assert_eq!(erfc(-inf), 2.0);
        assert_eq!(ndtr(inf), 1.0);
        assert_eq!(ndtr(-inf), 0.0);
        assert_eq!(log_ndtr(-inf), -inf);
        assert_eq!(log_ndtr(-1e155), -inf);
        let top = log_ndtr(inf);
        assert!(top == 0.0 && top.is_sign_negative());
    }
}
