//! `torch.linalg` functions made of recorded ops (so their derivatives, in
//! every mode, come from those ops): `vecdot`, `cross`, `matrix_power`,
//! `multi_dot`, `vander`, `matrix_rank`, `cond`, `tensorinv`, `tensorsolve`
//! and `householder_product`.

use crate::ops::reduce::MatrixOrd;
use crate::tensor::broadcast_shapes;
use crate::{DType, Error, Result, Tensor};

impl Tensor {
    /// `linalg.vecdot(x, y, dim)`: `sum(conj(x) * y)` over `dim`, batch
    /// dims broadcast.
    pub fn linalg_vecdot(&self, y: &Tensor, dim: isize) -> Result<Tensor> {
        if self.dtype() != y.dtype() {
            return Err(Error::runtime(format!(
                "linalg.vecdot: Expected x and y to have the same dtype, but found x of type {} and y of type {} instead",
                self.dtype().scalar_type_name(),
                y.dtype().scalar_type_name()
            )));
        }
        self.conj()?.mul(y)?.sum(Some(&[dim]), false, None)
    }

    /// `linalg.cross(a, b, dim)`: the cross product of the 3-vectors along
    /// `dim`, batch dims broadcast.
    pub fn linalg_cross(&self, b: &Tensor, dim: isize) -> Result<Tensor> {
        let size = |t: &Tensor| -> Result<usize> {
            let d = crate::tensor::wrap_dim(dim, t.ndim())?;
            // A 0-dim tensor has no dim to take the product along.
            Ok(t.shape().get(d).copied().unwrap_or(0))
        };
        let (sa, sb) = (size(self)?, size(b)?);
        if sa != 3 || sb != 3 {
            return Err(Error::runtime(format!(
                "linalg.cross: inputs dimension {dim} must have length 3. Got {sa} and {sb}"
            )));
        }
        let shape = broadcast_shapes(self.shape(), b.shape())?;
        let full: Vec<isize> = shape.iter().map(|&n| n as isize).collect();
        let (a, b) = (self.expand(&full)?, b.expand(&full)?);
        // c_i = a_{i+1} b_{i+2} - a_{i+2} b_{i+1}, indices mod 3.
        let (a1, a2) = (a.roll(&[-1], &[dim])?, a.roll(&[-2], &[dim])?);
        let (b1, b2) = (b.roll(&[-1], &[dim])?, b.roll(&[-2], &[dim])?);
        a1.mul(&b2)?.sub(&a2.mul(&b1)?)
    }

    /// `linalg.matrix_power(A, n)`: `A` multiplied by itself `n` times (by
    /// repeated squaring), the identity for `n = 0`, and powers of
    /// `A^{-1}` for `n < 0`.
    pub fn linalg_matrix_power(&self, n: i64) -> Result<Tensor> {
        let nd = self.ndim();
        if nd < 2 || self.shape()[nd - 2] != self.shape()[nd - 1] {
            let (r, c) = if nd < 2 {
                (0, 0)
            } else {
                (self.shape()[nd - 2], self.shape()[nd - 1])
            };
            return Err(Error::runtime(format!(
                "linalg.matrix_power: A must be batches of square matrices, but they are {r} by {c} matrices"
            )));
        }
        if n == 0 {
            let k = self.shape()[nd - 1] as i64;
            let full: Vec<isize> = self.shape().iter().map(|&d| d as isize).collect();
            // The identity written into a copy of A, as torch: the result is
            // connected to A (with a zero derivative).
            let out = self.try_copy()?;
            out.copy_(&Tensor::eye(k, None, self.dtype())?.expand(&full)?)?;
            return Ok(out);
        }
        let mut p = if n < 0 { self.inverse()? } else { self.clone() };
        let mut k = n.unsigned_abs();
        let mut acc: Option<Tensor> = None;
        loop {
            if k & 1 == 1 {
                acc = Some(match acc {
                    Some(a) => a.matmul(&p)?,
                    None => p.clone(),
                });
            }
            k >>= 1;
            if k == 0 {
                break;
            }
            p = p.matmul(&p)?;
        }
        Ok(acc.expect("n != 0 sets a bit"))
    }

    /// `linalg.multi_dot(tensors)`: the product of the matrices in the
    /// order of fewest multiplications (the first may be a row vector and
    /// the last a column vector, given as 1-D tensors).
    pub fn linalg_multi_dot(tensors: &[Tensor]) -> Result<Tensor> {
        let k = tensors.len();
        if k < 2 {
            return Err(Error::runtime(format!(
                "multi_dot(): expected at least 2 tensors but got {k}"
            )));
        }
        let mut mats = Vec::with_capacity(k);
        for (i, t) in tensors.iter().enumerate() {
            let edge = i == 0 || i == k - 1;
            match (t.ndim(), edge) {
                (2, _) => mats.push(t.clone()),
                (1, true) => mats.push(t.unsqueeze(if i == 0 { 0 } else { -1 })?),
                (d, true) => {
                    let which = if i == 0 { "first" } else { "last" };
                    return Err(Error::runtime(format!(
                        "multi_dot(): the {which} tensor must be 1D or 2D but got {d}D"
                    )));
                }
                (d, false) => {
                    return Err(Error::runtime(format!(
                        "multi_dot(): tensor {i} must be 2D but got {d}D"
                    )))
                }
            }
        }
        for i in 1..k {
            if tensors[i].dtype() != tensors[0].dtype() {
                return Err(Error::runtime(format!(
                    "multi_dot(): all tensors must have the same dtype, but tensor 0 is {} and tensor {i} is {}",
                    tensors[0].dtype().scalar_type_name(),
                    tensors[i].dtype().scalar_type_name()
                )));
            }
            if mats[i - 1].shape()[1] != mats[i].shape()[0] {
                return Err(Error::runtime(format!(
                    "multi_dot(): tensors {} and {i} with shapes {:?} and {:?} cannot be multiplied",
                    i - 1,
                    tensors[i - 1].shape(),
                    tensors[i].shape()
                )));
            }
        }
        let dims: Vec<usize> = std::iter::once(mats[0].shape()[0])
            .chain(mats.iter().map(|m| m.shape()[1]))
            .collect();
        let split = chain_order(&dims);
        let out = chain_product(&mats, &split, 0, k - 1)?;
        match (tensors[0].ndim(), tensors[k - 1].ndim()) {
            (1, 1) => out.reshape(&[]),
            (1, _) => out.squeeze(Some(&[0])),
            (_, 1) => out.squeeze(Some(&[-1])),
            _ => Ok(out),
        }
    }

    /// `linalg.vander(x, N)`: the Vandermonde matrices `[x^0, x^1, ...,
    /// x^(N-1)]` (columns) of the vectors along `x`'s last dim; `N`
    /// defaults to that dim's size.
    pub fn linalg_vander(&self, n: Option<usize>) -> Result<Tensor> {
        let len = self.shape().last().copied().unwrap_or(0);
        let n = n.unwrap_or(len);
        if self.ndim() == 0 || n <= 1 {
            return Err(Error::runtime("N must be greater than 1."));
        }
        let col = self.unsqueeze(-1)?;
        let mut shape: Vec<isize> = col.shape().iter().map(|&d| d as isize).collect();
        let ones = Tensor::try_ones(col.shape(), self.dtype())?;
        *shape.last_mut().expect("rank >= 2") = (n - 1) as isize;
        let powers = col.expand(&shape)?.cumprod(-1, None)?;
        Tensor::cat(&[ones, powers], -1)
    }

    /// `linalg.matrix_rank(A, atol, rtol, hermitian)`: the number of
    /// singular values (eigenvalue moduli with `hermitian`) above
    /// `max(atol, rtol * σ_max)`; `rtol` defaults to `eps * max(m, n)`
    /// where `atol` is absent or not positive, and to 0 where it is
    /// positive. Tolerance tensors broadcast with the batch dims.
    pub fn linalg_matrix_rank(
        &self,
        atol: Option<&Tensor>,
        rtol: Option<&Tensor>,
        hermitian: bool,
    ) -> Result<Tensor> {
        let nd = self.ndim();
        if nd < 2 {
            return Err(Error::runtime(
                "linalg.matrix_rank: The input tensor input must have at least 2 dimensions.",
            ));
        }
        // A count has no derivative: the values of the detached input are
        // computed without the vectors a derivative would need.
        let a = self.detach();
        let s = if hermitian {
            a.linalg_eigvalsh(false)?.abs()?
        } else {
            a.linalg_svdvals()?
        };
        let (m, n) = (self.shape()[nd - 2], self.shape()[nd - 1]);
        let tol = super::lstsq::cutoff(&s, (m, n), atol, rtol)?;
        s.gt(&tol)?.sum(Some(&[-1]), false, Some(DType::Int64))
    }

    /// `linalg.cond(A, p)`: the condition number. With `p` `None` (2) or
    /// `-2`, the ratio of the largest and smallest singular values (any
    /// `m x n`); otherwise `norm(A, p) * norm(A^{-1}, p)` for square `A`.
    pub fn linalg_cond(&self, p: Option<MatrixOrd>) -> Result<Tensor> {
        let nd = self.ndim();
        if nd < 2 {
            return Err(Error::runtime(
                "linalg.cond: The input tensor A must have at least 2 dimensions.",
            ));
        }
        let spectral = |s: &Tensor, largest_first: bool| -> Result<Tensor> {
            let k = s.shape()[s.ndim() - 1];
            let (hi, lo) = (s.narrow(-1, 0, 1)?, s.narrow(-1, k as isize - 1, 1)?);
            let r = if largest_first {
                hi.div(&lo)?
            } else {
                lo.div(&hi)?
            };
            r.squeeze(Some(&[-1]))
        };
        match p {
            None => spectral(&self.linalg_svdvals()?, true),
            Some(MatrixOrd::P(2.0)) => spectral(&self.linalg_svdvals()?, true),
            Some(MatrixOrd::P(-2.0)) => spectral(&self.linalg_svdvals()?, false),
            Some(ord) => {
                let (r, c) = (self.shape()[nd - 2], self.shape()[nd - 1]);
                if r != c {
                    return Err(Error::runtime(format!(
                        "linalg.cond(ord={}): A must be batches of square matrices, but they are {r} by {c} matrices",
                        ord_name(ord)
                    )));
                }
                let inv = self.inverse()?;
                self.matrix_norm(ord, (-2, -1), false, None)?
                    .mul(&inv.matrix_norm(ord, (-2, -1), false, None)?)
            }
        }
    }
}

impl Tensor {
    /// `linalg.tensorinv(A, ind)`: the inverse of `A` seen as a matrix
    /// whose rows are its first `ind` dims and columns the rest (the two
    /// products must agree); the result has the column dims first.
    pub fn linalg_tensorinv(&self, ind: i64) -> Result<Tensor> {
        if ind <= 0 {
            return Err(Error::runtime(format!(
                "Expected a strictly positive integer for 'ind', but got {ind}"
            )));
        }
        let ind = (ind as usize).min(self.ndim());
        let (rows, cols) = self.shape().split_at(ind);
        let (p, q) = (
            rows.iter().product::<usize>(),
            cols.iter().product::<usize>(),
        );
        if p != q {
            return Err(Error::runtime(format!(
                "Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), but got {q} != {p}"
            )));
        }
        let shape: Vec<isize> = cols.iter().chain(rows).map(|&d| d as isize).collect();
        self.reshape(&[p as isize, q as isize])?
            .inverse()?
            .reshape(&shape)
    }

    /// `linalg.tensorsolve(A, B, dims)`: `X` with `tensordot(A, X,
    /// X.ndim) = B`, where `X` takes `A`'s trailing dims after `B`'s; the
    /// dims of `dims` are first moved to the end of `A`.
    pub fn linalg_tensorsolve(&self, b: &Tensor, dims: Option<&[isize]>) -> Result<Tensor> {
        let a = match dims {
            Some(d) if !d.is_empty() => {
                let nd = self.ndim() as isize;
                let to: Vec<isize> = (nd - d.len() as isize..nd).collect();
                self.movedim(d, &to)?
            }
            _ => self.clone(),
        };
        let k = b.ndim().min(a.ndim());
        let (rows, cols) = a.shape().split_at(k);
        let (p, q) = (
            rows.iter().product::<usize>(),
            cols.iter().product::<usize>(),
        );
        if p != q || rows != &b.shape()[..k] {
            return Err(Error::runtime(format!(
                "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), but got {q} != {p}"
            )));
        }
        let shape: Vec<isize> = cols.iter().map(|&d| d as isize).collect();
        a.reshape(&[p as isize, q as isize])?
            .linalg_solve(&b.reshape(&[p as isize])?)?
            .reshape(&shape)
    }

    /// `linalg.householder_product(A, tau)`: the first `n` columns of
    /// `H_1 ... H_k` for each `m x n` matrix (`m >= n >= k`), where
    /// `H_i = I - tau_i v_i v_i^H` and `v_i` is column `i` of `A` below
    /// the diagonal with a 1 on it (LAPACK's `orgqr`). Made of recorded
    /// products, so differentiable in every mode.
    pub fn linalg_householder_product(&self, tau: &Tensor) -> Result<Tensor> {
        const OP: &str = "torch.linalg.householder_product";
        let nd = self.ndim();
        if nd < 2 {
            return Err(Error::runtime(format!(
                "{OP}: input must have at least 2 dimensions."
            )));
        }
        let (m, n) = (self.shape()[nd - 2], self.shape()[nd - 1]);
        let k = tau.shape().last().copied().unwrap_or(0);
        let problem = if m < n {
            Some("input.shape[-2] must be greater than or equal to input.shape[-1]".to_string())
        } else if n < k {
            Some("input.shape[-1] must be greater than or equal to tau.shape[-1]".to_string())
        } else if tau.ndim() + 1 != nd {
            Some("input.dim() - tau.dim() must be equal to 1".to_string())
        } else if tau.shape()[..nd - 2] != self.shape()[..nd - 2] {
            Some(format!(
                "Expected batch dimensions of tau to be equal to input.shape[:-2], but got {:?}",
                &tau.shape()[..nd - 2]
            ))
        } else if tau.dtype() != self.dtype() {
            Some(format!(
                "tau dtype {} does not match input dtype {}",
                tau.dtype().scalar_type_name(),
                self.dtype().scalar_type_name()
            ))
        } else {
            None
        };
        if let Some(p) = problem {
            return Err(Error::runtime(format!("{OP}: {p}")));
        }
        let eye = Tensor::eye(m as i64, Some(n as i64), self.dtype())?;
        let v = self.tril(-1)?.add(&eye)?;
        let mut q = eye.broadcast_to(self.shape())?;
        for i in (0..k).rev() {
            let vi = v.narrow(-1, i as isize, 1)?;
            let ti = tau.narrow(-1, i as isize, 1)?.unsqueeze(-1)?;
            q = q.sub(&vi.mul(&ti)?.matmul(&vi.adjoint()?.matmul(&q)?)?)?;
        }
        // Column-major matrices, as torch's (LAPACK's) result.
        q.mt()?.contiguous().mt()
    }
}

/// How torch names a matrix norm's order in messages.
fn ord_name(ord: MatrixOrd) -> String {
    match ord {
        MatrixOrd::Fro => "fro".into(),
        MatrixOrd::Nuc => "nuc".into(),
        MatrixOrd::P(x) if x.is_infinite() => if x > 0.0 { "inf" } else { "-inf" }.into(),
        MatrixOrd::P(x) => format!("{}", x as i64),
    }
}

/// The optimal split points of the chain of matrices with `dims`
/// (`dims[i] x dims[i + 1]` for matrix `i`): `split[i][j]` is where the
/// product of matrices `i..=j` is best split (the textbook dynamic program
/// over the number of scalar multiplications).
fn chain_order(dims: &[usize]) -> Vec<Vec<usize>> {
    let k = dims.len() - 1;
    let mut cost = vec![vec![0u128; k]; k];
    let mut split = vec![vec![0usize; k]; k];
    for len in 1..k {
        for i in 0..k - len {
            let j = i + len;
            cost[i][j] = u128::MAX;
            for s in i..j {
                let c = cost[i][s]
                    + cost[s + 1][j]
                    + (dims[i] as u128) * (dims[s + 1] as u128) * (dims[j + 1] as u128);
                if c < cost[i][j] {
                    cost[i][j] = c;
                    split[i][j] = s;
                }
            }
        }
    }
    split
}

/// The product of `mats[i..=j]` in the order of `split`.
fn chain_product(mats: &[Tensor], split: &[Vec<usize>], i: usize, j: usize) -> Result<Tensor> {
    if i == j {
        return Ok(mats[i].clone());
    }
    let s = split[i][j];
    chain_product(mats, split, i, s)?.matmul(&chain_product(mats, split, s + 1, j)?)
}

#[cfg(test)]
mod tests {
    use super::chain_order;

    #[test]
    fn chain_order_picks_the_cheap_parenthesization() {
        // (10x100)(100x5)(5x50): (AB)C costs 5000 + 2500, A(BC) 25000 + 50000.
        let split = chain_order(&[10, 100, 5, 50]);
        assert_eq!(split[0][2], 1);
        // (50x5)(5x100)(100x10): A(BC) costs 5000 + 2500.
        let split = chain_order(&[50, 5, 100, 10]);
        assert_eq!(split[0][2], 0);
    }
}
