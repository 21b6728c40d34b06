//! Reading an index expression: basic indices become a view ([`Plan`]),
//! advanced ones the element offsets they select ([`Gather`]).

use super::*;

/// One component of an index expression (`t[a, b, ...]`).
#[derive(Clone, Debug)]
pub enum TensorIndex {
    /// A single position (negative counts from the end); removes the dim.
    Int(i64),
    /// `start:stop:step`; `None` bounds mean the ends, `step` must be > 0.
    Slice {
        /// First position (negative counts from the end).
        start: Option<i64>,
        /// One past the last position.
        stop: Option<i64>,
        /// Distance between positions.
        step: i64,
    },
    /// `None`: inserts a dim of size 1.
    NewAxis,
    /// `...`: as many full slices as needed.
    Ellipsis,
    /// An int64/int32 index tensor or a bool mask (advanced indexing).
    Tensor(Tensor),
}

impl TensorIndex {
    /// The full slice `:`.
    pub fn full() -> TensorIndex {
        TensorIndex::Slice {
            start: None,
            stop: None,
            step: 1,
        }
    }
}

/// Indexing after the basic indices were applied.
pub(super) struct Plan {
    /// The view of `self` after ints, slices, new axes and ellipsis.
    pub(super) view: Layout,
    /// Advanced indices: (dim in `view`, dim of the original tensor for
    /// messages, int index tensor).
    pub(super) adv: Vec<(usize, usize, Tensor)>,
}

/// Element offsets (into the view) selected by the advanced indices, and
/// how the result dims are arranged.
pub(super) struct Gather {
    /// Broadcast shape of the index tensors.
    pub(super) bshape: Vec<usize>,
    /// For each position of `bshape` (row-major), the element offset
    /// relative to the view's offset.
    pub(super) offsets: Vec<isize>,
    /// Shape and view strides of the dims not advanced-indexed, in order.
    pub(super) rshape: Vec<usize>,
    pub(super) rstrides: Vec<isize>,
    /// Position in the result of the first broadcast dim (0 when the
    /// advanced dims were not adjacent).
    pub(super) bstart: usize,
}

impl Gather {
    /// The full result shape.
    pub(super) fn result_shape(&self) -> Vec<usize> {
        let mut s = self.rshape.clone();
        for (i, &b) in self.bshape.iter().enumerate() {
            s.insert(self.bstart + i, b);
        }
        s
    }

    /// Splits strides over the result shape into (broadcast part, rest).
    pub(super) fn split(&self, strides: &[isize]) -> (Vec<isize>, Vec<isize>) {
        let nb = self.bshape.len();
        let b = strides[self.bstart..self.bstart + nb].to_vec();
        let mut r = strides[..self.bstart].to_vec();
        r.extend_from_slice(&strides[self.bstart + nb..]);
        (b, r)
    }
}

pub(super) fn index_dtype_error() -> Error {
    Error::index("tensors used as indices must be long, int, byte or bool tensors")
}

impl Tensor {
    pub(super) fn plan(&self, indices: &[TensorIndex]) -> Result<Plan> {
        let nd = self.ndim();
        let mut consumed = 0usize;
        let mut ellipses = 0;
        for ix in indices {
            match ix {
                TensorIndex::Int(_) | TensorIndex::Slice { .. } => consumed += 1,
                TensorIndex::Ellipsis => ellipses += 1,
                TensorIndex::NewAxis => {}
                TensorIndex::Tensor(t) => match t.dtype() {
                    DType::Bool => consumed += t.ndim(),
                    DType::Int32 | DType::Int64 => consumed += 1,
                    _ => return Err(index_dtype_error()),
                },
            }
        }
        if ellipses > 1 {
            return Err(Error::index(
                "an index can only have a single ellipsis ('...')",
            ));
        }
        if consumed > nd {
            if nd == 0 && indices.iter().any(|i| matches!(i, TensorIndex::Int(_))) {
                return Err(Error::index(
                    "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a number",
                ));
            }
            return Err(Error::index(format!(
                "too many indices for tensor of dimension {nd}"
            )));
        }
        let mut view = self.layout().clone();
        let mut adv = Vec::new();
        let mut d = 0usize; // dim in `view`
        let mut orig = 0usize; // dim in `self`
        for ix in indices {
            match ix {
                TensorIndex::Int(i) => {
                    let size = view.shape()[d];
                    let w = if *i < 0 { *i + size as i64 } else { *i };
                    if w < 0 || w >= size as i64 {
                        return Err(Error::index(format!(
                            "index {i} is out of bounds for dimension {orig} with size {size}"
                        )));
                    }
                    view = view.select(d as isize, w as isize)?;
                    orig += 1;
                }
                TensorIndex::Slice { start, stop, step } => {
                    if *step <= 0 {
                        return Err(if *step == 0 {
                            Error::value("slice step cannot be zero")
                        } else {
                            Error::value("step must be greater than zero")
                        });
                    }
                    let clampi = |v: i64| v.clamp(isize::MIN as i64, isize::MAX as i64) as isize;
                    view = view.slice(
                        d,
                        start.map_or(0, clampi),
                        stop.map_or(isize::MAX, clampi),
                        *step as usize,
                    )?;
                    d += 1;
                    orig += 1;
                }
                TensorIndex::NewAxis => {
                    view = view.unsqueeze(d as isize)?;
                    d += 1;
                }
                TensorIndex::Ellipsis => {
                    let fill = nd - consumed;
                    d += fill;
                    orig += fill;
                }
                TensorIndex::Tensor(t) if t.dtype() == DType::Bool => {
                    if t.ndim() == 0 {
                        // A scalar mask: a new dim of size 1 (true) or 0.
                        view = view.unsqueeze(d as isize)?;
                        let idx: Vec<i64> = if t.item()?.to_bool() { vec![0] } else { vec![] };
                        adv.push((d, orig, Tensor::from_vec(idx)));
                        d += 1;
                        continue;
                    }
                    for j in 0..t.ndim() {
                        if t.shape()[j] != view.shape()[d + j] {
                            return Err(Error::index(format!(
                                "The shape of the mask {} at index {j} does not match the shape of the indexed tensor {} at index {}",
                                fmt_shape(t.shape()),
                                fmt_shape(view.shape()),
                                d + j
                            )));
                        }
                    }
                    let (coords, n) = nonzero_coords(t);
                    let k = t.ndim();
                    for j in 0..k {
                        let col: Vec<i64> = (0..n).map(|r| coords[r * k + j]).collect();
                        adv.push((d + j, orig + j, Tensor::from_vec(col)));
                    }
                    d += k;
                    orig += k;
                }
                TensorIndex::Tensor(t) => {
                    adv.push((d, orig, t.clone()));
                    d += 1;
                    orig += 1;
                }
            }
        }
        Ok(Plan { view, adv })
    }

    pub(super) fn gather_plan(plan: &Plan) -> Result<Gather> {
        let mut bshape: Vec<usize> = Vec::new();
        for (_, _, t) in &plan.adv {
            bshape = broadcast_shapes(&bshape, t.shape())
                .map_err(|_| {
                    let shapes: Vec<String> =
                        plan.adv.iter().map(|(_, _, t)| fmt_shape(t.shape())).collect();
                    Error::index(format!(
                        "shape mismatch: indexing tensors could not be broadcast together with shapes {}",
                        shapes.join(", ")
                    ))
                })?
                .to_vec();
        }
        let nb: usize = bshape.iter().product();
        let view = &plan.view;
        let mut offsets = vec![0isize; nb];
        for (d, orig, t) in &plan.adv {
            let size = view.shape()[*d];
            let stride = view.strides()[*d] as isize;
            let vals = t.broadcast_to(&bshape)?.to_vec::<i64>();
            for (o, &v) in offsets.iter_mut().zip(&vals) {
                let w = if v < 0 { v + size as i64 } else { v };
                if w < 0 || w >= size as i64 {
                    return Err(Error::index(format!(
                        "index {v} is out of bounds for dimension {orig} with size {size}"
                    )));
                }
                *o += w as isize * stride;
            }
        }
        let dims: Vec<usize> = plan.adv.iter().map(|a| a.0).collect();
        let adjacent = dims.windows(2).all(|w| w[1] == w[0] + 1);
        let bstart = if adjacent { dims[0] } else { 0 };
        let mut rshape = Vec::new();
        let mut rstrides = Vec::new();
        for k in 0..view.ndim() {
            if !dims.contains(&k) {
                rshape.push(view.shape()[k]);
                rstrides.push(view.strides()[k] as isize);
            }
        }
        Ok(Gather {
            bshape,
            offsets,
            rshape,
            rstrides,
            bstart,
        })
    }
}
