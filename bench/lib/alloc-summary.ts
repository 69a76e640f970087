/** Bytes allocated per request by function (self), from a sampling heap profile (bench/probes/alloc-sampler.js). */

interface AllocNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: AllocNode[];
}

export interface AllocSummary {
  bytesPerRequest: number;
  top: Array<{ where: string; bytesPerRequest: number; share: number }>;
}

export function summarizeAllocations(profile: { head: AllocNode }, requests: number, topN = 25): AllocSummary {
  const bySite = new Map<string, number>();
  let total = 0;
  const stack = [profile.head];
  while (stack.length > 0) {
    const node = stack.pop()!;
    total += node.selfSize;
    if (node.selfSize > 0) {
      const { functionName, url, lineNumber } = node.callFrame;
      const where = `${functionName || '(anonymous)'} ${url.replace(/^.*\/node_modules\//, '').replace(/^.*\/dist\//, '')}:${lineNumber + 1}`;
      bySite.set(where, (bySite.get(where) ?? 0) + node.selfSize);
    }
    stack.push(...node.children);
  }
  const top = [...bySite]
    .sort((a, b) => b[1] - a[1])
    .slice(0, topN)
    .map(([where, bytes]) => ({ where, bytesPerRequest: Math.round(bytes / requests), share: bytes / total }));
  return { bytesPerRequest: Math.round(total / requests), top };
}
