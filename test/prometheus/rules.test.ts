import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RULES = 'prometheus/mcp-tasks-shim.rules.yml';
const CASES = 'test/prometheus/mcp-tasks-shim.rules.test.yml';

/** Runs promtool; a machine without it fails here, saying what to install, rather than skipping. */
function promtool(...args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    execFile('promtool', args, { cwd: ROOT, timeout: 60_000 }, (err, stdout, stderr) => {
      if ((err as NodeJS.ErrnoException | null)?.code === 'ENOENT') {
        reject(new Error("promtool is not on PATH: install Debian's `prometheus` package (`apt-get install prometheus`, as .ci/run does)"));
        return;
      }
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

/** Each alert's cases in the promtool file: whether one expects it firing, and whether one expects it quiet. */
function casesByAlert(text: string): Map<string, { fires: boolean; quiet: boolean }> {
  const cases = new Map<string, { fires: boolean; quiet: boolean }>();
  for (const [, alert, expected] of text.matchAll(/alertname: (\w+)\n\s+exp_alerts:( \[\])?/g)) {
    const seen = cases.get(alert!) ?? { fires: false, quiet: false };
    if (expected) seen.quiet = true;
    else seen.fires = true;
    cases.set(alert!, seen);
  }
  return cases;
}

describe(`the Prometheus rules (${RULES})`, () => {
  it('pass promtool check rules', async () => {
    const { code, output } = await promtool('check', 'rules', RULES);
    expect(output).toContain('SUCCESS');
    expect(code).toBe(0);
  });

  it('pass promtool test rules: every alert has series that fire it and series that must not', async () => {
    const alerts = [...readFileSync(join(ROOT, RULES), 'utf8').matchAll(/- alert: (\w+)/g)].map((m) => m[1]);
    expect(alerts.length).toBeGreaterThan(0);
    const cases = casesByAlert(readFileSync(join(ROOT, CASES), 'utf8'));
    for (const alert of alerts) expect({ alert, ...cases.get(alert!) }).toEqual({ alert, fires: true, quiet: true });

    const { code, output } = await promtool('test', 'rules', CASES);
    expect(output).toContain('SUCCESS');
    expect(code).toBe(0);
  });
});
