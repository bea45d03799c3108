import { createContext } from 'preact';
import { useContext, useEffect, useRef, useState } from 'preact/hooks';
import type { FeedListener, FeedMode, LiveFeed } from './stream';

export const FeedContext = createContext<LiveFeed | null>(null);

// The current time, updated every `everyMs` (for relative ages).
export function useNow(everyMs = 5000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = window.setInterval(() => setNow(Date.now()), everyMs);
    return () => window.clearInterval(t);
  }, [everyMs]);
  return now;
}

// Subscribes to the live feed for the component's lifetime; the listener
// may change on every render (the latest one is called).
export function useFeed(listener: FeedListener): void {
  const feed = useContext(FeedContext);
  const ref = useRef(listener);
  ref.current = listener;
  useEffect(() => {
    if (!feed) return;
    return feed.Subscribe({
      onTask: (t) => ref.current.onTask?.(t),
      onRefresh: () => ref.current.onRefresh?.(),
    });
  }, [feed]);
}

export function useFeedMode(): [FeedMode, string] {
  const feed = useContext(FeedContext);
  const [mode, setMode] = useState<[FeedMode, string]>(['connecting', '']);
  useEffect(() => feed?.OnMode((m, d) => setMode([m, d])), [feed]);
  return mode;
}

// Calls `f` now and every `everyMs` while mounted (pages the stream does
// not cover: nodes, alerts, bus). Returns a function that calls it at once.
export function usePolling(f: () => void, everyMs: number, deps: unknown[] = []): () => void {
  const ref = useRef(f);
  ref.current = f;
  useEffect(() => {
    ref.current();
    const t = window.setInterval(() => ref.current(), everyMs);
    return () => window.clearInterval(t);
  }, [everyMs, ...deps]);
  return () => ref.current();
}
