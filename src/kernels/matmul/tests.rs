//! The GEMM driver's tests: products over strided, expanded, batched and
//! empty operands, integer wrapping, both backends, and the split paths.

use super::*;
use crate::kernels::copy::{permuted, relayout};
use crate::tensor::Layout;

/// `alpha * a @ b (+ beta * out)` into `out` through the driver.
fn product<T: MatElem>(
    a: &Tensor,
    b: &Tensor,
    out: &Tensor,
    alpha: T,
    beta: Option<T>,
    backend: GemmBackend,
) -> Vec<T> {
    // SAFETY: `out` is fresh, contiguous and of dtype T like a and b.
    unsafe { gemm_batched::<T>(a, b, out, alpha, beta, backend) };
    out.to_vec::<T>()
}

/// Entry `i` of a batched product computed alone.
fn entry(a: &Tensor, b: &Tensor, i: usize) -> Vec<f64> {
    let (ai, bi) = (
        a.select(0, i as isize).unwrap(),
        b.select(0, i as isize).unwrap(),
    );
    let out = Tensor::empty(&[ai.shape()[0], bi.shape()[1]], crate::DType::Float64);
    product(&ai, &bi, &out, 1.0f64, None, GemmBackend::Gemm)
}

#[test]
fn a_batch_sharing_one_right_operand_is_one_product_with_the_same_values() {
    // b expanded over the batch (stride 0), a's rows consecutive: the
    // folded product must equal every entry computed alone, for row
    // counts 1 and 3 and small and large (gemm crate) sizes.
    for &(nb, m, k, n) in &[(5, 1, 4, 6), (4, 3, 7, 5), (8, 1, 70, 90), (3, 20, 40, 50)] {
        let a = Tensor::from_slice(
            &(0..nb * m * k)
                .map(|v| (v % 13) as f64 - 6.0)
                .collect::<Vec<_>>(),
            &[nb, m, k],
        )
        .unwrap();
        let b0 = Tensor::from_slice(
            &(0..k * n)
                .map(|v| (v % 7) as f64 * 0.5 - 1.0)
                .collect::<Vec<_>>(),
            &[1, k, n],
        )
        .unwrap();
        let b = b0.broadcast_to(&[nb, k, n]).unwrap();
        let offs: Vec<(usize, usize)> = batch_offsets(&[nb], a.strides())
            .into_iter()
            .zip(batch_offsets(&[nb], b.strides()))
            .collect();
        assert!(stacked_rows(&offs, m, a.strides()[1] as isize).is_some());
        let out = Tensor::empty(&[nb, m, n], crate::DType::Float64);
        let got = product(&a, &b, &out, 1.0f64, None, GemmBackend::Gemm);
        let want: Vec<f64> = (0..nb).flat_map(|i| entry(&a, &b, i)).collect();
        assert_eq!(got, want);
    }
    // A transposed left operand's entries are not consecutive rows.
    let a = Tensor::zeros(&[3, 2, 4], crate::DType::Float64)
        .transpose(0, 1)
        .unwrap();
    let offs: Vec<(usize, usize)> = batch_offsets(&[2], a.strides())
        .into_iter()
        .map(|o| (o, 0))
        .collect();
    assert!(stacked_rows(&offs, 3, a.strides()[1] as isize).is_none());
}

#[test]
fn small_products_with_unit_stride_rows_match_the_strided_loop_bitwise() {
    let (m, k, n) = (4, 7, 9);
    let a = Tensor::from_slice(
        &(0..m * k)
            .map(|v| ((v * 37) % 11) as f64 / 3.0 - 1.7)
            .collect::<Vec<_>>(),
        &[m, k],
    )
    .unwrap();
    let vals: Vec<f64> = (0..k * n)
        .map(|v| ((v * 53) % 17) as f64 / 7.0 - 1.1)
        .collect();
    let b = Tensor::from_slice(&vals, &[k, n]).unwrap();
    // The same matrix stored column-major: unit stride down columns.
    let bt = Tensor::from_slice(
        &(0..k * n)
            .map(|v| vals[(v % k) * n + v / k])
            .collect::<Vec<_>>(),
        &[n, k],
    )
    .unwrap()
    .transpose(0, 1)
    .unwrap();
    assert_eq!(bt.strides()[1], k);
    for beta in [None, Some(0.5)] {
        let o1 = Tensor::full(&[m, n], crate::Scalar::Float(2.0), crate::DType::Float64);
        let o2 = Tensor::full(&[m, n], crate::Scalar::Float(2.0), crate::DType::Float64);
        let fast = product(&a, &b, &o1, 1.5f64, beta, GemmBackend::Gemm);
        let strided = product(&a, &bt, &o2, 1.5f64, beta, GemmBackend::Gemm);
        assert_eq!(fast, strided);
    }
}

#[test]
fn large_outer_products_written_around_the_caches_are_exact() {
    // 2 x (1024 x 1) @ (1 x 1027) in f32 is over the streaming size;
    // an odd row length leaves unaligned heads and tails.
    let (nb, m, n) = (2, 1024, 1027);
    let a: Vec<f32> = (0..nb * m).map(|v| (v % 29) as f32 * 0.25 - 3.0).collect();
    let b: Vec<f32> = (0..nb * n).map(|v| (v % 31) as f32 * 0.5 - 7.0).collect();
    let ta = Tensor::from_slice(&a, &[nb, m, 1]).unwrap();
    let tb = Tensor::from_slice(&b, &[nb, 1, n]).unwrap();
    // The same right operands with a column stride of 2.
    let wide: Vec<f32> = b.iter().flat_map(|&v| [v, 99.0]).collect();
    let tw = Tensor::from_slice(&wide, &[nb, 1, n, 2])
        .unwrap()
        .select(3, 0)
        .unwrap();
    assert_eq!(tw.strides()[2], 2);
    for right in [&tb, &tw] {
        let out = Tensor::empty(&[nb, m, n], crate::DType::Float32);
        let got = product(&ta, right, &out, 1.0f32, None, GemmBackend::Gemm);
        for i in 0..nb {
            for r in 0..m {
                for j in 0..n {
                    assert_eq!(got[(i * m + r) * n + j], a[i * m + r] * b[i * n + j]);
                }
            }
        }
    }
}

#[test]
fn integer_product_of_two_matrices() {
    let a = Tensor::from_slice(&[1i64, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
    let b = Tensor::from_slice(&[7i64, 8, 9, 10, 11, 12], &[3, 2]).unwrap();
    let out = Tensor::empty(&[2, 2], crate::DType::Int64);
    let got = product(&a, &b, &out, 1i64, None, GemmBackend::Gemm);
    assert_eq!(got, vec![58, 64, 139, 154]);
}

#[test]
fn alpha_and_beta_scale_the_product_and_the_old_output() {
    let a = Tensor::from_slice(&[1i32, 2, 3, 4], &[2, 2]).unwrap();
    let b = Tensor::from_slice(&[1i32, 0, 0, 1], &[2, 2]).unwrap();
    let out = Tensor::from_slice(&[10i32, 20, 30, 40], &[2, 2]).unwrap();
    // 2 * a + 3 * out
    let got = product(&a, &b, &out, 2, Some(3), GemmBackend::Gemm);
    assert_eq!(got, vec![32, 64, 96, 128]);
}

#[test]
fn integer_products_wrap() {
    let a = Tensor::from_slice(&[i32::MAX], &[1, 1]).unwrap();
    let b = Tensor::from_slice(&[2i32], &[1, 1]).unwrap();
    let out = Tensor::empty(&[1, 1], crate::DType::Int32);
    assert_eq!(product(&a, &b, &out, 1, None, GemmBackend::Gemm), vec![-2]);
}

#[test]
fn transposed_and_expanded_operands_are_read_through_their_strides() {
    // a @ a^T with a^T a transposed view.
    let a = Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    let at = permuted(&a, &[1, 0]).unwrap();
    let out = Tensor::empty(&[2, 2], crate::DType::Float64);
    let got = product(&a, &at, &out, 1.0, None, GemmBackend::Gemm);
    assert_eq!(got, vec![14.0, 32.0, 32.0, 77.0]);
    // A batch of two left operands times one right operand expanded
    // over the batch with stride 0.
    let a2 = Tensor::from_slice(&[1.0f32, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 2.0], &[2, 2, 2]).unwrap();
    let m = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    let me = relayout(&m, Layout::new(&[2, 2, 2], &[0, 2, 1], 0)).unwrap();
    let out = Tensor::empty(&[2, 2, 2], crate::DType::Float32);
    let got = product(&a2, &me, &out, 1.0f32, None, GemmBackend::MatrixMultiply);
    assert_eq!(got, vec![1.0, 2.0, 3.0, 4.0, 2.0, 4.0, 6.0, 8.0]);
}

#[test]
fn an_empty_inner_dim_gives_zeros_or_the_scaled_output() {
    let a = Tensor::empty(&[2, 0], crate::DType::Float64);
    let b = Tensor::empty(&[0, 2], crate::DType::Float64);
    let out = Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    let got = product(&a, &b, &out, 1.0, Some(0.5), GemmBackend::Gemm);
    assert_eq!(got, vec![0.5, 1.0, 1.5, 2.0]);
    let out = Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    let got = product(&a, &b, &out, 1.0, None, GemmBackend::Gemm);
    assert_eq!(got, vec![0.0; 4]);
}

#[test]
fn both_backends_agree_with_a_plain_sum_above_the_small_size() {
    // 16 x 17 x 16 is past SMALL_FLOPS, so the libraries run.
    let (m, k, n) = (16, 17, 16);
    let av: Vec<f64> = (0..m * k).map(|i| ((i * 7) % 11) as f64 - 5.0).collect();
    let bv: Vec<f64> = (0..k * n).map(|i| ((i * 5) % 13) as f64 - 6.0).collect();
    let want: Vec<f64> = (0..m * n)
        .map(|ij| {
            let (i, j) = (ij / n, ij % n);
            (0..k).map(|p| av[i * k + p] * bv[p * n + j]).sum()
        })
        .collect();
    let a = Tensor::from_slice(&av, &[m, k]).unwrap();
    let b = Tensor::from_slice(&bv, &[k, n]).unwrap();
    for backend in [GemmBackend::Gemm, GemmBackend::MatrixMultiply] {
        let out = Tensor::empty(&[m, n], crate::DType::Float64);
        assert_eq!(product(&a, &b, &out, 1.0, None, backend), want);
    }
}

#[test]
fn products_run_as_halves_are_exact_and_do_not_depend_on_the_threads() {
    // Short-sided products past PARALLEL_FLOPS split their longer side
    // (columns for 64 x 784 x 128, rows for 600 x 40 x 100), through a
    // transposed right operand and with beta. Small integers keep the
    // sums exact; fractional values must give the same bits on one
    // thread as on the pool.
    for &(m, k, n) in &[(64, 784, 128), (600, 100, 40)] {
        let g = GemmArgs::<f64> {
            m,
            n,
            k,
            a: std::ptr::null(),
            ars: 0,
            acs: 0,
            b: std::ptr::null(),
            brs: 0,
            bcs: 0,
            c: std::ptr::null_mut(),
            crs: 0,
            ccs: 0,
            alpha: 1.0,
            beta: None,
        };
        assert!(g.halves().is_some());
        let av: Vec<f64> = (0..m * k).map(|i| ((i * 7) % 11) as f64 - 5.0).collect();
        let bv: Vec<f64> = (0..n * k).map(|i| ((i * 5) % 13) as f64 - 6.0).collect();
        let a = Tensor::from_slice(&av, &[m, k]).unwrap();
        // b[p, j] = bv[j * k + p]: a transposed [n, k] matrix.
        let b = Tensor::from_slice(&bv, &[n, k]).unwrap().t().unwrap();
        let want: Vec<f64> = (0..m * n)
            .map(|ij| {
                let (i, j) = (ij / n, ij % n);
                let s: f64 = (0..k).map(|p| av[i * k + p] * bv[j * k + p]).sum();
                2.0 * s + 0.5 * (ij % 3) as f64
            })
            .collect();
        let init: Vec<f64> = (0..m * n).map(|ij| (ij % 3) as f64).collect();
        let out = Tensor::from_slice(&init, &[m, n]).unwrap();
        assert_eq!(
            product(&a, &b, &out, 2.0, Some(0.5), GemmBackend::Gemm),
            want
        );
        let frac = |v: &[f64], s: f64| v.iter().map(|x| x * s).collect::<Vec<_>>();
        let af = Tensor::from_slice(&frac(&av, 0.37), &[m, k]).unwrap();
        let bf = Tensor::from_slice(&frac(&bv, 1.13), &[n, k])
            .unwrap()
            .t()
            .unwrap();
        let pooled = Tensor::empty(&[m, n], crate::DType::Float64);
        let pooled = product(&af, &bf, &pooled, 1.0f64, None, GemmBackend::Gemm);
        let alone = crate::pool::serial(|| {
            let out = Tensor::empty(&[m, n], crate::DType::Float64);
            product(&af, &bf, &out, 1.0f64, None, GemmBackend::Gemm)
        });
        assert_eq!(pooled, alone);
    }
}

#[test]
fn a_long_inner_dim_split_in_parts_gives_the_exact_product() {
    // 16 x 4096 x 32 has a small output and a long inner dim, so the
    // inner dim is split. Small integers keep every partial sum exact,
    // so the parts' order cannot change the result; a transposed `b`
    // and `beta` take the strided and accumulating paths.
    let (m, k, n) = (16, 4096, 32);
    assert!(k >= SPLIT_K_MIN && m * n <= SPLIT_K_MAX_OUT && m * n * k >= PARALLEL_FLOPS);
    let av: Vec<f64> = (0..m * k).map(|i| ((i * 7) % 11) as f64 - 5.0).collect();
    let bv: Vec<f64> = (0..n * k).map(|i| ((i * 5) % 13) as f64 - 6.0).collect();
    let cv: Vec<f64> = (0..m * n).map(|i| (i % 7) as f64).collect();
    let want: Vec<f64> = (0..m * n)
        .map(|ij| {
            let (i, j) = (ij / n, ij % n);
            let dot: f64 = (0..k).map(|p| av[i * k + p] * bv[j * k + p]).sum();
            2.0 * dot + 0.5 * cv[ij]
        })
        .collect();
    let a = Tensor::from_slice(&av, &[m, k]).unwrap();
    let b = Tensor::from_slice(&bv, &[n, k]).unwrap().t().unwrap();
    for backend in [GemmBackend::Gemm, GemmBackend::MatrixMultiply] {
        let out = Tensor::from_slice(&cv, &[m, n]).unwrap();
        assert_eq!(product(&a, &b, &out, 2.0, Some(0.5), backend), want);
    }
}

#[test]
fn batch_offsets_walk_the_batch_in_row_major_order() {
    assert_eq!(
        batch_offsets(&[2, 3], &[30, 10]),
        vec![0, 10, 20, 30, 40, 50]
    );
    assert_eq!(batch_offsets(&[2, 2], &[0, 4]), vec![0, 4, 0, 4]);
    assert_eq!(batch_offsets(&[], &[]), vec![0]);
}

#[test]
fn dot_of_strided_vectors() {
    let a = Tensor::from_slice(&[1.0f32, 9.0, 2.0, 9.0, 3.0], &[5]).unwrap();
    let every_other = relayout(&a, Layout::new(&[3], &[2], 0)).unwrap();
    let b = Tensor::from_slice(&[4.0f32, 5.0, 6.0], &[3]).unwrap();
    assert_eq!(
        dot::<f32>(&every_other, &b).unwrap().to_vec::<f32>(),
        vec![32.0]
    );
    let i = Tensor::from_slice(&[i64::MAX, 1], &[2]).unwrap();
    let j = Tensor::from_slice(&[1i64, 1], &[2]).unwrap();
    assert_eq!(dot::<i64>(&i, &j).unwrap().to_vec::<i64>(), vec![i64::MIN]);
}

#[test]
fn backend_names_round_trip() {
    for b in [GemmBackend::Gemm, GemmBackend::MatrixMultiply] {
        assert_eq!(GemmBackend::from_name(b.name()), Some(b));
    }
    assert_eq!(GemmBackend::from_name("blas"), None);
}

/// An `r x c` float32 matrix with entries `f(i, j)` in one of four
/// layouts: row-major, column-major, every other element of a larger
/// buffer in both dims (offset 1), or one row expanded over all rows
/// (row stride 0; the entries are `f(0, j)`).
#[cfg(target_arch = "x86_64")]
fn laid_out(r: usize, c: usize, layout: usize, f: impl Fn(usize, usize) -> f32) -> Tensor {
    match layout {
        0 => Tensor::from_slice(
            &(0..r * c).map(|e| f(e / c, e % c)).collect::<Vec<_>>(),
            &[r, c],
        )
        .unwrap(),
        1 => Tensor::from_slice(
            &(0..r * c).map(|e| f(e % r, e / r)).collect::<Vec<_>>(),
            &[c, r],
        )
        .unwrap()
        .t()
        .unwrap(),
        2 => {
            let mut base = vec![f32::NAN; 4 * r * c + 1];
            for i in 0..r {
                for j in 0..c {
                    base[1 + 4 * c * i + 2 * j] = f(i, j);
                }
            }
            let base = Tensor::from_slice(&base, &[base.len()]).unwrap();
            relayout(&base, Layout::new(&[r, c], &[4 * c, 2], 1)).unwrap()
        }
        _ => {
            let row =
                Tensor::from_slice(&(0..c).map(|j| f(0, j)).collect::<Vec<_>>(), &[c]).unwrap();
            relayout(&row, Layout::new(&[r, c], &[0, 1], 0)).unwrap()
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn float32_products_on_the_avx512_tiles_are_exact_for_every_layout_and_edge() {
    // Small integers keep every float32 partial sum exact, so each
    // element must equal the float64 sum whatever order the tiles add in.
    // The shapes leave ragged row and column panels and inner blocks.
    if !crate::kernels::isa::has_avx512() {
        return;
    }
    let fa = |i: usize, p: usize| ((i * 7 + p * 3) % 9) as f32 - 4.0;
    let fb = |p: usize, j: usize| ((p * 5 + j * 11) % 7) as f32 - 3.0;
    for &(m, k, n) in &[
        (12, 16, 32),
        (13, 17, 33),
        (50, 300, 70),
        (100, 513, 65),
        (300, 40, 600),
        (64, 70, 96),
        (20, 33, 40),
    ] {
        for la in 0..4 {
            for lb in 0..4 {
                let a = laid_out(m, k, la, fa);
                let b = laid_out(k, n, lb, fb);
                let (av, bv) = (a.to_vec::<f32>(), b.to_vec::<f32>());
                for (alpha, beta) in [(1.0f32, None), (2.0, Some(0.5f32))] {
                    let init: Vec<f32> = (0..m * n).map(|e| (e % 5) as f32).collect();
                    let want: Vec<f32> = (0..m * n)
                        .map(|e| {
                            let (i, j) = (e / n, e % n);
                            let s: f64 = (0..k)
                                .map(|p| av[i * k + p] as f64 * bv[p * n + j] as f64)
                                .sum();
                            (alpha as f64 * s + beta.map_or(0.0, |bt| bt as f64 * init[e] as f64))
                                as f32
                        })
                        .collect();
                    let out = Tensor::from_slice(&init, &[m, n]).unwrap();
                    let got = product(&a, &b, &out, alpha, beta, GemmBackend::Gemm);
                    assert!(got == want, "{m}x{k}x{n}, layouts {la}/{lb}, beta {beta:?}");
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn float32_tiles_give_the_same_bits_on_any_number_of_threads() {
    // 150 rows run in row chunks, 64 column panel by column panel; the
    // first 64 rows come out the same either way.
    if !crate::kernels::isa::has_avx512() {
        return;
    }
    let (k, n) = (700, 90);
    let b = laid_out(k, n, 1, |p, j| ((p * 13 + j * 29) % 89) as f32 / 23.0 - 1.7);
    let bp = elem_ptr::<f32>(&b);
    let st = |t: &Tensor, d: usize| t.strides()[d] as isize;
    let run = |a: &Tensor, threads: usize| {
        let m = a.shape()[0];
        let mut c = vec![0f32; m * n];
        let g = GemmArgs {
            m,
            n,
            k,
            a: elem_ptr::<f32>(a),
            ars: st(a, 0),
            acs: st(a, 1),
            b: bp,
            brs: st(&b, 0),
            bcs: st(&b, 1),
            c: c.as_mut_ptr(),
            crs: n as isize,
            ccs: 1,
            alpha: 1.0f32,
            beta: None,
        };
        assert!(avx512::usable(&g));
        // SAFETY: the operands are live tensors read through their own
        // strides; `c` is a fresh m x n buffer.
        unsafe { avx512::gemm(&g, threads) };
        c
    };
    let fa = |i: usize, p: usize| ((i * 37 + p * 11) % 101) as f32 / 17.0 - 2.9;
    let tall = run(&laid_out(150, k, 0, fa), 1);
    for m in [150, 64] {
        let a = laid_out(m, k, 0, fa);
        let one = run(&a, 1);
        for threads in [2, 3, 8] {
            assert!(run(&a, threads) == one, "{m} rows, {threads} threads");
        }
        assert!(
            one[..] == tall[..m * n],
            "{m} rows against the first of 150"
        );
        // And within float32 rounding of the float64 sum.
        let (av, bv) = (a.to_vec::<f32>(), b.to_vec::<f32>());
        for (e, &v) in one.iter().enumerate() {
            let (i, j) = (e / n, e % n);
            let s: f64 = (0..k)
                .map(|p| av[i * k + p] as f64 * bv[p * n + j] as f64)
                .sum();
            assert!(
                (v as f64 - s).abs() <= 1e-4 * (1.0 + s.abs()),
                "{m} rows, element {e}: {v} vs {s}"
            );
        }
    }
}

#[test]
fn products_in_blocks_give_the_bits_of_one_call_for_any_number_of_threads() {
    // The blocks of `gemm_chunked` are one-thread calls of the `gemm`
    // crate on parts of the output; each element still sums its inner
    // products in the crate's order, so the bits match one whole call
    // whatever the grid (which follows the thread count), also with a
    // transposed left operand, ragged edges and beta. (The crate's complex
    // kernels sum blocks in another order, so complex products are never
    // cut: `MatElem::BLOCKS_SUM_IN_ORDER`.)
    fn check<T: MatElem + PartialEq + std::fmt::Debug + Copy>(
        m: usize,
        k: usize,
        n: usize,
        transposed_a: bool,
        val: impl Fn(usize) -> T,
        beta: Option<T>,
    ) -> usize {
        let av: Vec<T> = (0..m * k).map(&val).collect();
        let bv: Vec<T> = (0..k * n).map(|i| val(i * 3 + 1)).collect();
        let init: Vec<T> = (0..m * n).map(|i| val(i * 5 + 2)).collect();
        let (ars, acs) = if transposed_a {
            (1, m as isize)
        } else {
            (k as isize, 1)
        };
        let run = |f: &dyn Fn(&GemmArgs<T>)| {
            let mut c = init.clone();
            let g = GemmArgs {
                m,
                n,
                k,
                a: av.as_ptr(),
                ars,
                acs,
                b: bv.as_ptr(),
                brs: n as isize,
                bcs: 1,
                c: c.as_mut_ptr(),
                crs: n as isize,
                ccs: 1,
                alpha: val(7),
                beta,
            };
            f(&g);
            c
        };
        // SAFETY: the operands are live vectors of the described shapes.
        let whole = run(&|g| unsafe { g.gemm_crate(1) });
        let mut grids = std::collections::BTreeSet::new();
        for threads in [2, 3, 8, 16, 64] {
            let (rc, cc) = chunk_grid(m, n, threads);
            assert!(rc * cc >= 2, "{m}x{n} is cut for {threads} threads");
            grids.insert((rc, cc));
            // SAFETY: as above.
            let blocks = run(&|g| unsafe { g.gemm_chunked(rc, cc) });
            assert!(
                blocks == whole,
                "{m}x{k}x{n}, {threads} threads ({rc} x {cc} blocks)"
            );
        }
        grids.len()
    }
    let f32v = |i: usize| ((i * 37) % 101) as f32 / 17.0 - 2.9;
    let f64v = |i: usize| ((i * 37) % 101) as f64 / 17.0 - 2.9;
    // The grid follows the thread count.
    assert!(check(512, 512, 512, false, f32v, None) >= 2);
    for &(m, k, n) in &[
        (300, 700, 500),
        (97, 1030, 300),
        (640, 64, 784),
        (1000, 600, 60),
        (50, 700, 1000),
    ] {
        check(m, k, n, false, f32v, None);
        check(m, k, n, true, f32v, Some(0.5f32));
        check(m, k, n, false, f64v, Some(-1.25f64));
    }
}
