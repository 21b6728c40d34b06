//! The Rust entry points: `Tensor::backward`, `autograd::grad*` with their
//! option builders, closure hooks, and the scoped dual level.

use ferrograd::autograd::{self, BackwardOptions, DualLevel, GradInput, GradOptions};
use ferrograd::{DType, Tensor};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

fn leaf(v: &[f64]) -> Tensor {
    Tensor::from_slice(v, &[v.len()])
        .unwrap()
        .requires_grad_(true)
        .unwrap()
}

fn sum(t: &Tensor) -> Tensor {
    t.sum(None, false, None).unwrap()
}

#[test]
fn backward_of_several_tensors_sums_their_gradients() {
    let x = leaf(&[1.0, 2.0]);
    let a = x.mul(&x).unwrap(); // da/dx . u = 2x u
    let b = x.exp().unwrap(); // db/dx . v = e^x v
    let u = Tensor::from_slice(&[1.0f64, 0.0], &[2]).unwrap();
    let v = Tensor::from_slice(&[0.0f64, 1.0], &[2]).unwrap();
    autograd::backward(&[&a, &b], &BackwardOptions::new().grad_tensors([&u, &v])).unwrap();
    assert_eq!(x.grad().unwrap().to_vec::<f64>(), vec![2.0, 2.0f64.exp()]);
}

#[test]
fn backward_of_a_non_scalar_without_a_gradient_is_an_error() {
    let x = leaf(&[1.0, 2.0]);
    let err = x.mul(&x).unwrap().backward().unwrap_err();
    assert!(err.to_string().contains("only for scalar outputs"), "{err}");
}

#[test]
fn backward_inputs_restricts_accumulation_to_the_given_tensors() {
    let a = leaf(&[1.0]);
    let b = leaf(&[2.0]);
    let h = a.mul(&b).unwrap(); // a non-leaf input gets .grad too
    let y = sum(&h.mul(&h).unwrap());
    y.backward_with(&BackwardOptions::new().inputs([&h, &b]))
        .unwrap();
    assert!(a.grad().is_none());
    // y = (ab)^2: dy/dh = 2h = 4, dy/db = 2 a^2 b = 4
    assert_eq!(h.grad().unwrap().to_vec::<f64>(), vec![4.0]);
    assert_eq!(b.grad().unwrap().to_vec::<f64>(), vec![4.0]);
}

#[test]
fn grad_takes_tensors_references_and_edges() {
    let x = leaf(&[3.0]);
    let h = x.mul(&x).unwrap();
    let y = sum(&h.mul(&Tensor::scalar(2.0)).unwrap());
    let edge = h.grad_fn().unwrap();
    let by_ref = autograd::grad_with(&[&y], &[&x], &GradOptions::new().retain_graph(true)).unwrap();
    // Slices of owned tensors work as well as slices of references.
    let (outputs, inputs) = (vec![y.clone()], vec![x.clone()]);
    let keep = GradOptions::new().retain_graph(true);
    let by_value = autograd::grad_with(&outputs, &inputs, &keep).unwrap();
    let by_edge = autograd::grad(&[&y], &[GradInput::from(edge)]).unwrap();
    assert_eq!(by_ref[0].to_vec::<f64>(), vec![12.0]); // d(2x^2)/dx = 4x
    assert_eq!(by_value[0].to_vec::<f64>(), vec![12.0]);
    assert_eq!(by_edge[0].to_vec::<f64>(), vec![2.0]); // dy/dh
}

#[test]
fn unused_inputs_error_give_none_or_give_zeros() {
    let x = leaf(&[1.0, 2.0]);
    let unused = leaf(&[5.0]);
    let y = sum(&x.exp().unwrap());
    let keep = GradOptions::new().retain_graph(true);
    let err = autograd::grad_with(&[&y], &[&x, &unused], &keep).unwrap_err();
    assert!(err.to_string().contains("allow_unused"), "{err}");
    let g = autograd::grad_allow_unused(&[&y], &[&x, &unused], &keep).unwrap();
    assert!(g[0].is_some() && g[1].is_none());
    let g = autograd::grad_with(&[&y], &[&x, &unused], &keep.materialize_grads(true)).unwrap();
    assert_eq!(g[1].to_vec::<f64>(), vec![0.0]);
}

#[test]
fn batched_grad_outputs_give_one_vector_jacobian_product_per_row() {
    let x = leaf(&[1.0, 2.0, 3.0]);
    let y = x.mul(&x).unwrap(); // J = diag(2x)
    let rows = Tensor::eye(3, None, DType::Float64).unwrap();
    let opts = GradOptions::new().grad_outputs([&rows]).grads_batched(true);
    let j = autograd::grad_with(&[&y], &[&x], &opts).unwrap();
    assert_eq!(j[0].shape(), &[3, 3]);
    assert_eq!(
        j[0].to_vec::<f64>(),
        vec![2.0, 0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 0.0, 6.0]
    );
    let missing = GradOptions::new().grads_batched(true);
    assert!(autograd::grad_with(&[&y], &[&x], &missing).is_err());
}

#[test]
fn removed_hooks_no_longer_run() {
    let x = leaf(&[1.0]);
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let id = x
        .register_hook(move |_g| {
            c.fetch_add(1, Ordering::Relaxed);
            Ok(None)
        })
        .unwrap();
    sum(&x.mul(&Tensor::scalar(3.0)).unwrap())
        .backward()
        .unwrap();
    assert!(x.remove_hook(id));
    sum(&x.mul(&Tensor::scalar(3.0)).unwrap())
        .backward()
        .unwrap();
    assert_eq!(calls.load(Ordering::Relaxed), 1);
    assert_eq!(x.grad().unwrap().to_vec::<f64>(), vec![6.0]);
}

#[test]
fn post_accumulate_hooks_see_the_updated_grad_and_node_hooks_see_both_sides() {
    let x = leaf(&[2.0]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    x.register_post_accumulate_grad_hook(move |t| {
        s.lock().unwrap().push(t.grad().unwrap().to_vec::<f64>()[0]);
        Ok(())
    })
    .unwrap();
    let y = x.mul(&x).unwrap();
    // A node post-hook replaces the gradient the node computed for x.
    y.grad_fn()
        .unwrap()
        .node
        .core()
        .register_hook(|grad_inputs, grad_outputs| {
            assert_eq!(grad_outputs[0].as_ref().unwrap().to_vec::<f64>(), vec![1.0]);
            let doubled = grad_inputs
                .iter()
                .map(|g| g.as_ref().map(|g| g.mul(&Tensor::scalar(2.0))).transpose())
                .collect::<ferrograd::Result<Vec<_>>>()?;
            Ok(Some(doubled))
        });
    sum(&y).backward().unwrap();
    // MulBackward gives x two gradients of x each (2 + 2), each doubled.
    assert_eq!(*seen.lock().unwrap(), vec![8.0]);
}

#[test]
fn a_dual_level_closes_when_dropped_and_not_a_newer_one() {
    let x = Tensor::from_slice(&[1.0f64], &[1]).unwrap();
    let level = DualLevel::enter().unwrap();
    assert!(DualLevel::enter().is_err(), "one level at a time");
    let d = level.make_dual(&x, &x).unwrap();
    assert!(level.tangent(&d.exp().unwrap()).is_some());
    drop(level);
    assert_eq!(autograd::current_dual_level(), None);

    // A guard whose level was closed by hand leaves the next level open.
    let stale = DualLevel::enter().unwrap();
    autograd::exit_dual_level(None).unwrap();
    let current = DualLevel::enter().unwrap();
    drop(stale);
    assert_eq!(autograd::current_dual_level(), Some(0));
    drop(current);
    assert_eq!(autograd::current_dual_level(), None);
}
