//! Profiler runs: [`Profiler::start`] turns the event recorder
//! in `src/trace/` on for the calling thread (and the work done for it),
//! [`Profiler::stop`] collects what it recorded as a [`Recording`], and
//! [`nest`] recovers each event's parent, self time and memory. The
//! recorder's own items (events, spans, scopes, `record_function`) are
//! re-exported here, so a program needs only this module.

mod tree;

pub use crate::trace::{
    aten_name, current_scope, inplace_op, is_active, is_recording, link_output, memory, node_spans,
    op, op_span, record_function, set_stack_provider, set_thread_label, Event, EventKind,
    InputInfo, NodeSpans, ProfilerConfig, Scope, ScopeGuard, Span, StackProvider,
};
pub use tree::{nest, Nesting};

use crate::{trace, Result};

/// What [`Profiler::stop`] returns: the events and the recorded threads.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    /// Every event, ordered by thread, then start time (outer spans before
    /// the spans and instants they contain). Spans still open when the run
    /// stopped are left out.
    pub events: Vec<Event>,
    /// The recorded threads' ids and names, by id.
    pub threads: Vec<(u64, String)>,
    /// When the run started, on the events' clock.
    pub start_ns: u64,
}

/// A profiler run: records from [`Profiler::start`] until
/// [`Profiler::stop`] (or drop, which discards the events). One run at a
/// time, process-wide.
pub struct Profiler {
    stopped: bool,
}

impl Profiler {
    /// Starts recording the current thread (and the backward work done for
    /// it); fails if another run is active.
    pub fn start(config: ProfilerConfig) -> Result<Profiler> {
        trace::start_run(config)?;
        if config.profile_memory {
            crate::tensor::set_memory_hook(trace::memory);
        }
        Ok(Profiler { stopped: false })
    }

    /// The scope of this run, to record other threads' work into it (see
    /// [`Scope::enter`]).
    pub fn scope(&self) -> Scope {
        trace::run_scope()
    }

    /// Stops recording and returns the events.
    pub fn stop(mut self) -> Recording {
        self.finish()
    }

    fn finish(&mut self) -> Recording {
        self.stopped = true;
        let (events, threads, start_ns) = trace::finish_run();
        Recording {
            events,
            threads,
            start_ns,
        }
    }
}

impl Drop for Profiler {
    fn drop(&mut self) {
        if !self.stopped {
            self.finish();
        }
    }
}
