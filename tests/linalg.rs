//! Linear algebra from Rust: products against a plain triple loop on
//! strided inputs and both GEMM backends, einsum identities, LU results
//! checked by their defining equations, and error kinds.

use ferrograd::ops::linalg::{einsum, matmul_with_backend, GemmBackend};
use ferrograd::{DType, ErrorKind, Scalar, Tensor};

/// Deterministic pseudo-random values in [-1, 1).
fn values(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

fn t64(shape: &[usize], seed: u64) -> Tensor {
    let n = shape.iter().product();
    Tensor::from_slice(&values(n, seed), shape).unwrap()
}

/// Reference product of row-major matrices.
fn naive(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
        }
    }
    c
}

fn assert_close(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "element {i}: {g} vs {w}"
        );
    }
}

#[test]
fn mm_matches_triple_loop_for_both_backends_and_layouts() {
    for &(m, k, n) in &[(3, 5, 4), (70, 90, 80)] {
        let a = t64(&[m, k], 1);
        let b = t64(&[k, n], 2);
        let want = naive(&a.to_vec::<f64>(), &b.to_vec::<f64>(), m, k, n);
        // A transposed view of a transposed copy holds the same values.
        let at = a.t().unwrap().contiguous().t().unwrap();
        assert!(!at.is_contiguous());
        for backend in [GemmBackend::Gemm, GemmBackend::MatrixMultiply] {
            for lhs in [&a, &at] {
                let got = matmul_with_backend(lhs, &b, backend).unwrap();
                assert_eq!(got.shape(), &[m, n]);
                assert_close(&got.to_vec::<f64>(), &want, 1e-12);
                let got32 = matmul_with_backend(
                    &lhs.to_dtype(DType::Float32),
                    &b.to_dtype(DType::Float32),
                    backend,
                )
                .unwrap();
                assert_eq!(got32.dtype(), DType::Float32);
                assert_close(&got32.to_vec::<f64>(), &want, 1e-4);
            }
        }
    }
}

#[test]
fn batched_matmul_broadcasts_with_stride_zero() {
    let a = t64(&[1, 3, 4], 3);
    let b = t64(&[5, 4, 2], 4);
    let out = a.matmul(&b).unwrap();
    assert_eq!(out.shape(), &[5, 3, 2]);
    let (av, bv, ov) = (a.to_vec::<f64>(), b.to_vec::<f64>(), out.to_vec::<f64>());
    for i in 0..5 {
        let want = naive(&av, &bv[i * 8..(i + 1) * 8], 3, 4, 2);
        assert_close(&ov[i * 6..(i + 1) * 6], &want, 1e-12);
    }
}

#[test]
fn vector_rules_drop_the_added_dims() {
    let v = t64(&[4], 5);
    let m = t64(&[4, 3], 6);
    assert_eq!(v.matmul(&v).unwrap().shape(), &[] as &[usize]);
    assert_eq!(v.matmul(&m).unwrap().shape(), &[3]);
    assert_eq!(m.t().unwrap().matmul(&v).unwrap().shape(), &[3]);
    assert_eq!(t64(&[2, 3, 4], 7).matmul(&v).unwrap().shape(), &[2, 3]);
    let dot = v.dot(&v).unwrap().item().unwrap().to_f64();
    let want: f64 = v.to_vec::<f64>().iter().map(|x| x * x).sum();
    assert!((dot - want).abs() < 1e-12);
}

#[test]
fn integer_matmul_wraps_instead_of_panicking() {
    let big = Tensor::from_slice(&[i64::MAX, 2], &[1, 2]).unwrap();
    let two = Tensor::from_slice(&[2i64, 1], &[2, 1]).unwrap();
    let out = big.mm(&two).unwrap();
    assert_eq!(
        out.to_vec::<i64>(),
        vec![i64::MAX.wrapping_mul(2).wrapping_add(2)]
    );
}

#[test]
fn addmm_and_trace_match_hand_values() {
    let i = Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    let e = Tensor::from_slice(&[1.0f64, 0.0, 0.0, 1.0], &[2, 2]).unwrap();
    let out = i
        .addmm(&i, &e, Scalar::Float(2.0), Scalar::Float(3.0))
        .unwrap();
    assert_eq!(out.to_vec::<f64>(), vec![5.0, 10.0, 15.0, 20.0]);
    assert_eq!(i.trace().unwrap().item().unwrap().to_f64(), 5.0);
}

#[test]
fn einsum_identities() {
    let a = t64(&[3, 3], 8);
    let tr = einsum("ii", std::slice::from_ref(&a))
        .unwrap()
        .item()
        .unwrap()
        .to_f64();
    assert!((tr - a.trace().unwrap().item().unwrap().to_f64()).abs() < 1e-12);
    let prod = einsum("ij,jk->ik", &[a.clone(), a.clone()]).unwrap();
    assert_close(
        &prod.to_vec::<f64>(),
        &a.mm(&a).unwrap().to_vec::<f64>(),
        1e-12,
    );
    let t = einsum("ij->ji", std::slice::from_ref(&a)).unwrap();
    assert_eq!(t.to_vec::<f64>(), a.t().unwrap().to_vec::<f64>());
    let e = einsum("ij->k", &[a]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Runtime);
}

#[test]
fn inverse_times_matrix_is_identity_and_det_has_pivot_sign() {
    // Needs a row swap at the first step.
    let p = Tensor::from_slice(&[0.0f64, 2.0, 1.0, 1.0, 0.0, 0.0, 3.0, 1.0, 2.0], &[3, 3]).unwrap();
    let inv = p.inverse().unwrap();
    let eye = inv.mm(&p).unwrap().to_vec::<f64>();
    assert_close(&eye, &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0], 1e-12);
    // Cofactor expansion along row 1: -1 * (2*2 - 1*1) = -3.
    let det = p.det().unwrap().item().unwrap().to_f64();
    assert!((det + 3.0).abs() < 1e-12, "{det}");
}

#[test]
fn solve_satisfies_its_equation_and_singular_errors() {
    let a = t64(&[4, 4], 9)
        .add(
            &Tensor::from_slice(
                &[
                    4.0f64, 0., 0., 0., 0., 4., 0., 0., 0., 0., 4., 0., 0., 0., 0., 4.,
                ],
                &[4, 4],
            )
            .unwrap(),
        )
        .unwrap();
    let b = t64(&[4], 10);
    let x = a.linalg_solve(&b).unwrap();
    assert_eq!(x.shape(), &[4]);
    let ax = a.mv(&x).unwrap();
    assert_close(&ax.to_vec::<f64>(), &b.to_vec::<f64>(), 1e-12);
    let s = Tensor::from_slice(&[1.0f32, 2.0, 2.0, 4.0], &[2, 2]).unwrap();
    assert_eq!(s.det().unwrap().item().unwrap().to_f64(), 0.0);
    let e = s.inverse().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LinAlg);
    assert!(e.to_string().contains("singular"));
}

#[test]
fn product_errors_are_runtime_errors_naming_shapes() {
    let e = t64(&[2, 3], 1).mm(&t64(&[4, 5], 2)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Runtime);
    assert!(e.to_string().contains("2x3 and 4x5"), "{e}");
    let e = t64(&[2, 2], 1)
        .mm(&t64(&[2, 2], 2).to_dtype(DType::Float32))
        .unwrap_err();
    assert!(e.to_string().contains("double != float"), "{e}");
    let b = Tensor::from_slice(&[true, false, false, true], &[2, 2]).unwrap();
    assert_eq!(b.mm(&b).unwrap_err().kind(), ErrorKind::Runtime);
}

#[test]
fn transposed_operands_are_multiplied_through_their_strides() {
    // Every mix of plain and transposed views (the layouts a product's
    // backward hands the kernel), large enough for the pool to split it.
    let (m, k, n) = (160, 150, 140);
    let a = t64(&[m, k], 3);
    let b = t64(&[k, n], 4);
    let want = naive(&a.to_vec::<f64>(), &b.to_vec::<f64>(), m, k, n);
    let at = a.t().unwrap().contiguous().t().unwrap();
    let bt = b.t().unwrap().contiguous().t().unwrap();
    assert!(!at.is_contiguous() && !bt.is_contiguous());
    for (l, r) in [(&a, &b), (&at, &b), (&a, &bt), (&at, &bt)] {
        let got = l.matmul(r).unwrap();
        assert_close(&got.to_vec::<f64>(), &want, 1e-12);
        let got32 = l
            .to_dtype(DType::Float32)
            .matmul(&r.to_dtype(DType::Float32))
            .unwrap();
        assert_close(&got32.to_vec::<f64>(), &want, 1e-4);
    }
}

#[test]
fn products_inside_the_pool_give_the_bits_of_products_outside() {
    // A backward node runs on a pool worker; its products still split over
    // the pool there (Note [Products on the pool]) and must not change a bit.
    let a = t64(&[200, 300], 5).to_dtype(DType::Float32);
    let b = t64(&[300, 250], 6).to_dtype(DType::Float32);
    let outside = a.matmul(&b).unwrap().to_vec::<f32>();
    let inside = ferrograd::pool::install(|| a.matmul(&b.clone()).unwrap().to_vec::<f32>());
    let serial = ferrograd::pool::serial(|| a.matmul(&b).unwrap().to_vec::<f32>());
    assert_eq!(outside, inside);
    assert_eq!(outside, serial);
}

#[test]
fn chain_of_products_backward_gives_the_same_bits_on_one_and_two_threads() {
    let x = t64(&[192, 160], 7).to_dtype(DType::Float32);
    let ws: Vec<Tensor> = (0..3)
        .map(|i| {
            let w = t64(&[160, 160], 10 + i).to_dtype(DType::Float32);
            w.set_requires_grad(true).unwrap();
            w
        })
        .collect();
    let run = || {
        let mut h = x.clone();
        for w in &ws {
            h = h
                .matmul(w)
                .unwrap()
                .mul(&Tensor::scalar(0.1))
                .unwrap()
                .relu()
                .unwrap();
        }
        let loss = h.sum(None, false, None).unwrap();
        loss.backward().unwrap();
        ws.iter()
            .map(|w| {
                let g = w.grad().unwrap().to_vec::<f32>();
                w.set_grad(None).unwrap();
                g
            })
            .collect::<Vec<_>>()
    };
    let before = ferrograd::num_threads();
    ferrograd::set_num_threads(2);
    let two = run();
    ferrograd::set_num_threads(1);
    let one = run();
    ferrograd::set_num_threads(before);
    assert_eq!(one, two);
}

/// The weight of a linear layer enters its product transposed
/// (`x @ w.t()`); its gradient must come out in `w`'s own row-major layout
/// (so storing or accumulating it is a plain pass), with `g^T x`'s values,
/// through `mm` and through `addmm` (bias, alpha 1 and 2, beta 1).
#[test]
fn a_transposed_right_operand_gets_its_gradient_in_its_own_layout() {
    let (m, k, n) = (6, 7, 5);
    let x = t64(&[m, k], 11);
    let coef = t64(&[m, n], 12);
    // d/dw of sum(coef * (x @ w^T)) = coef^T @ x, scaled by alpha.
    let ct: Vec<f64> = coef.t().unwrap().contiguous().to_vec::<f64>();
    let want = naive(&ct, &x.to_vec::<f64>(), n, m, k);
    for case in 0..3 {
        let w = t64(&[n, k], 13);
        w.set_requires_grad(true).unwrap();
        let bias = t64(&[n], 14);
        let wt = w.t().unwrap();
        let (y, alpha) = match case {
            0 => (x.mm(&wt).unwrap(), 1.0),
            1 => (
                bias.addmm(&x, &wt, Scalar::Int(1), Scalar::Int(1)).unwrap(),
                1.0,
            ),
            _ => (
                bias.addmm(&x, &wt, Scalar::Int(1), Scalar::Float(2.0))
                    .unwrap(),
                2.0,
            ),
        };
        let loss = y.mul(&coef).unwrap().sum(None, false, None).unwrap();
        loss.backward().unwrap();
        let g = w.grad().unwrap();
        assert!(g.is_contiguous(), "case {case}: strides {:?}", g.strides());
        let scaled: Vec<f64> = want.iter().map(|v| v * alpha).collect();
        assert_close(&g.to_vec::<f64>(), &scaled, 1e-12);
    }
}
