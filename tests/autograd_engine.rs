//! The backward engine from Rust: gradients, accumulation, errors, hooks,
//! in-place checks and deep graphs.

use ferrograd::autograd::{self, BackwardOptions, GradOptions};
use ferrograd::Tensor;
use std::sync::Arc;

fn leaf(v: &[f64], shape: &[usize]) -> Tensor {
    let t = Tensor::from_slice(v, shape).unwrap();
    t.set_requires_grad(true).unwrap();
    t
}

#[test]
fn square_sum_gradient_is_two_x() {
    let x = leaf(&[1.0, -2.0, 3.0], &[3]);
    let y = x.mul(&x).unwrap().sum(None, false, None).unwrap();
    y.backward().unwrap();
    assert_eq!(x.grad().unwrap().to_vec::<f64>(), vec![2.0, -4.0, 6.0]);
}

#[test]
fn broadcast_gradient_is_summed_to_input_shape() {
    let a = leaf(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let b = leaf(&[10.0, 20.0, 30.0], &[3]);
    let y = a.mul(&b).unwrap().sum(None, false, None).unwrap();
    let g = autograd::grad(&[&y], &[&a, &b]).unwrap();
    assert_eq!(
        g[0].to_vec::<f64>(),
        vec![10.0, 20.0, 30.0, 10.0, 20.0, 30.0]
    );
    // d/db sum_ij a_ij b_j = sum_i a_ij
    assert_eq!(g[1].to_vec::<f64>(), vec![5.0, 7.0, 9.0]);
    assert!(a.grad().is_none(), "grad() must not accumulate");
}

#[test]
fn second_backward_without_retain_graph_fails() {
    let x = leaf(&[1.0, 2.0], &[2]);
    let y = x.mul(&x).unwrap().sum(None, false, None).unwrap();
    y.backward().unwrap();
    let err = y.backward().unwrap_err();
    assert!(err.to_string().contains("retain_graph=True"), "{err}");
}

#[test]
fn create_graph_gives_second_derivative() {
    // y = sum(x^3) via x*x*x; dy/dx = 3x^2; d2y/dx2 . 1 = 6x
    let x = leaf(&[1.0, 2.0], &[2]);
    let y = x
        .mul(&x)
        .unwrap()
        .mul(&x)
        .unwrap()
        .sum(None, false, None)
        .unwrap();
    let opts = GradOptions::new().create_graph(true);
    let g = autograd::grad_with(&[y], &[&x], &opts).unwrap();
    let g = g[0].clone();
    assert_eq!(g.to_vec::<f64>(), vec![3.0, 12.0]);
    assert!(g.requires_grad());
    let gs = g.sum(None, false, None).unwrap();
    let h = autograd::grad(&[gs], &[&x]).unwrap();
    assert_eq!(h[0].to_vec::<f64>(), vec![6.0, 12.0]);
}

#[test]
fn million_node_chain_runs_and_frees_without_recursion() {
    let x = leaf(&[1.0], &[1]);
    let one = Tensor::from_slice(&[1.0f64], &[1]).unwrap();
    let mut y = x.clone();
    {
        let _g = autograd::no_grad();
    }
    for _ in 0..1_000_000 {
        y = y.add(&one).unwrap();
    }
    let s = y.sum(None, false, None).unwrap();
    s.backward().unwrap();
    assert_eq!(x.grad().unwrap().to_vec::<f64>(), vec![1.0]);
    drop(y);
}

#[test]
fn in_place_on_leaf_and_modified_saved_tensor_raise() {
    let x = leaf(&[1.0, 2.0], &[2]);
    let err = x.add_(&Tensor::scalar(1.0)).unwrap_err();
    assert!(err.to_string().contains("leaf Variable"), "{err}");
    let h = x.mul(&Tensor::scalar(2.0)).unwrap();
    let y = h.mul(&h).unwrap().sum(None, false, None).unwrap();
    h.add_(&Tensor::scalar(1.0)).unwrap();
    let err = y.backward().unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("modified by an inplace operation")
            && msg.contains("version 1; expected version 0"),
        "{msg}"
    );
}

#[test]
fn in_place_on_view_of_non_leaf_rebases_history() {
    // b = 2x; b[1:] *= ... via copy_ from w; loss = sum(b)
    let x = leaf(&[1.0, 2.0, 3.0], &[3]);
    let w = leaf(&[5.0, 7.0], &[2]);
    let b = x.mul(&Tensor::scalar(2.0)).unwrap();
    let v = b.narrow(0, 1, 2).unwrap();
    v.copy_(&w.mul(&w).unwrap()).unwrap();
    assert_eq!(b.to_vec::<f64>(), vec![2.0, 25.0, 49.0]);
    assert_eq!(b.grad_fn().unwrap().node.name(), "CopySlices");
    let s = b.sum(None, false, None).unwrap();
    s.backward().unwrap();
    assert_eq!(x.grad().unwrap().to_vec::<f64>(), vec![2.0, 0.0, 0.0]);
    assert_eq!(w.grad().unwrap().to_vec::<f64>(), vec![10.0, 14.0]);
}

#[test]
fn hooks_can_replace_gradients() {
    let x = leaf(&[1.0, 2.0], &[2]);
    let y = x.mul(&Tensor::scalar(3.0)).unwrap();
    y.register_hook(|g| Ok(Some(g.mul(&Tensor::scalar(10.0))?)))
        .unwrap();
    let s = y.sum(None, false, None).unwrap();
    s.backward().unwrap();
    assert_eq!(x.grad().unwrap().to_vec::<f64>(), vec![30.0, 30.0]);
}

#[test]
fn hooks_see_the_current_graph_task() {
    assert_eq!(autograd::current_graph_task_id(), None);
    let a = leaf(&[1.0, 2.0], &[2]);
    let b = leaf(&[3.0, 4.0], &[2]);
    let unused = leaf(&[5.0], &[1]);
    let acc_b = autograd::gradient_edge(&b).unwrap().node;
    let acc_unused = autograd::gradient_edge(&unused).unwrap().node;
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let s2 = seen.clone();
    a.register_hook(move |_g| {
        s2.lock().unwrap().push((
            autograd::current_graph_task_id().is_some(),
            autograd::will_engine_execute_node(&acc_b)?,
            autograd::will_engine_execute_node(&acc_unused)?,
        ));
        Ok(None)
    })
    .unwrap();
    let y = a.mul(&b).unwrap().sum(None, false, None).unwrap();
    y.backward_with(&BackwardOptions::new().retain_graph(true))
        .unwrap();
    // Restricted to `a`, b's accumulator does not run.
    y.backward_with(&BackwardOptions::new().inputs([&a]))
        .unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        vec![(true, true, false), (true, false, false)]
    );
    assert_eq!(autograd::current_graph_task_id(), None);
    assert!(
        autograd::will_engine_execute_node(&autograd::gradient_edge(&a).unwrap().node).is_err()
    );
}

#[test]
fn double_backward_through_in_place_exp_on_a_view() {
    // b = x; b[0].exp_(); loss = sum(b[0]^2) = sum exp(2 x0)
    // d loss / d x0 = 2 exp(2 x0); d/dx0 of its sum = 4 exp(2 x0)
    let vals = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6];
    let x = leaf(&vals, &[2, 3]);
    let b = x.mul(&Tensor::scalar(1.0)).unwrap();
    let v = b.select(0, 0).unwrap();
    v.exp_().unwrap();
    let loss = v.mul(&v).unwrap().sum(None, false, None).unwrap();
    let opts = GradOptions::new().create_graph(true);
    let g = autograd::grad_with(&[loss], &[&x], &opts).unwrap();
    let gs = g[0].sum(None, false, None).unwrap();
    let h = autograd::grad(&[gs], &[&x]).unwrap();
    let h = h[0].to_vec::<f64>();
    for (j, &x0) in vals[..3].iter().enumerate() {
        let want = 4.0 * (2.0 * x0).exp();
        assert!((h[j] - want).abs() < 1e-12 * want, "{} vs {want}", h[j]);
        assert_eq!(h[3 + j], 0.0);
    }
}

/// Saved-tensor hooks that keep a `Vec<f64>` copy and count their calls.
struct VecHooks {
    packs: std::sync::atomic::AtomicUsize,
    unpacks: std::sync::atomic::AtomicUsize,
}

impl autograd::SavedTensorHooks for VecHooks {
    fn pack(&self, t: &Tensor) -> ferrograd::Result<autograd::Packed> {
        self.packs
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(Box::new((t.to_vec::<f64>(), t.shape().to_vec())))
    }
    fn unpack(&self, packed: &autograd::Packed) -> ferrograd::Result<Tensor> {
        self.unpacks
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (v, shape) = packed
            .downcast_ref::<(Vec<f64>, Vec<usize>)>()
            .expect("packed by these hooks");
        Tensor::from_slice(v, shape)
    }
}

#[test]
fn saved_tensor_hooks_keep_copies_and_give_the_same_gradient() {
    // y = sum(sin(x) * x): sin saves x, mul saves sin(x) and x.
    let vals = [0.5, -1.0, 2.0];
    let x = leaf(&vals, &[3]);
    let hooks = Arc::new(VecHooks {
        packs: 0.into(),
        unpacks: 0.into(),
    });
    autograd::push_saved_tensors_hooks(hooks.clone()).unwrap();
    let y = x.sin().unwrap().mul(&x).unwrap().sum(None, false, None);
    autograd::pop_saved_tensors_hooks();
    let y = y.unwrap();
    assert_eq!(hooks.packs.load(std::sync::atomic::Ordering::Relaxed), 3);
    y.backward().unwrap();
    assert_eq!(hooks.unpacks.load(std::sync::atomic::Ordering::Relaxed), 3);
    let g = x.grad().unwrap().to_vec::<f64>();
    for (gi, xi) in g.iter().zip(vals) {
        let want = xi.cos() * xi + xi.sin();
        assert!((gi - want).abs() < 1e-15, "{gi} vs {want}");
    }
    // Disabled hooks refuse registration with the given message.
    autograd::disable_saved_tensors_hooks("no hooks in this region").unwrap();
    let err = autograd::push_saved_tensors_hooks(hooks).unwrap_err();
    autograd::pop_saved_tensors_hooks();
    assert!(err.to_string().contains("no hooks in this region"), "{err}");
}

#[test]
fn one_saved_tensor_registers_its_own_hooks() {
    // y = sum(x^3): PowBackward0 saves x; hooks on that one saved tensor.
    let vals = [0.5, -1.0, 2.0];
    let x = leaf(&vals, &[3]);
    let y = x
        .pow(&Tensor::scalar(3.0))
        .unwrap()
        .sum(None, false, None)
        .unwrap();
    let edge = y.grad_fn().unwrap();
    let pow_node = edge.node.core().next_edges()[0].clone().unwrap().node;
    let node = pow_node
        .as_any()
        .downcast_ref::<autograd::FnNode>()
        .unwrap();
    let saved = node.saved_tensor("self").unwrap();
    let hooks = Arc::new(VecHooks {
        packs: 0.into(),
        unpacks: 0.into(),
    });
    saved.register_hooks(hooks.clone()).unwrap();
    assert_eq!(hooks.packs.load(std::sync::atomic::Ordering::Relaxed), 1);
    let again = saved.register_hooks(hooks.clone()).unwrap_err();
    assert!(again.to_string().contains("already been set"), "{again}");
    y.backward().unwrap();
    assert_eq!(hooks.unpacks.load(std::sync::atomic::Ordering::Relaxed), 1);
    let g = x.grad().unwrap().to_vec::<f64>();
    for (gi, xi) in g.iter().zip(vals) {
        assert!((gi - 3.0 * xi * xi).abs() < 1e-15, "{gi}");
    }
    let freed = saved.register_hooks(hooks).unwrap_err();
    assert!(
        freed.to_string().contains("after it has been freed"),
        "{freed}"
    );
}

#[test]
fn reached_leaves_are_the_leaves_a_backward_would_accumulate_into() {
    let x = leaf(&[1.0, 2.0], &[2]);
    let y = leaf(&[3.0, 4.0], &[2]);
    let unused = leaf(&[5.0, 6.0], &[2]);
    let c = Tensor::from_slice(&[1.0, 1.0], &[2]).unwrap();
    // x reached twice (through both factors and the sum), y once, the
    // constant and the unused leaf never.
    let z = x.mul(&y).unwrap().add(&x).unwrap().mul(&c).unwrap();
    let got = autograd::reached_leaves(&[z.clone(), x.clone()]);
    let ids: Vec<usize> = got.iter().map(|t| t.id()).collect();
    assert_eq!(ids.len(), 2, "each leaf once");
    assert!(ids.contains(&x.id()) && ids.contains(&y.id()));
    assert!(!ids.contains(&unused.id()));
    // A leaf output is its own leaf; outputs without grad reach nothing.
    assert_eq!(
        autograd::reached_leaves(std::slice::from_ref(&y))[0].id(),
        y.id()
    );
    assert!(autograd::reached_leaves(&[c, z.detach()]).is_empty());
}
