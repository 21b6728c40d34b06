//! Forward-mode AD from Rust: dual levels, tangents of ops against
//! hand-derived derivatives, views sharing their base's tangent, and the
//! level's errors. The level is process-wide, so the tests take a lock.

use ferrograd::autograd;
use ferrograd::Tensor;
use std::sync::Mutex;

static LEVEL: Mutex<()> = Mutex::new(());

fn t(v: &[f64]) -> Tensor {
    Tensor::from_slice(v, &[v.len()]).unwrap()
}

fn values(t: &Tensor) -> Vec<f64> {
    t.to_vec::<f64>()
}

fn close(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 1e-12, "{got:?} != {want:?}");
    }
}

/// Opens a level for the closure and always closes it.
fn in_level<R>(f: impl FnOnce() -> R) -> R {
    let _lock = LEVEL.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(autograd::enter_dual_level().unwrap(), 0);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    autograd::exit_dual_level(None).unwrap();
    r.unwrap()
}

#[test]
fn tangent_of_a_composition_matches_the_chain_rule() {
    let (x, v) = ([0.2, -0.7, 1.1], [1.0, 0.5, -2.0]);
    let got = in_level(|| {
        let d = autograd::make_dual(&t(&x), &t(&v), None).unwrap();
        // f(x) = exp(x) * x
        let y = d.exp().unwrap().mul(&d).unwrap();
        values(&autograd::unpack_dual(&y, None).unwrap().1.unwrap())
    });
    let want: Vec<f64> = x
        .iter()
        .zip(&v)
        .map(|(x, v)| (x.exp() + x * x.exp()) * v)
        .collect();
    close(&got, &want);
}

#[test]
fn views_share_their_base_tangent_and_inplace_writes_reach_it() {
    in_level(|| {
        let base = Tensor::zeros(&[4], ferrograd::DType::Float64);
        let part = base.slice(0, 1, 3, 1).unwrap();
        let d = autograd::make_dual(&t(&[5.0, 6.0]), &t(&[3.0, 4.0]), None).unwrap();
        part.copy_(&d).unwrap();
        let bt = autograd::fw_grad(&base).unwrap();
        close(&values(&bt), &[0.0, 3.0, 4.0, 0.0]);
        base.mul_(&Tensor::scalar(2.0f64)).unwrap();
        close(&values(&autograd::fw_grad(&part).unwrap()), &[6.0, 8.0]);
    });
}

#[test]
fn level_errors_and_tangent_lifetime() {
    let y = in_level(|| {
        let err = autograd::enter_dual_level().unwrap_err();
        assert_eq!(
            err.to_string(),
            "Nested forward mode AD is not supported at the moment"
        );
        let err = autograd::make_dual(&t(&[1.0, 2.0]), &t(&[1.0]), None).unwrap_err();
        assert!(err
            .to_string()
            .contains("Tensor is of size [2] while the given forward gradient is of size [1]"));
        let d = autograd::make_dual(&t(&[1.0]), &t(&[1.0]), None).unwrap();
        d.sin().unwrap()
    });
    let _lock = LEVEL.lock().unwrap_or_else(|e| e.into_inner());
    assert!(autograd::make_dual(&t(&[1.0]), &t(&[1.0]), None)
        .unwrap_err()
        .to_string()
        .contains("no level exists"));
    assert!(autograd::exit_dual_level(None).is_err());
    // The level is closed: the tangent is gone.
    assert!(autograd::unpack_dual(&y, None).unwrap().1.is_none());
}

#[test]
fn forward_over_reverse_gives_a_hessian_vector_product() {
    // f(x) = sum(x^3): H = diag(6 x), so H v = 6 x v.
    let (x, v) = ([0.5, -1.5], [2.0, 1.0]);
    let got = in_level(|| {
        let leaf = t(&x);
        leaf.set_requires_grad(true).unwrap();
        let d = autograd::make_dual(&leaf, &t(&v), None).unwrap();
        let f = d
            .pow(&Tensor::scalar(3i64))
            .unwrap()
            .sum(None, false, None)
            .unwrap();
        let g = autograd::grad(&[f], &[&d]).unwrap();
        values(&autograd::fw_grad(&g[0]).unwrap())
    });
    close(&got, &[6.0 * 0.5 * 2.0, 6.0 * -1.5 * 1.0]);
}
