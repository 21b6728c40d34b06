//! Column-major matrices and workspaces for the decompositions, in buffers
//! from the storage cache.
//!
//! A matrix of 256 x 256 float64 is 512 KiB: allocated and freed through
//! the system allocator on every call, its pages are handed back and
//! faulted in again each time, which doubled the time of an LU
//! factorization of that size. Buffers from [`Storage`] are recycled by
//! its cache instead, and a result that is already one matrix in
//! column-major order becomes the output tensor's storage without a copy.

use super::access::elem_ptr;
use super::decomp::Faer;
use crate::tensor::{contiguous_strides, Layout, Storage};
use crate::{Result, Tensor};
use faer::dyn_stack::{MemStack, StackReq};
use faer::{Mat, MatMut, MatRef};
use std::marker::PhantomData;
use std::mem::MaybeUninit;

/// An owned `rows x cols` column-major matrix of `T` in a cached buffer.
pub(crate) struct Buf<T> {
    storage: Storage,
    rows: usize,
    cols: usize,
    _t: PhantomData<T>,
}

impl<T: Faer> Buf<T> {
    /// A matrix whose entries are all about to be written (a recycled
    /// buffer keeps its old, initialised values until then).
    pub(crate) fn uninit(rows: usize, cols: usize) -> Self {
        Self::with(Storage::uninit, rows, cols)
    }

    /// A matrix of zeros.
    pub(crate) fn zeros(rows: usize, cols: usize) -> Self {
        Self::with(Storage::zeroed, rows, cols)
    }

    /// A matrix in a buffer from `alloc`: a large one starts on a cache
    /// line, as faer's own matrices do (its vectorised loops ran 1.5x
    /// slower on a 256 x 256 QR without).
    fn with(alloc: fn(usize) -> Storage, rows: usize, cols: usize) -> Self {
        Buf {
            storage: alloc(rows * cols * std::mem::size_of::<T>()),
            rows,
            cols,
            _t: PhantomData,
        }
    }

    fn ptr(&self) -> *mut T {
        self.storage.as_ptr() as *mut T
    }

    /// The matrix whose entry `(i, j)` is `f(i, j)`, filled column by column.
    pub(crate) fn from_fn(rows: usize, cols: usize, mut f: impl FnMut(usize, usize) -> T) -> Self {
        let mut b = Self::uninit(rows, cols);
        let data = b.slice_mut();
        for j in 0..cols {
            for i in 0..rows {
                data[j * rows + i] = f(i, j);
            }
        }
        b
    }

    /// The identity's first `cols` columns.
    pub(crate) fn identity(rows: usize, cols: usize) -> Self {
        let mut b = Self::zeros(rows, cols);
        for j in 0..rows.min(cols) {
            b.slice_mut()[j * rows + j] = T::one();
        }
        b
    }

    fn slice_mut(&mut self) -> &mut [T] {
        // SAFETY: the buffer holds rows * cols initialised values of the
        // numeric type T, aligned for it, and `self` owns it alone.
        unsafe { std::slice::from_raw_parts_mut(self.ptr(), self.rows * self.cols) }
    }

    pub(crate) fn get(&self, i: usize, j: usize) -> &T {
        assert!(i < self.rows && j < self.cols);
        // SAFETY: (i, j) lies in the matrix, as just checked.
        unsafe { &*self.ptr().add(j * self.rows + i) }
    }

    pub(crate) fn get_mut(&mut self, i: usize, j: usize) -> &mut T {
        let rows = self.rows;
        &mut self.slice_mut()[j * rows + i]
    }

    pub(crate) fn as_ref(&self) -> MatRef<'_, T> {
        // SAFETY: as in `slice_mut`; the view borrows `self`.
        unsafe {
            MatRef::from_raw_parts(
                self.ptr() as *const T,
                self.rows,
                self.cols,
                1,
                self.rows as isize,
            )
        }
    }

    pub(crate) fn as_mut(&mut self) -> MatMut<'_, T> {
        let (rows, cols) = (self.rows, self.cols);
        MatMut::from_column_major_slice_mut(self.slice_mut(), rows, cols)
    }
}

/// Reads the `rows x cols` matrix at element offset `off` of `t`, with
/// row stride `rs` and column stride `cs` (elements), column by column.
///
/// # Safety
/// `t` is read-locked, of dtype `T`, and every `off + i rs + j cs` lies in
/// its storage.
pub(crate) unsafe fn read_strided<T: Faer>(
    t: &Tensor,
    off: usize,
    (rows, cols): (usize, usize),
    (rs, cs): (usize, usize),
) -> Buf<T> {
    let p = elem_ptr::<T>(t).add(off);
    Buf::from_fn(rows, cols, |i, j| *p.add(i * rs + j * cs))
}

/// Reads the `rows x cols` matrix at element offset `off` of `t` (its
/// last two dims' strides).
///
/// # Safety
/// `t` is read-locked, of dtype `T`, and `off` is a batch offset of its
/// layout.
pub(crate) unsafe fn read<T: Faer>(t: &Tensor, off: usize, rows: usize, cols: usize) -> Buf<T> {
    let nd = t.ndim();
    let (rs, cs) = (t.strides()[nd - 2], t.strides()[nd - 1]);
    read_strided(t, off, (rows, cols), (rs, cs))
}

/// A workspace for faer's `req`, from the cache; [`stack`] lends it out.
pub(crate) fn workspace(req: StackReq) -> Storage {
    Storage::uninit(req.unaligned_bytes_required())
}

/// The workspace as faer's stack (it aligns what it hands out itself).
pub(crate) fn stack(w: &mut Storage) -> &mut MemStack {
    // SAFETY: the buffer holds `nbytes` bytes owned by `w`, borrowed
    // mutably for the stack's lifetime; MaybeUninit<u8> has no invariant.
    let bytes =
        unsafe { std::slice::from_raw_parts_mut(w.as_ptr() as *mut MaybeUninit<u8>, w.nbytes()) };
    MemStack::new(bytes)
}

/// A matrix a decomposition returns, for [`write`].
pub(crate) trait Matrix<T> {
    fn mat(&self) -> MatRef<'_, T>;
    /// The buffer itself when it already is one column-major matrix.
    fn into_storage(self) -> std::result::Result<Storage, Self>
    where
        Self: Sized;
}

impl<T: Faer> Matrix<T> for Mat<T> {
    fn mat(&self) -> MatRef<'_, T> {
        self.as_ref()
    }
    fn into_storage(self) -> std::result::Result<Storage, Self> {
        Err(self)
    }
}

impl<T: Faer> Matrix<T> for Buf<T> {
    fn mat(&self) -> MatRef<'_, T> {
        self.as_ref()
    }
    fn into_storage(self) -> std::result::Result<Storage, Self> {
        Ok(self.storage)
    }
}

/// The matrices one after another as a tensor of `shape`, each stored
/// row-major, or column-major with `col_major` (torch's layout for the
/// results of its LAPACK-backed functions). A single column-major [`Buf`]
/// becomes the tensor's storage as it is.
pub(crate) fn write<T: Faer, M: Matrix<T>>(
    mut mats: Vec<M>,
    shape: &[usize],
    col_major: bool,
) -> Result<Tensor> {
    let mut strides = contiguous_strides(shape);
    let nd = shape.len();
    if col_major && nd >= 2 {
        strides[nd - 2] = 1;
        strides[nd - 1] = shape[nd - 2].max(1);
    }
    let numel: usize = shape.iter().product();
    if col_major && mats.len() == 1 && mats[0].mat().nrows() * mats[0].mat().ncols() == numel {
        if let Some(m) = mats.pop() {
            match m.into_storage() {
                Ok(storage) => {
                    return Tensor::from_parts(storage, Layout::new(shape, &strides, 0), T::DTYPE)
                }
                Err(m) => mats.push(m),
            }
        }
    }
    let storage = Storage::uninit(numel * std::mem::size_of::<T>());
    // SAFETY: the new buffer holds `numel` initialised values of T and is
    // ours alone until wrapped below.
    let data = unsafe { std::slice::from_raw_parts_mut(storage.as_ptr() as *mut T, numel) };
    let mut at = 0;
    for m in &mats {
        let m = m.mat();
        let (r, c) = (m.nrows(), m.ncols());
        for j in 0..c {
            for i in 0..r {
                let k = if col_major { j * r + i } else { i * c + j };
                data[at + k] = *m.get(i, j);
            }
        }
        at += r * c;
    }
    Tensor::from_parts(storage, Layout::new(shape, &strides, 0), T::DTYPE)
}
