//! The [`Tensor`] handle: storage + layout + dtype + an autograd slot.
//!
//! A `Tensor` is a cheap, clonable handle (`Arc`) to a [`TensorImpl`]. Views
//! share their base's [`Storage`] and version counter and differ only in
//! [`Layout`]. Cloning the handle never copies data; [`Tensor::copy`] does.

mod autograd_slot;
pub mod capture;
mod checks;
mod dispatch;
mod dtype;
mod element;
mod layout;
mod memory_format;
mod modes;
mod scalar;
mod storage;

pub use autograd_slot::{AutogradSlot, Origin};
pub(crate) use checks::{check_inplace_dtype, check_no_overlap};
pub use dtype::{
    default_complex_dtype, default_dtype, result_type, set_default_dtype, Category, Complex,
    ComplexDouble, ComplexFloat, DType, PromotionOperand, Tier,
};
pub(crate) use element::num_like::FloatOps;
pub use element::{Element, Float, RealElement};
pub use layout::{broadcast_shapes, contiguous_strides, wrap_dim, Dims, Layout};
pub use memory_format::{elementwise_strides, MemoryFormat};
pub use modes::{is_grad_enabled, is_inference_mode_enabled, set_grad_enabled, set_inference_mode};
pub use scalar::Scalar;
pub use storage::{
    buffer_cache_bytes, empty_buffer_cache, set_buffer_cache_limit, set_memory_hook, MemoryHook,
    Storage,
};

use crate::binding::BindingSlot;
use crate::{Error, Result};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The shared version counter of a tensor and its views: bumped by every
/// in-place write, read by autograd to detect modified saved tensors.
#[derive(Debug, Default)]
pub struct VersionCounter(AtomicU64);

impl VersionCounter {
    /// The current version.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
    /// Records one more in-place write.
    pub fn bump(&self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }
}

/// The data behind a [`Tensor`] handle.
pub struct TensorImpl {
    storage: Storage,
    layout: Layout,
    dtype: DType,
    version: Arc<VersionCounter>,
    /// For views: the tensor whose storage this views (never itself a view).
    base: Option<Tensor>,
    /// Made from a Python/Rust scalar; lowest priority in type promotion.
    wrapped_number: bool,
    /// The autograd layer's state for this tensor (see `autograd_slot.rs`).
    autograd: AutogradSlot,
    /// The language binding's object for this tensor (see `binding.rs`).
    binding: BindingSlot,
    /// The capture epoch when it was made (see [`capture`]).
    born: u64,
}

/// A strided, typed, n-dimensional array (a cheap handle; clone freely).
#[derive(Clone)]
pub struct Tensor(Arc<TensorImpl>);

/// A weak handle to a tensor (does not keep it alive).
#[derive(Clone)]
pub struct WeakTensor(std::sync::Weak<TensorImpl>);

impl WeakTensor {
    /// The tensor, if it is still alive.
    pub fn upgrade(&self) -> Option<Tensor> {
        self.0.upgrade().map(Tensor)
    }
}

/// Lets functions take `&[Tensor]` and `&[&Tensor]` alike (e.g.
/// [`autograd::grad`](crate::autograd::grad)).
impl AsRef<Tensor> for Tensor {
    fn as_ref(&self) -> &Tensor {
        self
    }
}

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tensor")
            .field("shape", &self.shape())
            .field("strides", &self.strides())
            .field("offset", &self.offset())
            .field("dtype", &self.dtype())
            .finish()
    }
}

impl Tensor {
    /// Assembles a tensor from parts (a new base: not a view).
    pub fn from_parts(storage: Storage, layout: Layout, dtype: DType) -> Result<Tensor> {
        let layout = Layout::checked(layout.shape(), layout.strides(), layout.offset())?;
        let needed = layout.max_extent().saturating_mul(dtype.itemsize());
        if layout.numel() > 0 && needed > storage.nbytes() {
            return Err(Error::runtime(format!(
                "layout {:?} with strides {:?} and offset {} needs {needed} bytes of {dtype}, storage has {}",
                layout.shape(),
                layout.strides(),
                layout.offset(),
                storage.nbytes()
            )));
        }
        Ok(Self::new_unchecked(storage, layout, dtype))
    }

    fn new_unchecked(storage: Storage, layout: Layout, dtype: DType) -> Tensor {
        Tensor(Arc::new(TensorImpl {
            storage,
            layout,
            dtype,
            version: Arc::default(),
            base: None,
            wrapped_number: false,
            autograd: AutogradSlot::new(Origin {
                inference: is_inference_mode_enabled(),
                ..Origin::default()
            }),
            binding: BindingSlot::default(),
            born: capture::epoch(),
        }))
    }

    /// Bytes needed by a contiguous tensor, or an error when the size
    /// overflows.
    fn checked_nbytes(shape: &[usize], dtype: DType) -> Result<usize> {
        if shape.contains(&0) {
            return Ok(0);
        }
        shape
            .iter()
            .try_fold(dtype.itemsize(), |acc, &n| acc.checked_mul(n))
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or_else(|| {
                Error::runtime(format!(
                    "Storage size calculation overflowed with sizes={shape:?} and dtype {dtype}"
                ))
            })
    }

    /// A contiguous tensor whose contents are unspecified (initialised
    /// memory, but not meaningful), or an error when the size overflows or
    /// the memory cannot be allocated.
    pub fn try_empty(shape: &[usize], dtype: DType) -> Result<Tensor> {
        let nbytes = Self::checked_nbytes(shape, dtype)?;
        let storage = if dtype == DType::Bool {
            // Bool buffers must only ever hold 0 or 1.
            Storage::try_zeroed(nbytes)?
        } else {
            Storage::try_uninit(nbytes)?
        };
        Ok(Self::new_unchecked(
            storage,
            Layout::contiguous(shape),
            dtype,
        ))
    }

    /// A contiguous tensor of zeros, or an error (see [`Tensor::try_empty`]).
    pub fn try_zeros(shape: &[usize], dtype: DType) -> Result<Tensor> {
        let nbytes = Self::checked_nbytes(shape, dtype)?;
        let storage = Storage::try_zeroed(nbytes)?;
        Ok(Self::new_unchecked(
            storage,
            Layout::contiguous(shape),
            dtype,
        ))
    }

    /// A contiguous tensor filled with `value`, or an error (see
    /// [`Tensor::try_empty`]).
    pub fn try_full(shape: &[usize], value: impl Into<Scalar>, dtype: DType) -> Result<Tensor> {
        let t = Tensor::try_empty(shape, dtype)?;
        t.fill_unchecked(value.into());
        Ok(t)
    }

    /// A contiguous tensor whose contents are unspecified; kernels that
    /// overwrite every element use this. Panics when the memory cannot be
    /// had (use [`Tensor::try_empty`] for sizes that come from users).
    pub fn empty(shape: &[usize], dtype: DType) -> Tensor {
        Self::try_empty(shape, dtype).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A contiguous tensor of zeros (panics like [`Tensor::empty`]).
    pub fn zeros(shape: &[usize], dtype: DType) -> Tensor {
        Self::try_zeros(shape, dtype).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A contiguous tensor filled with `value` (panics like [`Tensor::empty`]).
    pub fn full(shape: &[usize], value: impl Into<Scalar>, dtype: DType) -> Tensor {
        Self::try_full(shape, value, dtype).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A contiguous tensor of ones.
    pub fn ones(shape: &[usize], dtype: DType) -> Tensor {
        Tensor::full(shape, 1i64, dtype)
    }

    /// A contiguous tensor of ones, or an error (see [`Tensor::try_empty`]).
    pub fn try_ones(shape: &[usize], dtype: DType) -> Result<Tensor> {
        Tensor::try_full(shape, 1i64, dtype)
    }

    /// Copies `data` into a new contiguous tensor of `shape`.
    pub fn from_slice<T: Element>(data: &[T], shape: &[usize]) -> Result<Tensor> {
        let numel: usize = shape.iter().product();
        if numel != data.len() {
            return Err(Error::runtime(format!(
                "shape {shape:?} needs {numel} elements, got {}",
                data.len()
            )));
        }
        Ok(Self::new_unchecked(
            Storage::from_slice(data),
            Layout::contiguous(shape),
            T::DTYPE,
        ))
    }

    /// A 1-D tensor copied from `data`.
    pub fn from_vec<T: Element>(data: Vec<T>) -> Tensor {
        let n = data.len();
        Self::new_unchecked(
            Storage::from_slice(&data),
            Layout::contiguous(&[n]),
            T::DTYPE,
        )
    }

    /// A zero-dim tensor holding `value` in its natural dtype (bool, int64 or
    /// float64), marked as a wrapped number: in type promotion it behaves like
    /// a Python scalar (see [`result_type`]).
    pub fn scalar(value: impl Into<Scalar>) -> Tensor {
        let value = value.into();
        let t = Tensor::full(&[], value, value.dtype());
        let mut inner = Arc::into_inner(t.0).expect("fresh tensor has one handle");
        inner.wrapped_number = true;
        Tensor(Arc::new(inner))
    }

    /// A zero-dim tensor of `dtype` holding `value` (an ordinary tensor).
    pub fn scalar_tensor(value: impl Into<Scalar>, dtype: DType) -> Tensor {
        Tensor::full(&[], value, dtype)
    }

    /// A view of this tensor's storage with another layout. The result shares
    /// the version counter and records this tensor's base as its base.
    pub fn view_with_layout(&self, layout: Layout) -> Tensor {
        self.view_as_dtype(layout, self.dtype())
    }

    pub(crate) fn view_as_dtype(&self, layout: Layout, dtype: DType) -> Tensor {
        let base = self.0.base.clone().unwrap_or_else(|| self.clone());
        Tensor(Arc::new(TensorImpl {
            storage: self.0.storage.clone(),
            layout,
            dtype,
            version: self.0.version.clone(),
            base: Some(base),
            wrapped_number: false,
            autograd: AutogradSlot::new(Origin {
                inference: is_inference_mode_enabled(),
                detached: false,
                view: Some((self.0.version.get(), is_grad_enabled())),
            }),
            binding: BindingSlot::default(),
            born: capture::epoch(),
        }))
    }

    /// A weak handle to this tensor.
    pub fn downgrade(&self) -> WeakTensor {
        WeakTensor(Arc::downgrade(&self.0))
    }

    /// The language binding's slot for its object of this tensor.
    pub fn binding_slot(&self) -> &BindingSlot {
        &self.0.binding
    }

    /// How many handles share this tensor (weak handles not counted).
    pub fn handle_count(&self) -> usize {
        Arc::strong_count(&self.0)
    }

    /// Whether this handle is the only reference to the tensor and its
    /// memory (so its buffer may be taken over rather than copied).
    pub fn is_exclusive(&self) -> bool {
        Arc::strong_count(&self.0) == 1
            && self.0.base.is_none()
            && self.0.storage.handle_count() == 1
    }

    /// A tensor with the shape and strides of `like` (offset 0) whose
    /// contents are unspecified.
    pub fn empty_strided_like(like: &Tensor) -> Result<Tensor> {
        Self::try_empty_strided(like.shape(), like.strides(), like.dtype())
    }

    /// A new tensor of `shape` with `strides` over fresh memory just large
    /// enough for them (contents as [`Tensor::try_empty`]), or an error
    /// when the size overflows or memory cannot be had.
    pub fn try_empty_strided(shape: &[usize], strides: &[usize], dtype: DType) -> Result<Tensor> {
        let layout = Layout::checked(shape, strides, 0)?;
        let elems = layout.max_extent();
        let nbytes = Self::checked_nbytes(&[elems], dtype)?;
        let storage = if dtype == DType::Bool {
            Storage::try_zeroed(nbytes)?
        } else {
            Storage::try_uninit(nbytes)?
        };
        Tensor::from_parts(storage, layout, dtype)
    }

    /// A new handle on the same data that is not a view and has no autograd
    /// history, sharing the version counter (torch's `detach`).
    pub fn detach(&self) -> Tensor {
        Tensor(Arc::new(TensorImpl {
            storage: self.0.storage.clone(),
            layout: self.0.layout.clone(),
            dtype: self.0.dtype,
            version: self.0.version.clone(),
            base: self.0.base.clone(),
            wrapped_number: false,
            autograd: AutogradSlot::new(Origin {
                inference: is_inference_mode_enabled(),
                detached: true,
                view: None,
            }),
            binding: BindingSlot::default(),
            born: capture::epoch(),
        }))
    }

    /// This tensor over other memory: `storage` read through `layout`, with
    /// this tensor's dtype, version counter and autograd state (gradient,
    /// hooks, `requires_grad`), shared from now on. The result is a view of
    /// this tensor's base when it keeps this tensor's storage, else a base
    /// of its own. What `resize_` and `set_` leave behind (see
    /// [`Tensor::resized`] and [`Tensor::set_to`]); a binding that holds
    /// the tensor swaps its handle for this one.
    pub fn rebound(&self, storage: Storage, layout: Layout) -> Result<Tensor> {
        let layout = Self::from_parts(storage.clone(), layout, self.dtype())?
            .layout()
            .clone();
        let base = if storage.same(self.storage()) {
            self.0.base.clone()
        } else {
            None
        };
        Ok(Tensor(Arc::new(TensorImpl {
            storage,
            layout,
            dtype: self.0.dtype,
            version: Arc::clone(&self.0.version),
            base,
            wrapped_number: false,
            autograd: self.0.autograd.shared(),
            binding: BindingSlot::default(),
            born: capture::epoch(),
        })))
    }

    /// Like [`Tensor::detach`] but with its own version counter (torch's
    /// `.data`).
    pub fn data(&self) -> Tensor {
        Self::new_unchecked(self.0.storage.clone(), self.0.layout.clone(), self.0.dtype)
    }

    /// The memory this tensor (and every view of it) reads.
    pub fn storage(&self) -> &Storage {
        &self.0.storage
    }
    /// Shape, strides and offset into the storage.
    pub fn layout(&self) -> &Layout {
        &self.0.layout
    }
    /// The size of each dim.
    pub fn shape(&self) -> &[usize] {
        self.0.layout.shape()
    }
    /// The step, in elements, between neighbours along each dim.
    pub fn strides(&self) -> &[usize] {
        self.0.layout.strides()
    }
    /// The storage offset, in elements.
    pub fn offset(&self) -> usize {
        self.0.layout.offset()
    }
    /// The storage offset, in elements, read by a program (torch's
    /// `storage_offset()`): a capture guards the program on it, as a view
    /// made at that offset would read other elements of a tensor at
    /// another one.
    pub fn storage_offset(&self) -> usize {
        let o = self.offset();
        capture::record_offset_read(self, o);
        o
    }
    /// The element type.
    pub fn dtype(&self) -> DType {
        self.0.dtype
    }
    /// The number of dims (0 for a scalar tensor).
    pub fn ndim(&self) -> usize {
        self.0.layout.ndim()
    }
    /// The number of elements (the product of the shape).
    pub fn numel(&self) -> usize {
        self.0.layout.numel()
    }
    /// Whether the elements are laid out row-major without gaps.
    pub fn is_contiguous(&self) -> bool {
        self.0.layout.is_contiguous()
    }
    /// Size of `dim` (negative dims count from the end).
    pub fn size(&self, dim: isize) -> Result<usize> {
        if self.ndim() == 0 {
            return Err(Error::index(format!(
                "Dimension specified as {dim} but tensor has no dimensions"
            )));
        }
        Ok(self.shape()[wrap_dim(dim, self.ndim())?])
    }
    /// Stride of `dim` in elements (negative dims count from the end).
    pub fn stride(&self, dim: isize) -> Result<usize> {
        self.size(dim)?;
        Ok(self.strides()[wrap_dim(dim, self.ndim())?])
    }
    /// Whether this tensor was made from a scalar (promotion priority).
    pub fn is_wrapped_number(&self) -> bool {
        self.0.wrapped_number
    }
    /// The promotion operand for [`result_type`].
    pub fn promotion_operand(&self) -> PromotionOperand {
        let tier = if self.0.wrapped_number {
            Tier::Wrapped
        } else if self.ndim() == 0 {
            Tier::ZeroDim
        } else {
            Tier::Dimensioned
        };
        PromotionOperand {
            dtype: self.dtype(),
            tier,
        }
    }
    /// The version counter shared with views.
    pub fn version(&self) -> u64 {
        self.0.version.get()
    }
    /// Records an in-place modification.
    pub fn bump_version(&self) {
        capture::break_capture("a tensor is written in place outside a captured operation");
        self.0.version.bump()
    }
    /// The capture epoch when this tensor was made (see [`capture`]).
    pub(crate) fn born(&self) -> u64 {
        self.0.born
    }
    /// Whether two handles share one version counter.
    pub fn shares_version_counter(&self, other: &Tensor) -> bool {
        Arc::ptr_eq(&self.0.version, &other.0.version)
    }
    /// The base of a view (`None` for non-views).
    pub fn base(&self) -> Option<&Tensor> {
        self.0.base.as_ref()
    }
    /// Whether this tensor is a view of another (shares its storage and
    /// version counter).
    pub fn is_view(&self) -> bool {
        self.0.base.is_some()
    }
    /// True when both handles are the same tensor object.
    pub fn same(&self, other: &Tensor) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
    /// An address identifying the tensor object (for hashing by identity).
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }
    /// Address of the first element.
    pub fn data_ptr(&self) -> usize {
        self.0.storage.as_ptr() as usize + self.offset() * self.dtype().itemsize()
    }
    /// The slot the autograd layer keeps this tensor's state in
    /// (`requires_grad`, `.grad`, `grad_fn`, hooks, tangent).
    pub fn autograd_slot(&self) -> &AutogradSlot {
        &self.0.autograd
    }
    /// Whether this tensor was made in inference mode.
    pub fn is_inference(&self) -> bool {
        self.0.autograd.origin().inference
    }
}
