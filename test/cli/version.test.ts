import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const { version } = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')) as { version: string };

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/mcp-tasks-shim.js', ...args], { cwd: ROOT, timeout: 15_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('mcp-tasks-shim --version', () => {
  it.each(['--version', '-v'])('%s prints the package version alone and exits 0', async (flag) => {
    const { code, stdout, stderr } = await cli(flag);
    expect(code).toBe(0);
    expect(stdout).toBe(`${version}\n`);
    expect(stderr).toBe('');
  });

  it('is listed in the usage text', async () => {
    expect((await cli('--help')).stdout).toMatch(/^ {2}-v, --version +the installed version$/m);
  });
});
