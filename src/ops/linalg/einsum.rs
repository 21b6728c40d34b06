//! `einsum`: Einstein summation over any number of operands.
//!
//! Each operand first becomes a strided view with one dim per distinct
//! subscript (a repeated subscript is a diagonal: its strides add up; a
//! size-1 dim broadcasts with stride 0). Operands are then contracted left
//! to right: subscripts needed by no later operand and not in the output
//! are summed away first (a product with a vector of ones), and the pair is
//! reduced to one batched matrix product by permuting into
//! `(batch, kept-left, summed)` and `(batch, summed, kept-right)`. The final
//! permutation puts the output subscripts in order.

use super::matmul::{bmm_broadcast, gemm_backend};
use crate::autograd::{derivatives, Tangents};
use crate::{Error, Layout, Result, Scalar, Tensor};

/// Subscript ids: `A-Z` are 0..26, `a-z` 26..52, ellipsis dims 52.. .
type Label = usize;
const ELLIPSIS_BASE: Label = 52;

#[derive(Clone, Copy, PartialEq)]
enum Sub {
    Label(Label),
    Ellipsis,
}

fn label_char(l: Label) -> String {
    match l {
        0..=25 => ((b'A' + l as u8) as char).to_string(),
        26..=51 => ((b'a' + (l - 26) as u8) as char).to_string(),
        _ => "...".to_string(),
    }
}

/// Input terms and the optional explicit output term.
type Parsed = (Vec<Vec<Sub>>, Option<Vec<Sub>>);

/// Splits the equation into input terms and the optional output term.
fn parse(equation: &str) -> Result<Parsed> {
    let chars: Vec<char> = equation.chars().collect();
    let mut inputs: Vec<Vec<Sub>> = vec![Vec::new()];
    let mut output: Option<Vec<Sub>> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let in_output = output.is_some();
        let term_desc = if in_output {
            "output".to_string()
        } else {
            format!("operand {}", inputs.len() - 1)
        };
        let term: &mut Vec<Sub> = match output.as_mut() {
            Some(o) => o,
            None => inputs.last_mut().expect("inputs starts non-empty"),
        };
        match c {
            ' ' => {}
            'a'..='z' => term.push(Sub::Label(26 + (c as u8 - b'a') as usize)),
            'A'..='Z' => term.push(Sub::Label((c as u8 - b'A') as usize)),
            '.' => {
                if chars.get(i + 1) != Some(&'.') || chars.get(i + 2) != Some(&'.') {
                    return Err(Error::runtime(format!(
                        "einsum(): found '.' for {term_desc} that is not part of any ellipsis"
                    )));
                }
                if term.contains(&Sub::Ellipsis) {
                    return Err(Error::runtime(format!(
                        "einsum(): found '.' for {term_desc} for which an ellipsis was already found"
                    )));
                }
                term.push(Sub::Ellipsis);
                i += 2;
            }
            ',' if !in_output => inputs.push(Vec::new()),
            '-' if !in_output && chars.get(i + 1) == Some(&'>') => {
                output = Some(Vec::new());
                i += 1;
            }
            _ => {
                return Err(Error::runtime(format!(
                    "einsum(): invalid subscript given at index {i} in the equation string, subscripts must be in [a-zA-Z]"
                )))
            }
        }
        i += 1;
    }
    Ok((inputs, output))
}

/// A tensor whose dims are labelled by distinct subscripts.
struct Labelled {
    t: Tensor,
    labels: Vec<Label>,
}

impl Labelled {
    fn size(&self, l: Label) -> usize {
        let i = self.labels.iter().position(|&x| x == l).unwrap_or(0);
        self.t.shape()[i]
    }
}

/// Permutes `x` so its labels come in `order` (a permutation of them).
fn permuted(x: &Labelled, order: &[Label]) -> Result<Tensor> {
    let dims: Vec<isize> = order
        .iter()
        .map(|l| x.labels.iter().position(|y| y == l).unwrap_or(0) as isize)
        .collect();
    x.t.permute(&dims)
}

fn sizes_of(x: &Labelled, ls: &[Label]) -> Vec<usize> {
    ls.iter().map(|&l| x.size(l)).collect()
}

fn isizes(v: &[usize]) -> Vec<isize> {
    v.iter().map(|&n| n as isize).collect()
}

/// Sums `x` over the labels in `drop`.
fn sum_out(x: Labelled, drop: &[Label]) -> Result<Labelled> {
    let drop: Vec<Label> = x
        .labels
        .iter()
        .copied()
        .filter(|l| drop.contains(l))
        .collect();
    if drop.is_empty() {
        return Ok(x);
    }
    let keep: Vec<Label> = x
        .labels
        .iter()
        .copied()
        .filter(|l| !drop.contains(l))
        .collect();
    let ks = sizes_of(&x, &keep);
    let s: usize = sizes_of(&x, &drop).iter().product();
    let p: usize = ks.iter().product();
    let order: Vec<Label> = keep.iter().chain(&drop).copied().collect();
    let flat = permuted(&x, &order)?.reshape(&[p as isize, s as isize])?;
    let ones = Tensor::ones(&[s, 1], x.t.dtype());
    let summed = bmm_broadcast(&flat, &ones, Scalar::Int(1), None, gemm_backend())?;
    Ok(Labelled {
        t: summed.reshape(&isizes(&ks))?,
        labels: keep,
    })
}

/// Contracts two operands, keeping the labels in `kept` (and summing
/// labels they share that are not kept).
fn contract(a: Labelled, b: Labelled, kept: &[Label]) -> Result<Labelled> {
    let in_b = |l: &Label| b.labels.contains(l);
    let batch: Vec<Label> = a
        .labels
        .iter()
        .copied()
        .filter(|l| in_b(l) && kept.contains(l))
        .collect();
    let summed: Vec<Label> = a
        .labels
        .iter()
        .copied()
        .filter(|l| in_b(l) && !kept.contains(l))
        .collect();
    let left: Vec<Label> = a.labels.iter().copied().filter(|l| !in_b(l)).collect();
    let right: Vec<Label> = b
        .labels
        .iter()
        .copied()
        .filter(|l| !a.labels.contains(l))
        .collect();
    let (bs, ls, rs) = (
        sizes_of(&a, &batch),
        sizes_of(&a, &left),
        sizes_of(&b, &right),
    );
    let k: usize = sizes_of(&a, &summed).iter().product();
    let (m, n) = (ls.iter().product::<usize>(), rs.iter().product::<usize>());
    let shape3 = |x: usize, y: usize| {
        let mut s = isizes(&bs);
        s.extend([x as isize, y as isize]);
        s
    };
    let order_a: Vec<Label> = batch.iter().chain(&left).chain(&summed).copied().collect();
    let order_b: Vec<Label> = batch.iter().chain(&summed).chain(&right).copied().collect();
    let am = permuted(&a, &order_a)?.reshape(&shape3(m, k))?;
    let bm = permuted(&b, &order_b)?.reshape(&shape3(k, n))?;
    let prod = bmm_broadcast(&am, &bm, Scalar::Int(1), None, gemm_backend())?;
    let mut shape = bs;
    shape.extend(&ls);
    shape.extend(&rs);
    Ok(Labelled {
        t: prod.reshape(&isizes(&shape))?,
        labels: batch.into_iter().chain(left).chain(right).collect(),
    })
}

derivatives! {
    table FORMULAS("einsum");

    /// `einsum(equation, operands)`: Einstein summation as in torch (implicit
    /// or explicit output, repeated subscripts, `...` broadcasting).
    pub fn einsum(equation: &str, operands: &[Tensor]) -> Result<Tensor> {
        before {
            if operands.is_empty() {
                return Err(Error::runtime(
                    "einsum(): must provide at least one operand",
                ));
            };
            let (terms, explicit) = parse(equation)?;
            if terms.len() > operands.len() {
                return Err(Error::runtime(
                    "einsum(): fewer operands were provided than specified in the equation",
                ));
            };
            if terms.len() < operands.len() {
                return Err(Error::runtime(
                    "einsum(): more operands were provided than specified in the equation",
                ));
            };
        }
        record "EinsumBackward0", each [operands];
        compute {
            let (y, plan) = evaluate(&terms, explicit, operands)?;
            // The input and output terms written out with one letter per
            // label, and a spare letter for a batch of tangents.
            let lettered = letters(&plan, 1).map(|(letter, spare)| {
                let term = |ls: &[Label]| -> String { ls.iter().map(|&l| letter[l]).collect() };
                let ins = plan.dim_labels.iter().map(|ls| term(ls)).collect();
                (ins, term(&plan.output), spare[0])
            });
        } => out = y;
        save |s| {
            for op in operands {
                s.save("operands", op);
            }
        }
        backward |ctx, g| {
            // Complex operands enter conjugated (a no-op for real ones).
            let ops: Vec<Tensor> = (0..plan.dim_labels.len())
                .map(|j| ctx.saved(j)?.conj())
                .collect::<Result<_>>()?;
            (0..ops.len())
                .map(|i| {
                    ctx.needs(i)
                        .then(|| operand_grad(&plan, &g[0], &ops, i))
                        .transpose()
                })
                .collect()
        };
        forward formula(move |t| einsum_tangent(t, equation, operands, lettered.as_ref()));
        batched rows because "the gradient's einsum equation has no subscript for a batch dim of g";
    }
}

/// The forward computation of `einsum` once the equation is parsed: checks
/// the operands against the terms, contracts them, and returns the result
/// with what the backward needs to know.
fn evaluate(
    terms: &[Vec<Sub>],
    explicit: Option<Vec<Sub>>,
    operands: &[Tensor],
) -> Result<(Tensor, Plan)> {
    let dt = operands[0].dtype();
    if let Some(o) = operands.iter().find(|o| o.dtype() != dt) {
        return Err(Error::runtime(format!(
            "einsum(): operands must have the same dtype, but got {} and {}",
            dt.c_type_name(),
            o.dtype().c_type_name()
        )));
    }
    // Number of dims each operand's ellipsis covers.
    let mut ell = Vec::with_capacity(terms.len());
    for (i, (term, op)) in terms.iter().zip(operands).enumerate() {
        let nl = term.iter().filter(|s| **s != Sub::Ellipsis).count();
        let has_ell = term.contains(&Sub::Ellipsis);
        if has_ell && op.ndim() < nl {
            return Err(Error::runtime(format!(
                "einsum(): the number of subscripts in the equation ({nl}) is more than the number of dimensions ({}) for operand {i}",
                op.ndim()
            )));
        }
        if !has_ell && op.ndim() != nl {
            return Err(Error::runtime(format!(
                "einsum(): the number of subscripts in the equation ({nl}) does not match the number of dimensions ({}) for operand {i} and no ellipsis was given",
                op.ndim()
            )));
        }
        ell.push(op.ndim() - nl);
    }
    let e_max = ell.iter().copied().max().unwrap_or(0);
    // Each operand's per-dim labels (ellipsis dims right-aligned).
    let dim_labels: Vec<Vec<Label>> = terms
        .iter()
        .zip(&ell)
        .map(|(term, &e)| {
            term.iter()
                .flat_map(|s| match *s {
                    Sub::Label(l) => vec![l],
                    Sub::Ellipsis => (0..e).map(|t| ELLIPSIS_BASE + e_max - e + t).collect(),
                })
                .collect()
        })
        .collect();
    // Global size of each label: equal sizes, or 1 broadcasting.
    let mut size = vec![None::<usize>; ELLIPSIS_BASE + e_max];
    let mut count = vec![0usize; ELLIPSIS_BASE + e_max];
    for (i, (labels, op)) in dim_labels.iter().zip(operands).enumerate() {
        for (d, &l) in labels.iter().enumerate() {
            let n = op.shape()[d];
            count[l] += 1;
            if let Some(d0) = labels[..d].iter().position(|&x| x == l) {
                let n0 = op.shape()[d0];
                if n0 != n {
                    return Err(Error::runtime(format!(
                        "einsum(): subscript {} is repeated for operand {i} but the sizes don't match, {n0} != {n}",
                        label_char(l)
                    )));
                }
                continue;
            }
            size[l] = match size[l] {
                None => Some(n),
                Some(s) if s == n || n == 1 => Some(s),
                Some(1) => Some(n),
                Some(_) => {
                    let shapes: Vec<String> = operands
                        .iter()
                        .map(|o| format!("{:?}", o.shape()))
                        .collect();
                    return Err(Error::runtime(format!(
                        "einsum(): operands do not broadcast: subscript {} has sizes {} and {n} (operand shapes {})",
                        label_char(l),
                        size[l].unwrap_or(0),
                        shapes.join(", ")
                    )));
                }
            };
        }
    }
    let output: Vec<Label> = match explicit {
        Some(out) => {
            let mut labels = Vec::new();
            for s in out {
                match s {
                    Sub::Ellipsis => labels.extend(ELLIPSIS_BASE..ELLIPSIS_BASE + e_max),
                    Sub::Label(l) => {
                        if labels.contains(&l) {
                            return Err(Error::runtime(format!(
                                "einsum(): output subscript {} appears more than once in the output",
                                label_char(l)
                            )));
                        }
                        if size.get(l).copied().flatten().is_none() {
                            return Err(Error::runtime(format!(
                                "einsum(): output subscript {} does not appear in the equation for any input operand",
                                label_char(l)
                            )));
                        }
                        labels.push(l);
                    }
                }
            }
            labels
        }
        None => (ELLIPSIS_BASE..ELLIPSIS_BASE + e_max)
            .chain((0..ELLIPSIS_BASE).filter(|&l| count[l] == 1))
            .collect(),
    };
    // Diagonal + broadcast views with one dim per distinct label.
    let mut ops: Vec<Labelled> = Vec::with_capacity(operands.len());
    for (labels, op) in dim_labels.iter().zip(operands) {
        let mut uniq: Vec<Label> = Vec::new();
        let mut shape = Vec::new();
        let mut strides: Vec<usize> = Vec::new();
        for (d, &l) in labels.iter().enumerate() {
            match uniq.iter().position(|&x| x == l) {
                Some(u) => strides[u] += op.strides()[d],
                None => {
                    uniq.push(l);
                    shape.push(op.shape()[d]);
                    strides.push(op.strides()[d]);
                }
            }
        }
        for (u, &l) in uniq.iter().enumerate() {
            let g = size[l].unwrap_or(shape[u]);
            if shape[u] != g {
                // A size-1 dim broadcast against the label's size.
                shape[u] = g;
                strides[u] = 0;
            }
        }
        ops.push(Labelled {
            t: op.view_with_layout(Layout::new(&shape, &strides, op.offset())),
            labels: uniq,
        });
    }
    let mut rest = ops.into_iter();
    let mut cur = rest
        .next()
        .ok_or_else(|| Error::runtime("einsum(): no operands"))?;
    let remaining: Vec<Labelled> = rest.collect();
    for (j, next) in remaining.iter().enumerate() {
        let mut kept: Vec<Label> = output.clone();
        for later in &remaining[j + 1..] {
            kept.extend(&later.labels);
        }
        let next = Labelled {
            t: next.t.clone(),
            labels: next.labels.clone(),
        };
        let drop_cur: Vec<Label> = cur
            .labels
            .iter()
            .copied()
            .filter(|l| !kept.contains(l) && !next.labels.contains(l))
            .collect();
        let drop_next: Vec<Label> = next
            .labels
            .iter()
            .copied()
            .filter(|l| !kept.contains(l) && !cur.labels.contains(l))
            .collect();
        cur = sum_out(cur, &drop_cur)?;
        let next = sum_out(next, &drop_next)?;
        cur = contract(cur, next, &kept)?;
    }
    let drop: Vec<Label> = cur
        .labels
        .iter()
        .copied()
        .filter(|l| !output.contains(l))
        .collect();
    let cur = sum_out(cur, &drop)?;
    let out = permuted(&cur, &output)?;
    let plan = Plan {
        dim_labels,
        size: size.iter().map(|s| s.unwrap_or(1)).collect(),
        output,
    };
    Ok((out, plan))
}

/// What einsum's backward needs to know about the forward equation.
struct Plan {
    /// Each operand's per-dim labels (ellipsis dims right-aligned).
    dim_labels: Vec<Vec<Label>>,
    /// The broadcast size of each label.
    size: Vec<usize>,
    output: Vec<Label>,
}

/// Letters to write the equation out explicitly: labels keep theirs,
/// ellipsis dims take letters the equation does not use, and `spare` more
/// unused letters follow (`None` when the alphabet runs out).
fn letters(plan: &Plan, spare: usize) -> Option<(Vec<char>, Vec<char>)> {
    let char_of = |l: Label| label_char(l).chars().next().unwrap_or('a');
    let used =
        |l: Label| plan.output.contains(&l) || plan.dim_labels.iter().any(|ls| ls.contains(&l));
    let mut free = (0..ELLIPSIS_BASE).filter(|&l| !used(l)).map(char_of);
    let mut letter: Vec<char> = (0..ELLIPSIS_BASE).map(char_of).collect();
    for _ in ELLIPSIS_BASE..plan.size.len() {
        letter.push(free.next()?);
    }
    let extra = (0..spare)
        .map(|_| free.next())
        .collect::<Option<Vec<char>>>()?;
    Some((letter, extra))
}

/// The forward formula of einsum: the sum over operands with a tangent of
/// the same einsum with that operand replaced by its tangent. A batched
/// tangent gets a subscript of its own (`batched`: the explicit input
/// terms, output term and that subscript), or, when no letter is left,
/// one einsum per row.
fn einsum_tangent(
    t: &Tangents,
    equation: &str,
    operands: &[Tensor],
    batched: Option<&(Vec<String>, String, char)>,
) -> Result<Vec<Option<Tensor>>> {
    t.sum1(|i, ti| {
        let mut args = operands.to_vec();
        args[i] = ti.clone();
        match (t.batch(), batched) {
            (None, _) => einsum(equation, &args),
            (Some(_), Some((ins, out, b))) => {
                let ins: Vec<String> = ins
                    .iter()
                    .enumerate()
                    .map(|(j, s)| if j == i { format!("{b}{s}") } else { s.clone() })
                    .collect();
                einsum(&format!("{}->{b}{out}", ins.join(",")), &args)
            }
            (Some(n), None) => {
                let rows = (0..n)
                    .map(|r| {
                        args[i] = ti.select(0, r as isize)?;
                        einsum(equation, &args)
                    })
                    .collect::<Result<Vec<_>>>()?;
                Tensor::stack(&rows, 0)
            }
        }
    })
}

/// The gradient of operand `i`: the einsum of the output gradient with the
/// other operands onto operand `i`'s distinct labels, then broadcast over
/// labels only operand `i` has (they were summed), put on the diagonal for
/// repeated labels, and summed over dims operand `i` broadcast from size 1.
fn operand_grad(plan: &Plan, g: &Tensor, ops: &[Tensor], i: usize) -> Result<Tensor> {
    let labels = &plan.dim_labels[i];
    let elsewhere = |l: Label| {
        plan.output.contains(&l)
            || plan
                .dim_labels
                .iter()
                .enumerate()
                .any(|(j, ls)| j != i && ls.contains(&l))
    };
    let is_first = |d: usize| !labels[..d].contains(&labels[d]);
    let target: Vec<Label> = (0..labels.len())
        .filter(|&d| is_first(d) && elsewhere(labels[d]))
        .map(|d| labels[d])
        .collect();
    let Some((letter, _)) = letters(plan, 0) else {
        return Err(Error::runtime(
            "einsum(): too many subscripts to differentiate this equation",
        ));
    };
    let term = |ls: &[Label]| -> String { ls.iter().map(|&l| letter[l]).collect() };
    let mut eq = term(&plan.output);
    let mut args = vec![g.clone()];
    for (j, op) in ops.iter().enumerate() {
        if j != i {
            eq.push(',');
            eq.push_str(&term(&plan.dim_labels[j]));
            args.push(op.clone());
        }
    }
    eq.push_str("->");
    eq.push_str(&term(&target));
    let gt = einsum(&eq, &args)?;
    // One dim per dim of operand i: its label's size at the label's first
    // dim, 1 at repeats.
    let view: Vec<isize> = (0..labels.len())
        .map(|d| match target.iter().position(|&l| l == labels[d]) {
            Some(p) if is_first(d) => gt.shape()[p] as isize,
            _ => 1,
        })
        .collect();
    let full: Vec<isize> = (0..labels.len())
        .map(|d| {
            if is_first(d) {
                plan.size[labels[d]] as isize
            } else {
                1
            }
        })
        .collect();
    let mut gi = gt.reshape(&view)?.expand(&full)?;
    for d in 0..labels.len() {
        if let Some(d0) = labels[..d].iter().position(|&l| l == labels[d]) {
            let n = plan.size[labels[d]];
            let mut mask_shape = vec![1isize; labels.len()];
            mask_shape[d0] = n as isize;
            mask_shape[d] = n as isize;
            let eye = Tensor::eye(n as i64, None, gi.dtype())?.reshape(&mask_shape)?;
            gi = gi.mul(&eye)?;
        }
    }
    let shape = ops[i].shape();
    let summed: Vec<isize> = (0..labels.len())
        .filter(|&d| shape[d] == 1 && gi.shape()[d] != 1)
        .map(|d| d as isize)
        .collect();
    if !summed.is_empty() {
        gi = gi.sum(Some(&summed), true, None)?;
    }
    Ok(gi)
}
