//! When a replay lets go of each value.
//!
//! A replay keeps every value in one list that the rows read by index. Kept
//! to the end of the replay, a program of `n` rows over large tensors holds
//! `n` buffers at once. The plan, computed once per program from the rows'
//! recorded arguments, says after which row no later row (nor the caller)
//! reads a value; the replay drops it there, so its buffer goes back to the
//! storage cache and serves the next rows' results, in this call and the
//! next ones, while it is still warm in the processor's caches.
//!
//! Dropping a value only drops the program's handle: a graph node that saved
//! it, a view of it, or a result that shares its storage keeps the buffer.

use super::{Program, Source};
use crate::{DType, Tensor};

/// Which values a replay drops after each row.
pub(crate) struct Lifetimes {
    /// `free_after[k]`: the values made by the rows that no row after `k`
    /// reads and the caller does not keep.
    free_after: Vec<Vec<usize>>,
    /// What a dropped value's place holds (an empty tensor).
    placeholder: Tensor,
}

/// A value's last reader.
#[derive(Clone, Copy, PartialEq)]
enum Last {
    Unread,
    Row(usize),
    Kept,
}

impl Lifetimes {
    /// The plan for `p` when the caller reads `kept` (value ids) after the
    /// rows ran, besides the program's results.
    pub(crate) fn of(p: &Program, kept: impl IntoIterator<Item = usize>) -> Lifetimes {
        let n = p.inputs + p.rows.iter().map(|r| r.outputs).sum::<usize>();
        let mut last = vec![Last::Unread; n];
        for (k, row) in p.rows.iter().enumerate() {
            for s in &row.inputs {
                if let Source::Value(i) = s {
                    last[*i] = Last::Row(k);
                }
            }
        }
        let results = p.outputs.iter().filter_map(|s| match s {
            Source::Value(i) => Some(*i),
            Source::Constant(_) => None,
        });
        for i in results.chain(kept) {
            last[i] = Last::Kept;
        }
        // The row that made each value.
        let made = p
            .rows
            .iter()
            .enumerate()
            .flat_map(|(k, row)| std::iter::repeat_n(k, row.outputs));
        let mut free_after = vec![Vec::new(); p.rows.len()];
        for ((i, last), k) in last.iter().enumerate().skip(p.inputs).zip(made) {
            match *last {
                // Nothing reads it: its own row is the last.
                Last::Unread => free_after[k].push(i),
                Last::Row(r) => free_after[r].push(i),
                Last::Kept => {}
            }
        }
        Lifetimes {
            free_after,
            placeholder: Tensor::empty(&[0], DType::Float32),
        }
    }

    /// Drops from `vals` what no row after row `k` reads.
    #[inline]
    pub(crate) fn release(&self, k: usize, vals: &mut [Tensor]) {
        for &i in &self.free_after[k] {
            vals[i] = self.placeholder.clone();
        }
    }
}
