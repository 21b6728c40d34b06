//! Tensor's autograd methods: `backward`, `grad`, `grad_fn`, hooks,
//! `retain_grad` and the rest of the per-tensor autograd state.

use crate::autograd::{
    grad_input, is_gradient_edge, node_object, py_tensor_hook, run_backward, PyHookHandle,
};
use crate::errors::{from_py, IntoPyResult};
use crate::tensor::{PyTensor, TensorOut};
use ferrograd::autograd::{self, GradInput};
use ferrograd::{Result, Tensor};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use std::sync::Arc;

#[pymethods]
impl PyTensor {
    /// The gradient accumulated into this tensor by :meth:`backward`, or None.
    ///
    /// Leaves that require grad get a ``.grad`` of their own shape, summed over
    /// backward calls until reset (``t.grad = None`` or an optimizer's
    /// ``zero_grad``). Non-leaf tensors keep theirs only after
    /// :meth:`retain_grad` (reading it otherwise warns and gives None). It can be
    /// assigned a tensor of the same shape, or None.
    ///
    /// Example:
    ///     >>> x = ferrograd.tensor([1.0, 2.0], requires_grad=True)
    ///     >>> x.grad is None
    ///     True
    ///     >>> (x * x).sum().backward()
    ///     >>> x.grad
    ///     tensor([2., 4.])
    #[getter]
    fn get_grad(&self, py: Python<'_>) -> PyResult<Option<TensorOut>> {
        let g = self.tensor().grad();
        if g.is_none()
            && self.tensor().requires_grad()
            && !self.tensor().is_leaf()
            && !self.tensor().retains_grad()
        {
            PyErr::warn(
                py,
                &py.get_type::<pyo3::exceptions::PyUserWarning>(),
                c"The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead.",
                1,
            )?;
        }
        Ok(g.map(TensorOut))
    }
    #[setter(grad)]
    fn set_grad(&self, value: Option<PyRef<'_, PyTensor>>) -> PyResult<()> {
        self.tensor().set_grad(value.map(|g| g.tensor())).py()
    }
    /// The graph node that produced this tensor, or None for a leaf.
    ///
    /// The node's ``next_functions`` lead to the nodes of its inputs; its
    /// ``name()`` is the op's backward name (``MulBackward0``...). See
    /// :mod:`ferrograd.autograd.graph` for hooks on nodes.
    ///
    /// Example:
    ///     >>> x = ferrograd.tensor([1.0, 2.0], requires_grad=True)
    ///     >>> x.grad_fn is None
    ///     True
    ///     >>> (x * 2).grad_fn
    ///     <MulBackward0 object at 0x...>
    #[getter]
    fn grad_fn(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.tensor()
            .grad_fn()
            .map(|e| node_object(py, e.node))
            .transpose()
    }
    /// Computes the gradient of this tensor with respect to the graph's leaves.
    ///
    /// Gradients are accumulated (added) into the :attr:`grad` of every leaf
    /// that requires grad, and of tensors that called :meth:`retain_grad`. A
    /// scalar tensor needs no ``gradient``; otherwise ``gradient`` is the
    /// vector in the vector-Jacobian product (the gradient of some final scalar
    /// with respect to ``self``). The graph's saved tensors are freed afterwards
    /// unless ``retain_graph`` is True. Same as
    /// ``ferrograd.autograd.backward(self, gradient, ...)``.
    ///
    /// Args:
    ///     gradient (Tensor, optional): the gradient with respect to ``self``, of
    ///         its shape. Needed when ``self`` has more than one element.
    ///     retain_graph (bool, optional): keep the graph for another backward
    ///         pass. Default: the value of ``create_graph``.
    ///     create_graph (bool): record the backward pass itself, so gradients can
    ///         be differentiated again (higher-order derivatives). Default: False.
    ///     inputs (Tensor or sequence of Tensors, optional): accumulate only into
    ///         these tensors' ``.grad`` instead of all leaves.
    ///
    /// Example:
    ///     >>> x = ferrograd.tensor([1.0, 2.0, 3.0], requires_grad=True)
    ///     >>> (x ** 2).sum().backward()
    ///     >>> x.grad
    ///     tensor([2., 4., 6.])
    ///     >>> (x * 2).backward(ferrograd.tensor([1.0, 0.0, 1.0]))
    ///     >>> x.grad
    ///     tensor([4., 4., 8.])
    #[pyo3(signature = (gradient = None, retain_graph = None, create_graph = false, inputs = None))]
    fn backward(
        &self,
        py: Python<'_>,
        gradient: Option<PyRef<'_, PyTensor>>,
        retain_graph: Option<bool>,
        create_graph: bool,
        inputs: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let inputs: Option<Vec<GradInput>> = match inputs {
            None => None,
            Some(obj) if obj.is_none() => None,
            Some(obj) if obj.cast::<PyTensor>().is_ok() || is_gradient_edge(obj) => {
                Some(vec![grad_input(obj, "inputs")?])
            }
            Some(obj) => Some(
                obj.try_iter()?
                    .map(|o| grad_input(&o?, "inputs"))
                    .collect::<PyResult<_>>()?,
            ),
        };
        let ts = vec![GradInput::Tensor(self.tensor())];
        let gs = vec![gradient.map(|g| g.tensor())];
        run_backward(py, ts, gs, retain_graph, create_graph, inputs)
    }
    /// Whether this tensor is a leaf of the autograd graph.
    ///
    /// Tensors that do not require grad are leaves, and so are tensors that
    /// require grad but were created by the user rather than by a recorded
    /// operation. Only leaves get :attr:`grad` filled by :meth:`backward`
    /// (unless :meth:`retain_grad` is called).
    ///
    /// Example:
    ///     >>> x = ferrograd.tensor([1.0], requires_grad=True)
    ///     >>> x.is_leaf, (x * 2).is_leaf, ferrograd.ones(1).is_leaf
    ///     (True, False, True)
    #[getter]
    fn is_leaf(&self) -> bool {
        self.tensor().is_leaf()
    }
    /// Which output of its :attr:`grad_fn` this tensor is (0 for leaves).
    ///
    /// Example:
    ///     >>> a, b = ferrograd.tensor([1.0, 2.0], requires_grad=True).unbind()
    ///     >>> a.output_nr, b.output_nr
    ///     (0, 1)
    #[getter]
    fn output_nr(&self) -> usize {
        self.tensor().grad_fn().map_or(0, |e| e.input_nr)
    }
    /// Whether this non-leaf tensor keeps its :attr:`grad` (set by :meth:`retain_grad`).
    #[getter]
    fn retains_grad(&self) -> bool {
        self.tensor().retains_grad()
    }
    /// Makes this non-leaf tensor keep its gradient in :attr:`grad` after backward.
    ///
    /// Has no effect on leaves, which always do.
    ///
    /// Example:
    ///     >>> x = ferrograd.tensor([1.0, 2.0], requires_grad=True)
    ///     >>> y = x * 3
    ///     >>> y.retain_grad()
    ///     >>> y.sum().backward()
    ///     >>> y.grad
    ///     tensor([1., 1.])
    fn retain_grad(&self) -> PyResult<()> {
        self.tensor().retain_grad().py()
    }
    /// Whether this tensor was made under :class:`ferrograd.inference_mode`.
    ///
    /// Inference tensors are never recorded by autograd.
    ///
    /// Example:
    ///     >>> with ferrograd.inference_mode():
    ///     ...     t = ferrograd.ones(1)
    ///     >>> t.is_inference(), ferrograd.ones(1).is_inference()
    ///     (True, False)
    fn is_inference(&self) -> bool {
        self.tensor().is_inference()
    }
    /// Detaches this tensor from the graph in place and returns it.
    ///
    /// Afterwards it is a leaf that does not require grad. A view cannot be
    /// detached in place (use :meth:`detach`).
    ///
    /// Example:
    ///     >>> x = ferrograd.tensor([1.0, 2.0], requires_grad=True)
    ///     >>> y = x * 2
    ///     >>> y.detach_()
    ///     tensor([2., 4.])
    ///     >>> y.is_leaf, y.requires_grad
    ///     (True, False)
    fn detach_(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        slf.get().tensor().detach_().py()?;
        Ok(slf.clone().into_any().unbind())
    }
    #[setter(data)]
    fn set_data(&self, value: PyRef<'_, PyTensor>) -> PyResult<()> {
        let v = &value.tensor();
        if v.shape() != self.tensor().shape() || v.dtype() != self.tensor().dtype() {
            return Err(PyRuntimeError::new_err(format!(
                "ferrograd tensors keep their shape and dtype: cannot assign .data of shape {:?} and dtype {} to a tensor of shape {:?} and dtype {}",
                v.shape(),
                v.dtype(),
                self.tensor().shape(),
                self.tensor().dtype()
            )));
        }
        let _g = autograd::no_grad();
        self.tensor().data().copy_(v).py()
    }
    /// Registers a hook called with this tensor's gradient during backward.
    ///
    /// ``hook(grad)`` runs each time the gradient with respect to this tensor
    /// is computed, before it is used further (accumulated into a leaf's
    /// ``.grad`` or passed on to its inputs). If it returns a tensor, that
    /// replaces the gradient; None keeps it. The tensor must require grad.
    ///
    /// Args:
    ///     hook (callable): ``hook(grad) -> Tensor or None``.
    ///
    /// Returns:
    ///     RemovableHandle: ``handle.remove()`` unregisters the hook.
    ///
    /// Example:
    ///     >>> x = ferrograd.tensor([1.0, 2.0], requires_grad=True)
    ///     >>> handle = x.register_hook(lambda g: g * 10)
    ///     >>> (x * 3).sum().backward()
    ///     >>> x.grad
    ///     tensor([30., 30.])
    ///     >>> handle.remove()
    fn register_hook(&self, hook: Py<PyAny>) -> PyResult<PyHookHandle> {
        let id = self
            .tensor()
            .register_caller_thread_hook(py_tensor_hook(hook))
            .py()?;
        Ok(PyHookHandle::on_tensor(&self.tensor(), id))
    }
    /// Registers a hook called after backward accumulated into this leaf's ``.grad``.
    ///
    /// ``hook(tensor)`` receives this tensor (with its updated :attr:`grad`) and
    /// must return None; it suits per-parameter optimizer steps. Only leaf
    /// tensors that require grad accept it.
    ///
    /// Args:
    ///     hook (callable): ``hook(tensor) -> None``.
    ///
    /// Returns:
    ///     RemovableHandle: ``handle.remove()`` unregisters the hook.
    ///
    /// Example:
    ///     >>> w = ferrograd.tensor([1.0, 2.0], requires_grad=True)
    ///     >>> seen = []
    ///     >>> handle = w.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.tolist()))
    ///     >>> (w * w).sum().backward()
    ///     >>> seen
    ///     [[2.0, 4.0]]
    fn register_post_accumulate_grad_hook(&self, hook: Py<PyAny>) -> PyResult<PyHookHandle> {
        let f = Arc::new(move |t: &Tensor| -> Result<()> {
            Python::attach(|py| {
                hook.call1(py, (TensorOut(t.clone()),))
                    .map(|_| ())
                    .map_err(from_py)
            })
        });
        let id = self
            .tensor()
            .register_caller_thread_post_accumulate_grad_hook(f)
            .py()?;
        Ok(PyHookHandle::on_tensor(&self.tensor(), id))
    }
}
