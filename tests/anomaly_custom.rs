//! Anomaly mode and the custom-node helpers from Rust: NaN checks name the
//! node, failing nodes are reported with their forward backtrace, and
//! `undefined_grad` / `delayed_error` behave as their torch counterparts.

use ferrograd::autograd::{self, AnomalyModeGuard, GradOptions};
use ferrograd::Tensor;
use std::sync::{Arc, Mutex};

fn leaf(v: &[f64]) -> Tensor {
    let t = Tensor::from_slice(v, &[v.len()]).unwrap();
    t.set_requires_grad(true).unwrap();
    t
}

/// `sum(sqrt(x) * 0)`: the gradient of sqrt at 0 is inf, times the zero
/// from the mul gives NaN.
fn sqrt_times_zero(x: &Tensor) -> Tensor {
    x.sqrt()
        .unwrap()
        .mul(&Tensor::scalar(0.0f64))
        .unwrap()
        .sum(None, false, None)
        .unwrap()
}

#[test]
fn nan_check_names_node_and_reports_its_forward_backtrace() {
    let reports = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = reports.clone();
    autograd::set_warning_handler(Some(Box::new(move |m: &str| {
        sink.lock().unwrap().push(m.to_string())
    })));
    let x = leaf(&[0.0, 4.0]);
    let err = {
        let _mode = AnomalyModeGuard::new(true, true);
        let y = sqrt_times_zero(&x);
        y.backward().unwrap_err()
    };
    autograd::set_warning_handler(None);
    assert_eq!(
        err.to_string(),
        "Function 'SqrtBackward0' returned nan values in its 0th output."
    );
    let reports = reports.lock().unwrap();
    assert_eq!(reports.len(), 1);
    assert!(reports[0].starts_with(
        "Error detected in SqrtBackward0. Traceback of forward call that caused the error:"
    ));
    // The backtrace of the forward call names this test.
    assert!(
        reports[0].contains("nan_check_names_node"),
        "{}",
        reports[0]
    );
    assert!(x.grad().is_none());
    assert!(!autograd::is_anomaly_enabled());
}

#[test]
fn without_anomaly_mode_nan_flows_through() {
    let x = leaf(&[0.0, 4.0]);
    let y = sqrt_times_zero(&x);
    y.backward().unwrap();
    assert!(x.grad().unwrap().to_vec::<f64>()[0].is_nan());
}

#[test]
fn undefined_grad_passes_no_gradient_upstream() {
    let x = leaf(&[1.0, 2.0]);
    let y = autograd::undefined_grad(&x.mul(&x).unwrap()).unwrap();
    assert_eq!(y.grad_fn().unwrap().node.name(), "UndefinedGradBackward");
    assert_eq!(y.to_vec::<f64>(), vec![1.0, 4.0]);
    let z = y.sum(None, false, None).unwrap();
    let g = autograd::grad_allow_unused(&[z], &[&x], &GradOptions::new()).unwrap();
    assert!(g[0].is_none());
}

#[test]
fn delayed_error_fails_only_when_differentiated() {
    let x = leaf(&[1.0, 2.0]);
    let outs = autograd::delayed_error("not twice", &[Some(x.clone()), None]).unwrap();
    assert!(outs[1].is_none());
    let y = outs[0].clone().unwrap();
    assert_eq!(y.grad_fn().unwrap().node.name(), "DelayedError");
    assert_eq!(y.to_vec::<f64>(), vec![1.0, 2.0]);
    let err = y.sum(None, false, None).unwrap().backward().unwrap_err();
    assert_eq!(err.to_string(), "not twice");
    // Nothing requires grad: the tensors come back as they are.
    let c = Tensor::from_slice(&[1.0f64], &[1]).unwrap();
    let same = autograd::delayed_error("unused", &[Some(c.clone())]).unwrap();
    assert_eq!(same[0].as_ref().unwrap().id(), c.id());
}
