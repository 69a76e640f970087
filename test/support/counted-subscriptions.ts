/** Anything with a store's `subscribe`: a task store, TaskService. */
interface Subscribable {
  subscribe(listener: never): () => void;
}

/**
 * `source` as its subscribers see it (the real object underneath, every other member its own),
 * counting its live subscriptions.
 */
export function countSubscriptions<T extends Subscribable>(source: T): { source: T; live: () => number } {
  let live = 0;
  const counted = Object.create(source) as T;
  Object.assign(counted, {
    subscribe: (listener: never) => {
      live++;
      const stop = source.subscribe(listener);
      return () => {
        live--;
        stop();
      };
    },
  });
  return { source: counted, live: () => live };
}
