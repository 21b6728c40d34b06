//! GEMM throughput: the `gemm` crate (on ferrograd's pool) against
//! `matrixmultiply`, float32 square products. Criterion reports throughput
//! in elements/s where one element is one flop, so `Gelem/s` reads GFLOP/s.
//!
//! Run with `cargo bench --bench matmul`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ferrograd::ops::linalg::{matmul_with_backend, GemmBackend};
use ferrograd::{DType, Tensor};
use std::time::Duration;

fn square(n: usize, seed: u32) -> Tensor {
    let mut s = seed;
    let data: Vec<f32> = (0..n * n)
        .map(|_| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (s >> 8) as f32 / (1u32 << 24) as f32 - 0.5
        })
        .collect();
    Tensor::from_slice(&data, &[n, n]).expect("square matrix")
}

fn bench_matmul(c: &mut Criterion) {
    let mut group = c.benchmark_group("matmul_f32");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    for n in [512usize, 1024] {
        let (a, b) = (square(n, 1), square(n, 2));
        assert_eq!(a.dtype(), DType::Float32);
        group.throughput(Throughput::Elements(2 * (n as u64).pow(3)));
        for backend in [GemmBackend::Gemm, GemmBackend::MatrixMultiply] {
            group.bench_with_input(BenchmarkId::new(backend.name(), n), &n, |bench, _| {
                bench.iter(|| matmul_with_backend(&a, &b, backend).expect("matmul"))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench_matmul);
criterion_main!(benches);
