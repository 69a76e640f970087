import type { AggregateStore } from './aggregates.js';

/**
 * The store as the recorder sees it: after each write, applied or refused, `written` runs, so that
 * the reports of this replica never answer from figures computed before its own latest flush.
 */
export function notifyingWrites(store: AggregateStore, written: () => void): AggregateStore {
  return {
    kind: store.kind,
    ready: () => store.ready(),
    write: (batch) => store.write(batch).finally(written),
    readBuckets: (resolution, starts) => store.readBuckets(resolution, starts),
    readClients: () => store.readClients(),
    readMeta: () => store.readMeta(),
    close: () => store.close(),
  };
}
