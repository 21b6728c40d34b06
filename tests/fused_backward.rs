//! Fused backward kernels against the composed formulas they replace: a
//! backward with `create_graph=False` runs the fused single-pass kernels,
//! one with `create_graph=True` the differentiable ops, and every gradient
//! must agree bit for bit (`to_bits`, NaN payloads included), on float32
//! and float64, on contiguous, transposed, broadcast and expanded operands,
//! batched gradients, and special values (signed zeros, infinities, NaN,
//! negatives, tiny and huge numbers).

use ferrograd::autograd::{grad_with, GradOptions};
use ferrograd::profiler::{EventKind, Profiler, ProfilerConfig};
use ferrograd::{DType, Result, Scalar, Tensor};
use parking_lot::Mutex;

/// The profiler is process-wide: the test that watches it runs alone.
static TURN: Mutex<()> = Mutex::new(());

const SPECIALS: [f64; 12] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    -2.5,
    1e-30,
    1e30,
    0.5,
    -0.999,
];

/// Deterministic values: a few specials among numbers spread over several
/// magnitudes and both signs.
fn values(n: usize, seed: u64) -> Vec<f64> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            if (state >> 3).is_multiple_of(5) {
                SPECIALS[(state >> 8) as usize % SPECIALS.len()]
            } else {
                let u = (state >> 11) as f64 / (1u64 << 53) as f64;
                let scale = [0.3, 1.0, 4.0][(state >> 5) as usize % 3];
                (u * 2.0 - 1.0) * scale + (i % 3) as f64 * 0.01
            }
        })
        .collect()
}

fn tensor(n: &[usize], seed: u64, dt: DType) -> Tensor {
    let count = n.iter().product();
    let t = Tensor::from_slice(&values(count, seed), n).unwrap();
    t.to_dtype(dt)
}

fn leaf(n: &[usize], seed: u64, dt: DType) -> Tensor {
    let t = tensor(n, seed, dt);
    t.set_requires_grad(true).unwrap();
    t
}

/// The bit patterns of `t`'s values, every NaN as one pattern: which NaN
/// a kernel produces (its sign and payload) depends on the instructions
/// the loop happened to use, and is no part of the value.
fn bits(t: &Tensor) -> Vec<u64> {
    match t.dtype() {
        DType::Float32 => t
            .to_vec::<f32>()
            .iter()
            .map(|v| {
                if v.is_nan() {
                    u64::MAX
                } else {
                    v.to_bits() as u64
                }
            })
            .collect(),
        _ => t
            .to_vec::<f64>()
            .iter()
            .map(|v| if v.is_nan() { u64::MAX } else { v.to_bits() })
            .collect(),
    }
}

fn assert_same_bits(what: &str, fused: &Tensor, composed: &Tensor) {
    assert_eq!(fused.shape(), composed.shape(), "{what}: shape");
    assert_eq!(fused.dtype(), composed.dtype(), "{what}: dtype");
    let (f, c) = (bits(fused), bits(composed));
    if let Some(i) = (0..f.len()).find(|&i| f[i] != c[i]) {
        panic!(
            "{what}: element {i} differs: fused {:?} composed {:?}",
            fused.to_dtype(DType::Float64).to_vec::<f64>()[i],
            composed.to_dtype(DType::Float64).to_vec::<f64>()[i],
        );
    }
}

/// Gradients of `out` with respect to `inputs` for `v`, with and without
/// a graph; checks the fused ones record nothing and the composed ones do.
fn both_ways(
    out: &Tensor,
    inputs: &[&Tensor],
    v: &Tensor,
    batched: bool,
) -> (Vec<Tensor>, Vec<Tensor>) {
    let run = |create_graph: bool| {
        let opts = GradOptions::new()
            .grad_outputs([v])
            .retain_graph(true)
            .create_graph(create_graph)
            .materialize_grads(true)
            .grads_batched(batched);
        grad_with(std::slice::from_ref(out), inputs, &opts).unwrap()
    };
    let (fused, composed) = (run(false), run(true));
    for g in &fused {
        assert!(g.grad_fn().is_none());
    }
    (fused, composed)
}

/// Runs `f` on float32 and float64 inputs of `shapes` (each also read
/// through a transposed view when it has two dims) and compares the
/// fused and composed gradients, for plain, transposed, expanded and
/// batched output gradients.
fn check(name: &str, shapes: &[&[usize]], f: impl Fn(&[&Tensor]) -> Result<Tensor>) {
    for dt in [DType::Float32, DType::Float64] {
        for transposed in [false, true] {
            let leaves: Vec<Tensor> = shapes
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let mut s = s.to_vec();
                    if transposed && s.len() == 2 {
                        s.reverse();
                    }
                    leaf(&s, 11 + i as u64 * 7, dt)
                })
                .collect();
            let xs: Vec<Tensor> = leaves
                .iter()
                .map(|l| {
                    if transposed && l.ndim() == 2 {
                        l.t().unwrap()
                    } else {
                        l.clone()
                    }
                })
                .collect();
            let refs: Vec<&Tensor> = xs.iter().collect();
            let lrefs: Vec<&Tensor> = leaves.iter().collect();
            let out = f(&refs).unwrap();
            let shape = out.shape().to_vec();
            let what = |case: &str| format!("{name} {dt:?} transposed={transposed} {case}");

            let mut grads = vec![("plain", tensor(&shape, 99, dt))];
            if shape.len() == 2 {
                let (r, c) = (shape[0], shape[1]);
                let t = tensor(&[c, r], 98, dt).t().unwrap();
                grads.push(("transposed grad", t));
                let row = tensor(&[1, c], 97, dt);
                grads.push((
                    "expanded grad",
                    row.expand(&[r as isize, c as isize]).unwrap(),
                ));
            }
            let one = tensor(&[], 96, dt);
            let dims: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
            grads.push(("scalar grad expanded", one.expand(&dims).unwrap()));
            for (case, v) in &grads {
                let (fused, composed) = both_ways(&out, &lrefs, v, false);
                for (k, (a, b)) in fused.iter().zip(&composed).enumerate() {
                    assert_same_bits(&what(&format!("{case}, input {k}")), a, b);
                }
            }
            let mut bshape = vec![3];
            bshape.extend_from_slice(&shape);
            let v = tensor(&bshape, 95, dt);
            let (fused, composed) = both_ways(&out, &lrefs, &v, true);
            for (k, (a, b)) in fused.iter().zip(&composed).enumerate() {
                assert_same_bits(&what(&format!("batched, input {k}")), a, b);
            }
        }
    }
}

type Unary = fn(&Tensor) -> Result<Tensor>;

#[test]
fn fused_unary_gradients_equal_the_composed_formulas_bitwise() {
    let _turn = TURN.lock();
    let ops: [(&str, Unary); 19] = [
        ("sqrt", Tensor::sqrt),
        ("rsqrt", Tensor::rsqrt),
        ("exp2", Tensor::exp2),
        ("expm1", Tensor::expm1),
        ("log1p", Tensor::log1p),
        ("log2", Tensor::log2),
        ("log10", Tensor::log10),
        ("tan", Tensor::tan),
        ("asin", Tensor::asin),
        ("acos", Tensor::acos),
        ("atan", Tensor::atan),
        ("asinh", Tensor::asinh),
        ("acosh", Tensor::acosh),
        ("atanh", Tensor::atanh),
        ("tanh", Tensor::tanh),
        ("sigmoid", Tensor::sigmoid),
        ("reciprocal", Tensor::reciprocal),
        ("abs", Tensor::abs),
        ("relu", Tensor::relu),
    ];
    for (name, op) in ops {
        check(name, &[&[5, 7]], |x| op(x[0]));
        check(name, &[&[33]], |x| op(x[0]));
    }
}

#[test]
fn fused_binary_gradients_equal_the_composed_formulas_bitwise() {
    let _turn = TURN.lock();
    for shapes in [
        [&[4, 6][..], &[4, 6][..]],
        [&[4, 6][..], &[6][..]],
        [&[6][..], &[4, 6][..]],
    ] {
        check("div", &shapes, |x| x[0].div(x[1]));
        check("atan2", &shapes, |x| x[0].atan2(x[1]));
        check("pow (tensor exponent)", &shapes, |x| x[0].pow(x[1]));
    }
    // Exponents that meet 0 and 1 exactly, as pow's zero rule needs.
    check("pow (tensor exponent with zeros)", &[&[4, 6]], |x| {
        let e = Tensor::from_slice(&[0.0f64, 1.0, 2.0, -1.0, 0.5, -0.0], &[6])?;
        x[0].pow(&e.to_dtype(x[0].dtype()))
    });
    let scalars = [
        Scalar::Int(2),
        Scalar::Int(3),
        Scalar::Int(-2),
        Scalar::Float(0.5),
        Scalar::Float(-1.5),
        Scalar::Float(0.1),
        Scalar::Float(2.0),
    ];
    for e in scalars {
        check(&format!("pow {e:?}"), &[&[4, 6]], |x| {
            x[0].pow(&Tensor::scalar(e))
        });
    }
    check("square", &[&[4, 6]], |x| x[0].square());
}

#[test]
fn a_chain_of_fused_and_plain_formulas_agrees_bitwise() {
    let _turn = TURN.lock();
    check("(a*b + c).tanh() * a", &[&[5, 8], &[5, 8], &[8]], |x| {
        x[0].mul(x[1])?.add(x[2])?.tanh()?.mul(x[0])
    });
    check("sigmoid(x / y).sqrt()", &[&[5, 8], &[5, 8]], |x| {
        x[0].div(x[1])?.sigmoid()?.relu()?.sqrt()
    });
}

#[test]
fn mixed_dtypes_fall_back_to_the_composed_formula() {
    let _turn = TURN.lock();
    // A float64 gradient for a float32 output: the formula promotes.
    let x = leaf(&[6], 3, DType::Float32);
    let y = x.tanh().unwrap();
    let v = tensor(&[6], 4, DType::Float64);
    let (fused, composed) = both_ways(&y, &[&x], &v, false);
    assert_same_bits("tanh with a float64 gradient", &fused[0], &composed[0]);
    // A float64 divisor of a float32 dividend.
    let (a, b) = (leaf(&[6], 5, DType::Float32), leaf(&[6], 6, DType::Float64));
    let q = a.div(&b).unwrap();
    let v = tensor(&[6], 7, DType::Float64);
    let (fused, composed) = both_ways(&q, &[&a, &b], &v, false);
    for (f, c) in fused.iter().zip(&composed) {
        assert_same_bits("mixed div", f, c);
    }
}

#[test]
fn backward_without_a_graph_runs_one_kernel_per_fused_formula() {
    let _turn = TURN.lock();
    let x = leaf(&[8], 1, DType::Float32);
    let ops_inside_tanh_backward = |create_graph: bool| -> Vec<String> {
        let y = x.tanh().unwrap();
        let prof = Profiler::start(ProfilerConfig::default()).unwrap();
        let v = Tensor::ones(&[8], DType::Float32);
        let opts = GradOptions::new()
            .grad_outputs([v])
            .create_graph(create_graph);
        grad_with(&[y], &[&x], &opts).unwrap();
        let events = prof.stop().events;
        let node = events
            .iter()
            .find(|e| e.kind == EventKind::Backward && e.name == "TanhBackward0")
            .unwrap();
        events
            .iter()
            .filter(|e| {
                e.kind == EventKind::Op
                    && e.thread == node.thread
                    && node.start_ns <= e.start_ns
                    && e.end_ns <= node.end_ns
            })
            .map(|e| e.name.to_string())
            .collect()
    };
    assert_eq!(ops_inside_tanh_backward(false), Vec::<String>::new());
    let composed = ops_inside_tanh_backward(true);
    assert!(composed.iter().any(|n| n == "aten::mul"), "{composed:?}");
}
