//! Creation of tensors from ranges: `arange`, `linspace`, `logspace`, `eye`.
//!
//! Values are computed in `f64` (or `i64` for integer ranges) and cast to
//! the output dtype once, so float32 results are the correctly rounded
//! float64 values.

use crate::kernels::access::{lock, slice_mut};
use crate::kernels::iter::for_ranges;
use crate::pool::SyncPtr;
use crate::{default_dtype, dispatch, DType, Element, Error, Result, Scalar, Tensor};

/// Largest element count a creation function accepts for `dtype` (the byte
/// size must fit an `isize`, as Rust allocations require).
fn check_numel(numel: f64, dtype: DType) -> Result<usize> {
    let max = (isize::MAX as usize / dtype.itemsize()) as f64;
    if !(numel >= 0.0 && numel <= max) {
        return Err(Error::runtime(format!(
            "invalid size, possible overflow? (requested {numel} elements of {dtype})"
        )));
    }
    Ok(numel as usize)
}

/// A new contiguous tensor of `shape` whose element `i` is `f(i)`.
fn from_fn<T: Element>(shape: &[usize], f: impl Fn(usize) -> T + Sync + Send) -> Result<Tensor> {
    let out = Tensor::try_empty(shape, T::DTYPE)?;
    let n = out.numel();
    {
        let _g = lock(&[], Some(&out));
        // SAFETY: `out` is fresh, contiguous, write-locked and of dtype T.
        let o = SyncPtr(unsafe { slice_mut::<T>(&out) }.as_mut_ptr());
        for_ranges(n, |s, e| {
            for i in s..e {
                // SAFETY: `i < n`, and each index is written by one worker only.
                unsafe { *o.at(i) = f(i) };
            }
        });
    }
    Ok(out)
}

/// `steps` values of `map(linspace(start, end, steps))` (see `linspace`).
fn spaced(
    op: &str,
    start: Scalar,
    end: Scalar,
    steps: i64,
    dtype: DType,
    map: impl Fn(f64) -> f64 + Sync + Send,
) -> Result<Tensor> {
    not_bool(op, dtype)?;
    if steps < 0 {
        return Err(Error::runtime(format!(
            "number of steps must be non-negative, got {steps}"
        )));
    }
    let n = check_numel(steps as f64, dtype)?;
    let v = linspace_fn(start.to_f64(), end.to_f64(), n);
    dispatch!(dtype, T => from_fn::<T>(&[n], |i| T::from_f64(map(v(i)))))
}

fn not_bool(op: &str, dtype: DType) -> Result<()> {
    if dtype == DType::Bool {
        return Err(Error::runtime(format!(
            "\"{op}_cpu\" not implemented for 'Bool'"
        )));
    }
    Ok(())
}

impl Tensor {
    /// A new contiguous tensor of `shape` filled with `value`: the entry of
    /// the factory functions (`zeros`, `ones`, `full` and their `_like`
    /// forms), which a capture records, unlike [`Tensor::try_full`], which
    /// kernels use for buffers they fill themselves.
    pub fn full_of(shape: &[usize], value: Scalar, dtype: DType) -> Result<Tensor> {
        crate::autograd::captured!(Tensor::full_of (shape: &[usize], value: Scalar, dtype: DType) -> Tensor {
            Tensor::try_full(shape, value, dtype)
        })
    }

    /// A new contiguous tensor of `shape` whose values are not set (zeros
    /// in practice): the entry of `empty` and `empty_like`, which a
    /// capture records, unlike [`Tensor::try_empty`].
    pub fn empty_of(shape: &[usize], dtype: DType) -> Result<Tensor> {
        crate::autograd::captured!(Tensor::empty_of (shape: &[usize], dtype: DType) -> Tensor {
            Tensor::try_empty(shape, dtype)
        })
    }

    /// `detach()`, as a capture records it (see [`Tensor::detach`]).
    pub fn detached(&self) -> Result<Tensor> {
        crate::autograd::captured!(detached (&self) -> Tensor { Ok(self.detach()) })
    }
}

impl Tensor {
    /// `arange(start, end, step)`: `start, start + step, ...` up to but
    /// excluding `end`; without `dtype`, int64 when every argument is an
    /// integer, else the default float dtype.
    pub fn arange(
        start: impl Into<Scalar>,
        end: impl Into<Scalar>,
        step: impl Into<Scalar>,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        Tensor::arange_scalars(start.into(), end.into(), step.into(), dtype)
    }

    /// [`Tensor::arange`] over scalars, as a capture records it.
    fn arange_scalars(
        start: Scalar,
        end: Scalar,
        step: Scalar,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        crate::autograd::captured!(Tensor::arange_scalars (start: Scalar, end: Scalar, step: Scalar, dtype: Option<DType>) -> Tensor {
            Tensor::arange_now(start, end, step, dtype)
        })
    }

    fn arange_now(
        start: Scalar,
        end: Scalar,
        step: Scalar,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        let any_float = [start, end, step].iter().any(|s| s.is_floating_point());
        let dtype = dtype.unwrap_or(if any_float {
            default_dtype()
        } else {
            DType::Int64
        });
        not_bool("arange", dtype)?;
        let (s64, e64, st64) = (start.to_f64(), end.to_f64(), step.to_f64());
        if !(s64.is_finite() && e64.is_finite()) {
            return Err(Error::runtime(format!("unsupported range: {s64} -> {e64}")));
        }
        if dtype.is_floating_point() {
            if st64 == 0.0 || st64.is_nan() {
                return Err(Error::runtime("step must be nonzero"));
            }
            check_sign(st64 > 0.0, e64 >= s64, e64 <= s64)?;
            let n = check_numel(((e64 - s64) / st64).ceil(), dtype)?;
            return dispatch!(dtype, T => from_fn::<T>(&[n], |i| {
                T::from_f64(s64 + st64 * i as f64)
            }));
        }
        // Integer dtypes: the arguments are truncated to integers; int64
        // sizes its result from the truncated values, int32 from the
        // original ones (as torch does).
        let (si, ei, sti) = (start.to_i64(), end.to_i64(), step.to_i64());
        if sti == 0 {
            return Err(Error::runtime("step must be nonzero"));
        }
        check_sign(sti > 0, ei >= si, ei <= si)?;
        let n = if dtype == DType::Int64 {
            let span = ei as i128 - si as i128;
            let st = sti as i128;
            // Ceiling division for either sign (span and step agree in sign).
            let q = span / st + i128::from(span % st != 0);
            check_numel(q as f64, dtype)?
        } else {
            if st64 == 0.0 || st64.is_nan() {
                return Err(Error::runtime("step must be nonzero"));
            }
            check_sign(st64 > 0.0, e64 >= s64, e64 <= s64)?;
            check_numel(((e64 - s64) / st64).ceil(), dtype)?
        };
        dispatch!(dtype, T => from_fn::<T>(&[n], |i| {
            T::from_i64(si.wrapping_add(sti.wrapping_mul(i as i64)))
        }))
    }

    /// `linspace(start, end, steps)`: `steps` evenly spaced values from
    /// `start` to `end` inclusive; the first half counts up from `start`, the
    /// second half down from `end`, so both endpoints are exact.
    pub fn linspace(
        start: impl Into<Scalar>,
        end: impl Into<Scalar>,
        steps: i64,
        dtype: DType,
    ) -> Result<Tensor> {
        spaced("linspace", start.into(), end.into(), steps, dtype, |x| x)
    }

    /// `logspace(start, end, steps, base)`: `base ** linspace(start, end,
    /// steps)`.
    pub fn logspace(
        start: impl Into<Scalar>,
        end: impl Into<Scalar>,
        steps: i64,
        base: f64,
        dtype: DType,
    ) -> Result<Tensor> {
        spaced("logspace", start.into(), end.into(), steps, dtype, |x| {
            base.powf(x)
        })
    }

    /// `eye(n, m)`: an `n x m` matrix (`m` defaults to `n`) with ones on the
    /// main diagonal and zeros elsewhere.
    pub fn eye(n: i64, m: Option<i64>, dtype: DType) -> Result<Tensor> {
        if n < 0 {
            return Err(Error::runtime(format!(
                "n must be greater or equal to 0, got {n}"
            )));
        }
        let m = m.unwrap_or(n);
        if m < 0 {
            return Err(Error::runtime(format!(
                "m must be greater or equal to 0, got {m}"
            )));
        }
        let (rows, cols) = (n as usize, m as usize);
        let numel = (rows as f64) * (cols as f64);
        check_numel(numel, dtype)?;
        let out = Tensor::zeros(&[rows, cols], dtype);
        {
            let _g = lock(&[], Some(&out));
            dispatch!(dtype, T => {
                // SAFETY: `out` is fresh, contiguous, write-locked, of dtype T.
                let s = unsafe { slice_mut::<T>(&out) };
                for i in 0..rows.min(cols) {
                    s[i * cols + i] = T::one();
                }
            });
        }
        Ok(out)
    }
}

/// torch's check that `step` moves from `start` towards `end`.
fn check_sign(positive: bool, ascending: bool, descending: bool) -> Result<()> {
    if (positive && ascending) || (!positive && descending) {
        Ok(())
    } else {
        Err(Error::runtime(
            "upper bound and larger bound inconsistent with step sign",
        ))
    }
}

/// Element `i` of a `steps`-point linspace from `a` to `b`.
fn linspace_fn(a: f64, b: f64, steps: usize) -> impl Fn(usize) -> f64 + Sync + Send {
    let step = if steps > 1 {
        (b - a) / (steps - 1) as f64
    } else {
        0.0
    };
    // One point is `a` itself; otherwise the lower half counts from `a`.
    let half = if steps == 1 { 1 } else { steps / 2 };
    move |i| {
        if i < half {
            a + step * i as f64
        } else {
            b - step * (steps - 1 - i) as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arange_int_sizes_round_up() {
        let t = Tensor::arange(1i64, 10i64, 3i64, None).unwrap();
        assert_eq!(t.dtype(), DType::Int64);
        assert_eq!(t.to_vec::<i64>(), vec![1, 4, 7]);
        let t = Tensor::arange(10i64, 1i64, -3i64, None).unwrap();
        assert_eq!(t.to_vec::<i64>(), vec![10, 7, 4]);
    }

    #[test]
    fn linspace_one_step_is_start() {
        let t = Tensor::linspace(2.0, 5.0, 1, DType::Float64).unwrap();
        assert_eq!(t.to_vec::<f64>(), vec![2.0]);
    }
}
