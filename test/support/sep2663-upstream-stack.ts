import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sep2663UpstreamStats } from '../fixtures/sep2663-upstream/server.js';
import { spawnSep2663Upstream } from './demo-upstream-process.js';
import type { StoreKind } from './e2e-stack.js';
import { useNativeStack, type NativeStack } from './native-stack.js';

export const ALICE = 'alice-token-0123456789abcdef';
export const BOB = 'bob-token-0123456789abcdefghij';

/**
 * Shim arguments for the SEP-2663 fixture: two principals, and the fixture's task tools as
 * `optional` (a task at once for a client that opted in, so their input arrives inside the task);
 * `echo` and `ask_first` keep the default `auto` (a call that ends inside the window answers
 * plainly; `ask_first`'s question before its task goes back as MRTR).
 */
export function sep2663ShimArgs(): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'mts-sep2663-up-'));
  const tokens = join(dir, 'tokens.json');
  writeFileSync(tokens, JSON.stringify({ [ALICE]: 'alice', [BOB]: 'bob' }));
  const optional = ['slow', 'approve', 'explode', 'garbage_call', 'garbage_task', 'lost_task', 'other_task', 'status_backwards', 'never_finishes', 'cancel_too_late', 'cancel_ignored'];
  const policy = join(dir, 'policy.json');
  writeFileSync(policy, JSON.stringify({ tools: Object.fromEntries(optional.map((tool) => [tool, 'optional'])) }));
  return ['--tokens', tokens, '--policy', policy];
}

export interface Sep2663StackOptions {
  stores?: StoreKind[];
  /** Arguments of the fixture (`--poll-interval-ms N`). */
  upstreamArgs?: string[];
  /** Arguments of every shim, after `sep2663ShimArgs()`. */
  shimArgs?: string[];
}

/** A redis-server, the SEP-2663 fixture server and a shim per store in front of it. */
export function useSep2663Stack(options: Sep2663StackOptions = {}): NativeStack<Sep2663UpstreamStats> {
  return useNativeStack<Sep2663UpstreamStats>({
    stores: options.stores,
    shimArgs: [...sep2663ShimArgs(), ...(options.shimArgs ?? [])],
    spawnUpstream: () => spawnSep2663Upstream(options.upstreamArgs),
  });
}
