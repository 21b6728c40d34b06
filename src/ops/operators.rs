//! Rust's arithmetic operators on tensors, and short forms of common
//! calls, so Rust code reads like the math:
//!
//! ```
//! use ferrograd::Tensor;
//! # fn main() -> ferrograd::Result<()> {
//! let w = Tensor::from_slice(&[1.0f64, 2.0], &[2])?.requires_grad_(true)?;
//! let x = Tensor::from_slice(&[3.0f64, 4.0], &[2])?;
//! ((&w * &x)? * 2.0)?.sum_all()?.backward()?;
//! assert_eq!(w.grad().unwrap().to_vec::<f64>(), vec![6.0, 8.0]);
//! # Ok(())
//! # }
//! ```
//!
//! Each operator is the method of the same name (`&a + &b` is
//! `a.add(&b)`), so it broadcasts, promotes and records a graph node the
//! same way, and returns `Result<Tensor>` as the method does. Scalars
//! (`f64`, `i64`, `bool`) join as wrapped numbers, the lowest priority in
//! type promotion: `&x * 2.0` keeps `x`'s float dtype, as in torch.

use crate::tensor::Scalar;
use crate::{Result, Tensor};
use std::ops::{Add, Div, Mul, Neg, Sub};

/// Implements one binary operator for every mix of owned and borrowed
/// tensors and of a tensor with a scalar on either side.
macro_rules! binary_operator {
    ($trait:ident, $method:ident) => {
        impl $trait<&Tensor> for &Tensor {
            type Output = Result<Tensor>;
            fn $method(self, rhs: &Tensor) -> Result<Tensor> {
                Tensor::$method(self, rhs)
            }
        }
        impl $trait<Tensor> for &Tensor {
            type Output = Result<Tensor>;
            fn $method(self, rhs: Tensor) -> Result<Tensor> {
                Tensor::$method(self, &rhs)
            }
        }
        impl $trait<&Tensor> for Tensor {
            type Output = Result<Tensor>;
            fn $method(self, rhs: &Tensor) -> Result<Tensor> {
                Tensor::$method(&self, rhs)
            }
        }
        impl $trait<Tensor> for Tensor {
            type Output = Result<Tensor>;
            fn $method(self, rhs: Tensor) -> Result<Tensor> {
                Tensor::$method(&self, &rhs)
            }
        }
        binary_operator!(@scalar $trait, $method, f64);
        binary_operator!(@scalar $trait, $method, i64);
        binary_operator!(@scalar $trait, $method, bool);
    };
    (@scalar $trait:ident, $method:ident, $s:ty) => {
        impl $trait<$s> for &Tensor {
            type Output = Result<Tensor>;
            fn $method(self, rhs: $s) -> Result<Tensor> {
                Tensor::$method(self, &Tensor::scalar(Scalar::from(rhs)))
            }
        }
        impl $trait<$s> for Tensor {
            type Output = Result<Tensor>;
            fn $method(self, rhs: $s) -> Result<Tensor> {
                Tensor::$method(&self, &Tensor::scalar(Scalar::from(rhs)))
            }
        }
        impl $trait<&Tensor> for $s {
            type Output = Result<Tensor>;
            fn $method(self, rhs: &Tensor) -> Result<Tensor> {
                Tensor::$method(&Tensor::scalar(Scalar::from(self)), rhs)
            }
        }
        impl $trait<Tensor> for $s {
            type Output = Result<Tensor>;
            fn $method(self, rhs: Tensor) -> Result<Tensor> {
                Tensor::$method(&Tensor::scalar(Scalar::from(self)), &rhs)
            }
        }
    };
}

binary_operator!(Add, add);
binary_operator!(Sub, sub);
binary_operator!(Mul, mul);
binary_operator!(Div, div);

impl Neg for &Tensor {
    type Output = Result<Tensor>;
    fn neg(self) -> Result<Tensor> {
        Tensor::neg(self)
    }
}

impl Neg for Tensor {
    type Output = Result<Tensor>;
    fn neg(self) -> Result<Tensor> {
        Tensor::neg(&self)
    }
}

impl Tensor {
    /// The sum of all elements, a 0-dim tensor (`sum(None, false, None)`).
    pub fn sum_all(&self) -> Result<Tensor> {
        self.sum(None, false, None)
    }

    /// The mean of all elements, a 0-dim tensor (`mean(None, false, None)`).
    pub fn mean_all(&self) -> Result<Tensor> {
        self.mean(None, false, None)
    }
}
