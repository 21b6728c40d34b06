//! Per-coordinate step sizes from running sums or averages of squared
//! gradients: Adagrad, RMSprop and Adadelta.

use super::engine::{decay, lerp, Real, Rule, States};

hyper_parameters! {
    /// Adagrad's hyper-parameters (torch's names).
    pub struct Adagrad {
        lr, lr_decay, weight_decay, eps: f64,
        maximize: bool,
    }
}

impl Rule for Adagrad {
    const NAME: &'static str = "adagrad_step";
    /// The step's learning rate.
    type Step = f64;

    /// The running sum of squared gradients.
    fn states(&self) -> usize {
        1
    }

    fn scalars(&self) -> usize {
        1
    }

    fn prepare(&self, scalars: &[f64]) -> f64 {
        self.lr / (1.0 + (scalars[0] - 1.0) * self.lr_decay)
    }

    #[inline(always)]
    fn update<L: Real>(&self, clr: f64, g: L, x: L, s: &mut States<L>) -> L {
        let (g, x) = decay(g, x, self.maximize, self.weight_decay, None);
        let sum = s[0] + L::c(1.0) * g * g;
        s[0] = sum;
        x + L::c(-clr) * g / (sum.sqrt() + L::c(self.eps))
    }
}

hyper_parameters! {
    /// RMSprop's hyper-parameters (torch's names).
    pub struct RmsProp {
        lr, alpha, eps, weight_decay, momentum: f64,
        centered, maximize: bool,
    }
}

impl Rule for RmsProp {
    const NAME: &'static str = "rmsprop_step";
    type Step = ();

    /// The average of squares, the gradient's average when `centered`,
    /// then the momentum buffer when `momentum > 0`.
    fn states(&self) -> usize {
        1 + usize::from(self.centered) + usize::from(self.momentum > 0.0)
    }

    // The options pick operands, not operations: one square root and one
    // division per element either way, so that the loop vectorizes without
    // paying for the branches not taken. Constant state indices keep the
    // state values in registers.
    #[inline(always)]
    fn update<L: Real>(&self, _: (), g: L, x: L, s: &mut States<L>) -> L {
        let (g, x) = decay(g, x, self.maximize, self.weight_decay, None);
        let v = s[0] * L::c(self.alpha) + L::c(1.0 - self.alpha) * g * g;
        s[0] = v;
        // centered: v - mean^2, as `v.addcmul(mean, mean, value=-1)`.
        let var = if self.centered {
            let mean = lerp(s[1], g, L::c(1.0 - self.alpha));
            s[1] = mean;
            v + L::c(-1.0) * mean * mean
        } else {
            v
        };
        let avg = var.sqrt() + L::c(self.eps);
        let momentum = self.momentum > 0.0;
        // g / avg into the momentum buffer, or -lr g / avg into the parameter.
        let scale = if momentum { 1.0 } else { -self.lr };
        let d = L::c(scale) * g / avg;
        if !momentum {
            return x + d;
        }
        // The buffer follows the gradient's average when there is one.
        let b = if self.centered { s[2] } else { s[1] };
        let b = b * L::c(self.momentum) + d;
        if self.centered {
            s[2] = b;
        } else {
            s[1] = b;
        }
        x.plus_scaled(L::c(-self.lr), b)
    }
}

hyper_parameters! {
    /// Adadelta's hyper-parameters (torch's names).
    pub struct Adadelta {
        lr, rho, eps, weight_decay: f64,
        maximize: bool,
    }
}

impl Rule for Adadelta {
    const NAME: &'static str = "adadelta_step";
    type Step = ();

    /// The average of squared gradients, then of squared updates.
    fn states(&self) -> usize {
        2
    }

    #[inline(always)]
    fn update<L: Real>(&self, _: (), g: L, x: L, s: &mut States<L>) -> L {
        let (g, x) = decay(g, x, self.maximize, self.weight_decay, None);
        let (rho, keep) = (L::c(self.rho), L::c(1.0 - self.rho));
        let v = s[0] * rho + keep * g * g;
        s[0] = v;
        let std = (v + L::c(self.eps)).sqrt();
        let delta = (s[1] + L::c(self.eps)).sqrt() / std * g;
        s[1] = s[1] * rho + keep * delta * delta;
        x.plus_scaled(L::c(-self.lr), delta)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{close, one_step};
    use super::super::Update;
    use super::*;

    #[test]
    fn adagrad_divides_by_the_root_of_the_summed_squares_with_a_decayed_lr() {
        let h = Adagrad {
            lr: 0.5,
            lr_decay: 0.5,
            weight_decay: 0.0,
            eps: 0.0,
            maximize: false,
        };
        // Step 3: clr = 0.5 / (1 + 2 * 0.5); sum = 12 + 2^2.
        let (p, s) = one_step(Update::Adagrad(h), &[1.0], &[2.0], &[&[12.0]], &[3.0]);
        close(&s[0], &[16.0]);
        close(&p, &[1.0 - 0.25 * 2.0 / 4.0]);
    }

    #[test]
    fn rmsprop_centered_with_momentum_uses_all_three_states() {
        let h = RmsProp {
            lr: 0.1,
            alpha: 0.75,
            eps: 0.0,
            weight_decay: 0.0,
            momentum: 0.5,
            centered: true,
            maximize: false,
        };
        let (p, s) = one_step(
            Update::RmsProp(h),
            &[1.0],
            &[2.0],
            &[&[4.0], &[1.0], &[0.2]],
            &[],
        );
        let v = 0.75 * 4.0 + 0.25 * 4.0;
        let mean = 1.0 + 0.25 * (2.0 - 1.0);
        let b = 0.5 * 0.2 + 2.0 / f64::sqrt(v - mean * mean);
        close(&s[0], &[v]);
        close(&s[1], &[mean]);
        close(&s[2], &[b]);
        close(&p, &[1.0 - 0.1 * b]);
    }

    #[test]
    fn rmsprop_plain_keeps_one_state() {
        let h = RmsProp {
            lr: 0.1,
            alpha: 0.5,
            eps: 1.0,
            weight_decay: 0.0,
            momentum: 0.0,
            centered: false,
            maximize: true,
        };
        let (p, s) = one_step(Update::RmsProp(h), &[1.0], &[-4.0], &[&[0.0]], &[]);
        close(&s[0], &[8.0]);
        close(&p, &[1.0 - 0.1 * 4.0 / (8f64.sqrt() + 1.0)]);
    }

    #[test]
    fn adadelta_scales_the_gradient_by_the_ratio_of_rms_values() {
        let h = Adadelta {
            lr: 2.0,
            rho: 0.5,
            eps: 0.0,
            weight_decay: 0.5,
            maximize: false,
        };
        // g = 1 + 0.5 * 2 = 2; v = 0.5 * 2 + 0.5 * 4 = 3; delta = sqrt(3) / sqrt(3) * 2.
        let (p, s) = one_step(Update::Adadelta(h), &[2.0], &[1.0], &[&[2.0], &[3.0]], &[]);
        close(&s[0], &[3.0]);
        close(&s[1], &[0.5 * 3.0 + 0.5 * 4.0]);
        close(&p, &[2.0 - 2.0 * 2.0]);
    }
}
