//! Accuracy of the vectorised functions.
//!
//! float32 results are compared with the float64 function of the same
//! input (libm's, accurate far below a float32 ulp), measured in float32
//! ulps of that reference; float64 results are compared with libm's float64
//! result in float64 ulps. Inputs: edge cases (zeros, subnormals, the
//! largest values, infinities, NaN, the ends of each function's range),
//! every float32 in stretches of its range, and bit patterns spread over
//! the whole range. Every run also checks that the vectorised slice path
//! gives the same bits as the scalar body.
//!
//! The same checks over every float32 bit pattern run with
//! `cargo test --release -p ferrograd vmath_exhaustive -- --ignored`.

use super::*;

/// Distance from `got` to `want` in ulps of `want` in the format with
/// `mant` mantissa bits and minimum exponent `emin`; 0 when both are the
/// same NaN/infinity, infinite when one is and the other is not.
fn ulps(got: f64, want: f64, mant: i32, emin: i32) -> f64 {
    if got.is_nan() || want.is_nan() {
        return if got.is_nan() && want.is_nan() {
            0.0
        } else {
            f64::INFINITY
        };
    }
    if got == want {
        return 0.0;
    }
    if got.is_infinite() || want.is_infinite() {
        // An infinite reference the format rounds from a finite neighbour.
        return f64::INFINITY;
    }
    let e = if want == 0.0 {
        emin
    } else {
        want.abs().log2().floor() as i32
    }
    .max(emin);
    (got - want).abs() / 2f64.powi(e) * 2f64.powi(mant)
}

/// Largest error (by `error(x, y)` for input `x` and output `y`) of `K`
/// over `xs`, and the worst input; checks that the slice and scalar paths
/// give the same bits.
fn worst<T: Real + std::fmt::LowerExp, K: Unary<T>>(
    xs: &[T],
    error: impl Fn(T, T) -> f64,
) -> (f64, T) {
    let mut out = vec![T::c(0.0); xs.len()];
    run::<T, K>(xs, &mut out);
    let mut worst = (0.0, T::c(0.0));
    for (&x, &y) in xs.iter().zip(&out) {
        assert!(
            y.to_bits() == K::eval(x).to_bits(),
            "slice and scalar paths differ at {x:e}"
        );
        let e = error(x, y);
        if e > worst.0 || e.is_nan() {
            worst = (e, x);
        }
    }
    worst
}

/// Largest ulp error of `K` over `xs` (float32) and the worst input.
fn worst_f32<K: Unary<f32>>(xs: &[f32], reference: fn(f64) -> f64) -> (f64, f32) {
    worst::<f32, K>(xs, |x, y| {
        let want = reference(x as f64);
        // A reference beyond float32's range rounds to infinity.
        let want = if (want as f32).is_infinite() {
            want as f32 as f64
        } else {
            want
        };
        ulps(y as f64, want, 23, -126)
    })
}

/// Largest ulp error of `K` over `xs` (float64) and the worst input.
fn worst_f64<K: Unary<f64>>(xs: &[f64], reference: fn(f64) -> f64) -> (f64, f64) {
    worst::<f64, K>(xs, |x, y| ulps(y, reference(x), 52, -1022))
}

/// Values every function is tried at.
fn edges32() -> Vec<f32> {
    let mut v = vec![
        0.0,
        f32::MIN_POSITIVE,
        f32::MIN_POSITIVE / 2.0,
        f32::from_bits(1),
        f32::MAX,
        f32::INFINITY,
        f32::NAN,
        f32::EPSILON,
        1.0,
        0.5,
        2.0,
        std::f32::consts::PI,
        88.72,
        88.7228,
        89.5,
        -87.0,
        -103.0,
        -104.0,
        -150.0,
        9.0,
        10.0,
        1e-8,
        0.99999994,
        1.0000001,
    ];
    let neg: Vec<f32> = v.iter().map(|x| -x).collect();
    v.extend(neg);
    v
}

fn edges64() -> Vec<f64> {
    let mut v = vec![
        0.0,
        f64::MIN_POSITIVE,
        f64::MIN_POSITIVE / 2.0,
        f64::from_bits(1),
        f64::MAX,
        f64::INFINITY,
        f64::NAN,
        f64::EPSILON,
        1.0,
        0.5,
        2.0,
        std::f64::consts::PI,
        709.78,
        709.8,
        710.5,
        -708.0,
        -744.0,
        -745.2,
        -1075.0,
        19.0,
        20.0,
        1e-17,
        1.0 - f64::EPSILON / 2.0,
        1.0 + f64::EPSILON,
    ];
    let neg: Vec<f64> = v.iter().map(|x| -x).collect();
    v.extend(neg);
    v
}

/// The float32 inputs of a quick run: edges, every float32 in `dense`
/// (a range of bit patterns, both signs), and every `stride`-th pattern.
fn inputs32(dense: (f32, f32), stride: u32) -> Vec<f32> {
    let mut v = edges32();
    for b in dense.0.to_bits()..dense.1.to_bits() {
        v.push(f32::from_bits(b));
        v.push(-f32::from_bits(b));
    }
    v.extend((0..u32::MAX / stride).map(|k| f32::from_bits(k.wrapping_mul(stride))));
    v
}

/// Edges plus `n` float64 bit patterns from a fixed generator, and `n`
/// values spread over `[-span, span]`.
fn inputs64(n: usize, span: f64) -> Vec<f64> {
    let mut v = edges64();
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    for k in 0..n {
        s = s
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        v.push(f64::from_bits(s));
        v.push(span * (2.0 * k as f64 / n as f64 - 1.0) + (s >> 40) as f64 * 1e-13);
    }
    v
}

/// References in double-double arithmetic (about 100 bits), for functions
/// whose libm result is itself up to 2 ulp off (glibc's tanh).
mod dd {
    /// `a + b` as an unevaluated sum `(hi, lo)`.
    fn two_sum(a: f64, b: f64) -> (f64, f64) {
        let s = a + b;
        let v = s - a;
        (s, (a - (s - v)) + (b - v))
    }

    /// `a * b` exactly as `(hi, lo)`.
    fn two_prod(a: f64, b: f64) -> (f64, f64) {
        let p = a * b;
        (p, a.mul_add(b, -p))
    }

    fn add(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
        let (s, e) = two_sum(a.0, b.0);
        let (s, e2) = two_sum(s, e + a.1 + b.1);
        (s, e2)
    }

    fn mul(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
        let (p, e) = two_prod(a.0, b.0);
        two_sum(p, e + a.0 * b.1 + a.1 * b.0)
    }

    fn div(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
        let q = a.0 / b.0;
        // One Newton step on the remainder a - q b.
        let r = add(a, mul((-q, 0.0), b));
        add((q, 0.0), (r.0 / b.0, 0.0))
    }

    /// `e^x - 1` for `|x| <= 40` by the Taylor series of `e^(x/2^8)`,
    /// squared back 8 times.
    fn expm1(x: f64) -> (f64, f64) {
        let y = x / 256.0;
        let mut term = (y, 0.0);
        let mut sum = term;
        for k in 2..30 {
            term = div(mul(term, (y, 0.0)), (k as f64, 0.0));
            sum = add(sum, term);
        }
        // e^(2y) - 1 = (e^y - 1) (e^y - 1 + 2).
        for _ in 0..8 {
            sum = mul(sum, add(sum, (2.0, 0.0)));
        }
        sum
    }

    /// `tanh x = t / (t + 2)` with `t = e^(2x) - 1`.
    pub(super) fn tanh(x: f64) -> f64 {
        if x.is_nan() || x.abs() > 20.0 {
            return x.tanh();
        }
        if x.abs() < 1e-100 {
            // tanh x = x - x^3/3 + ..., and x^3 is far below x's last bit.
            return x;
        }
        let t = expm1(2.0 * x);
        let r = div(t, add(t, (2.0, 0.0)));
        r.0 + r.1
    }
}

/// The C library's functions where Rust's own are not libm's.
mod libm {
    mod c {
        extern "C" {
            pub(super) fn asinh(x: f64) -> f64;
            pub(super) fn acosh(x: f64) -> f64;
            pub(super) fn atanh(x: f64) -> f64;
            pub(super) fn erf(x: f64) -> f64;
            pub(super) fn erfc(x: f64) -> f64;
        }
    }
    macro_rules! wrap {
        ($($f:ident),*) => {$(
            pub(super) fn $f(x: f64) -> f64 {
                // SAFETY: a C math function of one double, no other state.
                unsafe { c::$f(x) }
            }
        )*};
    }
    wrap!(asinh, acosh, atanh, erf, erfc);
}

/// The logistic function in float64, from `e^-|x|` so it never overflows.
fn sigmoid64(x: f64) -> f64 {
    let e = (-x.abs()).exp();
    if x >= 0.0 {
        1.0 / (1.0 + e)
    } else {
        e / (1.0 + e)
    }
}

/// Every function: its kernel, float64 reference, dense float32 stretch.
macro_rules! for_each_function {
    ($check:ident) => {
        $check!(Exp, f64::exp, (0.5, 2.0));
        $check!(Exp2, f64::exp2, (0.5, 2.0));
        $check!(Expm1, f64::exp_m1, (1e-3, 1.0));
        $check!(Sigmoid, sigmoid64, (1e-3, 4.0));
        $check!(Tanh, dd::tanh, (1e-3, 2.0));
        $check!(Sinh, f64::sinh, (1e-3, 2.0));
        $check!(Cosh, f64::cosh, (1e-3, 2.0));
        $check!(Log, f64::ln, (0.5, 2.0));
        $check!(Log1p, f64::ln_1p, (1e-3, 1.0));
        $check!(Log2, f64::log2, (0.5, 2.0));
        $check!(Log10, f64::log10, (0.5, 2.0));
        $check!(Asinh, libm::asinh, (1e-3, 2.0));
        $check!(Acosh, libm::acosh, (1.0, 2.0));
        $check!(Atanh, libm::atanh, (1e-3, 1.0));
        $check!(Sin, f64::sin, (0.5, 8.0));
        $check!(Cos, f64::cos, (0.5, 8.0));
        $check!(Tan, f64::tan, (0.5, 8.0));
        $check!(Asin, f64::asin, (1e-3, 1.0));
        $check!(Acos, f64::acos, (1e-3, 1.0));
        $check!(Atan, f64::atan, (1e-3, 4.0));
        $check!(Erf, libm::erf, (1e-3, 4.0));
        $check!(Erfc, libm::erfc, (1e-3, 10.0));
    };
}

/// `debug` in a debug build (which tries fewer inputs), `release` otherwise.
fn by_build<T>(debug: T, release: T) -> T {
    if cfg!(debug_assertions) {
        debug
    } else {
        release
    }
}

/// Tolerance of every function, in ulps.
const TOL: f64 = 2.0;

/// Tolerance of a function's float64 kernel against libm. erfc's tail
/// (exp(-x^2) times a fitted polynomial, each step rounded) is measured up
/// to 5 ulp from glibc's erfc, which is itself up to about 2 ulp from the
/// true value there (checked with mpmath at x = 23.48, 25.27).
fn tol64(name: &str) -> f64 {
    if name == "Erfc" {
        5.0
    } else {
        TOL
    }
}

#[test]
fn float32_within_two_ulp() {
    let stride = by_build(40_009, 4_099);
    let mut failed: Vec<String> = Vec::new();
    macro_rules! check {
        ($k:ident, $r:expr, $dense:expr) => {{
            let (lo, hi): (f32, f32) = $dense;
            // A debug build tries a thinner slice of the dense stretch.
            let hi = by_build(f32::from_bits(lo.to_bits() + 100_000).min(hi), hi);
            let (e, x) = worst_f32::<$k>(&inputs32((lo, hi), stride), $r);
            println!("float32 {:8}: {e:.3} ulp at {x:e}", stringify!($k));
            if e > TOL {
                failed.push(format!("{}: {e} ulp at {x:e}", stringify!($k)));
            }
        }};
    }
    for_each_function!(check);
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn float64_within_two_ulp() {
    let n = by_build(20_000, 1_000_000);
    let mut failed: Vec<String> = Vec::new();
    macro_rules! check {
        ($k:ident, $r:expr, $dense:expr) => {{
            let (e, x) = worst_f64::<$k>(&inputs64(n, 30.0), $r);
            println!("float64 {:8}: {e:.3} ulp at {x:e}", stringify!($k));
            if e > tol64(stringify!($k)) {
                failed.push(format!("{}: {e} ulp at {x:e}", stringify!($k)));
            }
        }};
    }
    for_each_function!(check);
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn special_values_follow_ieee() {
    assert_eq!(<Exp as Unary<f32>>::eval(f32::NEG_INFINITY), 0.0);
    assert_eq!(<Exp as Unary<f64>>::eval(f64::INFINITY), f64::INFINITY);
    assert!(<Log as Unary<f32>>::eval(-1.0).is_nan());
    assert_eq!(<Log as Unary<f64>>::eval(0.0), f64::NEG_INFINITY);
    assert_eq!(<Log1p as Unary<f32>>::eval(-1.0), f32::NEG_INFINITY);
    assert_eq!(<Tanh as Unary<f32>>::eval(f32::NEG_INFINITY), -1.0);
    assert_eq!(<Sigmoid as Unary<f64>>::eval(f64::NEG_INFINITY), 0.0);
    assert_eq!(<Atanh as Unary<f64>>::eval(-1.0), f64::NEG_INFINITY);
    // Signed zeros keep their sign where the function is odd.
    assert!(<Tanh as Unary<f32>>::eval(-0.0).is_sign_negative());
    assert!(<Expm1 as Unary<f64>>::eval(-0.0).is_sign_negative());
    assert!(<Log1p as Unary<f32>>::eval(-0.0).is_sign_negative());
    assert!(<Asinh as Unary<f64>>::eval(-0.0).is_sign_negative());
}

/// Values the trigonometric reductions find hard: near multiples of pi/2
/// and at the ends of the fast path.
#[test]
fn trigonometric_reduction_edges_within_two_ulp() {
    let mut xs: Vec<f64> = vec![
        (1u64 << 20) as f64 * std::f64::consts::FRAC_PI_2,
        (1u64 << 20) as f64 * std::f64::consts::FRAC_PI_2 * (1.0 + f64::EPSILON),
        1e6,
        1e22,
        f64::MAX,
        1.0e-300,
        f64::from_bits(1),
    ];
    for k in 1..2000u64 {
        let c = k as f64 * std::f64::consts::FRAC_PI_2;
        let c = c * (k % 37 + 1) as f64;
        xs.extend((c.to_bits() - 8..c.to_bits() + 8).map(f64::from_bits));
    }
    let neg: Vec<f64> = xs.iter().map(|x| -x).collect();
    xs.extend(neg);
    let xs32: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
    macro_rules! check {
        ($k:ident, $r:expr) => {{
            let (e, x) = worst_f64::<$k>(&xs, $r);
            assert!(e <= TOL, "{} float64: {e} ulp at {x:e}", stringify!($k));
            let (e, x) = worst_f32::<$k>(&xs32, $r);
            assert!(e <= TOL, "{} float32: {e} ulp at {x:e}", stringify!($k));
        }};
    }
    check!(Sin, f64::sin);
    check!(Cos, f64::cos);
    check!(Tan, f64::tan);
}

#[test]
fn inverse_trigonometric_float64_dense_within_two_ulp() {
    // Every 2^40-th float64 bit pattern in [-1, 1] and around the reduction points.
    let step = by_build(1u64 << 46, 1u64 << 40);
    let mut xs = Vec::new();
    let mut b = 0u64;
    while b <= 1f64.to_bits() {
        xs.push(f64::from_bits(b));
        xs.push(-f64::from_bits(b));
        b += step;
    }
    for c in [
        0.1,
        0.303_346_683_607_342_4,
        0.534_511_135_950_791_7,
        0.5,
        std::f64::consts::FRAC_1_SQRT_2,
        0.99,
    ] {
        for d in 0..200u64 {
            xs.push(f64::from_bits(f64::to_bits(c) - 100 + d));
        }
    }
    let atan_xs: Vec<f64> = xs.iter().flat_map(|&x| [x, 1.0 / x]).collect();
    for (e, x, name) in [
        {
            let w = worst_f64::<Asin>(&xs, f64::asin);
            (w.0, w.1, "Asin")
        },
        {
            let w = worst_f64::<Acos>(&xs, f64::acos);
            (w.0, w.1, "Acos")
        },
        {
            let w = worst_f64::<Atan>(&atan_xs, f64::atan);
            (w.0, w.1, "Atan")
        },
        {
            let w = worst_f64::<Erf>(&atan_xs, libm::erf);
            (w.0, w.1, "Erf")
        },
        {
            let w = worst_f64::<Erfc>(&atan_xs, libm::erfc);
            (w.0, w.1, "Erfc")
        },
    ] {
        println!("float64 {name:8}: {e:.3} ulp at {x:e}");
        assert!(e <= tol64(name), "{name}: {e} ulp at {x:e}");
    }
}

#[test]
fn circular_special_values_follow_ieee() {
    assert!(<Sin as Unary<f32>>::eval(-0.0).is_sign_negative());
    assert!(<Tan as Unary<f64>>::eval(-0.0).is_sign_negative());
    assert!(<Atan as Unary<f64>>::eval(-0.0).is_sign_negative());
    assert!(<Asin as Unary<f32>>::eval(-0.0).is_sign_negative());
    assert!(<Erf as Unary<f64>>::eval(-0.0).is_sign_negative());
    assert!(<Sin as Unary<f64>>::eval(f64::INFINITY).is_nan());
    assert!(<Cos as Unary<f32>>::eval(f32::NEG_INFINITY).is_nan());
    assert!(<Asin as Unary<f64>>::eval(1.5).is_nan());
    assert_eq!(<Cos as Unary<f64>>::eval(0.0), 1.0);
    assert_eq!(
        <Atan as Unary<f32>>::eval(f32::INFINITY),
        std::f32::consts::FRAC_PI_2
    );
    assert_eq!(
        <Atan as Unary<f64>>::eval(f64::NEG_INFINITY),
        -std::f64::consts::FRAC_PI_2
    );
    assert_eq!(<Acos as Unary<f64>>::eval(-1.0), std::f64::consts::PI);
    assert_eq!(<Acos as Unary<f64>>::eval(1.0), 0.0);
    assert_eq!(<Erfc as Unary<f64>>::eval(f64::NEG_INFINITY), 2.0);
    assert_eq!(<Erfc as Unary<f32>>::eval(f32::INFINITY), 0.0);
    assert_eq!(<Erf as Unary<f32>>::eval(f32::NEG_INFINITY), -1.0);
}

/// float32 `pow` against float64's over sampled pairs, within 2 ulp.
#[test]
fn pow_float32_within_two_ulp() {
    use super::pow::pow_f32;
    let n = by_build(200_000, 4_000_000);
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut worst = (0.0, 0.0f32, 0.0f32);
    let mut xs = Vec::with_capacity(n);
    let mut ys = Vec::with_capacity(n);
    for k in 0..n {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        // Bases over every binade (both signs), exponents mostly of a size
        // that keeps the result finite, every fourth an integer.
        let x = f32::from_bits((s >> 32) as u32 & 0x7fff_ffff);
        // Negative bases in every other run of 64, so the loop's chunks of
        // positive bases (its main path alone) are covered too.
        let x = if k % 3 == 0 && (k / 64) % 2 == 1 {
            -x
        } else {
            x
        };
        let span = 160.0 / x.abs().log2().abs().max(1.0);
        let y = ((s & 0xffff_ffff) as f32 / u32::MAX as f32 * 2.0 - 1.0) * span;
        let y = if k % 4 == 0 { y.round() } else { y };
        xs.push(x);
        ys.push(y);
    }
    let mut out = vec![0f32; n];
    let (a, b) = (
        crate::kernels::iter::Run::Slice(&xs[..]),
        crate::kernels::iter::Run::Slice(&ys[..]),
    );
    pow_block(a, b, &mut out);
    for ((&x, &y), &got) in xs.iter().zip(&ys).zip(&out) {
        assert_eq!(
            got.to_bits(),
            pow_f32(x, y).to_bits(),
            "slice and scalar differ"
        );
        let want = (x as f64).powf(y as f64);
        let want = if (want as f32).is_infinite() {
            want as f32 as f64
        } else {
            want
        };
        let e = ulps(got as f64, want, 23, -126);
        if e > worst.0 {
            worst = (e, x, y);
        }
    }
    assert!(
        worst.0 <= TOL,
        "pow: {} ulp at ({:e}, {:e})",
        worst.0,
        worst.1,
        worst.2
    );
}

/// float64 `pow` against the C library's over sampled pairs: bases over
/// every binade, exponents that take the result across its whole range
/// (and past it), bases near 1 with large exponents, and integers.
#[test]
fn pow_float64_within_one_ulp_of_libm() {
    use super::pow::pow_f64;
    let n = by_build(200_000, 4_000_000);
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let unit = |b: u64| (b >> 11) as f64 / (1u64 << 53) as f64;
    let (mut xs, mut ys) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for k in 0..n {
        let (b, c) = (next(), next());
        let (x, y) = match k % 4 {
            // Any finite base; t = y log x spans about +-800.
            0 | 1 => {
                let x = f64::from_bits(b & 0x7fef_ffff_ffff_ffff);
                let span = 1150.0 / x.log2().abs().max(1.0);
                (x, (unit(c) * 2.0 - 1.0) * span)
            }
            // Near 1, where y can be large and the result still finite.
            2 => {
                let x = 1.0 + (unit(b) * 2.0 - 1.0) * 2f64.powi(-((c % 50) as i32));
                (x, (unit(c) * 2.0 - 1.0) * 740.0 / x.ln().abs().max(1e-300))
            }
            // Integer exponents.
            _ => (
                f64::from_bits(0x3c00_0000_0000_0000 + (b >> 2) % 0x0800_0000_0000_0000),
                ((c % 61) as f64) - 30.0,
            ),
        };
        // Negative bases in every other run of 64, as for float32.
        xs.push(if k % 3 == 0 && (k / 64) % 2 == 1 {
            -x
        } else {
            x
        });
        ys.push(y);
    }
    let mut out = vec![0f64; n];
    let (a, b) = (
        crate::kernels::iter::Run::Slice(&xs[..]),
        crate::kernels::iter::Run::Slice(&ys[..]),
    );
    pow_block(a, b, &mut out);
    let mut worst = (0.0, 0.0f64, 0.0f64);
    for ((&x, &y), &got) in xs.iter().zip(&ys).zip(&out) {
        assert_eq!(
            got.to_bits(),
            pow_f64(x, y).to_bits(),
            "slice and scalar differ"
        );
        let e = ulps(got, x.powf(y), 52, -1022);
        if e > worst.0 {
            worst = (e, x, y);
        }
    }
    println!(
        "pow float64: {} ulp at ({:e}, {:e})",
        worst.0, worst.1, worst.2
    );
    assert!(
        worst.0 <= 1.0,
        "pow: {} ulp at ({:e}, {:e})",
        worst.0,
        worst.1,
        worst.2
    );
}

/// `pow` of every pair of `$vals` (type `$t`) against the C library's:
/// the same bits (or both NaN), or for finite non-zero results within 2
/// ulp (`$mant` mantissa bits, `$emin` least exponent).
macro_rules! pow_special_cases {
    ($name:ident, $t:ty, $body:path, $mant:expr, $emin:expr, [$($extra:expr),*]) => {
        #[test]
        fn $name() {
            let vals: Vec<$t> = vec![
                0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5, -2.5,
                <$t>::INFINITY, <$t>::NEG_INFINITY, <$t>::NAN, <$t>::MIN_POSITIVE,
                <$t>::from_bits(1), <$t>::MAX, -<$t>::MAX, 1e-3,
                1.0 - <$t>::EPSILON, 1.0 + <$t>::EPSILON, $($extra),*
            ];
            for &x in &vals {
                for &y in &vals {
                    let got = $body(x, y);
                    let want = x.powf(y);
                    let same = got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan());
                    if !same {
                        let e = ulps(got as f64, (x as f64).powf(y as f64) as $t as f64, $mant, $emin);
                        assert!(
                            e <= TOL && want.is_finite() && want != 0.0,
                            "pow({x:e}, {y:e}) = {got:e}, the C library gives {want:e}"
                        );
                    }
                }
            }
        }
    };
}

pow_special_cases!(
    pow_float32_special_cases_match_powf,
    f32,
    super::pow::pow_f32,
    23,
    -126,
    [16_777_216.0, -16_777_217.0]
);

pow_special_cases!(
    pow_float64_special_cases_match_libm,
    f64,
    super::pow::pow_f64,
    52,
    -1022,
    [
        4_503_599_627_370_496.0,
        4_503_599_627_370_497.0,
        -9_007_199_254_740_993.0,
        2_251_799_813_685_248.5,
        1e300,
        1075.0,
        -1075.0
    ]
);

/// Every float32 bit pattern through every function, in release builds;
/// `VMATH_ONLY=Sin,Cos` limits it to the named kernels.
#[test]
#[ignore = "minutes in release, hours in debug"]
fn vmath_exhaustive_float32() {
    let only = std::env::var("VMATH_ONLY").ok();
    let chosen = |name: &str| {
        only.as_ref()
            .is_none_or(|o| o.split(',').any(|n| n == name))
    };
    macro_rules! check {
        ($k:ident, $r:expr, $dense:expr) => {
            if chosen(stringify!($k)) {
                let mut worst = (0.0, 0.0f32);
                let mut xs = Vec::with_capacity(1 << 24);
                for hi in 0..256u32 {
                    xs.clear();
                    xs.extend((0..1u32 << 24).map(|lo| f32::from_bits(hi << 24 | lo)));
                    let w = worst_f32::<$k>(&xs, $r);
                    if w.0 > worst.0 {
                        worst = w;
                    }
                }
                println!("{:8}: {:.3} ulp at {:e}", stringify!($k), worst.0, worst.1);
                assert!(
                    worst.0 <= TOL,
                    "{}: {} ulp at {:e}",
                    stringify!($k),
                    worst.0,
                    worst.1
                );
            }
        };
    }
    for_each_function!(check);
}
