/** Resolves once every one of `runs` settled, or after `ms`, whichever comes first. */
export async function settledWithin(runs: Iterable<Promise<unknown>>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.allSettled([...runs]), new Promise((resolve) => (timer = setTimeout(resolve, ms).unref()))]);
  clearTimeout(timer);
}
