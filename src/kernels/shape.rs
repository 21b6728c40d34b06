//! Copying shape kernels: strided copies that fill a destination region
//! (often a view of a fresh output) from a source read through arbitrary,
//! possibly negative, strides, and the concatenation, flip, repeat and
//! triangular-mask kernels built on them.

use super::access::{elem_ptr, lock};
use super::copy::dense;
use super::iter::for_ranges;
use crate::pool::SyncPtr;
use crate::tensor::{contiguous_strides, wrap_dim};
use crate::{dispatch, DType, Element, Error, Result, Tensor};

/// Visits the row-major positions `start..end` of `shape`, calling `f` with
/// each operand's element offset (sum of index times stride, per operand).
pub(crate) fn walk<const K: usize>(
    shape: &[usize],
    strides: [&[isize]; K],
    start: usize,
    end: usize,
    mut f: impl FnMut([isize; K]),
) {
    if start >= end {
        return;
    }
    let nd = shape.len();
    if nd == 0 {
        f([0; K]);
        return;
    }
    // Multi-index of `start`.
    let mut idx = vec![0usize; nd];
    let mut rem = start;
    for d in (0..nd).rev() {
        idx[d] = rem % shape[d];
        rem /= shape[d];
    }
    let mut off = [0isize; K];
    for k in 0..K {
        off[k] = (0..nd).map(|d| idx[d] as isize * strides[k][d]).sum();
    }
    let last = nd - 1;
    let inner = shape[last];
    let mut step = [0isize; K];
    for k in 0..K {
        step[k] = strides[k][last];
    }
    let mut pos = start;
    while pos < end {
        let run = (inner - idx[last]).min(end - pos);
        let mut o = off;
        for _ in 0..run {
            f(o);
            for k in 0..K {
                o[k] += step[k];
            }
        }
        pos += run;
        if pos >= end {
            break;
        }
        // The run always ends at the end of the last dim here: carry.
        for k in 0..K {
            off[k] -= idx[last] as isize * step[k];
        }
        idx[last] = 0;
        let mut d = last;
        while d > 0 {
            d -= 1;
            idx[d] += 1;
            for k in 0..K {
                off[k] += strides[k][d];
            }
            if idx[d] < shape[d] {
                break;
            }
            for k in 0..K {
                off[k] -= shape[d] as isize * strides[k][d];
            }
            idx[d] = 0;
        }
    }
}

/// Strides as signed element counts.
pub(crate) fn signed(strides: &[usize]) -> Vec<isize> {
    strides.iter().map(|&s| s as isize).collect()
}

/// `dst[i] = cast(src[i])` over `shape`, split over the pool when large.
///
/// # Safety
/// Every offset reached from `dst`/`src` through `shape` and the strides
/// lies inside locked buffers of the right types; `dst` positions are
/// distinct and do not alias `src`.
pub(crate) unsafe fn copy_strided<T: Element, S: Element>(
    dst: *mut T,
    dst_strides: &[isize],
    src: *const S,
    src_strides: &[isize],
    shape: &[usize],
) {
    let n: usize = shape.iter().product();
    let (d, s) = (SyncPtr(dst), SyncPtr(src as *mut S));
    for_ranges(n, |start, end| {
        let (d, s) = (d, s);
        walk(shape, [dst_strides, src_strides], start, end, |[o, i]| {
            // SAFETY: offsets stay inside the buffers (caller's contract).
            unsafe { *d.0.offset(o) = T::cast_from(*s.0.offset(i)) };
        });
    });
}

/// Copies `src` (same shape, any dtype) into `dst`, a fresh tensor or a
/// view of one that nothing else references, without bumping its version.
pub(crate) fn fill_from(dst: &Tensor, src: &Tensor) -> Result<()> {
    if dst.shape() != src.shape() {
        return Err(Error::runtime(format!(
            "internal copy between shapes {:?} and {:?}",
            dst.shape(),
            src.shape()
        )));
    }
    if dst.numel() == 0 {
        return Ok(());
    }
    let _g = lock(&[src], Some(dst));
    if dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous() {
        let isz = dst.dtype().itemsize();
        // SAFETY: both spans of `numel` elements lie in their (locked)
        // storages, and a fresh destination never overlaps the source.
        unsafe {
            std::ptr::copy_nonoverlapping(
                src.storage().as_ptr().add(src.offset() * isz),
                dst.storage().as_ptr().add(dst.offset() * isz),
                dst.numel() * isz,
            )
        };
        return Ok(());
    }
    let (ds, ss) = (signed(dst.strides()), signed(src.strides()));
    dispatch!(dst.dtype(), T => dispatch!(src.dtype(), S => {
        // SAFETY: both layouts lie within their locked storages; `dst` is
        // non-overlapping (fresh) and distinct from `src`.
        unsafe { copy_strided::<T, S>(elem_ptr::<T>(dst), &ds, elem_ptr::<S>(src), &ss, dst.shape()) }
    }));
    Ok(())
}

fn promote_all(tensors: &[Tensor]) -> DType {
    tensors
        .iter()
        .map(|t| t.dtype())
        .reduce(DType::promote)
        .unwrap_or_else(crate::default_dtype)
}

/// `tensors` concatenated along `dim` into a new tensor of their promoted
/// dtype; 1-D tensors of shape `(0,)` are skipped as in torch.
pub(crate) fn cat(tensors: &[Tensor], dim: isize) -> Result<Tensor> {
    if tensors.is_empty() {
        return Err(Error::runtime(
            "torch.cat(): expected a non-empty list of Tensors",
        ));
    }
    let dt = promote_all(tensors);
    for (i, t) in tensors.iter().enumerate() {
        if t.ndim() == 0 {
            return Err(Error::runtime(format!(
                "zero-dimensional tensor (at position {i}) cannot be concatenated"
            )));
        }
    }
    let parts: Vec<(usize, &Tensor)> = tensors
        .iter()
        .enumerate()
        .filter(|(_, t)| !(t.ndim() == 1 && t.shape()[0] == 0))
        .collect();
    let Some(&(_, first)) = parts.first() else {
        // Every input is a legacy empty tensor: validate the dim against
        // 1-D, as torch does, and return an empty result.
        wrap_dim(dim, 1)?;
        return Ok(Tensor::empty(&[0], dt));
    };
    let d = wrap_dim(dim, first.ndim())?;
    let mut shape = first.shape().to_vec();
    shape[d] = 0;
    for &(i, t) in &parts {
        if t.ndim() != first.ndim() {
            return Err(Error::runtime(format!(
                "Tensors must have same number of dimensions: got {} and {}",
                first.ndim(),
                t.ndim()
            )));
        }
        for k in 0..first.ndim() {
            if k != d && t.shape()[k] != first.shape()[k] {
                return Err(Error::runtime(format!(
                    "Sizes of tensors must match except in dimension {d}. Expected size {} but got size {} for tensor number {i} in the list.",
                    first.shape()[k],
                    t.shape()[k]
                )));
            }
        }
        shape[d] = shape[d].checked_add(t.shape()[d]).ok_or_else(|| {
            Error::runtime(format!(
                "torch.cat(): the sizes along dim {d} overflow (tensor number {i} has size {})",
                t.shape()[d]
            ))
        })?;
    }
    let out = Tensor::try_empty(&shape, dt)?;
    let mut start = 0usize;
    for &(_, t) in &parts {
        let len = t.shape()[d];
        if len > 0 {
            let mut l = out.layout().clone();
            l = l.narrow(d as isize, start as isize, len)?;
            fill_from(&out.view_with_layout(l), t)?;
        }
        start += len;
    }
    Ok(out)
}

/// A copy of `t` with the order of elements reversed along `dims`.
pub(crate) fn flip(t: &Tensor, dims: &[isize]) -> Result<Tensor> {
    let nd = t.ndim();
    let mut flipped = vec![false; nd.max(1)];
    for &d in dims {
        let w = wrap_dim(d, nd)?;
        if flipped[w] {
            return Err(Error::runtime(format!(
                "dim {w} appears multiple times in the list of dims"
            )));
        }
        flipped[w] = true;
    }
    let out = Tensor::empty(t.shape(), t.dtype());
    if out.numel() == 0 {
        return Ok(out);
    }
    let mut ss = signed(t.strides());
    let mut base = 0isize;
    for k in 0..nd {
        if flipped[k] {
            base += (t.shape()[k] as isize - 1) * ss[k];
            ss[k] = -ss[k];
        }
    }
    let ds = signed(out.strides());
    let _g = lock(&[t], Some(&out));
    dispatch!(t.dtype(), T => {
        // SAFETY: `base` plus the negated strides reach exactly the
        // elements of `t`'s layout (its last element along each
        // flipped dim, walking back); `out` is fresh.
        unsafe {
            copy_strided::<T, T>(elem_ptr::<T>(&out), &ds, elem_ptr::<T>(t).offset(base), &ss, t.shape())
        }
    });
    drop(_g);
    Ok(out)
}

/// `t` tiled `sizes[i]` times along each dim (leading sizes add new dims),
/// as torch's `repeat`.
pub(crate) fn repeat(t: &Tensor, sizes: &[usize]) -> Result<Tensor> {
    let nd = t.ndim();
    let r = sizes.len();
    if r < nd {
        return Err(Error::runtime(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor",
        ));
    }
    let lead = r - nd;
    let mut pshape = vec![1usize; lead];
    pshape.extend_from_slice(t.shape());
    let mut pstrides = vec![0isize; lead];
    pstrides.extend(t.strides().iter().map(|&s| s as isize));
    let out_shape: Vec<usize> = sizes
        .iter()
        .zip(&pshape)
        .map(|(&a, &b)| a.checked_mul(b))
        .collect::<Option<_>>()
        .filter(|s: &Vec<usize>| {
            s.iter()
                .try_fold(1usize, |acc, &n| acc.checked_mul(n))
                .is_some()
        })
        .ok_or_else(|| {
            Error::runtime(format!(
                "repeat: the result size overflows for repeats {sizes:?}"
            ))
        })?;
    let out = Tensor::try_empty(&out_shape, t.dtype())?;
    if out.numel() == 0 {
        return Ok(out);
    }
    let ostr = contiguous_strides(&out_shape);
    // Walk (rep_0, size_0, rep_1, size_1, ...).
    let mut shape2 = Vec::with_capacity(2 * r);
    let mut dst2 = Vec::with_capacity(2 * r);
    let mut src2 = Vec::with_capacity(2 * r);
    for i in 0..r {
        shape2.extend([sizes[i], pshape[i]]);
        dst2.extend([(pshape[i] * ostr[i]) as isize, ostr[i] as isize]);
        src2.extend([0, pstrides[i]]);
    }
    let _g = lock(&[t], Some(&out));
    dispatch!(t.dtype(), T => {
        // SAFETY: the source walk only moves along `t`'s own dims;
        // the destination positions enumerate `out` exactly once.
        unsafe { copy_strided::<T, T>(elem_ptr::<T>(&out), &dst2, elem_ptr::<T>(t), &src2, &shape2) }
    });
    drop(_g);
    Ok(out)
}

/// A copy of `t` with the elements above (`lower`) or below the `k`-th
/// diagonal of its last two dims zeroed (`op` names the op in errors).
pub(crate) fn triangle(t: &Tensor, k: i64, lower: bool, op: &str) -> Result<Tensor> {
    if t.ndim() < 2 {
        return Err(Error::runtime(format!(
            "{op}: input tensor must have at least 2 dimensions"
        )));
    }
    let out = dense(t);
    let nd = t.ndim();
    let (m, n) = (t.shape()[nd - 2], t.shape()[nd - 1]);
    if out.numel() == 0 {
        return Ok(out);
    }
    let _g = lock(&[], Some(&out));
    dispatch!(t.dtype(), T => {
        // SAFETY: `out` is fresh, contiguous and write-locked.
        let data = unsafe { crate::kernels::access::slice_mut::<T>(&out) };
        for mat in data.chunks_mut(m * n) {
            for (i, row) in mat.chunks_mut(n).enumerate() {
                for (j, v) in row.iter_mut().enumerate() {
                    let diff = j as i64 - i as i64;
                    if (lower && diff > k) || (!lower && diff < k) {
                        *v = T::zero();
                    }
                }
            }
        }
    });
    drop(_g);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::copy::permuted;

    fn f64s(v: &[f64], shape: &[usize]) -> Tensor {
        Tensor::from_slice(v, shape).unwrap()
    }

    #[test]
    fn walk_visits_a_range_of_positions_with_each_operands_offset() {
        // Shape (2, 3): positions 2..5 are (0, 2), (1, 0), (1, 1).
        let mut seen = Vec::new();
        walk(&[2, 3], [&[3, 1], &[1, 2]], 2, 5, |[a, b]| {
            seen.push((a, b))
        });
        assert_eq!(seen, vec![(2, 4), (3, 1), (4, 3)]);
        let mut scalar = Vec::new();
        walk(&[], [&[]], 0, 1, |[a]| scalar.push(a));
        assert_eq!(scalar, vec![0]);
    }

    #[test]
    fn fill_from_casts_into_a_strided_destination() {
        let dst = Tensor::zeros(&[2, 2], DType::Float64);
        let column = dst.view_with_layout(dst.layout().narrow(1, 1, 1).unwrap());
        let src = Tensor::from_slice(&[3i64, -4], &[2, 1]).unwrap();
        fill_from(&column, &src).unwrap();
        assert_eq!(dst.to_vec::<f64>(), vec![0.0, 3.0, 0.0, -4.0]);
        let e = fill_from(&dst, &src).unwrap_err().to_string();
        assert!(e.contains("internal copy between shapes"), "{e}");
    }

    #[test]
    fn cat_promotes_and_skips_legacy_empty_tensors() {
        let a = Tensor::from_slice(&[1i64, 2, 3, 4], &[2, 2]).unwrap();
        let b = f64s(&[5.0, 6.0], &[2, 1]);
        let empty = Tensor::empty(&[0], DType::Float32);
        let out = cat(&[a, empty.clone(), b], 1).unwrap();
        assert_eq!((out.dtype(), out.shape()), (DType::Float64, &[2, 3][..]));
        assert_eq!(out.to_vec::<f64>(), vec![1.0, 2.0, 5.0, 3.0, 4.0, 6.0]);
        let only_empty = cat(&[empty.clone(), empty], 0).unwrap();
        assert_eq!(only_empty.shape(), &[0]);
        let e = cat(&[], 0).unwrap_err().to_string();
        assert!(e.contains("expected a non-empty list"), "{e}");
        let e = cat(&[f64s(&[1.0, 2.0], &[2]), f64s(&[1.0], &[1, 1])], 0)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("Tensors must have same number of dimensions"),
            "{e}"
        );
    }

    #[test]
    fn flip_reverses_the_given_dims_of_a_strided_input() {
        let a = f64s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
        assert_eq!(
            flip(&a, &[-1]).unwrap().to_vec::<f64>(),
            vec![3.0, 2.0, 1.0, 6.0, 5.0, 4.0]
        );
        // The transpose [[1, 4], [2, 5], [3, 6]] flipped along both dims.
        let t = permuted(&a, &[1, 0]).unwrap();
        let out = flip(&t, &[0, 1]).unwrap();
        assert_eq!(out.shape(), &[3, 2]);
        assert_eq!(out.to_vec::<f64>(), vec![6.0, 3.0, 5.0, 2.0, 4.0, 1.0]);
        let e = flip(&a, &[1, -1]).unwrap_err().to_string();
        assert!(e.contains("dim 1 appears multiple times"), "{e}");
    }

    #[test]
    fn repeat_tiles_and_adds_leading_dims() {
        let a = Tensor::from_slice(&[1i32, 2], &[2]).unwrap();
        let out = repeat(&a, &[2, 2]).unwrap();
        assert_eq!(out.shape(), &[2, 4]);
        assert_eq!(out.to_vec::<i32>(), vec![1, 2, 1, 2, 1, 2, 1, 2]);
        let m = f64s(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
        let out = repeat(&m, &[2, 1]).unwrap();
        assert_eq!(
            out.to_vec::<f64>(),
            vec![1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 4.0]
        );
        let e = repeat(&m, &[2]).unwrap_err().to_string();
        assert!(e.contains("can not be smaller"), "{e}");
    }

    #[test]
    fn triangle_zeroes_either_side_of_a_diagonal() {
        let a = f64s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], &[3, 3]);
        let lower = triangle(&a, 0, true, "tril").unwrap();
        assert_eq!(
            lower.to_vec::<f64>(),
            vec![1.0, 0.0, 0.0, 4.0, 5.0, 0.0, 7.0, 8.0, 9.0]
        );
        let upper = triangle(&a, 1, false, "triu").unwrap();
        assert_eq!(
            upper.to_vec::<f64>(),
            vec![0.0, 2.0, 3.0, 0.0, 0.0, 6.0, 0.0, 0.0, 0.0]
        );
        // A transposed input is read in its logical order.
        let t = triangle(&permuted(&a, &[1, 0]).unwrap(), -1, true, "tril").unwrap();
        assert_eq!(
            t.to_vec::<f64>(),
            vec![0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 3.0, 6.0, 0.0]
        );
        let e = triangle(&f64s(&[1.0], &[1]), 0, true, "tril")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("tril: input tensor must have at least 2 dimensions"),
            "{e}"
        );
    }
}
