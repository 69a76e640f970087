import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function run(bin: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, '--help'], { timeout: 15_000 }, (err, _stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stderr });
    });
  });
}

describe('bin/mcp-tasks-shim.js', () => {
  it('says to run the build, and exits 1, when dist/ is missing', async () => {
    const copy = mkdtempSync(join(tmpdir(), 'mts-bin-'));
    mkdirSync(join(copy, 'bin'));
    copyFileSync(join(ROOT, 'bin/mcp-tasks-shim.js'), join(copy, 'bin/mcp-tasks-shim.js'));
    const { code, stderr } = await run(join(copy, 'bin/mcp-tasks-shim.js'));
    expect(code).toBe(1);
    expect(stderr).toContain('dist/ is missing. Run `npm run build`');
  });

  it('builds dist/ with every module, the files they read beside them, and no tests', () => {
    // `npm test` builds first (pretest); the Lua scripts and the dashboard page are read at run time.
    for (const asset of ['src/store/redis/lua/create-queued-3.lua', 'src/observe/dashboard/index.html', 'src/observe/dashboard/app.js']) {
      expect(readFileSync(join(ROOT, 'dist', asset), 'utf8')).toBe(readFileSync(join(ROOT, asset), 'utf8'));
    }
    expect(existsSync(join(ROOT, 'dist/src/cli/main.js'))).toBe(true);
    expect(existsSync(join(ROOT, 'dist/codemods/index.js'))).toBe(true);
    expect(existsSync(join(ROOT, 'dist/src/mapping/markdown.test.js'))).toBe(false);
  });
});
