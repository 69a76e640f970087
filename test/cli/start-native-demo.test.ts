import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Sep2663Client, textOf } from '../support/sep2663-client.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** `start` with its arguments until a printed line matches `last`; the process is stopped afterwards. */
async function startLines(args: string[], last: RegExp): Promise<{ lines: string[]; stop: () => void }> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('SHIM_') && !['PORT', 'HOST', 'UPSTREAM_URL', 'REDIS_URL'].includes(name)),
  );
  const child = spawn(process.execPath, ['bin/mcp-tasks-shim.js', 'start', '--port', '0', ...args], { cwd: ROOT, env: inherited, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const reader = createInterface({ input: child.stdout });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no line matching ${last} within 20 s: ${lines.join(' | ')}`)), 20_000);
    reader.on('line', (line) => {
      lines.push(line);
      if (last.test(line)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return { lines, stop: () => child.kill('SIGKILL') };
}

describe('start --demo native', () => {
  it('fronts the demo upstream that runs tasks itself and says how each tool runs', { timeout: 40_000 }, async () => {
    const { lines, stop } = await startLines(['--demo', 'native'], /^ {4}native_fail /);
    try {
      expect(lines[1]).toMatch(/^ {2}version: /);
      expect(lines[2]).toMatch(/^ {2}upstream: http:\/\/\S+ \(demo native upstream\)$/);
      // The table the dashboard shows: what the upstream speaks, then each tool's policy, execution mode and source.
      const table = lines.slice(lines.indexOf('  protocol: 2025-11-25 (discovered), runs tool tasks itself (capabilities.tasks)'));
      expect(table).toEqual([
        '  protocol: 2025-11-25 (discovered), runs tool tasks itself (capabilities.tasks)',
        '  policies: 5 upstream tools; the upstream declares tasks: its taskSupport applies where the policy file names no tool',
        '    tool            policy    execution  source',
        '    native_work     required  native     upstream',
        '    native_quick    optional  native     upstream',
        '    native_confirm  required  native     upstream',
        '    native_haiku    required  native     upstream',
        '    native_fail     required  native     upstream',
      ]);
      const url = /listening on (\S+)/.exec(lines[0] ?? '')![1]!;
      const c = new Sep2663Client(url);
      const created = await c.createTask('native_work', { seconds: 0.2, label: 'demo' });
      const done = await c.waitForStatus(created.taskId, 'completed');
      expect(textOf(done.result)).toBe('Done demo');
    } finally {
      stop();
    }
  });

  it('says when a pinned protocol does not match the upstream', { timeout: 40_000 }, async () => {
    const { lines, stop } = await startLines(['--demo', 'native', '--upstream-protocol', '2026-07-28'], /^ {2}protocol: /);
    try {
      expect(lines.find((line) => line.startsWith('  protocol: '))).toBe('  protocol: 2026-07-28 (pinned); the upstream did not answer server/discover');
    } finally {
      stop();
    }
  });
});
