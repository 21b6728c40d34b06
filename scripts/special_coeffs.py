"""Generate the numeric constants used by src/kernels/special/.

Every table of numbers in the special-function kernels that is not an exact
rational (Bernoulli numbers are written as fractions in the Rust sources) is
produced here with mpmath at high precision and printed as Rust source, so the
tables can be reproduced and checked:

    python scripts/special_coeffs.py            # print every table
    python scripts/special_coeffs.py gamma      # print one group

Groups:

* gamma: zeta(k) - 1 for the Taylor series of lgamma(2 + z), the positive
  root of digamma as a double-double, and the Taylor coefficients
  psi^(k)(x0) / k! of digamma about that root.
* erf: the Maclaurin coefficients of erfinv in z = sqrt(pi)/2 y,
  erfinv(y) = sum_k c_k / (2k + 1) z^(2k+1), from the recurrence
  c_0 = 1, c_k = sum_{m<k} c_m c_{k-1-m} / ((m + 1)(2m + 1)); and the
  Taylor coefficients of erfcx(x) = exp(x^2) erfc(x) about the centres
  0.25, 0.75, ..., 4.75.
* airy: Ai(0) and -Ai'(0) for the Maclaurin series, and Ai(c), Ai'(c) at
  the Taylor centres c = -0.5, -1.0, ..., -10, used on the oscillating
  negative axis.

Each float is printed with repr(), the shortest decimal string that reads
back as the same double (so clippy's excessive_precision lint stays quiet).
This script is not run by the tests.
"""

import sys

import mpmath as mp

mp.mp.dps = 60


def f64(x):
    """The nearest double to the mpmath number x, as Rust source."""
    s = repr(float(x))
    if "e" not in s and "." not in s and "inf" not in s and "nan" not in s:
        s += ".0"
    return s


def double_double(x):
    """x as hi + lo with hi = round(x) and lo = round(x - hi)."""
    hi = float(x)
    lo = float(x - mp.mpf(hi))
    return hi, lo


def print_table(name, values, per_line=3):
    print(f"const {name}: [f64; {len(values)}] = [")
    for i in range(0, len(values), per_line):
        print("    " + ", ".join(f64(v) for v in values[i:i + per_line]) + ",")
    print("];")


def gamma():
    # lgamma(2 + z) = (1 - euler) z + sum_{k>=2} (-1)^k (zeta(k) - 1) / k z^k
    print("// (-1)^k (zeta(k) - 1) / k for k = 2..=31")
    print_table("LGAMMA2_SERIES", [(-1) ** k * (mp.zeta(k) - 1) / k for k in range(2, 32)])
    x0 = mp.findroot(mp.digamma, 1.4616)
    hi, lo = double_double(x0)
    print(f"const DIGAMMA_ROOT_HI: f64 = {f64(hi)};")
    print(f"const DIGAMMA_ROOT_LO: f64 = {f64(lo)};")
    # psi(x0 + h) = sum_{k>=1} psi^(k)(x0) / k! h^k
    coeffs = [mp.polygamma(k, x0) / mp.factorial(k) for k in range(1, 43)]
    print("// psi^(k)(x0) / k! for k = 1..=42")
    print_table("DIGAMMA_ROOT_TAYLOR", coeffs)


def erf():
    c = [mp.mpf(1)]
    for k in range(1, 30):
        c.append(mp.fsum(c[m] * c[k - 1 - m] / ((m + 1) * (2 * m + 1)) for m in range(k)))
    print("// c_k / (2k + 1) for k = 0..30")
    print_table("ERFINV_SERIES", [c[k] / (2 * k + 1) for k in range(30)])
    # erfcx(c + u) = sum_j a_j u^j about c = 0.25, 0.75, ..., 4.75, 19 terms
    # each (for |u| <= 1/4 the rest is below 2^-57 of the value).
    print("// Taylor coefficients of erfcx about 0.5 i + 0.25, i = 0..10")
    print(f"const ERFCX_TAYLOR: [[f64; {ERFCX_TERMS}]; {ERFCX_PIECES}] = [")
    for i in range(ERFCX_PIECES):
        centre = mp.mpf(i) / 2 + mp.mpf(1) / 4
        coeffs = mp.taylor(lambda z: mp.exp(z * z) * mp.erfc(z), centre, ERFCX_TERMS - 1)
        print("    [")
        for k in range(0, ERFCX_TERMS, 3):
            print("        " + ", ".join(f64(v) for v in coeffs[k:k + 3]) + ",")
        print("    ],")
    print("];")


ERFCX_PIECES = 10
ERFCX_TERMS = 19


def airy():
    print(f"const AI_0: f64 = {f64(mp.airyai(0))};")
    print(f"const NEG_AI_PRIME_0: f64 = {f64(-mp.airyai(0, derivative=1))};")
    centres = [-0.5 * i for i in range(1, 21)]
    print("// Ai(c), Ai'(c) at c = -0.5 i for i = 1..=20")
    print(f"const AIRY_CENTRES: [(f64, f64); {len(centres)}] = [")
    for c in centres:
        print(f"    ({f64(mp.airyai(c))}, {f64(mp.airyai(c, derivative=1))}),")
    print("];")


GROUPS = {"gamma": gamma, "erf": erf, "airy": airy}

if __name__ == "__main__":
    for group in sys.argv[1:] or GROUPS:
        print(f"// group: {group}")
        GROUPS[group]()
