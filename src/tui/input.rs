//! Terminal input for the loop's `select!`, asked for only when there is some.
//!
//! crossterm's `EventStream` waits for input on a thread of its own that
//! holds crossterm's event-reader lock while it waits. Each poll of the
//! stream tries that lock (a `try_lock_for` of zero, which spins and calls
//! `sched_yield` before giving up), and the loop polls every branch of its
//! `select!` on every wake: a thousand times a second while an answer
//! streams, for input that is not there. [`Input`] polls the stream once,
//! and again only after its thread said input arrived (or after an item,
//! since more may be queued).

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use crossterm::event::EventStream;
use futures::Stream;
use futures::task::AtomicWaker;

/// Terminal events, polled from crossterm only when it said there are some.
pub(crate) type Input = Gate<EventStream>;

/// A stream polled again only after it woke its task (or gave an item).
pub(crate) struct Gate<S> {
    stream: S,
    signal: Arc<Signal>,
    /// The stream returned `Pending` and has not woken `signal` since.
    waiting: bool,
}

/// The waker handed to crossterm: notes the wake, then wakes the loop.
#[derive(Default)]
struct Signal {
    woken: AtomicBool,
    task: AtomicWaker,
}

impl Wake for Signal {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.task.wake();
    }
}

impl Input {
    /// Start reading the terminal.
    pub(crate) fn new() -> Self {
        Gate::over(EventStream::new())
    }
}

impl<S> Gate<S> {
    fn over(stream: S) -> Self {
        Gate {
            stream,
            signal: Arc::default(),
            waiting: false,
        }
    }
}

impl<S: Stream + Unpin> Stream for Gate<S> {
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let this = self.get_mut();
        this.signal.task.register(cx.waker());
        if this.waiting && !this.signal.woken.swap(false, Ordering::AcqRel) {
            return Poll::Pending;
        }
        let waker = Waker::from(Arc::clone(&this.signal));
        let polled = Pin::new(&mut this.stream).poll_next(&mut Context::from_waker(&waker));
        this.waiting = polled.is_pending();
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream that counts its polls and is ready only when told.
    #[derive(Default)]
    struct Counted {
        polls: usize,
        ready: bool,
        waker: Option<Waker>,
    }

    impl Stream for Counted {
        type Item = u8;
        fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<u8>> {
            self.polls += 1;
            if std::mem::take(&mut self.ready) {
                return Poll::Ready(Some(1));
            }
            self.waker = Some(cx.waker().clone());
            Poll::Pending
        }
    }

    #[test]
    fn the_stream_is_polled_again_only_after_it_woke() {
        let mut gated = Gate::over(Counted::default());
        let task = Arc::new(Signal::default());
        let waker = Waker::from(Arc::clone(&task));
        let mut cx = Context::from_waker(&waker);
        for _ in 0..100 {
            assert!(Pin::new(&mut gated).poll_next(&mut cx).is_pending());
        }
        assert_eq!(gated.stream.polls, 1, "polled once while nothing came");
        gated.stream.ready = true;
        gated.stream.waker.take().expect("waker kept").wake();
        assert!(task.woken.load(Ordering::Acquire), "the loop is woken");
        assert_eq!(
            Pin::new(&mut gated).poll_next(&mut cx),
            Poll::Ready(Some(1))
        );
        assert_eq!(gated.stream.polls, 2);
        // After an item, more may be queued: the next poll asks.
        assert!(Pin::new(&mut gated).poll_next(&mut cx).is_pending());
        assert_eq!(gated.stream.polls, 3);
    }
}
