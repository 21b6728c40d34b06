//! How recorded events nest: each event's parent on its thread, its self
//! time and the memory allocated inside it.

use crate::trace::{Event, EventKind};
use std::collections::HashMap;

/// Where an event sits among the events of its thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Nesting {
    /// The index of the innermost span that contains the event.
    pub parent: Option<usize>,
    /// The span's duration minus its direct children's (0 for instants).
    pub self_ns: u64,
    /// Bytes allocated minus bytes freed inside the span, children
    /// included (0 for instants).
    pub memory: i64,
    /// As `memory`, without the children's.
    pub self_memory: i64,
    /// Backward and evaluate events: the thread of the forward op that
    /// recorded the node, when that op was recorded in the same run.
    pub fwd_thread: Option<u64>,
}

/// The nesting of `events`, ordered as [`super::Profiler::stop`] returns
/// them (by thread, then start time, outer spans first).
///
/// A span's parent is the innermost span of its thread that was open when
/// it began: the last span still open at the event's depth, checked
/// against the times so that spans of an earlier run never adopt it.
pub fn nest(events: &[Event]) -> Vec<Nesting> {
    let mut out = vec![Nesting::default(); events.len()];
    let forward: HashMap<u64, u64> = events
        .iter()
        .filter(|e| e.kind == EventKind::Op)
        .filter_map(|e| Some((e.sequence_nr?, e.thread)))
        .collect();
    let mut open: Vec<usize> = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if i > 0 && events[i - 1].thread != e.thread {
            open.clear();
        }
        while let Some(&top) = open.last() {
            let t = &events[top];
            let contains = t.start_ns <= e.start_ns && e.end_ns <= t.end_ns;
            if open.len() > e.depth as usize || !contains {
                open.pop();
            } else {
                break;
            }
        }
        out[i].parent = open.last().copied();
        if matches!(e.kind, EventKind::Backward | EventKind::Evaluate) {
            out[i].fwd_thread = e.sequence_nr.and_then(|nr| forward.get(&nr).copied());
        }
        if e.kind == EventKind::Memory {
            if let Some(p) = out[i].parent {
                out[p].self_memory += e.bytes;
            }
            for &a in &open {
                out[a].memory += e.bytes;
            }
        } else {
            out[i].self_ns = e.duration_ns();
            if let Some(p) = out[i].parent {
                out[p].self_ns = out[p].self_ns.saturating_sub(e.duration_ns());
            }
            open.push(i);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    fn span(thread: u64, depth: u32, start: u64, end: u64) -> Event {
        let mut e = Event::new(Cow::Borrowed("x"), EventKind::Op);
        (e.thread, e.depth, e.start_ns, e.end_ns) = (thread, depth, start, end);
        e
    }

    #[test]
    fn parents_self_times_and_memory_follow_the_nesting() {
        let mut alloc = span(1, 2, 15, 15);
        alloc.kind = EventKind::Memory;
        alloc.bytes = 64;
        let mut free = span(1, 0, 120, 120);
        free.kind = EventKind::Memory;
        free.bytes = -64;
        let events = [
            span(1, 0, 0, 100), // 0
            span(1, 1, 10, 40), // 1
            alloc,              // 2: inside 1 (depth 2)
            span(1, 1, 50, 60), // 3
            free,               // 4: after the top span, depth 0
            span(2, 0, 5, 8),   // 5: another thread
        ];
        let n = nest(&events);
        let parents: Vec<_> = n.iter().map(|n| n.parent).collect();
        assert_eq!(parents, [None, Some(0), Some(1), Some(0), None, None]);
        assert_eq!(n[0].self_ns, 100 - 30 - 10);
        assert_eq!(n[1].self_ns, 30);
        assert_eq!((n[0].memory, n[0].self_memory), (64, 0));
        assert_eq!((n[1].memory, n[1].self_memory), (64, 64));
        assert_eq!(n[5].self_ns, 3);
    }
}
